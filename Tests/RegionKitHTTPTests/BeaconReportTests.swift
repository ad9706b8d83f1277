import Foundation
import Testing
import RegionKitCore
import RegionKitEngine
@testable import RegionKitHTTP

/// `GET /v1/beacons` builds only the beacons it lists (``BeaconReport/mostRecent(_:from:)``):
/// the same reports, in the same order, as every beacon's (``BeaconReport/all(from:)``) cut to
/// the limit.
@Suite("Beacon reports: the most recent without building every one")
struct BeaconReportTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let rangedOnly = UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!

    /// 300 beacons in a UUID region, 40 of them with a region of their own, major 2 ranged (a
    /// session of its own), heard by two scanners at whole seconds: many share their last time,
    /// so the limit often falls inside a tie (ordered by id). And 20 beacons of another UUID that
    /// only a ranging session hears (no region).
    /// `heard` picks the sightings this engine is fed (a cluster partition's share); the input
    /// is the same whatever it picks.
    static func engine(seed: UInt64, hearing heard: (BeaconIdentity) -> Bool = { _ in true }) throws -> MonitoringEngine {
        var engine = MonitoringEngine(profile: .responsive, sources: [.beacon: .authorized])
        var rng = SeededRandom(seed: seed)
        _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "fleet", uuid: uuid)), at: .zero)
        for minor in UInt16(0)..<40 {
            _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "own-\(minor)", uuid: uuid, major: 1, minor: minor)), at: .zero)
        }
        _ = engine.startRanging(try BeaconIdentityConstraint(uuid: uuid, major: 2), label: "ranged", at: .zero)
        _ = engine.startRanging(try BeaconIdentityConstraint(uuid: rangedOnly), label: "ranged-only", at: .zero)
        for step in 0..<1_200 {
            let identity = step % 10 == 9
                ? BeaconIdentity(uuid: rangedOnly, major: 7, minor: UInt16.random(in: 0..<20, using: &rng))
                : BeaconIdentity(uuid: uuid, major: UInt16.random(in: 1...3, using: &rng), minor: UInt16.random(in: 0..<100, using: &rng))
            let time = Timestamp(seconds: 1 + Double(step / 60))   // 60 sightings a second, 20 s
            let (rssi, scanner) = (Int.random(in: -90 ... -50, using: &rng), Bool.random(using: &rng) ? "hall" : "kitchen")
            guard heard(identity) else { continue }
            _ = engine.ingest(BeaconObservation(identity: identity, rssi: rssi, measuredPower: -59, timestamp: time, scannerID: scanner))
        }
        return engine
    }

    @Test("mostRecent(limit) is all(from:) cut to the limit, with all's count as the total, at every kind of limit",
          arguments: [1, 2, 3])
    func sameAsAllCut(seed: UInt64) throws {
        let engine = try Self.engine(seed: seed)
        let all = BeaconReport.all(from: engine)
        #expect(all.count > 250, "the input heard most of its 300 beacons: \(all.count)")
        #expect(all.contains { $0.distance != nil } && all.contains { $0.regions.contains("own-3") }, "ranged and own-region beacons are among them")
        #expect(all.contains { $0.uuid == Self.rangedOnly.uuidString && $0.regions.isEmpty && $0.distance != nil }, "beacons only a ranging session hears")
        let times = all.map(\.lastSeen)
        var tied = 0
        for limit in [1, 2, 7, 59, 60, 61, 150, all.count - 1, all.count, all.count + 5] {
            let (beacons, total) = BeaconReport.mostRecent(limit, from: engine)
            #expect(total == all.count, "limit \(limit)")
            #expect(beacons == Array(all.prefix(limit)), "limit \(limit): \(beacons.count) reports")
            if limit < all.count, times[limit - 1] == times[limit] { tied += 1 }
        }
        #expect(tied >= 3, "the limit fell inside a tie of last times (ordered by id) only \(tied) times")
    }

    @Test("A cluster member's list: its partitions' mostRecent lists merged are the list of one engine that heard every beacon, at every kind of limit",
          arguments: [1, 2, 3])
    func partitionsMerged(seed: UInt64) throws {
        // Three partitions by minor, as a member holding them would have them (a beacon in one only).
        let partitions = try (0..<3).map { part in try Self.engine(seed: seed) { Int($0.minor) % 3 == part } }
        let whole = try Self.engine(seed: seed)
        let all = BeaconReport.all(from: whole)
        #expect(partitions.allSatisfy { !BeaconReport.all(from: $0).isEmpty }, "every partition heard beacons")
        var tied = 0
        for limit in [1, 2, 7, 59, 60, 61, 150, all.count - 1, all.count, all.count + 5] {
            let (beacons, total) = BeaconReport.merged(partitions.map { BeaconReport.mostRecent(limit, from: $0) }, limit: limit)
            #expect(total == all.count, "limit \(limit)")
            #expect(beacons == Array(all.prefix(limit)), "limit \(limit): \(beacons.count) reports")
            if limit < all.count, all[limit - 1].lastSeen == all[limit].lastSeen { tied += 1 }
        }
        #expect(tied >= 3, "the limit fell inside a tie of last times (ordered by id) only \(tied) times")
        let none = BeaconReport.merged([], limit: 10)
        #expect(none.beacons.isEmpty && none.total == 0, "a member holding no partition lists none")
    }

    @Test("The raw RSSI names its scanner: the last sample's, from the region streams and from the ranging readings alike; none for a sighting that names none",
          arguments: [false, true])
    func rssiScanner(ranged: Bool) throws {
        var engine = MonitoringEngine(profile: .responsive, sources: [.beacon: .authorized])
        _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "fleet", uuid: Self.uuid)), at: .zero)
        if ranged { _ = engine.startRanging(try BeaconIdentityConstraint(uuid: Self.uuid), label: "ranged", at: .zero) }
        let beacon = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 1)
        func heard(_ rssi: Int, at time: Double, by scanner: String?) {
            _ = engine.ingest(BeaconObservation(identity: beacon, rssi: rssi, measuredPower: -59, timestamp: Timestamp(seconds: time), scannerID: scanner))
        }
        heard(-17, at: 1, by: "Room201")
        heard(-92, at: 2, by: "Room202")
        var report = try #require(BeaconReport.all(from: engine).first)
        #expect(report.rssi == -92 && report.rssiScanner == "Room202", "\(report)")
        #expect(ranged == (report.filteredRSSI != nil), "ranged: \(ranged)")
        heard(-18, at: 3, by: "Room201")
        report = try #require(BeaconReport.all(from: engine).first)
        #expect(report.rssi == -18 && report.rssiScanner == "Room201", "\(report)")
        heard(-70, at: 4, by: nil)
        report = try #require(BeaconReport.all(from: engine).first)
        #expect(report.rssi == -70 && report.rssiScanner == nil, "\(report)")
    }

    @Test("A beacon heard under many scanner names (past the reading table's threshold), in two regions: one reading a scanner, its latest, found again through the table")
    func manyScannerNames() throws {
        var engine = MonitoringEngine(profile: .responsive, sources: [.beacon: .authorized])
        _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "fleet", uuid: Self.uuid)), at: .zero)
        _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "own", uuid: Self.uuid, major: 1, minor: 1)), at: .zero)
        let beacon = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 1)
        let names = (0..<(BeaconReport.readingIndexThreshold * 3)).map { "node-\($0)" }
        for round in 0..<2 {
            for (index, name) in names.enumerated() {
                _ = engine.ingest(BeaconObservation(identity: beacon, rssi: -40 - index - round, measuredPower: -59,
                                                    timestamp: Timestamp(seconds: 1 + Double(round * names.count + index) * 0.01), scannerID: name))
            }
        }
        let report = try #require(BeaconReport.all(from: engine).first)
        #expect(report.regions == ["fleet", "own"])
        #expect(report.scanners.map(\.scanner) == names.sorted(), "one reading a scanner, not one a stream")
        for reading in report.scanners {
            let index = try #require(names.firstIndex(of: reading.scanner ?? ""))
            #expect(reading.rssi == -41 - index && reading.sightings == 2, "\(reading)")
        }
        #expect(report.rssi == -40 - names.count && report.rssiScanner == names.last)
    }

    @Test("A ranging session labelled with a monitored region's identifier lists that region for its beacons; once the region is stopped, no longer. Heard only by the session, the raw RSSI's scanner comes from its readings")
    func rangingLabelledWithARegion() throws {
        var engine = MonitoringEngine(profile: .responsive, sources: [.beacon: .authorized])
        _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "desk", uuid: Self.rangedOnly, major: 9)), at: .zero)
        _ = engine.startRanging(try BeaconIdentityConstraint(uuid: Self.uuid), label: "desk", at: .zero)
        let beacon = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 1)   // not the region's: only the session hears it
        for step in 0..<5 {
            _ = engine.ingest(BeaconObservation(identity: beacon, rssi: -60, measuredPower: -59, timestamp: Timestamp(seconds: 1 + Double(step) * 0.2), scannerID: "hall"))
        }
        #expect(BeaconReport.all(from: engine).map(\.regions) == [["desk"]])
        // Only the session hears it: its raw RSSI and scanner come from the ranging readings.
        let ranged = try #require(BeaconReport.all(from: engine).first)
        #expect(ranged.scanners.isEmpty && ranged.rssi == -60 && ranged.rssiScanner == "hall", "\(ranged)")
        _ = engine.stopMonitoring(identifier: "desk", at: Timestamp(seconds: 2))
        #expect(BeaconReport.all(from: engine).map(\.regions) == [[]], "the session's label names no monitored region any more")
    }

    @Test("No beacon heard: none listed, total 0")
    func empty() {
        let engine = MonitoringEngine(profile: .responsive, sources: [.beacon: .authorized])
        let (beacons, total) = BeaconReport.mostRecent(1_000, from: engine)
        #expect(beacons.isEmpty && total == 0)
    }
}
