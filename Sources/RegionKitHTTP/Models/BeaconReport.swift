import RegionKitCore
import RegionKitEngine

/// One beacon as the daemon sees it now (`GET /v1/beacons`): built from the engine's snapshot,
/// its monitored regions' sighting streams (per scanner) and its ranging sessions (filtered RSSI,
/// distance and proximity as the ranging delivery computes them).
///
/// ```swift
/// let beacons = BeaconReport.all(from: service.manager.engineSnapshot)
/// ```
public struct BeaconReport: Codable, Hashable, Sendable {
    /// One scanner's last word about the beacon.
    public struct ScannerReading: Codable, Hashable, Sendable {
        public var scanner: String?
        public var rssi: Int?
        public var lastSeen: Double
        public var sightings: Int
    }

    /// The beacon's identity, unique across formats (`BeaconIdentity.description`: `UUID:MAJOR:MINOR`,
    /// `altbeacon:ID1:ID2:ID3`, `eddystone-uid:NAMESPACE:INSTANCE`, `device:ID`).
    public var id: String
    /// `ibeacon`, `altbeacon`, `eddystone-uid` or `device`.
    public var format: String
    /// iBeacon UUID / AltBeacon id1; for Eddystone-UID the 16 id bytes (namespace ‖ instance): read
    /// ``namespace`` and ``instance`` there; for a device its first 16 identity bytes: read ``device``.
    public var uuid: String
    /// iBeacon major / AltBeacon id2; 0 for Eddystone-UID.
    public var major: UInt16
    /// iBeacon minor / AltBeacon id3; 0 for Eddystone-UID.
    public var minor: UInt16
    /// Eddystone-UID namespace (20 hex digits).
    public var namespace: String?
    /// Eddystone-UID instance (12 hex digits).
    public var instance: String?
    /// A device that is no beacon: the id its scanner gives it (`BeaconIdentity.deviceID`).
    public var device: String? = nil
    /// The last RSSI heard (dBm), by any scanner.
    public var rssi: Int?
    /// The scanner that heard ``rssi`` (nil for a sighting that names none): heard by several,
    /// the raw RSSI may be a far one's while ``filteredRSSI`` and ``distance`` are the nearest's.
    public var rssiScanner: String?
    /// The ranging filter's RSSI (only while the beacon is ranged).
    public var filteredRSSI: Double?
    /// Metres from the filtered RSSI (only while ranged).
    public var distance: Double?
    public var proximity: String
    /// The scanner the beacon is nearest to (its room), when scanners are told apart.
    public var nearestScanner: String?
    /// Unix seconds of the last sighting.
    public var lastSeen: Double
    /// Monitored regions the beacon belongs to.
    public var regions: [String]
    public var scanners: [ScannerReading]

    /// Every beacon heard by a monitored region or a ranging session, most recently heard first.
    public static func all(from engine: MonitoringEngine) -> [BeaconReport] {
        reports(from: engine, only: nil)
    }

    /// The first `limit` beacons of ``all(from:)``, in its order, and how many it lists in all.
    /// Only those are built: the others cost one lookup a sighting stream (``all(from:)`` made
    /// every beacon's strings and arrays, and `GET /v1/beacons` then kept the first 1,000).
    ///
    /// ```swift
    /// let (beacons, total) = BeaconReport.mostRecent(1_000, from: service.manager.engineSnapshot)
    /// ```
    public static func mostRecent(_ requested: Int, from engine: MonitoringEngine) -> (beacons: [BeaconReport], total: Int) {
        let limit = max(0, requested)
        // When each beacon was heard last, as all(from:) finds it: its streams and listed tracks.
        var lastSeen: [BeaconIdentity: Double] = [:]
        func raise(_ time: inout Double, to seen: Double) { if seen > time { time = seen } }   // one lookup, in place
        engine.forEachStream { _, key, stream in
            raise(&lastSeen[key.identity, default: -.infinity], to: stream.lastSighting.seconds)
        }
        for session in engine.rangingSessions {
            for (identity, track) in session.tracks where track.isListed(at: engine.now, profile: engine.profile) {
                raise(&lastSeen[identity, default: -.infinity], to: track.lastHeard.seconds)
            }
        }
        let total = lastSeen.count
        guard limit < total else { return (reports(from: engine, only: nil), total) }
        // The beacons at least as recent as the limit-th: the first `limit` of all(from:) are
        // among them (ties at that time are ordered by id, which only the reports have).
        let times = lastSeen.values.sorted(by: >)
        let cutoff = times[max(limit, 1) - 1]
        let chosen = Set(lastSeen.lazy.filter { $0.value >= cutoff }.map(\.key))
        return (Array(reports(from: engine, only: chosen).prefix(limit)), total)
    }

    /// ``all(from:)``, or only the beacons in `only`.
    private static func reports(from engine: MonitoringEngine, only: Set<BeaconIdentity>?) -> [BeaconReport] {
        // The reports in an array, changed in place, found by their beacon's slot (a copy taken
        // out of a dictionary and written back copied its arrays at every stream).
        var list: [BeaconReport] = []
        var slots: [BeaconIdentity: Int] = [:]
        var newestRSSITime: [Double] = []   // by slot
        func slot(_ identity: BeaconIdentity) -> Int {
            if let slot = slots[identity] { return slot }
            slots[identity] = list.count
            list.append(BeaconReport(id: identity.description, format: identity.format.name,
                                     uuid: identity.uuid.uuidString, major: identity.major, minor: identity.minor,
                                     namespace: identity.format == .eddystoneUID ? BeaconIdentity.hex(identity.namespace) : nil,
                                     instance: identity.format == .eddystoneUID ? BeaconIdentity.hex(identity.instance) : nil,
                                     device: identity.deviceID, rssi: nil,
                                     rssiScanner: nil, filteredRSSI: nil, distance: nil, proximity: Proximity.unknown.rawValue,
                                     nearestScanner: engine.nearestScanner(for: identity), lastSeen: -.infinity,
                                     regions: [], scanners: []))
            newestRSSITime.append(-.infinity)
            return list.count - 1
        }
        // A beacon heard under many scanner names (a flood of invented ones) finds its reading
        // in a table instead of a scan of its list: the walk stays linear in the streams.
        var readingIndexes: [Int: [String?: Int]] = [:]   // by slot
        engine.forEachStream { region, key, stream in
            if let only, !only.contains(key.identity) { return }
            let i = slot(key.identity)
            if !list[i].regions.contains(region.identifier) { list[i].regions.append(region.identifier) }
            let seen = stream.lastSighting.seconds
            // (No copy of a table held here: the append below changes it in place.)
            let indexed = !readingIndexes.isEmpty && readingIndexes[i] != nil   // no lookup while no beacon has one
            let known = indexed ? readingIndexes[i]?[key.scannerID] : list[i].scanners.firstIndex(where: { $0.scanner == key.scannerID })
            if let index = known {
                if seen > list[i].scanners[index].lastSeen {
                    list[i].scanners[index] = ScannerReading(scanner: key.scannerID, rssi: stream.lastRSSI, lastSeen: seen, sightings: stream.sightings)
                }
            } else {
                list[i].scanners.append(ScannerReading(scanner: key.scannerID, rssi: stream.lastRSSI, lastSeen: seen, sightings: stream.sightings))
                let count = list[i].scanners.count
                if indexed {
                    readingIndexes[i]?[key.scannerID] = count - 1
                } else if count >= Self.readingIndexThreshold {
                    readingIndexes[i] = Dictionary(uniqueKeysWithValues: list[i].scanners.enumerated().map { ($1.scanner, $0) })
                }
            }
            if seen > list[i].lastSeen { list[i].lastSeen = seen }
            if let rssi = stream.lastRSSI, seen >= newestRSSITime[i] {
                list[i].rssi = rssi
                list[i].rssiScanner = key.scannerID
                newestRSSITime[i] = seen
            }
        }
        let profile = engine.profile
        for (session, labels) in engine.rangingSessionsWithLabels {
            // A track ranging no longer lists (kept only to learn a slow scanner's cadence) is not reported from ranging.
            // Every monitored region sharing the session (once a session, not a track).
            let monitoredLabels = labels.filter { engine.state(of: $0) != nil }
            for (identity, track) in session.tracks where track.isListed(at: engine.now, profile: profile) {
                if let only, !only.contains(identity) { continue }
                let i = slot(identity)
                for label in monitoredLabels where !list[i].regions.contains(label) { list[i].regions.append(label) }
                // The scanner that puts it nearest (each scanner's readings apart: a far one's RSSI
                // is not the near one's distance).
                if let nearest = track.nearest(at: engine.now, profile: profile) {
                    list[i].filteredRSSI = nearest.filtered
                    if let distance = nearest.distance {
                        list[i].distance = distance
                        list[i].proximity = profile.proximityThresholds.proximity(forAccuracy: distance).rawValue
                    }
                }
                for reading in track.readings {
                    if let latest = reading.filter.samples.last, latest.time.seconds >= newestRSSITime[i] {
                        list[i].rssi = Int(latest.rssi.rounded())
                        list[i].rssiScanner = reading.scannerID
                        newestRSSITime[i] = latest.time.seconds
                    }
                }
                list[i].lastSeen = max(list[i].lastSeen, track.lastHeard.seconds)
            }
        }
        for i in list.indices {
            list[i].regions.sort()
            list[i].scanners.sort { ($0.scanner ?? "") < ($1.scanner ?? "") }
            if list[i].nearestScanner == nil {
                // Without the nearest-scanner policy, the scanner that heard it last and loudest.
                list[i].nearestScanner = list[i].scanners.max { a, b in
                    (a.lastSeen, a.rssi ?? -200) < (b.lastSeen, b.rssi ?? -200)
                }?.scanner
            }
        }
        list.sort(by: listedBefore)
        return list
    }

    /// Readings a beacon's report holds before it finds one by a table instead of a scan.
    static let readingIndexThreshold = 16

    /// The order of every list of beacons: most recently heard first, ties by ``id``.
    static func listedBefore(_ a: BeaconReport, _ b: BeaconReport) -> Bool {
        (a.lastSeen, b.id) > (b.lastSeen, a.id)
    }

    /// One list from several engines' ``mostRecent(_:from:)`` lists (a cluster member's
    /// partitions: a beacon is heard in one partition only, so no beacon is in two lists), in
    /// the same order, cut to `limit`; the total is the sum. Each list must hold its engine's
    /// first `limit` beacons (or all of them): the merged first `limit` are among those.
    ///
    /// ```swift
    /// let lists = partitions.map { BeaconReport.mostRecent(1_000, from: $0) }
    /// let (beacons, total) = BeaconReport.merged(lists, limit: 1_000)
    /// ```
    public static func merged(_ lists: [(beacons: [BeaconReport], total: Int)], limit: Int) -> (beacons: [BeaconReport], total: Int) {
        let beacons = lists.flatMap(\.beacons).sorted(by: listedBefore).prefix(max(0, limit))
        return (Array(beacons), lists.reduce(0) { $0 + $1.total })
    }
}
