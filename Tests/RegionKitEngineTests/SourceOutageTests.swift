import Foundation
import RegionKitTestSupport
import Testing
@testable import RegionKitEngine

/// A source that goes away and comes back (a broker restart, a controller unplugged for a moment):
/// the regions fail and are registered again, and keep the state they had.
@Suite("Regions across a source outage")
struct SourceOutageTests {
    static let lobby = Fixture.region("lobby")
    static let hall = Fixture.region("hall", major: 9)

    /// An engine with the lobby inside (its beacon heard every 5 s, as an ESPresense node reports
    /// it) and the hall outside, the source lost at 30.2 s.
    static func engineWithAnOutage(retry: Automation.Retry? = Automation.Retry()) -> (MonitoringEngine, [LocationEvent]) {
        var engine = Fixture.engine(.responsive, automation: Automation(requestStateOnStart: true, rangeWhileInside: true, retry: retry))
        var events = engine.startMonitoring(contentsOf: [lobby, hall], at: .zero)
        events += Fixture.feed(&engine, stride(from: 0.5, to: 30, by: 5).map { Fixture.seen(Fixture.a, at: $0) })
        #expect(engine.state(of: "lobby") == .inside && engine.state(of: "hall") == .outside)
        events += engine.setSourceStatus(.restricted(reason: "broker unreachable"), for: .beacon, at: Timestamp(seconds: 30.2))
        return (engine, events)
    }

    @Test("A source back within a second: the regions start again with their states — no \"outside\" from the 3 s first determination and no second entry for the region inside (a broker restart made Home Assistant's presence go off and on)")
    func briefOutage() throws {
        var (engine, before) = Self.engineWithAnOutage()
        #expect(before.of("monitoringDidFail").count == 2)
        var events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 30.6))
        events += engine.advance(to: Timestamp(seconds: 35))
        // The reports go on, every 5 s.
        events += Fixture.feed(&engine, stride(from: 35.5, to: 60, by: 5).map { Fixture.seen(Fixture.a, at: $0) })
        events += engine.advance(to: Timestamp(seconds: 60))
        #expect(events.of("didStartMonitoring").count == 2, "registered again (the retry at 31.2 s): \(events.summary)")
        #expect(events.of("didEnterRegion").isEmpty && events.of("didExitRegion").isEmpty, "\(events.summary)")
        let states = events.of("didDetermineState").compactMap { event -> String? in
            if case .didDetermineState(let state, let region) = event.kind { return "\(region.identifier):\(state.rawValue)" } else { return nil }
        }
        #expect(states == ["lobby:inside", "hall:outside"], "the requested states are the ones they had: \(states)")
        #expect(engine.state(of: "lobby") == .inside && engine.state(of: "hall") == .outside)
        #expect(engine.monitoredRegion("lobby")?.isStale == false, "the sighting confirmed it")
        #expect(events.contains { if case .didRangeBeacons(_, _, "lobby") = $0.kind { return true } else { return false } },
                "ranging resumes with the region inside")
    }

    @Test("A region inside whose beacon is not heard after the outage exits once, with the reason, after the silence threshold; one registered anew during the outage carries nothing over")
    func notHeardAgain() throws {
        var (engine, _) = Self.engineWithAnOutage()
        // A new definition of the hall during the outage (its registration fails: no source).
        _ = engine.startMonitoring(Fixture.region("hall", major: 10), at: Timestamp(seconds: 31))
        var events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 40))
        events += engine.advance(to: Timestamp(seconds: 200))
        let exits = events.of("didExitRegion", "lobby")
        #expect(exits.count == 1, "\(events.summary)")
        #expect(exits.first?.evidence?.reason?.contains("not seen since monitoring resumed") == true, "\(exits.first?.evidence?.reason ?? "")")
        #expect(events.of("didEnterRegion").isEmpty)
        #expect(events.of("didDetermineState", "hall").first?.evidence?.reason?.contains("no sighting within") == true,
                "the new hall is determined afresh: \(events.summary)")
    }

    @Test("A new definition registered while the old one waits for a retry replaces it for good: the retry does not register the old one over it (a PUT undone a second later)")
    func newDefinitionSupersedesTheRetry() throws {
        var (engine, _) = Self.engineWithAnOutage()
        #expect(engine.waitingRegion("hall") == Self.hall, "filed for a retry at 31.2 s")
        // The source back at 30.5 s resumes only parked regions: the hall's retry is still due.
        _ = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 30.5))
        let events = engine.startMonitoring(Fixture.region("hall", major: 10), at: Timestamp(seconds: 30.8))
        #expect(events.of("didStartMonitoring", "hall").count == 1)
        #expect(engine.waitingRegion("hall") == nil)
        let later = engine.advance(to: Timestamp(seconds: 40))
        #expect(engine.monitoredRegion("hall")?.region.beaconRegion?.major == 10, "the retry registered major 9 over it: \(later.summary)")
        #expect(later.of("didStartMonitoring", "hall").isEmpty)
    }

    @Test("A replacement refused for another reason than its source (a radius too large) leaves the waiting region as it was; a restore supersedes like a start; the carried state is the one the region had")
    func supersedingOnlyWhatCanBeRetried() throws {
        var (engine, _) = Self.engineWithAnOutage()
        #expect(engine.carriedState(of: "lobby")?.state == .inside && engine.carriedState(of: "hall")?.state == .outside)
        let huge = Region.circular(try CircularRegion(identifier: "hall", latitude: 35.68, longitude: 139.76, radius: engine.profile.maximumRegionMonitoringDistance * 2))
        let refused = engine.startMonitoring(huge, at: Timestamp(seconds: 30.4))
        #expect(refused.of("monitoringDidFail", "hall").count == 1)
        #expect(engine.waitingRegion("hall") == Self.hall, "the refused circle dropped the waiting beacon region")
        // A restore of a new definition while the source is away: it waits instead of the old one, carrying the restored state.
        let renewed = Fixture.region("lobby", major: 11)
        _ = engine.restore(renewed, state: .outside, since: Timestamp(seconds: 1), at: Timestamp(seconds: 30.5))
        #expect(engine.waitingRegion("lobby") == renewed && engine.carriedState(of: "lobby")?.state == .outside)
        let back = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 31)) + engine.advance(to: Timestamp(seconds: 40))
        #expect(engine.monitoredRegion("lobby")?.region == renewed && engine.monitoredRegion("hall")?.region == Self.hall, "\(back.summary)")
        #expect(engine.waitingRegions.isEmpty && engine.carriedState(of: "lobby") == nil)
    }

    @Test("A retry delay of 0 (or below) is held to 0.1 s: the retries of an outage advance in time (at 0 they failed at one instant for ever, and the daemon grew until killed)",
          .timeLimit(.inProcess))
    func zeroRetryDelayBounded() throws {
        var (engine, _) = Self.engineWithAnOutage(retry: Automation.Retry(delay: 0, maximumAttempts: 10_000))
        let events = engine.advance(to: Timestamp(seconds: 31.2))
        // Two regions, one retry each per 0.1 s over 1 s (±1 for the edges).
        #expect((18...22).contains(events.of("monitoringDidFail").count), "\(events.of("monitoringDidFail").count) retries in 1 s")
    }

    @Test("A region parked until its source is back, redefined as another kind meanwhile, stays the new definition when the source returns")
    func newKindSupersedesTheParkedRegion() throws {
        var (engine, _) = Self.engineWithAnOutage(retry: Automation.Retry(delay: 1, maximumAttempts: 0))
        #expect(engine.waitingRegion("hall") == Self.hall, "parked at once (no retries)")
        let circle = Region.circular(try CircularRegion(identifier: "hall", latitude: 35.68, longitude: 139.76, radius: 100))
        _ = engine.startMonitoring(circle, at: Timestamp(seconds: 35))
        #expect(engine.monitoredRegion("hall")?.region == circle && engine.waitingRegion("hall") == nil)
        let back = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 60))
        #expect(engine.monitoredRegion("hall")?.region == circle, "the parked beacon region came back over the circle: \(back.summary)")
        #expect(back.of("didStartMonitoring", "hall").isEmpty)
        #expect(engine.monitoredRegion("lobby") != nil, "the other parked region is resumed")
    }

    @Test("A circle redefined as a beacon region while the scanner is away is replaced at once: not monitored as the circle meanwhile, the beacon region monitored when the scanner is back; without the retry helper the refused beacon region leaves the circle")
    func beaconDefinitionReplacesTheCircleDuringTheOutage() throws {
        for retry in [Automation.Retry(), nil] {
            var (engine, _) = Self.engineWithAnOutage(retry: retry)
            let circle = Region.circular(try CircularRegion(identifier: "park", latitude: 35.68, longitude: 139.76, radius: 100))
            _ = engine.startMonitoring(circle, at: Timestamp(seconds: 31))
            #expect(engine.monitoredRegion("park")?.region == circle, "the location source works")
            let park = Fixture.region("park", major: 12)
            let refused = engine.startMonitoring(park, at: Timestamp(seconds: 32))
            #expect(refused.of("monitoringDidFail", "park").count == 1)
            if retry == nil {
                #expect(engine.monitoredRegion("park")?.region == circle && engine.waitingRegion("park") == nil, "nothing to wait with: a refusal for good")
                continue
            }
            #expect(engine.monitoredRegion("park") == nil, "the circle stayed monitored (and entered and exited) until the retry replaced it")
            #expect(engine.waitingRegion("park") == park)
            let back = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 40)) + engine.advance(to: Timestamp(seconds: 60))
            #expect(engine.monitoredRegion("park")?.region == park, "\(back.summary)")
        }
    }

    @Test("Refused for good while its source is away (a radius too large): not filed for a retry and the region of its identifier stays (it was removed, and the circle refused at the retry: both lost)")
    func refusalForGoodDuringTheOutage() throws {
        var (engine, _) = Self.engineWithAnOutage()
        let huge = Region.circular(try CircularRegion(identifier: "park", latitude: 35.68, longitude: 139.76,
                                                      radius: engine.profile.maximumRegionMonitoringDistance * 2))
        let park = Region.circular(try CircularRegion(identifier: "park", latitude: 35.68, longitude: 139.76, radius: 100))
        _ = engine.startMonitoring(park, at: Timestamp(seconds: 30.4))
        _ = engine.setSourceStatus(.restricted(reason: "gpsd unreachable"), for: .circular, at: Timestamp(seconds: 30.5))
        let refused = engine.startMonitoring(huge, at: Timestamp(seconds: 31))
        #expect(refused.of("monitoringDidFail", "park").first.map { event -> Bool in
            if case .monitoringDidFail(_, let error) = event.kind { return error.code == .radiusTooLarge } else { return false }
        } == true, "\(refused.summary)")
        #expect(engine.waitingRegion("park") == park, "the circle waiting for gpsd stays, the refused one is not filed")
        #expect(engine.permanentRefusal(for: huge)?.code == .radiusTooLarge && !engine.waitsForSource(huge))
        #expect(engine.waitsForSource(park), "gpsd may come back; the retry helper is on")
    }

    @Test("A restore of a region of another kind while its source is away replaces the region monitored under its identifier, as a start does")
    func restoreOfAnotherKindDuringTheOutage() throws {
        var (engine, _) = Self.engineWithAnOutage()
        let circle = Region.circular(try CircularRegion(identifier: "park", latitude: 35.68, longitude: 139.76, radius: 100))
        _ = engine.startMonitoring(circle, at: Timestamp(seconds: 31))
        #expect(engine.monitoredRegion("park")?.region == circle)
        let park = Fixture.region("park", major: 12)
        _ = engine.restore(park, state: .inside, since: Timestamp(seconds: 1), at: Timestamp(seconds: 32))
        #expect(engine.monitoredRegion("park") == nil && engine.waitingRegion("park") == park)
        #expect(engine.carriedState(of: "park")?.state == .inside, "the restored state is carried to the registration")
    }

    @Test("A new definition registered after its predecessor's retries ran out is retried in turn (it was parked at once: 'retries exhausted after 7 failures', never tried)")
    func newDefinitionStartsItsOwnRetries() throws {
        var (engine, _) = Self.engineWithAnOutage()
        _ = engine.advance(to: Timestamp(seconds: 60))   // five retries a second apart, then parked
        #expect(engine.waitingRegion("hall") == Self.hall)
        let events = engine.startMonitoring(Fixture.region("hall", major: 10), at: Timestamp(seconds: 61))
        let failure = try #require(events.of("monitoringDidFail", "hall").first)
        #expect(failure.evidence?.reason == nil, "parked as exhausted: \(failure.evidence?.reason ?? "")")
        #expect(engine.waitingRegion("hall")?.beaconRegion?.major == 10)
    }

    @Test("A region restored at a start while its source is still away (a broker slower to start than the daemon) gets its stored state when the source comes back, not a fresh determination (review finding)")
    func restoredWhileTheSourceIsAway() {
        var engine = MonitoringEngine(profile: .responsive, automation: Automation(requestStateOnStart: true, rangeWhileInside: true, retry: Automation.Retry()),
                                      sources: [.beacon: .restricted(reason: "broker unreachable")])
        var events = engine.restore(Self.lobby, state: .inside, since: Timestamp(seconds: -100), at: .zero)
        #expect(events.summary == ["monitoringDidFail:lobby"])
        events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 0.5))
        events += engine.advance(to: Timestamp(seconds: 1.5))   // the retry registers it
        events += Fixture.feed(&engine, stride(from: 4.5, to: 30, by: 5).map { Fixture.seen(Fixture.a, at: $0) })
        #expect(events.of("didEnterRegion").isEmpty && events.of("didExitRegion").isEmpty, "\(events.summary)")
        #expect(events.of("didDetermineState").compactMap(\.evidence?.reason) == ["requested"], "\(events.summary)")
        #expect(engine.state(of: "lobby") == .inside)
        #expect(engine.monitoredRegion("lobby")?.stateSince == Timestamp(seconds: -100), "since as stored")
    }

}
