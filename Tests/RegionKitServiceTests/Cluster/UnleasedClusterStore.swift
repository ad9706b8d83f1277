import RegionKit
import RegionKitConcurrency
import RegionKitStore
import RegionKitTestSupport

/// A ``ClusterStoring`` for a ``PartitionWorker`` tested without PostgreSQL: the region store is
/// a SQLite ``RegionStore`` (through ``InterposingStore``); leases and members are never granted,
/// no partition has stored contributions, and contributions and events are taken and counted
/// without merging (``ContributionOutcome/unchanged``). Singletons (the outputs) are granted
/// only when `grantsSingletons`; lease rounds fail (the store unreachable) once `renewals` ran out;
/// a hook runner asking for due deliveries waits while `deliveriesHeld` (not cancellably: a
/// runner's stop waits for it).
final class UnleasedClusterStore: InterposingStore, ClusterStoring, @unchecked Sendable {
    /// Contributions and event batches written, in order, as "region state" and "events N".
    let writes = LockedBox<[String]>([])
    let grantsSingletons: Bool
    /// Lease rounds that still succeed (nil: every one).
    let renewals: LockedBox<Int?>
    /// Where each appended event's type goes, as "append TYPE" (beside a test's log lines).
    let appended: InMemoryLogHandler.Store?
    /// While true, ``dueDeliveries(now:limit:)`` waits.
    let deliveriesHeld = LockedBox(false)
    /// Calls of ``dueDeliveries(now:limit:)`` begun.
    let deliveryQueries = LockedBox(0)
    /// Partitions `0..<grantsPartitions` are granted at the first lease round (epoch 1) and held after.
    let grantsPartitions: Int
    private let granted = LockedBox(false)
    /// Outputs lease requests that still succeed (nil: every one); after them ``holdSingleton(_:member:ttl:)`` throws.
    let singletonRenewals = LockedBox<Int?>(nil)
    /// While true, ``applyContribution(region:lease:member:write:state:since:time:events:)`` fails (the store unreachable).
    let contributionsRefused = LockedBox(false)
    /// The partitions whose contributions were refused at least once.
    let refusedPartitions = LockedBox<Set<Int>>([])

    init(_ base: RegionStore, grantsSingletons: Bool = false, grantsPartitions: Int = 0, renewals: Int? = nil,
         appended: InMemoryLogHandler.Store? = nil) {
        self.grantsSingletons = grantsSingletons
        self.grantsPartitions = grantsPartitions
        self.renewals = LockedBox(renewals)
        self.appended = appended
        super.init(base)
    }

    override func append(time: Double, type: String, region: String?, state: String?, reason: String?, json: String, hooks: [String]) async throws -> Int64 {
        appended?.append("append \(type)")
        return try await super.append(time: time, type: type, region: region, state: state, reason: reason, json: json, hooks: hooks)
    }

    override func apply(_ writes: [StoreWrite]) async throws -> [StoredEvent] {
        for case .event(_, let type, _, _, _, _, _) in writes { appended?.append("append \(type)") }
        return try await super.apply(writes)
    }

    override func dueDeliveries(now: Double, limit: Int) async throws -> [HookDelivery] {
        deliveryQueries.withLock { $0 += 1 }
        let held = deliveriesHeld
        await Task.detached {
            while held.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(10)) }
        }.value
        return try await super.dueDeliveries(now: now, limit: limit)
    }

    func heartbeat(member: String, ttl: Double) async throws {}
    func leave(member: String) async throws {}
    func join(member: String, instance: String, regions: String?, ttl: Double, preparing partitions: Int?,
              deciding: @escaping @Sendable (String) -> [Int]) async throws -> Bool { false }
    func leave(member: String, instance: String, partitions: [PartitionLease], singletons: [String]) async throws -> Bool { true }
    func balanceLeases(member: String, instance: String, regions: String?, partitions: Int, ttl: Double, reclaimOnly: Bool) async throws -> LeaseRound {
        let renews = renewals.withLock { left in
            guard let remaining = left else { return true }
            left = max(0, remaining - 1)
            return remaining > 0
        }
        guard renews else { throw RegionKitError(.storeFailed, "the store is unreachable (test)") }
        let leases = (0..<min(grantsPartitions, partitions)).map { PartitionLease(partition: $0, epoch: 1) }
        let first = granted.withLock { granted in defer { granted = true }; return !granted }
        return LeaseRound(held: leases, taken: first ? leases : [], surplus: 0, liveMembers: 1)
    }
    func releaseLeases(member: String, partitions: [Int]) async throws {}
    func recordSightings(member: String, total: Int64) async throws {}
    func members() async throws -> [(member: String, expiresIn: Double, sightings: Int64)] { [] }
    func clusterStatus() async throws -> ClusterStatus { ClusterStatus(partitionCount: nil, members: [], partitions: [], singletons: []) }
    func holdSingleton(_ name: String, member: String, ttl: Double) async throws -> Int64? {
        let answers = singletonRenewals.withLock { left in
            guard let remaining = left else { return true }
            left = max(0, remaining - 1)
            return remaining > 0
        }
        guard answers else { throw RegionKitError(.storeFailed, "the outputs lease query failed (test)") }
        return grantsSingletons ? 1 : nil
    }
    func leases() async throws -> [(partition: Int, owner: String?, epoch: Int64, expiresIn: Double)] { [] }
    func preparePartitions(_ count: Int, member: String?, deciding: @escaping @Sendable (String) -> [Int]) async throws {}
    func ensureRegions(_ regions: [Region], at time: Double) async throws {}
    func contributions(partition: Int) async throws -> [String: RegionContribution] { [:] }
    func applyContribution(region: String, lease: PartitionLease, member: String, write: ClusterWriteID?, state: RegionState, since: Double?, time: Double,
                           events: @escaping @Sendable (_ previous: RegionState?, _ merged: RegionState, _ since: Double?) -> [ClusterEventRow])
        async throws -> ContributionOutcome {
        if contributionsRefused.withLock({ $0 }) {
            refusedPartitions.withLock { _ = $0.insert(lease.partition) }
            throw RegionKitError(.storeFailed, "the store is unreachable (test)")
        }
        writes.withLock { $0.append("\(region) \(state.rawValue)") }
        return .unchanged
    }
    func appendEvents(_ rows: [ClusterEventRow], lease: PartitionLease, member: String, write: ClusterWriteID?) async throws -> ContributionOutcome {
        writes.withLock { $0.append("events \(rows.count)") }
        for row in rows {
            if let room = row.room { try base.saveRoom(room.beacon, scanner: room.scanner, at: row.time) }
        }
        return .unchanged
    }
}
