import RegionKit

/// Renders simulation events as the timeline the field report's app showed: monitoring started,
/// determined inside/outside, entered, exited, ranged beacon count changed, app actions.
/// Ranging deliveries are shown only when the number of ranged beacons changes.
///
/// ```swift
/// var timeline = TimelineFormatter()
/// for event in events { if let line = timeline.line(for: event) { print(line) } }
/// // "  48.2 s  ENTER  museum (rssi -88 dBm)"
/// ```
public struct TimelineFormatter: Sendable {
    private var rangedCounts: [String: Int] = [:]
    public var origin: Timestamp

    public init(origin: Timestamp = .zero) {
        self.origin = origin
    }

    public mutating func line(for event: SimulationEvent) -> String? {
        let time = Self.clock(event.timestamp - origin)
        switch event {
        case .app(let action):
            return "\(time)  APP    \(action.message)"
        case .location(let event):
            guard let text = describe(event) else { return nil }
            return "\(time)  \(text)"
        }
    }

    private mutating func describe(_ event: LocationEvent) -> String? {
        switch event.kind {
        case .didStartMonitoring(let region):
            rangedCounts[region.identifier] = nil
            return "START  monitoring \(region.identifier) (\(Self.describe(region)))"
        case .monitoringDidFail(let region, let error):
            rangedCounts[region.identifier] = nil
            var text = "FAIL   \(region.identifier): \(error.message)"
            if let reason = event.evidence?.reason { text += " — \(reason)" }
            return text
        case .didEnterRegion(let region):
            return "ENTER  \(region.identifier)\(Self.why(event.evidence))"
        case .didExitRegion(let region):
            rangedCounts[region.identifier] = nil   // its automatic ranging ends: a re-entry's first count is shown
            return "EXIT   \(region.identifier)\(Self.why(event.evidence))"
        case .didDetermineState(let state, let region):
            return "STATE  \(region.identifier) is \(state.rawValue)"
        case .didRangeBeacons(let beacons, _, let label):
            // Like iOS, the count includes beacons still listed (rssi 0) for a while after going silent.
            guard rangedCounts[label] != beacons.count else { return nil }
            rangedCounts[label] = beacons.count
            let list = beacons.prefix(4).map { beacon in
                beacon.isHeard
                    ? "\(beacon.major).\(beacon.minor) \(beacon.proximity.rawValue) \(AppBehavior.metres(beacon.accuracy))"
                    : "\(beacon.major).\(beacon.minor) not heard"
            }
            return "RANGE  \(label): \(beacons.count) beacon\(beacons.count == 1 ? "" : "s") ranged" + (list.isEmpty ? "" : " [\(list.joined(separator: ", "))]")
        case .didFailRanging(_, let label, let error):
            rangedCounts[label] = nil
            return "FAIL   ranging \(label): \(error.message)"
        case .didChangeAuthorization(let kind, let status):
            return "AUTH   \(kind.rawValue) source \(status)"
        case .didChangeNearestScanner(let beacon, let scanner, let previous):
            return "ROOM   \(beacon.major).\(beacon.minor) nearest \(scanner ?? "none") (was \(previous ?? "none"))"
        }
    }

    static func describe(_ region: Region) -> String {
        switch region {
        case .beacon(let beacon): "beacon \(beacon.constraint)"
        case .circular(let circle): "circle \(circle.latitude),\(circle.longitude) r=\(circle.radius) m"
        }
    }

    static func why(_ evidence: EventEvidence?) -> String {
        guard let evidence else { return "" }
        var parts: [String] = []
        if let rssi = evidence.rssi, evidence.lastSightingAge == nil { parts.append("rssi \(rssi) dBm") }
        if let age = evidence.lastSightingAge { parts.append("last sighting \(JSONLine.number(age, decimals: 1)) s ago") }
        if let threshold = evidence.exitThreshold { parts.append("threshold \(JSONLine.number(threshold, decimals: 1)) s") }
        if let distance = evidence.distance { parts.append("\(JSONLine.number(distance, decimals: 0)) m from centre") }
        if let dwell = evidence.dwell { parts.append("held \(JSONLine.number(dwell, decimals: 0)) s") }
        return parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))"
    }

    static func clock(_ seconds: Double) -> String {
        let text = JSONLine.number(seconds, decimals: 1)
        let padded = text.contains(".") ? text : text + ".0"
        return String(repeating: " ", count: max(0, 7 - padded.count)) + padded + " s"
    }
}
