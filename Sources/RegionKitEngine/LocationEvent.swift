import RegionKitCore
/// One delegate callback, with when it happened and why.
///
/// ```swift
/// for event in engine.ingest(observation) {
///     if case .didEnterRegion(let region) = event.kind { print("entered \(region.identifier) at \(event.timestamp)") }
/// }
/// ```
public struct LocationEvent: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        case didStartMonitoring(Region)
        case monitoringDidFail(Region, RegionKitError)
        case didEnterRegion(Region)
        case didExitRegion(Region)
        case didDetermineState(RegionState, Region)
        /// A ranging delivery; `label` is the region identifier ranging was started for, or the
        /// constraint's description.
        case didRangeBeacons([Beacon], BeaconIdentityConstraint, label: String)
        case didFailRanging(BeaconIdentityConstraint, label: String, RegionKitError)
        case didChangeAuthorization(RegionKind, AuthorizationStatus)
        /// The scanner a beacon is nearest to changed (gateway deployments; see ``NearestScannerPolicy``).
        case didChangeNearestScanner(BeaconIdentity, scannerID: String?, previous: String?)
    }

    public var timestamp: Timestamp
    public var kind: Kind
    /// Why the event fired (sighting, RSSI, silence, threshold...), when the engine knows.
    public var evidence: EventEvidence?

    public init(timestamp: Timestamp, kind: Kind, evidence: EventEvidence? = nil) {
        self.timestamp = timestamp
        self.kind = kind
        self.evidence = evidence
    }

    /// The Core Location callback name: `didEnterRegion`, `didRangeBeacons`...
    public var typeName: String {
        switch kind {
        case .didStartMonitoring: "didStartMonitoring"
        case .monitoringDidFail: "monitoringDidFail"
        case .didEnterRegion: "didEnterRegion"
        case .didExitRegion: "didExitRegion"
        case .didDetermineState: "didDetermineState"
        case .didRangeBeacons: "didRangeBeacons"
        case .didFailRanging: "didFailRanging"
        case .didChangeAuthorization: "didChangeAuthorization"
        case .didChangeNearestScanner: "didChangeNearestScanner"
        }
    }

    /// The region identifier (or ranging label) the event is about, if any.
    public var regionIdentifier: String? {
        switch kind {
        case .didStartMonitoring(let r), .monitoringDidFail(let r, _), .didEnterRegion(let r), .didExitRegion(let r), .didDetermineState(_, let r):
            r.identifier
        case .didRangeBeacons(_, _, let label), .didFailRanging(_, let label, _):
            label
        case .didChangeAuthorization, .didChangeNearestScanner:
            nil
        }
    }
}

/// The evidence behind an event, for logs that say *why*.
public struct EventEvidence: Hashable, Sendable, Codable {
    /// RSSI of the sighting that caused an entry, dBm.
    public var rssi: Int?
    /// Scanner that reported it.
    public var scannerID: String?
    /// Beacon that caused an entry.
    public var beacon: BeaconIdentity?
    /// Age of the last sighting when an exit fired, seconds.
    public var lastSightingAge: Double?
    /// Silence threshold that fired, seconds.
    public var exitThreshold: Double?
    /// Distance from a circular region's centre, metres.
    public var distance: Double?
    /// Horizontal accuracy of the fix, metres.
    public var horizontalAccuracy: Double?
    /// Seconds the position was held past the boundary.
    public var dwell: Double?
    /// A short human reason ("first sighting", "no sighting in the initial window"...).
    public var reason: String?

    public init(rssi: Int? = nil, scannerID: String? = nil, beacon: BeaconIdentity? = nil, lastSightingAge: Double? = nil,
                exitThreshold: Double? = nil, distance: Double? = nil, horizontalAccuracy: Double? = nil, dwell: Double? = nil,
                reason: String? = nil) {
        self.rssi = rssi
        self.scannerID = scannerID
        self.beacon = beacon
        self.lastSightingAge = lastSightingAge
        self.exitThreshold = exitThreshold
        self.distance = distance
        self.horizontalAccuracy = horizontalAccuracy
        self.dwell = dwell
        self.reason = reason
    }
}
