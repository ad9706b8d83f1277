import Foundation
import Testing
@testable import RegionKitEngine

@Suite("Monitoring engine: regions, states and events (spec §1, §2)")
struct MonitoringEngineTests {
    @Test("§2 didStartMonitoring right after registration")
    func startMonitoringReportsAtOnce() {
        var engine = Fixture.engine()
        let events = engine.startMonitoring(Fixture.region("lobby"), at: Timestamp(seconds: 5))
        #expect(events.summary == ["didStartMonitoring:lobby"])
        #expect(events[0].timestamp == Timestamp(seconds: 5))
        #expect(engine.monitoredRegions.map(\.identifier) == ["lobby"])
    }

    @Test("§2 no didEnterRegion when monitoring starts inside; requestState answers inside")
    func startingInsideGivesNoEnter() {
        var engine = Fixture.engine()
        var events = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        events += engine.requestState(for: Fixture.region("lobby"), at: .zero)
        #expect(events.summary == ["didStartMonitoring:lobby"], "state still unknown: the answer waits for the first sighting")
        events = Fixture.feed(&engine, Fixture.stream(Fixture.a, from: 0.2, to: 10, every: 0.1))
        #expect(events.summary == ["didDetermineState:lobby:inside"])
        #expect(events[0].timestamp == Timestamp(seconds: 0.2))
        #expect(engine.state(of: "lobby") == .inside)
    }

    @Test("§2 no answer yet → outside after the initial window; then entering gives didEnter + didDetermineState at ~0 s")
    func enteringFromOutside() {
        var engine = Fixture.engine()
        _ = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        var events = engine.requestState(for: Fixture.region("lobby"), at: Timestamp(seconds: 1))
        events += engine.advance(to: Timestamp(seconds: 10))
        #expect(events.summary == ["didDetermineState:lobby:outside"])
        #expect(events[0].timestamp == Timestamp(seconds: 3))
        events = engine.ingest(Fixture.seen(Fixture.a, at: 12.5, rssi: -80))
        #expect(events.summary == ["didEnterRegion:lobby", "didDetermineState:lobby:inside"])
        #expect(events.allSatisfy { $0.timestamp == Timestamp(seconds: 12.5) }, "enter is immediate (spec §2: ~0 s)")
        #expect(events[0].evidence?.rssi == -80)
    }

    @Test("§2 Core Location profile: didExitRegion 30–40 s after the last sighting", arguments: [0.0, 2.5, 5.0, 7.5, 9.9])
    func coreLocationExitDelay(phase: Double) {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        let lastSighting = 20 + phase
        _ = Fixture.feed(&engine, Fixture.stream(Fixture.a, from: 0.5, to: lastSighting, every: 0.1) + [Fixture.seen(Fixture.a, at: lastSighting)])
        let events = engine.advance(to: Timestamp(seconds: 200))
        #expect(events.summary == ["didExitRegion:lobby", "didDetermineState:lobby:outside"])
        let delay = events[0].timestamp - Timestamp(seconds: lastSighting)
        #expect(delay >= 30 && delay <= 40, "exit \(delay) s after the last sighting")
        #expect(events[0].evidence?.exitThreshold == 30)
    }

    /// A stream's first seconds are given extra caution (the learned-gap detector's prior fades
    /// over ~10 s and 30 intervals: it has not shown its bursts yet), so this uses a minute.
    @Test("Responsive profile: a 10 Hz stream heard for a minute exits within 3 s of its last sighting")
    func responsiveExitIsFast() {
        var engine = Fixture.engine(.responsive)
        _ = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        _ = Fixture.feed(&engine, Fixture.stream(Fixture.a, from: 0.1, to: 60, every: 0.1))
        let events = engine.advance(to: Timestamp(seconds: 200))
        let exit = try! #require(events.of("didExitRegion").first)
        let delay = exit.timestamp - Timestamp(seconds: 59.9)
        #expect(delay >= 1 && delay <= 3, "exit \(delay) s after the last sighting")
    }

    @Test("Responsive profile: a 1 Hz stream with gaps of a few seconds does not exit")
    func responsiveToleratesItsOwnRate() {
        var engine = Fixture.engine(.responsive)
        _ = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        // 1 Hz with every third sighting lost: gaps of 2 s, learned rate ≈ 0.67 Hz.
        let times = stride(from: 0.5, to: 120, by: 1.0).enumerated().filter { $0.offset % 3 != 2 }.map(\.element)
        let events = Fixture.feed(&engine, times.map { Fixture.seen(Fixture.a, at: $0) }) + engine.advance(to: Timestamp(seconds: 120))
        #expect(events.of("didExitRegion").isEmpty)
        #expect(engine.state(of: "lobby") == .inside)
    }

    @Test("§2 notify flags: notifyOnEntry/notifyOnExit false suppress didEnter/didExit, not didDetermineState")
    func notifyFlags() {
        var engine = Fixture.engine()
        let quiet = Fixture.region("quiet") { $0.notifyOnEntry = false; $0.notifyOnExit = false }
        _ = engine.startMonitoring(quiet, at: .zero)
        var events = engine.advance(to: Timestamp(seconds: 5))
        events += engine.ingest(Fixture.seen(Fixture.a, at: 6))
        events += engine.advance(to: Timestamp(seconds: 100))
        #expect(events.summary == ["didDetermineState:quiet:inside", "didDetermineState:quiet:outside"])
    }

    @Test("§1 registering an identifier that is already monitored replaces the old region")
    func replacingARegion() {
        var engine = Fixture.engine()
        _ = engine.startMonitoring(Fixture.region("door", major: 1), at: .zero)
        _ = engine.ingest(Fixture.seen(BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 1), at: 1))
        #expect(engine.state(of: "door") == .inside)
        let events = engine.startMonitoring(Fixture.region("door", major: 2), at: Timestamp(seconds: 2))
        #expect(events.summary == ["didStartMonitoring:door"])
        #expect(engine.monitoredRegions.count == 1)
        #expect(engine.monitoredRegions[0].beaconRegion?.major == 2)
        #expect(engine.state(of: "door") == .unknown, "the replacement starts fresh")
        // Sightings of the old major no longer count.
        let later = engine.ingest(Fixture.seen(BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 1), at: 2.5))
        #expect(later.isEmpty && engine.state(of: "door") == .unknown)
    }

    @Test("§1 Core Location's limit: the 21st region fails with regionMonitoringFailure; replacing does not count")
    func regionLimit() {
        var engine = Fixture.engine(.coreLocation)
        for index in 0..<20 { _ = engine.startMonitoring(Fixture.region("r\(index)"), at: .zero) }
        let replaced = engine.startMonitoring(Fixture.region("r3"), at: .zero)
        #expect(replaced.summary == ["didStartMonitoring:r3"])
        let events = engine.startMonitoring(Fixture.region("r20"), at: .zero)
        #expect(events.summary == ["monitoringDidFail:r20"])
        guard case .monitoringDidFail(_, let error) = events[0].kind else { return }
        #expect(error.code == .regionMonitoringFailure)
        #expect(error.message.contains("20"))
        #expect(engine.monitoredRegions.count == 20)
    }

    @Test("The responsive profile has no region limit")
    func noLimitByDefault() {
        var engine = Fixture.engine(.responsive)
        for index in 0..<2_000 { _ = engine.startMonitoring(Fixture.region("r\(index)", major: UInt16(index)), at: .zero) }
        #expect(engine.monitoredRegions.count == 2_000)
        let events = engine.ingest(Fixture.seen(BeaconIdentity(uuid: Fixture.uuid, major: 1234, minor: 9), at: 1))
        #expect(events.summary == [], "first sighting determines silently")
        #expect(engine.state(of: "r1234") == .inside)
        #expect(engine.state(of: "r1235") == .unknown)
    }

    @Test("§2 monitoringDidFail when the source is unavailable; nothing else is delivered")
    func sourceUnavailable() {
        var engine = Fixture.engine(sources: [:])
        let events = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        #expect(events.summary == ["monitoringDidFail:lobby"])
        guard case .monitoringDidFail(_, let error) = events[0].kind else { return }
        #expect(error.code == .sourceUnavailable)
        #expect(engine.ingest(Fixture.seen(Fixture.a, at: 1)).isEmpty)
    }

    @Test("§1 two beacons sharing a UUID: the UUID-only region gets no event moving from A to B; per-beacon regions do")
    func movingBetweenBeaconsOfOneRegion() {
        for profile in [MonitoringProfile.coreLocation, .responsive] {
            var engine = Fixture.engine(profile)
            for region in [Fixture.region("all"), Fixture.region("A", major: 0, minor: 1), Fixture.region("B", major: 0, minor: 2)] {
                _ = engine.startMonitoring(region, at: .zero)
            }
            // A heard 0–30 s, both 28–30 s (overlap), B from 28 s on.
            let a = Fixture.stream(Fixture.a, from: 0.1, to: 30, every: 0.1)
            let b = Fixture.stream(Fixture.b, from: 28.05, to: 150, every: 0.1)
            let merged = (a + b).sorted { $0.timestamp < $1.timestamp }
            var events = Fixture.feed(&engine, merged)
            events += engine.advance(to: Timestamp(seconds: 150))
            #expect(events.of("didEnterRegion", "all").isEmpty && events.of("didExitRegion", "all").isEmpty, "profile \(profile.name)")
            #expect(events.of("didExitRegion", "A").count == 1, "profile \(profile.name)")
            #expect(events.of("didEnterRegion", "B").count == 1, "profile \(profile.name)")
        }
    }

    @Test("§2 didDetermineState answers requestState at once when the state is known")
    func requestStateWhenKnown() {
        var engine = Fixture.engine()
        _ = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 1))
        let events = engine.requestState(for: Fixture.region("lobby"), at: Timestamp(seconds: 2))
        #expect(events.summary == ["didDetermineState:lobby:inside"])
        #expect(events[0].timestamp == Timestamp(seconds: 2))
        let unknown = engine.requestState(for: Fixture.region("nope"), at: Timestamp(seconds: 2))
        #expect(unknown.summary == ["monitoringDidFail:nope"])
    }

    @Test("stopMonitoring forgets the region and its timers")
    func stopMonitoring() {
        var engine = Fixture.engine()
        _ = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 1))
        #expect(engine.stopMonitoring(identifier: "lobby", at: Timestamp(seconds: 2)).isEmpty)
        #expect(engine.monitoredRegions.isEmpty)
        #expect(engine.nextDeadline == nil)
        #expect(engine.advance(to: Timestamp(seconds: 100)).isEmpty)
    }

    @Test("Scanner-bound regions only count sightings from their scanner")
    func scannerBinding() {
        var engine = Fixture.engine()
        let room = Fixture.region("room201") { $0.scannerID = "Room201" }
        _ = engine.startMonitoring(room, at: .zero)
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 1, scanner: "Room202"))
        #expect(engine.state(of: "room201") == .unknown)
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 1.5, scanner: "Room201"))
        #expect(engine.state(of: "room201") == .inside)
    }

    @Test("The same inputs always give the same events")
    func deterministic() {
        func run() -> [LocationEvent] {
            var engine = Fixture.engine(.responsive, automation: .all)
            var events = engine.startMonitoring(Fixture.region("all"), at: .zero)
            events += engine.startMonitoring(Fixture.region("A", major: 0, minor: 1), at: .zero)
            events += Fixture.feed(&engine, Fixture.stream(Fixture.a, from: 0.3, to: 20, every: 0.25))
            events += engine.advance(to: Timestamp(seconds: 60))
            return events
        }
        let first = run()
        #expect(first.count > 20)
        #expect(first == run())
    }

    @Test("Out-of-order sightings are treated as arriving now, never moving time back")
    func outOfOrderInput() {
        var engine = Fixture.engine()
        _ = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 10))
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 4))
        #expect(engine.now == Timestamp(seconds: 10))
        #expect(engine.monitoredRegion("lobby")?.streams.values.first?.lastSighting == Timestamp(seconds: 10))
    }
}
