import RegionKitCore

/// A store several engines share (cluster mode of `regionkit run`): membership, partition leases
/// with fencing epochs, and each partition's contribution to a region's state, merged into the
/// region's state and event log in the same transaction that writes the contribution, so that
/// however many engines contribute, every change of a region's merged state is logged once.
///
/// ```swift
/// let digest = try RegionDefinitions.digest(of: regions)
/// try await store.join(member: "engine-a", instance: "gw-1 pid 4242", regions: digest, ttl: 5, preparing: 16, deciding: { _ in Array(0..<16) })
/// let round = try await store.balanceLeases(member: "engine-a", instance: "gw-1 pid 4242", regions: digest, partitions: 16, ttl: 5, reclaimOnly: false)
/// let outcome = try await store.applyContribution(region: "lobby", lease: round.held[0], member: "engine-a",
///                                                state: .inside, since: now, time: now) { previous, merged, since in
///     [ClusterEventRow(time: now, type: "didDetermineState", region: "lobby", state: merged.rawValue, reason: nil, json: "{}", hooks: [])]
/// }
/// ```
public protocol ClusterStoring: RegionStoring {
    /// Says that `member` is alive for `ttl` seconds (the store's clock).
    func heartbeat(member: String, ttl: Double) async throws
    /// Removes `member` from the live members, whichever process holds the name (tools and tests;
    /// a member's own stop is ``leave(member:instance:partitions:singletons:)``).
    func leave(member: String) async throws
    /// A member's clean stop, in one transaction: hands back `partitions` (those still held at
    /// their epoch), gives up the named `singletons` it holds, and leaves the members — only while
    /// `instance` holds the name. False, and nothing changed, when another process holds it now
    /// (this one was frozen past its heartbeat and replaced): those leases are that process's.
    @discardableResult
    func leave(member: String, instance: String, partitions: [PartitionLease], singletons: [String]) async throws -> Bool
    /// Claims the member name `member` for the process `instance` (a value unique to the process,
    /// naming it for operators: host, pid) when a member starts. Throws
    /// `RegionKitError.Code.clusterConflict` while another instance's heartbeat under that name
    /// is live: two processes sharing a name would renew each other's leases with one epoch, and
    /// fencing could not tell their writes apart. The heartbeat of a name nobody holds starts now;
    /// that of a name whose last holder's heartbeat expired passes to `instance`.
    ///
    /// The heartbeat is live for `ttl` from the call (kept if later), so the name is this
    /// process's until its rounds stop. Returns whether the name's previous heartbeat had expired
    /// (the member was away, e.g. a restart after a crash): its first lease round should then only
    /// reclaim (``balanceLeases(member:instance:regions:partitions:ttl:reclaimOnly:)``).
    ///
    /// With `partitions`, it also prepares them as ``preparePartitions(_:member:deciding:)`` does,
    /// in the same transaction: a refusal leaves no heartbeat behind, and members starting
    /// together are serialised.
    ///
    /// `regions`: the digest of the member's configured region definitions
    /// (``RegionDefinitions/digest(of:)``), recorded with its heartbeat; the lease rounds report
    /// every live member's (``LeaseRound/regionDefinitions``).
    @discardableResult
    func join(member: String, instance: String, regions: String?, ttl: Double, preparing partitions: Int?,
              deciding: @escaping @Sendable (_ region: String) -> [Int]) async throws -> Bool
    /// Renews the member's unexpired leases and takes free or expired partitions up to its fair
    /// share, `ceil(partitions / live members)`; see ``LeaseRound``. Rounds are serialised across members.
    ///
    /// With `reclaimOnly`, or when the member's own heartbeat had expired (it was away: the store
    /// unreachable, or the member stalled), it renews and takes back only partitions whose last
    /// holder it was and that nobody took meanwhile, and reports no surplus (``LeaseRound/reclaimed``):
    /// after an outage every member's heartbeat has expired, and the first one back would otherwise
    /// count itself alone and take every partition, to hand most of them back a round later. The
    /// ordinary rounds after that balance what is left.
    ///
    /// Throws `RegionKitError.Code.clusterConflict` when another `instance` holds the name with
    /// a live heartbeat (see ``join(member:instance:regions:ttl:preparing:deciding:)``; a name whose heartbeat expired passes
    /// to `instance`), or when the cluster was prepared for another partition count
    /// (``preparePartitions(_:)``): members disagreeing on it hash beacons to different partitions.
    ///
    /// `regions`: the digest of the member's region definitions, recorded with its heartbeat (as
    /// by ``join(member:instance:regions:ttl:preparing:deciding:)``).
    func balanceLeases(member: String, instance: String, regions: String?, partitions: Int, ttl: Double, reclaimOnly: Bool) async throws -> LeaseRound
    /// Hands partitions back at once (their leases expire now), if `member` still holds them.
    func releaseLeases(member: String, partitions: [Int]) async throws
    /// Records how many sightings `member` has ingested since it started (its progress, for
    /// operators and `regionkit bench cluster`).
    func recordSightings(member: String, total: Int64) async throws
    /// Every known member: seconds until its heartbeat expires (≤ 0: gone) and its sightings.
    func members() async throws -> [(member: String, expiresIn: Double, sightings: Int64)]
    /// Takes or renews the lease named `name` that one member at a time holds (the cluster's
    /// outputs: hooks): its epoch while `member` holds it, nil while another member does.
    func holdSingleton(_ name: String, member: String, ttl: Double) async throws -> Int64?
    /// Every partition's current holder and epoch (`owner` nil or expired: free).
    func leases() async throws -> [(partition: Int, owner: String?, epoch: Int64, expiresIn: Double)]
    /// Members, partition and singleton leases and the partition count, read in one snapshot.
    func clusterStatus() async throws -> ClusterStatus

    /// Makes the store's partitions `count` before a member takes part, and records the count: a
    /// lease round with another count is refused from then on (a member started with a different
    /// count at the same moment fails instead of hashing beacons differently). When they were made for
    /// another count (a re-partition: beacons hash to other partitions now), every contribution is
    /// forgotten and the leases of partitions past `count` are removed: a contribution left by a
    /// partition that no longer decides its region would hold the merged state (inside) forever.
    /// The merged states stay, and each region inside gets an inside contribution from every
    /// partition that `deciding` says decides it now (its identifier → those partitions): those
    /// partitions decide it anew, as at a takeover, so a region that none of them finds inside
    /// exits once and one whose beacons are still heard never leaves. Refused, naming the holder,
    /// while any member holds a lease or has a live heartbeat, other than `member` (the caller's own
    /// name, joined first): every member stops before the count changes.
    func preparePartitions(_ count: Int, member: String?, deciding: @escaping @Sendable (_ region: String) -> [Int]) async throws
    /// Saves the configured regions that are new or changed (a changed one loses its state and
    /// contributions); an identical stored region is left alone, so several engines may start with
    /// one configuration without resetting each other's states.
    func ensureRegions(_ regions: [Region], at time: Double) async throws
    /// The contributions stored for one partition, by region (what a member restores when it takes it).
    func contributions(partition: Int) async throws -> [String: RegionContribution]
    /// Writes a partition's contribution to `region` if `lease` is still this member's, and, when
    /// the region's merged state changes, its state row and the events `events(previous, merged,
    /// since)` returns, in the same transaction.
    /// - Parameter write: the write's identity: when the store has already committed it (a retry
    ///   after a lost reply), nothing is written again and the outcome names the events it
    ///   committed then, even once the lease has moved on, until the next holder writes the
    ///   partition. Nil: no identity (tools and tests), each call is a new write.
    func applyContribution(region: String, lease: PartitionLease, member: String, write: ClusterWriteID?, state: RegionState, since: Double?, time: Double,
                           events: @escaping @Sendable (_ previous: RegionState?, _ merged: RegionState, _ since: Double?) -> [ClusterEventRow])
        async throws -> ContributionOutcome
    /// Appends events a partition decided that are not region states (a beacon's nearest scanner),
    /// with their pending hook deliveries, if `lease` is still this member's: `fenced` and nothing
    /// written otherwise, `changed` with the stored events (their ids) when committed.
    /// - Parameter write: as for ``applyContribution(region:lease:member:write:state:since:time:events:)``:
    ///   a batch already committed is not appended again (its events are the answer).
    func appendEvents(_ rows: [ClusterEventRow], lease: PartitionLease, member: String, write: ClusterWriteID?) async throws -> ContributionOutcome
}

extension ClusterStoring {
    /// ``applyContribution(region:lease:member:write:state:since:time:events:)`` without a write
    /// identity (tools and tests: a retry would be a new write).
    public func applyContribution(region: String, lease: PartitionLease, member: String, state: RegionState, since: Double?, time: Double,
                                  events: @escaping @Sendable (_ previous: RegionState?, _ merged: RegionState, _ since: Double?) -> [ClusterEventRow])
        async throws -> ContributionOutcome {
        try await applyContribution(region: region, lease: lease, member: member, write: nil, state: state, since: since, time: time, events: events)
    }

    /// ``appendEvents(_:lease:member:write:)`` without a write identity (tools and tests).
    public func appendEvents(_ rows: [ClusterEventRow], lease: PartitionLease, member: String) async throws -> ContributionOutcome {
        try await appendEvents(rows, lease: lease, member: member, write: nil)
    }

    /// Claims the member name for `instance` without preparing the partitions (see
    /// ``join(member:instance:regions:ttl:preparing:deciding:)``).
    @discardableResult
    public func join(member: String, instance: String, ttl: Double) async throws -> Bool {
        try await join(member: member, instance: instance, regions: nil, ttl: ttl, preparing: nil, deciding: { _ in [] })
    }

    /// ``join(member:instance:regions:ttl:preparing:deciding:)`` recording no region definitions (tools and tests).
    @discardableResult
    public func join(member: String, instance: String, ttl: Double, preparing partitions: Int?,
                     deciding: @escaping @Sendable (_ region: String) -> [Int]) async throws -> Bool {
        try await join(member: member, instance: instance, regions: nil, ttl: ttl, preparing: partitions, deciding: deciding)
    }

    /// ``balanceLeases(member:instance:regions:partitions:ttl:reclaimOnly:)`` recording no region
    /// definitions (tools and tests).
    public func balanceLeases(member: String, instance: String, partitions: Int, ttl: Double, reclaimOnly: Bool) async throws -> LeaseRound {
        try await balanceLeases(member: member, instance: instance, regions: nil, partitions: partitions, ttl: ttl, reclaimOnly: reclaimOnly)
    }

    /// Prepares `count` partitions; a re-partition seeds no region's contributions (see
    /// ``preparePartitions(_:member:deciding:)``: the first partition to report a region inside decides it
    /// alone until the others report).
    public func preparePartitions(_ count: Int) async throws {
        try await preparePartitions(count, member: nil, deciding: { _ in [] })
    }

    /// A lease round of a member whose name is its instance (one process per name, as in tests
    /// and tools; see ``balanceLeases(member:instance:regions:partitions:ttl:reclaimOnly:)``).
    public func balanceLeases(member: String, partitions: Int, ttl: Double, reclaimOnly: Bool = false) async throws -> LeaseRound {
        try await balanceLeases(member: member, instance: member, regions: nil, partitions: partitions, ttl: ttl, reclaimOnly: reclaimOnly)
    }
}
