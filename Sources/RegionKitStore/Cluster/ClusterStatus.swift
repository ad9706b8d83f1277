/// The cluster as the shared store sees it at one instant (one read snapshot, times on the
/// store's clock): its members, who holds each partition and each singleton lease (the outputs),
/// and the partition count it was prepared for. What `GET /v1/cluster` shows.
///
/// ```swift
/// let status = try await store.clusterStatus()
/// for lease in status.partitions where !lease.live { print("partition \(lease.partition) is free") }
/// ```
public struct ClusterStatus: Hashable, Sendable {
    /// The singleton lease whose holder runs the cluster's outputs (hooks, MQTT events).
    public static let outputsLease = "outputs"

    /// A member's heartbeat row.
    public struct Member: Hashable, Sendable {
        public var member: String
        /// The process holding the name (host, pid, a random part); nil before any claimed it.
        public var instance: String?
        /// Seconds until the heartbeat expires (≤ 0: gone).
        public var expiresIn: Double
        /// Sightings the member's partitions ingested since it started (its last report).
        public var sightings: Int64
        /// The digest of its configured region definitions (``RegionDefinitions/digest(of:)``);
        /// nil when it recorded none (a tool, or a version before it was recorded).
        public var regions: String?

        public init(member: String, instance: String?, expiresIn: Double, sightings: Int64, regions: String? = nil) {
            self.member = member
            self.instance = instance
            self.expiresIn = expiresIn
            self.sightings = sightings
            self.regions = regions
        }

        public var live: Bool { expiresIn > 0 }
    }

    /// A lease: a partition's (``name`` its number) or a singleton's (``name`` e.g. `outputs`).
    public struct Lease: Hashable, Sendable {
        public var name: String
        /// The last holder (nil: never held).
        public var owner: String?
        /// The fencing epoch: one more at every take.
        public var epoch: Int64
        /// Seconds until the lease expires (≤ 0: free).
        public var expiresIn: Double

        public init(name: String, owner: String?, epoch: Int64, expiresIn: Double) {
            self.name = name
            self.owner = owner
            self.epoch = epoch
            self.expiresIn = expiresIn
        }

        public var live: Bool { owner != nil && expiresIn > 0 }
    }

    /// The partition count recorded when the cluster was prepared (nil: a store from before it was recorded).
    public var partitionCount: Int?
    public var members: [Member]
    /// By partition number.
    public var partitions: [Lease]
    /// By name.
    public var singletons: [Lease]

    public init(partitionCount: Int?, members: [Member], partitions: [Lease], singletons: [Lease]) {
        self.partitionCount = partitionCount
        self.members = members
        self.partitions = partitions
        self.singletons = singletons
    }
}
