import RegionKitCore

/// The engine's record of one region, by slot in its ``RegionTable``: what
/// ``MonitoredRegion`` shows of a region, less its streams: those present now live in the
/// engine-wide ``StreamStore`` (the record holds a 4-byte handle), those present when it last
/// exited, which few regions hold at a time, in ``DepartedStreams`` (a 4-byte position).
///
/// The engine keeps one per region, so its size is memory per region (issue 13): the four
/// optional times and distance are plain `Double`s with one byte of presence bits (an
/// `Optional<Double>` is 9 bytes, padded to 16), the small fields last, and a circular region's
/// last distance shares its 8 bytes with a beacon region's stream positions; 112 bytes (136 with
/// a stream table of its own; the public ``MonitoredRegion``, which the engine used to store,
/// takes 176 with its two stream tables; with stored optionals it took 200). The public value is
/// built from it on demand (``MonitoringEngine/monitoredRegion(_:)``).
///
/// ```swift
/// var record = RegionRecord(region: region, registeredAt: .zero)
/// record.stateSince = Timestamp(seconds: 4)
/// record.stateSince?.seconds   // 4
/// ```
struct RegionRecord: Sendable {
    /// The region. Its kind decides what `kindBits` holds: a record's region is not changed to
    /// another kind (``RegionTable`` undoes such a change; ``MonitoredRegion`` keeps the distance itself).
    var region: Region
    var registeredAt: Timestamp
    private var stateSinceSeconds: Double
    private var candidateSinceSeconds: Double
    private var restoredAtSeconds: Double
    /// Eight bytes each kind of region uses its own way: a circular region's ``lastDistance``
    /// (its bit pattern); a beacon region's ``departedPosition`` (low 32 bits) and
    /// ``streamsHandle`` (high 32 bits). Neither kind has the other's fields (issue 13: 8 bytes
    /// a region, a 112-byte record).
    private var kindBits: UInt64
    var state: RegionState
    /// A `requestState` is waiting for the state to be determined.
    var stateRequested: Bool
    /// Circular regions: the side the position is heading to, and since when.
    var candidate: RegionState?
    /// Which of the optional `Double`s hold a value (``Present``).
    private var present: Present

    /// Whether the region is a beacon region (``kindBits`` holds its stream positions). (A
    /// presence bit for it, set with the region, counted no fewer instructions than the enum's tag.)
    @inline(__always)
    private var isBeacon: Bool {
        if case .beacon = region { return true }
        return false
    }

    /// Beacon regions: the position of the streams present when the region last exited in its
    /// table's ``DepartedStreams``; −1 when it has none (always for a circular region: setting
    /// it there changes nothing). Set by the ``RegionTable`` only.
    var departedPosition: Int32 {
        @inline(__always) get { isBeacon ? Int32(truncatingIfNeeded: kindBits) : -1 }
        set { if isBeacon { kindBits = kindBits & 0xFFFF_FFFF_0000_0000 | UInt64(UInt32(bitPattern: newValue)) } }
    }

    /// Beacon regions: the handle of the streams present now in its table's ``StreamStore``
    /// (``RegionStreams``); ``RegionStreams/none`` when it has none (always for a circular
    /// region: setting it there changes nothing). Set by the ``RegionTable`` only.
    var streamsHandle: Int32 {
        @inline(__always) get { isBeacon ? Int32(truncatingIfNeeded: kindBits >> 32) : RegionStreams.none }
        set { if isBeacon { kindBits = kindBits & 0xFFFF_FFFF | UInt64(UInt32(bitPattern: newValue)) << 32 } }
    }

    /// Presence bits of the optional values stored as plain `Double`s.
    private struct Present: OptionSet, Sendable {
        let rawValue: UInt8
        static let stateSince = Present(rawValue: 1 << 0)
        static let candidateSince = Present(rawValue: 1 << 1)
        static let lastDistance = Present(rawValue: 1 << 2)
        static let restoredAt = Present(rawValue: 1 << 3)
        /// Not a value: the record is a stored region's (``isStored``).
        static let stored = Present(rawValue: 1 << 4)
    }

    /// Whether this record is a region's in its ``RegionTable`` (`false`: a free slot's
    /// placeholder). Kept in the record, whose cache lines a sighting reads anyway, instead of a
    /// table-wide array (one more cache miss a sighting with a million regions). Set by the table only.
    var isStored: Bool {
        get { present.contains(.stored) }
        set { if newValue { present.insert(.stored) } else { present.remove(.stored) } }
    }

    init(region: Region, registeredAt: Timestamp) {
        self.region = region
        self.registeredAt = registeredAt
        self.stateSinceSeconds = 0
        self.candidateSinceSeconds = 0
        self.restoredAtSeconds = 0
        self.state = .unknown
        self.stateRequested = false
        self.candidate = nil
        self.present = []
        // A beacon region's positions: none (−1, and −1 for the streams); a circular region's distance: absent.
        self.kindBits = 0
        if isBeacon { kindBits = UInt64(UInt32(bitPattern: RegionStreams.none)) << 32 | UInt64(UInt32(bitPattern: -1)) }
    }

    /// When the state last changed (or was first determined).
    var stateSince: Timestamp? {
        get { present.contains(.stateSince) ? Timestamp(seconds: stateSinceSeconds) : nil }
        set { stateSinceSeconds = store(newValue?.seconds, .stateSince) }
    }

    /// Circular regions: when the position started heading to ``candidate``.
    var candidateSince: Timestamp? {
        get { present.contains(.candidateSince) ? Timestamp(seconds: candidateSinceSeconds) : nil }
        set { candidateSinceSeconds = store(newValue?.seconds, .candidateSince) }
    }

    /// Circular regions: distance from the centre at the latest fix that evaluated the region,
    /// metres; `nil` for a beacon region (setting it there changes nothing: its bytes hold the
    /// beacon region's stream positions).
    var lastDistance: Double? {
        get { present.contains(.lastDistance) ? Double(bitPattern: kindBits) : nil }
        set {
            guard !isBeacon else { return }
            kindBits = store(newValue, .lastDistance).bitPattern
        }
    }

    /// Set when the state was restored from storage and no fresh evidence has confirmed it yet.
    var restoredAt: Timestamp? {
        get { present.contains(.restoredAt) ? Timestamp(seconds: restoredAtSeconds) : nil }
        set { restoredAtSeconds = store(newValue?.seconds, .restoredAt) }
    }

    /// Marks `bit` present or absent and returns the value to store (0 when absent).
    private mutating func store(_ value: Double?, _ bit: Present) -> Double {
        guard let value else {
            present.remove(bit)
            return 0
        }
        present.insert(bit)
        return value
    }
}
