import RegionKitCore
import RegionKitEngine

/// One scanner as the daemon sees it now (`GET /v1/scanners`): an ESPresense room node, a Theengs
/// gateway, a `regionkit scan --publish` scanner — whether it said it is offline, when it last
/// reported a sighting, how fast it reports, the beacons placed in its room, its longest silence
/// of everything it hears. Built from the engine's scanner channels (``MonitoringEngine/scannerChannels``).
///
/// ```swift
/// let scanners = ScannerReport.all(from: service.manager.engineSnapshot)
/// scanners.first?.status   // "online" or "offline"
/// ```
public struct ScannerReport: Codable, Hashable, Sendable {
    /// The name its sightings carry (the ESPresense room, the gateway, `--scanner`).
    public var name: String
    /// `offline` while it says so (its status topic: ESPresense's retained room status, a
    /// gateway's will) and has not come back; otherwise `online` (including "said nothing").
    public var status: String
    /// Since when it has said it is offline (Unix seconds on the engine's clock).
    public var offlineSince: Double?
    /// Its last sighting (Unix seconds); none when it only said whether it is online.
    public var lastHeard: Double?
    /// Sightings a second, every beacon together, over about the last 10 s
    /// (``ScannerChannel/rate(at:)``), at the engine's clock.
    public var sightingsPerSecond: Double
    /// Beacons placed in its room now (``MonitoringEngine/nearestScanners``).
    public var beaconsInRoom: Int
    /// The longest silence of everything it hears that its rate did not explain (a dark gap:
    /// its radio or Wi-Fi busy, a person by it), seconds, fading e-fold an hour; 0 for none.
    public var longestDarkGap: Double

    public static let online = "online", offline = "offline"

    /// Every scanner of `engine`, most recently heard first (one never heard after those, by name).
    public static func all(from engine: MonitoringEngine) -> [ScannerReport] {
        var inRoom: [String: Int] = [:]
        for scanner in engine.nearestScanners.values { inRoom[scanner, default: 0] += 1 }
        let now = engine.now
        return sorted(engine.scannerChannels.map { name, channel in
            ScannerReport(name: name, status: channel.isOffline ? offline : online, offlineSince: channel.offlineSince?.seconds,
                          lastHeard: channel.lastHeard?.seconds, sightingsPerSecond: channel.rate(at: now),
                          beaconsInRoom: inRoom[name] ?? 0, longestDarkGap: channel.longestGap)
        })
    }

    /// One list from several engines' (a cluster member's partitions: a scanner's beacons hash
    /// to any partition, so each engine knows part of what it hears): per name, the latest
    /// ``lastHeard``, the sums of ``sightingsPerSecond`` and ``beaconsInRoom``, the longest
    /// ``longestDarkGap``; offline when any engine knows it offline (every partition reads the
    /// status), since the earliest ``offlineSince``.
    public static func merged(_ lists: [[ScannerReport]]) -> [ScannerReport] {
        var byName: [String: ScannerReport] = [:]
        for report in lists.joined() {
            guard var merged = byName[report.name] else {
                byName[report.name] = report
                continue
            }
            if report.status == offline {
                merged.status = offline
                merged.offlineSince = [merged.offlineSince, report.offlineSince].compactMap { $0 }.min()
            }
            merged.lastHeard = [merged.lastHeard, report.lastHeard].compactMap { $0 }.max()
            merged.sightingsPerSecond += report.sightingsPerSecond
            merged.beaconsInRoom += report.beaconsInRoom
            merged.longestDarkGap = max(merged.longestDarkGap, report.longestDarkGap)
            byName[report.name] = merged
        }
        return sorted(Array(byName.values))
    }

    /// Most recently heard first; the never heard after them, by name.
    static func sorted(_ reports: [ScannerReport]) -> [ScannerReport] {
        reports.sorted { a, b in
            switch (a.lastHeard, b.lastHeard) {
            case let (x?, y?) where x != y: x > y
            case (_?, nil): true
            case (nil, _?): false
            default: a.name < b.name
            }
        }
    }
}
