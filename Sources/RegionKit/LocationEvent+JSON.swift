import RegionKitCore
import RegionKitEngine
/// The JSON-lines form of events shared by `simulate`, `monitor` and `replay`.
extension LocationEvent {
    /// The six Core Location callback types of the documented JSON-lines contract.
    public static let contractTypes: Set<String> = [
        "didStartMonitoring", "monitoringDidFail", "didEnterRegion", "didExitRegion", "didDetermineState", "didRangeBeacons",
    ]

    /// One JSON object: `{"t", "type", "region", "state"?, "beacons"?, "error"?, "evidence"?}`.
    ///
    /// ```swift
    /// event.jsonLine(origin: .zero)
    /// // {"t":12.3,"type":"didEnterRegion","region":"lobby","evidence":{"rssi":-64,"reason":"sighting"}}
    /// ```
    /// - Parameter origin: the time reported as `t = 0`.
    public func jsonLine(origin: Timestamp) -> String {
        var line = JSONLine()
        line.add("t", timestamp - origin, decimals: 3)
        line.add("type", typeName)
        if let region = regionIdentifier { line.add("region", region) }
        switch kind {
        case .didDetermineState(let state, _):
            line.add("state", state.rawValue)
        case .didRangeBeacons(let beacons, let constraint, _):
            line.add("beacons", array: beacons.map(Self.json(for:)))
            line.add("constraint", constraint.description)
        case .monitoringDidFail(_, let error), .didFailRanging(_, _, let error):
            var object = JSONLine()
            object.add("code", error.code.rawValue)
            object.add("message", error.message)
            line.add("error", object: object)
        case .didChangeAuthorization(let kind, let status):
            line.add("source", kind.rawValue)
            line.add("status", status.description)
        case .didChangeNearestScanner(let beacon, let scanner, let previous):
            line.add("beacon", beacon.description)
            if let scanner { line.add("scanner", scanner) }
            if let previous { line.add("previous", previous) }
        case .didStartMonitoring, .didEnterRegion, .didExitRegion:
            break
        }
        if let evidence, let object = Self.json(for: evidence) { line.add("evidence", object: object) }
        return line.text
    }

    /// The beacon's identity fields (`JSONLine.addIdentity(_:)`: iBeacon `{"uuid", "major",
    /// "minor", …}` as before, other formats after `"format"`), `"telemetry"` when the
    /// transmitter sent Eddystone-TLM, `"proximity"`, `"accuracy"`, `"rssi"`.
    static func json(for beacon: Beacon) -> JSONLine {
        var object = JSONLine()
        object.addIdentity(beacon.identity)
        if let telemetry = beacon.telemetry { object.add("telemetry", object: telemetry.jsonObject()) }
        object.add("proximity", beacon.proximity.rawValue)
        object.add("accuracy", beacon.accuracy, decimals: 3, fallback: -1)
        object.add("rssi", beacon.rssi)
        return object
    }

    static func json(for evidence: EventEvidence) -> JSONLine? {
        var object = JSONLine()
        if let reason = evidence.reason { object.add("reason", reason) }
        if let rssi = evidence.rssi { object.add("rssi", rssi) }
        if let scanner = evidence.scannerID { object.add("scanner", scanner) }
        if let beacon = evidence.beacon { object.add("beacon", beacon.description) }
        if let age = evidence.lastSightingAge { object.add("lastSightingAge", age, decimals: 3) }
        if let threshold = evidence.exitThreshold { object.add("exitThreshold", threshold, decimals: 3) }
        if let distance = evidence.distance { object.add("distance", distance, decimals: 1) }
        if let accuracy = evidence.horizontalAccuracy { object.add("horizontalAccuracy", accuracy) }
        if let dwell = evidence.dwell { object.add("dwell", dwell, decimals: 3) }
        return object.isEmpty ? nil : object
    }
}
