import Foundation
import Testing
@testable import RegionKitEngine

/// ``MonitoringEngine/forEachStream(_:)`` against the record of each region
/// (``MonitoringEngine/monitoredRegion(_:)``), which it replaces where every stream is walked.
struct ForEachStreamTests {
    @Test("Every present stream of every region, in registration order, as each region's record holds them: single streams, tables, regions gone quiet, a region stopped",
          arguments: [1, 2, 3] as [UInt64])
    func sameAsEachRecord(seed: UInt64) {
        var engine = Fixture.engine(.responsive)
        // A UUID-wide region (a table of many streams), an exact one per beacon (one stream, or
        // none once it exited), one bound to a scanner, one stopped.
        _ = engine.startMonitoring(Fixture.region("all"), at: .zero)
        for minor in UInt16(1)...40 { _ = engine.startMonitoring(Fixture.region("b\(minor)", major: 0, minor: minor), at: .zero) }
        _ = engine.startMonitoring(Fixture.region("hall", configure: { $0.scannerID = "hall" }), at: .zero)
        var random = SeededRandom(seed: seed)   // a failure is reproducible
        for step in 0..<2_000 {
            let minor = UInt16.random(in: 1...40, using: &random)
            // Minors above 30 fall silent after 20 s: their exact regions exit, their streams go.
            if minor > 30 && step > 400 { continue }
            let scanner = ["hall", "kitchen", nil][Int.random(in: 0...2, using: &random)]
            _ = engine.ingest(Fixture.seen(BeaconIdentity(uuid: Fixture.uuid, major: 0, minor: minor), at: Double(step) * 0.05,
                                           rssi: Int.random(in: -90 ... -50, using: &random), scanner: scanner))
        }
        _ = engine.advance(to: Timestamp(seconds: 100))
        _ = engine.stopMonitoring(identifier: "b7", at: Timestamp(seconds: 100))
        var walked: [String] = []
        engine.forEachStream { region, key, stream in
            walked.append("\(region.identifier) \(key.identity) \(key.scannerID ?? "-") \(stream.lastSighting.seconds) \(stream.sightings)")
        }
        var expected: [String] = []
        for region in engine.monitoredRegions {
            guard let monitored = engine.monitoredRegion(region.identifier) else { continue }
            for (key, stream) in monitored.streams {
                expected.append("\(region.identifier) \(key.identity) \(key.scannerID ?? "-") \(stream.lastSighting.seconds) \(stream.sightings)")
            }
        }
        #expect(walked == expected)
        // The identifiers alone, in the same order, the stopped one left out.
        var identifiers: [String] = []
        engine.forEachMonitoredIdentifier { identifiers.append($0) }
        #expect(identifiers == engine.monitoredRegions.map(\.identifier) && identifiers.count == 41 && !identifiers.contains("b7"))
        #expect(walked.count > 40, "\(walked.count) streams")
        #expect(!walked.contains { $0.hasPrefix("b7 ") } && !walked.contains { $0.hasPrefix("b35 ") }, "stopped, exited: no stream")
    }
}
