import RegionKitCore
/// The engine's plain-value state for one monitored region (storable, shardable), as
/// ``MonitoringEngine/monitoredRegion(_:)`` shows it.
///
/// The engine stores a `RegionRecord` per region (112 bytes) and keeps the region's streams
/// beside it (`StreamStore`, `DepartedStreams`); this value is built from them on demand. Equality,
/// hashing and coding are those of the public properties, with the same coding keys as when
/// the engine stored this type.
///
/// ```swift
/// engine.monitoredRegion("lobby")?.state // .inside
/// ```
public struct MonitoredRegion: Hashable, Sendable, Codable {
    /// A sighting stream: one beacon identity as heard by one scanner.
    public struct StreamKey: Hashable, Sendable, Codable, Comparable {
        public var identity: BeaconIdentity
        public var scannerID: String?

        @inline(__always)
        public static func == (lhs: StreamKey, rhs: StreamKey) -> Bool {
            lhs.matches(identity: rhs.identity, scannerID: rhs.scannerID)
        }

        /// Whether this is the key of `identity`'s stream by `scannerID` (`==` without a key
        /// built for the other side): the identities first (plain bytes), the scanner names only
        /// when those are equal, and not through `Optional`'s `==` (which copies both names into
        /// a pair: a retain and a release each, on the sighting path).
        @inline(__always)
        func matches(identity: BeaconIdentity, scannerID: String?) -> Bool {
            guard self.identity == identity else { return false }
            guard let left = self.scannerID else { return scannerID == nil }
            guard let right = scannerID else { return false }
            return left == right
        }

        public static func < (lhs: StreamKey, rhs: StreamKey) -> Bool {
            if lhs.identity != rhs.identity { return lhs.identity < rhs.identity }
            return (lhs.scannerID ?? "") < (rhs.scannerID ?? "")
        }
    }

    /// Everything but the streams and the last distance (its `departedPosition`, `streamsHandle`
    /// and `lastDistance` unused here).
    private(set) var record: RegionRecord
    /// Beacon regions: the streams currently present.
    public var streams: StreamTable
    /// Beacon regions: the streams present when the region last exited. A stream heard again
    /// soon after was not gone (the exit was false) and resumes with what was learned about it
    /// (``ExitDetector/stream(resuming:at:rssi:)``), so a stream's blackouts are learned instead of
    /// exiting again and again.
    public var departedStreams: StreamTable

    public var region: Region {
        get { record.region }
        set { record.region = newValue }
    }
    public var registeredAt: Timestamp {
        get { record.registeredAt }
        set { record.registeredAt = newValue }
    }
    public var state: RegionState {
        get { record.state }
        set { record.state = newValue }
    }
    /// A `requestState` is waiting for the state to be determined.
    public var stateRequested: Bool {
        get { record.stateRequested }
        set { record.stateRequested = newValue }
    }
    /// Circular regions: the side the position is heading to, and since when.
    public var candidate: RegionState? {
        get { record.candidate }
        set { record.candidate = newValue }
    }
    /// When the state last changed (or was first determined).
    public var stateSince: Timestamp? {
        get { record.stateSince }
        set { record.stateSince = newValue }
    }
    public var candidateSince: Timestamp? {
        get { record.candidateSince }
        set { record.candidateSince = newValue }
    }
    /// Circular regions: distance from the centre at the latest fix that evaluated the region,
    /// metres (fixes far from an outside region with nothing pending skip it: see
    /// ``MonitoringEngine/ingest(_:)-(LocationFix)``). Stored here, not in the record: the
    /// engine's record keeps it for circular regions only.
    public var lastDistance: Double?
    /// Set when the state was restored from storage and no fresh evidence has confirmed it yet.
    public var restoredAt: Timestamp? {
        get { record.restoredAt }
        set { record.restoredAt = newValue }
    }

    /// Whether the state is a stored one not yet confirmed by fresh observations.
    public var isStale: Bool { restoredAt != nil }

    public init(region: Region, registeredAt: Timestamp) {
        self.init(record: RegionRecord(region: region, registeredAt: registeredAt), streams: [:], departedStreams: [:])
    }

    /// The public form of an engine record, its present streams and its departed streams.
    init(record: RegionRecord, streams: StreamTable, departedStreams: StreamTable) {
        self.record = record
        self.record.departedPosition = -1
        self.record.streamsHandle = RegionStreams.none
        self.record.isStored = false
        self.lastDistance = record.lastDistance
        self.streams = streams
        self.departedStreams = departedStreams
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
