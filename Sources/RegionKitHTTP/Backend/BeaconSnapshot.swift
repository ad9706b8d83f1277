/// The body of `GET /v1/beacons`: the beacons heard now, at the daemon's clock. In cluster mode it
/// also says which member answered and which partitions it runs: the beacons listed are those
/// partitions' (a beacon's sightings all go to one partition, held by one member at a time).
///
/// ```swift
/// let (beacons, total) = BeaconReport.mostRecent(1_000, from: engine)
/// var snapshot = BeaconSnapshot(time: engine.now.seconds, beacons: beacons)
/// snapshot.total = total
/// ```
public struct BeaconSnapshot: Codable, Hashable, Sendable {
    /// When the snapshot was taken (Unix seconds): the daemon's clock, or the engine's when ahead
    /// (a replay's); the engine's alone stands still while nothing comes in.
    public var time: Double
    /// Most recently heard first: the first `limit` of `GET /v1/beacons` (the backends build no more).
    public var beacons: [BeaconReport]
    /// How many beacons are heard now (`beacons` may list fewer: `GET /v1/beacons?limit=`).
    public var total: Int?
    /// Cluster mode: the member that answered.
    public var member: String?
    /// Cluster mode: the partitions this member runs now (the beacons listed are theirs only).
    public var partitions: [Int]?
    /// Cluster mode: how many partitions the cluster has.
    public var partitionCount: Int?
    /// The scanners that said they are offline and have not come back, sorted
    /// (`MonitoringEngine.offlineScanners`): the beacons only they hear are held.
    public var offlineScanners: [String] = []

    public init(time: Double, beacons: [BeaconReport], member: String? = nil, partitions: [Int]? = nil, partitionCount: Int? = nil) {
        self.time = time
        self.beacons = beacons
        self.member = member
        self.partitions = partitions
        self.partitionCount = partitionCount
    }
}
