import RegionKitCore
import RegionKitEngine

/// One scanner as the daemon sees it now (`GET /v1/scanners`): an ESPresense room node, a Theengs
/// gateway, a `regionkit scan --publish` scanner — whether it said it is offline, when it last
/// reported a sighting, how fast it reports, the beacons placed in its room. Built from the
/// engine's scanner channels (`MonitoringEngine.scannerChannels`): every scanner that
/// reported a sighting or said whether it is online, under every profile.
///
/// ```swift
/// let scanners = ScannerReport.all(from: service.manager.engineSnapshot, at: service.manager.clock.now)
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
    /// (`ScannerChannel.sightingsPerSecond(at:)`) at the report's time: 0 once it has been silent 30 s.
    public var sightingsPerSecond: Double
    /// Beacons placed in its room now (`MonitoringEngine.beaconsPerRoom`).
    public var beaconsInRoom: Int

    public static let online = "online", offline = "offline"

    /// Every scanner of `engine` at `time` (the daemon's clock: the engine's own stands still
    /// while nothing comes in), most recently heard first (one never heard after those, by
    /// name): those heard within `MonitoringEngine.channelRetention` of `time` and those
    /// offline now, as the engine's sweeps keep them (a renamed or retired node is not listed
    /// for good).
    public static func all(from engine: MonitoringEngine, at time: Timestamp) -> [ScannerReport] {
        let now = max(time, engine.now)
        let horizon = now.seconds - MonitoringEngine.channelRetention
        let inRoom = engine.beaconsPerRoom
        return sorted(engine.scannerChannels.compactMap { name, channel in
            guard channel.isOffline || (channel.lastHeard?.seconds ?? -.infinity) >= horizon else { return nil }
            return ScannerReport(name: name, status: channel.isOffline ? offline : online, offlineSince: channel.offlineSince?.seconds,
                                 lastHeard: channel.lastHeard?.seconds, sightingsPerSecond: channel.sightingsPerSecond(at: now),
                                 beaconsInRoom: inRoom[name] ?? 0)
        })
    }

    /// One list from several engines' (a cluster member's partitions, each reported at one
    /// time: a scanner's beacons hash to any partition, so each engine knows part of what it
    /// hears): per name, the latest ``lastHeard``, the sums of ``sightingsPerSecond`` and
    /// ``beaconsInRoom``; offline when an engine knows it offline (every partition reads the
    /// status), since the earliest ``offlineSince`` — unless a sighting came after that (its
    /// return, seen by the partition that heard it).
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
            byName[report.name] = merged
        }
        for (name, report) in byName where report.status == offline {
            if let heard = report.lastHeard, let since = report.offlineSince, heard > since {
                byName[name]?.status = online
                byName[name]?.offlineSince = nil
            }
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
