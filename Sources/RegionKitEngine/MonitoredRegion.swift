import RegionKitCore
/// The engine's plain-value state for one monitored region (storable, shardable).
///
/// ```swift
/// engine.monitoredRegion("lobby")?.state // .inside
/// ```
public struct MonitoredRegion: Hashable, Sendable, Codable {
    /// A sighting stream: one beacon identity as heard by one scanner.
    public struct StreamKey: Hashable, Sendable, Codable, Comparable {
        public var identity: BeaconIdentity
        public var scannerID: String?

        public static func < (lhs: StreamKey, rhs: StreamKey) -> Bool {
            if lhs.identity != rhs.identity { return lhs.identity < rhs.identity }
            return (lhs.scannerID ?? "") < (rhs.scannerID ?? "")
        }
    }

    public var region: Region
    public var state: RegionState
    public var registeredAt: Timestamp
    /// When the state last changed (or was first determined).
    public var stateSince: Timestamp?
    /// A `requestState` is waiting for the state to be determined.
    public var stateRequested: Bool
    /// Beacon regions: the streams currently present.
    public var streams: StreamTable
    /// Beacon regions: the streams present when the region last exited. A stream heard again
    /// soon after was not gone (the exit was false) and resumes with what was learned about it
    /// (``ExitDetector/stream(resuming:at:rssi:)``), so a stream's blackouts are learned instead of
    /// exiting again and again.
    public var departedStreams: StreamTable
    /// Circular regions: the side the position is heading to, and since when.
    public var candidate: RegionState?
    public var candidateSince: Timestamp?
    /// Circular regions: distance from the centre at the latest fix that evaluated the region,
    /// metres (fixes far from an outside region with nothing pending skip it: see
    /// ``MonitoringEngine/ingest(_:)-(LocationFix)``).
    public var lastDistance: Double?
    /// Set when the state was restored from storage and no fresh evidence has confirmed it yet.
    public var restoredAt: Timestamp?

    /// Whether the state is a stored one not yet confirmed by fresh observations.
    public var isStale: Bool { restoredAt != nil }

    public init(region: Region, registeredAt: Timestamp) {
        self.region = region
        self.state = .unknown
        self.registeredAt = registeredAt
        self.stateRequested = false
        self.streams = [:]
        self.departedStreams = [:]
    }
}
