import Testing
@testable import RegionKitEngine
import RegionKitCore
import Foundation

/// The engine keeps one ``ScannerChannel`` per scanner name; ever new names (a misconfigured or
/// hostile MQTT publisher putting a counter or random text in the room level) must not grow that
/// table for ever, and a real scanner heard all along keeps what its channel learned.
@Suite("Scanner channels: swept by age and count")
struct ScannerChannelSweepTests {
    static let elsewhere = UUID(uuidString: "00000000-0000-4000-8000-0000000000AA")!

    @Test("A new scanner name every 0.1 s for 4 h: the table holds about the last hour's names, and the scanner heard all along keeps its channel")
    func sweptByAge() {
        var engine = Fixture.engine(.responsive)
        _ = engine.startMonitoring(Fixture.region("hall", major: 7), at: .zero)
        // A beacon no region matches: its sightings record their scanner's channel and nothing else.
        let beacon = BeaconIdentity(uuid: Self.elsewhere, major: 7, minor: 1)
        var largest = 0
        var t = 0.0
        var index = 0
        while t < 4 * 3_600 {
            _ = engine.ingest(Fixture.seen(beacon, at: t, scanner: "hall"))
            _ = engine.ingest(Fixture.seen(beacon, at: t + 0.05, scanner: "room-\(index)"))
            largest = max(largest, engine.channels.count)
            index += 1
            t += 0.1
        }
        // 36,000 names an hour; a sweep keeps the last hour's (≤ 36,001) and comes again at twice that.
        #expect(largest <= 72_002 && engine.channels.count <= 72_002, "\(largest) channels at most, \(engine.channels.count) at the end")
        #expect(engine.channel(of: "room-0") == nil, "a name last heard 4 h ago is gone")
        #expect(engine.channel(of: "room-\(index - 1)") != nil)
        let hall = engine.channel(of: "hall")
        #expect(hall?.lastHeard?.seconds ?? 0 >= 4 * 3_600 - 0.2, "the scanner heard all along keeps its channel")
        #expect(engine.channelNumbers.count == engine.channels.count)
        #expect(engine.channelNumbers.allSatisfy { engine.channels.indices.contains($0.value) })
    }

    @Test("Beyond maximumChannels within an hour the least recently heard go first; the numbering stays consistent")
    func sweptByCount() {
        var engine = Fixture.engine(.responsive)
        _ = engine.startMonitoring(Fixture.region("hall", major: 7), at: .zero)
        // A beacon no region matches: its sightings record their scanner's channel and nothing else.
        let beacon = BeaconIdentity(uuid: Self.elsewhere, major: 7, minor: 1)
        let names = MonitoringEngine.maximumChannels + 10_000
        for index in 0..<names {
            let t = Double(index) * 0.01   // 755 s in all: nothing is an hour old
            _ = engine.ingest(Fixture.seen(beacon, at: t, scanner: index % 100 == 0 ? "hall" : "flood-\(index)"))
        }
        #expect(engine.channels.count <= MonitoringEngine.maximumChannels)
        #expect(engine.channel(of: "flood-1") == nil, "the least recently heard went first")
        #expect(engine.channel(of: "flood-\(names - 1)") != nil && engine.channel(of: "hall") != nil)
        for (name, number) in engine.channelNumbers.prefix(1_000) {
            #expect(engine.channels[number].lastHeard != nil, "\(name)")
        }
        #expect(Set(engine.channelNumbers.values).count == engine.channels.count)
    }
}
