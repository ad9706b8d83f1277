import RegionKitCore
import RegionKitEngine
import RegionKitStore

/// One monitored region as `GET /v1/regions[/{id}]` reports it: its definition, where it came
/// from, its live state since when, and the evidence behind the last change.
public struct RegionReport: Codable, Hashable, Sendable {
    public var identifier: String
    /// `beacon` or `circular`.
    public var kind: String
    /// `config` or `api` (see ``RegionOrigin``).
    public var origin: String
    public var uuid: String?
    public var major: UInt16?
    public var minor: UInt16?
    public var latitude: Double?
    public var longitude: Double?
    public var radius: Double?
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool
    public var notifyEntryStateOnDisplay: Bool?
    /// `inside`, `outside` or `unknown`.
    public var state: String
    /// Unix seconds since the state holds.
    public var since: Double?
    /// Restored after a restart and not yet confirmed by fresh evidence.
    public var stale: Bool
    /// The reason of the last state change ("first sighting", "no sighting for 2.1 s", …).
    public var lastReason: String?
    public var lastEvidence: EventEvidence?

    init(monitored: MonitoredRegion, origin: RegionOrigin?, stored: RegionStore.StoredState?) {
        self.init(region: monitored.region, origin: origin, state: monitored.state, since: monitored.stateSince?.seconds, stale: monitored.isStale)
        // The stored row is the evidence of the state the engine holds, when they agree.
        if let stored, stored.state == monitored.state {
            lastEvidence = stored.evidence
            lastReason = stored.evidence?.reason
        }
    }

    /// The region's definition with a state; no evidence yet.
    init(region: Region, origin: RegionOrigin?, state: RegionState, since: Double?, stale: Bool) {
        identifier = region.identifier
        kind = region.kind.rawValue
        self.origin = (origin ?? .configuration).rawValue
        notifyOnEntry = region.notifyOnEntry
        notifyOnExit = region.notifyOnExit
        switch region {
        case .beacon(let beacon):
            uuid = beacon.uuid.uuidString
            major = beacon.major
            minor = beacon.minor
            notifyEntryStateOnDisplay = beacon.notifyEntryStateOnDisplay
        case .circular(let circle):
            latitude = circle.latitude
            longitude = circle.longitude
            radius = circle.radius
        }
        self.state = state.rawValue
        self.since = since
        self.stale = stale
    }
}
