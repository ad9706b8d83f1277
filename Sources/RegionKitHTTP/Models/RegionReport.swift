import RegionKitCore
import RegionKitEngine
import RegionKitStore

/// One monitored region as `GET /v1/regions[/{id}]` reports it: its definition, where it came
/// from, its live state since when, and the evidence behind the last change. A region waiting
/// for its source (an outage) is reported too, with ``waitingForSource`` and the state it will
/// carry over when the source is back, stale (or unknown).
public struct RegionReport: Codable, Hashable, Sendable {
    public var identifier: String
    /// `beacon` or `circular`.
    public var kind: String
    /// `config` or `api` (see `RegionOrigin`).
    public var origin: String
    /// Beacon regions: `ibeacon`, `altbeacon`, `eddystone-uid` or `device` (`BeaconFormat.name`).
    public var format: String?
    /// iBeacon proximity UUID or AltBeacon id1 (not for Eddystone).
    public var uuid: String?
    /// iBeacon major or AltBeacon id2.
    public var major: UInt16?
    /// iBeacon minor or AltBeacon id3.
    public var minor: UInt16?
    /// Eddystone-UID namespace (20 hex digits).
    public var namespace: String?
    /// Eddystone-UID instance (12 hex digits), when the region names one.
    public var instance: String?
    /// A device region's device, by the id its scanner gives it (`BeaconIdentity.deviceID`).
    public var device: String?
    /// The scanner a scanner-bound beacon region listens to.
    public var scanner: String?
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
    /// Why the region is not monitored now, when it waits for its source (the scanner or the
    /// location source is unavailable or has not reported yet; or it is back and the region's
    /// retry is due): it is registered when the source works. Absent for a monitored region.
    public var waitingForSource: String?

    init(monitored: MonitoredRegion, origin: RegionOrigin?, stored: RegionStore.StoredState?) {
        self.init(region: monitored.region, origin: origin, state: monitored.state, since: monitored.stateSince?.seconds, stale: monitored.isStale)
        // The stored row is the evidence of the state the engine holds, when they agree.
        if let stored, stored.state == monitored.state {
            lastEvidence = stored.evidence
            lastReason = stored.evidence?.reason
        }
    }

    /// A region waiting for its source (`MonitoringEngine.waitingRegion(_:)`), with the state it
    /// will carry over when the source is back (`MonitoringEngine.carriedState(of:)`; unknown for
    /// a new definition), stale (nothing confirms it while the source is away), and `reason`. The
    /// stored row's evidence when it is of that state.
    init(waiting region: Region, carried: (state: RegionState, since: Timestamp?)?, origin: RegionOrigin?,
         stored: RegionStore.StoredState?, reason: String) {
        let state = carried?.state ?? .unknown
        self.init(region: region, origin: origin, state: state, since: carried?.since?.seconds, stale: state != .unknown)
        if let stored, stored.state == state, state != .unknown {
            lastEvidence = stored.evidence
            lastReason = stored.evidence?.reason
        }
        waitingForSource = reason
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
            let constraint = beacon.constraint
            format = constraint.format.name
            if constraint.format == .device {
                device = constraint.deviceID
            } else if constraint.format == .eddystoneUID {
                let bytes = withUnsafeBytes(of: constraint.uuid.uuid) { Array($0) }
                namespace = BeaconIdentity.hex(bytes[0..<10])
                // An instance is constrained when major is set (0), see BeaconIdentityConstraint.
                instance = constraint.major == nil ? nil : BeaconIdentity.hex(bytes[10..<16])
            } else {
                uuid = constraint.uuid.uuidString
                major = constraint.major
                minor = constraint.minor
            }
            scanner = beacon.scannerID
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
