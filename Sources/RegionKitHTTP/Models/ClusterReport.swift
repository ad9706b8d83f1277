import RegionKitStore

/// The body of `GET /v1/cluster` (cluster mode): the answering member, and the cluster as the
/// shared store sees it — every member's heartbeat and process, who holds each partition and the
/// outputs, with their fencing epochs. Expiries are seconds from now on the store's clock.
///
/// ```swift
/// let report = ClusterReport(member: engine.member, instance: engine.instance, partitionCount: 16, status: try await store.clusterStatus())
/// ```
public struct ClusterReport: Codable, Hashable, Sendable {
    public struct Member: Codable, Hashable, Sendable {
        public var member: String
        /// The process holding the name: host, pid and a random part.
        public var instance: String?
        /// Whether its heartbeat is live.
        public var live: Bool
        public var expiresIn: Double
        /// Sightings its partitions ingested since it started (as it last reported).
        public var sightings: Int64
        /// The partitions it holds now.
        public var partitions: [Int]
        /// The digest of its configured region definitions (`RegionDefinitions.digest(of:)`):
        /// live members with different ones decide their regions by different definitions.
        public var regions: String?
    }

    public struct Lease: Codable, Hashable, Sendable {
        /// The partition (in `partitions`, every one of the count).
        public var partition: Int?
        /// The last holder (null: never held).
        public var owner: String?
        public var epoch: Int64
        /// Whether the lease is held now (an owner, unexpired).
        public var live: Bool
        public var expiresIn: Double
    }

    /// The member that answered.
    public var member: String
    /// Its process.
    public var instance: String
    /// The partition count this member runs with.
    public var partitionCount: Int
    public var members: [Member]
    public var partitions: [Lease]
    /// The holder of the outputs (hooks, MQTT events); null before any member took them.
    public var outputs: Lease?

    /// How many different region definitions the live members run (1 when they agree; 0 when
    /// none recorded any).
    public var regionDefinitionsInUse: Int {
        Set(members.filter(\.live).compactMap(\.regions)).count
    }

    public init(member: String, instance: String, partitionCount: Int, status: ClusterStatus) {
        self.member = member
        self.instance = instance
        let count = status.partitionCount ?? partitionCount
        self.partitionCount = count
        let rows = Dictionary(status.partitions.compactMap { lease in Int(lease.name).map { ($0, lease) } }, uniquingKeysWith: { first, _ in first })
        // Every partition of the count, a lease row or not (rows are made by the first lease round
        // after a start or a larger count): one never held has no owner and expiresIn 0.
        partitions = (0..<max(0, count)).map { partition in
            guard let lease = rows[partition] else { return Lease(partition: partition, owner: nil, epoch: 0, live: false, expiresIn: 0) }
            return Lease(partition: partition, owner: lease.owner, epoch: lease.epoch, live: lease.live,
                         expiresIn: lease.owner == nil ? 0 : lease.expiresIn)
        }
        let held = Dictionary(grouping: partitions.filter(\.live), by: { $0.owner ?? "" }).mapValues { $0.compactMap(\.partition) }
        members = status.members.map {
            Member(member: $0.member, instance: $0.instance, live: $0.live, expiresIn: $0.expiresIn, sightings: $0.sightings,
                   partitions: held[$0.member] ?? [], regions: $0.regions)
        }
        outputs = status.singletons.first { $0.name == ClusterStatus.outputsLease }.map {
            Lease(partition: nil, owner: $0.owner, epoch: $0.epoch, live: $0.live, expiresIn: $0.expiresIn)
        }
    }
}
