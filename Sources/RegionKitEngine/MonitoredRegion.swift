import RegionKitCore
/// The engine's plain-value state for one monitored region (storable, shardable).
///
/// The engine keeps one of these per region, so its size is memory per region (issue 13): the
/// five optional times and distance are stored as plain `Double`s with one byte of presence bits
/// (an `Optional<Double>` is 9 bytes, padded to 16), the small fields last; 160 bytes where the
/// stored optionals took 200. Equality, hashing and coding are those of the public properties,
/// with the same coding keys as before.
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
    public var registeredAt: Timestamp
    private var stateSinceSeconds: Double
    private var candidateSinceSeconds: Double
    private var lastDistanceValue: Double
    private var restoredAtSeconds: Double
    /// Beacon regions: the streams currently present.
    public var streams: StreamTable
    /// Beacon regions: the streams present when the region last exited. A stream heard again
    /// soon after was not gone (the exit was false) and resumes with what was learned about it
    /// (``ExitDetector/stream(resuming:at:rssi:)``), so a stream's blackouts are learned instead of
    /// exiting again and again.
    public var departedStreams: StreamTable
    public var state: RegionState
    /// A `requestState` is waiting for the state to be determined.
    public var stateRequested: Bool
    /// Circular regions: the side the position is heading to, and since when.
    public var candidate: RegionState?
    /// Which of the optional `Double`s hold a value (``Present``).
    private var present: Present

    /// Presence bits of the optional values stored as plain `Double`s.
    private struct Present: OptionSet, Hashable, Sendable {
        let rawValue: UInt8
        static let stateSince = Present(rawValue: 1 << 0)
        static let candidateSince = Present(rawValue: 1 << 1)
        static let lastDistance = Present(rawValue: 1 << 2)
        static let restoredAt = Present(rawValue: 1 << 3)
    }

    /// When the state last changed (or was first determined).
    public var stateSince: Timestamp? {
        get { present.contains(.stateSince) ? Timestamp(seconds: stateSinceSeconds) : nil }
        set { stateSinceSeconds = store(newValue?.seconds, .stateSince) }
    }

    public var candidateSince: Timestamp? {
        get { present.contains(.candidateSince) ? Timestamp(seconds: candidateSinceSeconds) : nil }
        set { candidateSinceSeconds = store(newValue?.seconds, .candidateSince) }
    }

    /// Circular regions: distance from the centre at the latest fix that evaluated the region,
    /// metres (fixes far from an outside region with nothing pending skip it: see
    /// ``MonitoringEngine/ingest(_:)-(LocationFix)``).
    public var lastDistance: Double? {
        get { present.contains(.lastDistance) ? lastDistanceValue : nil }
        set { lastDistanceValue = store(newValue, .lastDistance) }
    }

    /// Set when the state was restored from storage and no fresh evidence has confirmed it yet.
    public var restoredAt: Timestamp? {
        get { present.contains(.restoredAt) ? Timestamp(seconds: restoredAtSeconds) : nil }
        set { restoredAtSeconds = store(newValue?.seconds, .restoredAt) }
    }

    /// Whether the state is a stored one not yet confirmed by fresh observations.
    public var isStale: Bool { present.contains(.restoredAt) }

    /// Marks `bit` present or absent and returns the value to store (0 when absent).
    private mutating func store(_ value: Double?, _ bit: Present) -> Double {
        guard let value else {
            present.remove(bit)
            return 0
        }
        present.insert(bit)
        return value
    }

    public init(region: Region, registeredAt: Timestamp) {
        self.region = region
        self.registeredAt = registeredAt
        self.stateSinceSeconds = 0
        self.candidateSinceSeconds = 0
        self.lastDistanceValue = 0
        self.restoredAtSeconds = 0
        self.streams = [:]
        self.departedStreams = [:]
        self.state = .unknown
        self.stateRequested = false
        self.candidate = nil
        self.present = []
    }

    // MARK: Equality, hashing and coding: the public properties', as when they were stored.

    public static func == (lhs: MonitoredRegion, rhs: MonitoredRegion) -> Bool {
        lhs.region == rhs.region && lhs.state == rhs.state && lhs.registeredAt == rhs.registeredAt
            && lhs.stateSince == rhs.stateSince && lhs.stateRequested == rhs.stateRequested
            && lhs.streams == rhs.streams && lhs.departedStreams == rhs.departedStreams
            && lhs.candidate == rhs.candidate && lhs.candidateSince == rhs.candidateSince
            && lhs.lastDistance == rhs.lastDistance && lhs.restoredAt == rhs.restoredAt
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(region)
        hasher.combine(state)
        hasher.combine(registeredAt)
        hasher.combine(stateSince)
        hasher.combine(stateRequested)
        hasher.combine(streams)
        hasher.combine(departedStreams)
        hasher.combine(candidate)
        hasher.combine(candidateSince)
        hasher.combine(lastDistance)
        hasher.combine(restoredAt)
    }

    private enum CodingKeys: String, CodingKey {
        case region, state, registeredAt, stateSince, stateRequested, streams, departedStreams
        case candidate, candidateSince, lastDistance, restoredAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(region: try container.decode(Region.self, forKey: .region),
                  registeredAt: try container.decode(Timestamp.self, forKey: .registeredAt))
        state = try container.decode(RegionState.self, forKey: .state)
        stateSince = try container.decodeIfPresent(Timestamp.self, forKey: .stateSince)
        stateRequested = try container.decode(Bool.self, forKey: .stateRequested)
        streams = try container.decode(StreamTable.self, forKey: .streams)
        departedStreams = try container.decode(StreamTable.self, forKey: .departedStreams)
        candidate = try container.decodeIfPresent(RegionState.self, forKey: .candidate)
        candidateSince = try container.decodeIfPresent(Timestamp.self, forKey: .candidateSince)
        lastDistance = try container.decodeIfPresent(Double.self, forKey: .lastDistance)
        restoredAt = try container.decodeIfPresent(Timestamp.self, forKey: .restoredAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(region, forKey: .region)
        try container.encode(state, forKey: .state)
        try container.encode(registeredAt, forKey: .registeredAt)
        try container.encodeIfPresent(stateSince, forKey: .stateSince)
        try container.encode(stateRequested, forKey: .stateRequested)
        try container.encode(streams, forKey: .streams)
        try container.encode(departedStreams, forKey: .departedStreams)
        try container.encodeIfPresent(candidate, forKey: .candidate)
        try container.encodeIfPresent(candidateSince, forKey: .candidateSince)
        try container.encodeIfPresent(lastDistance, forKey: .lastDistance)
        try container.encodeIfPresent(restoredAt, forKey: .restoredAt)
    }
}
