/// The body of `GET /v1/scanners`: the scanners the engine knows now, at the daemon's clock. In cluster
/// mode, as this member's partitions know them (merged: ``ScannerReport/merged(_:)``).
///
/// ```swift
/// let scanners = ScannerReport.all(from: engine, at: now)
/// let snapshot = ScannerSnapshot(time: now.seconds, scanners: Array(scanners.prefix(1_000)), total: scanners.count)
/// ```
public struct ScannerSnapshot: Codable, Hashable, Sendable {
    /// When the snapshot was taken (Unix seconds): the daemon's clock, or the engine's when ahead.
    public var time: Double
    /// Most recently heard first: the first `limit` of `GET /v1/scanners`.
    public var scanners: [ScannerReport]
    /// How many scanners the engine knows (`scanners` may list fewer).
    public var total: Int
    /// Cluster mode: the member that answered.
    public var member: String?

    public init(time: Double, scanners: [ScannerReport], total: Int, member: String? = nil) {
        self.time = time
        self.scanners = scanners
        self.total = total
        self.member = member
    }
}
