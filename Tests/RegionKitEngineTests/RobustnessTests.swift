import Foundation
import Testing
@testable import RegionKitEngine

@Suite("Robustness helpers (spec §5) and authorization")
struct RobustnessTests {
    @Test("A restored state's untrusted 'since': non-finite is unknown, a future one is now (engine fuzz finding: a NaN since made the record unequal to itself)",
          arguments: [(Double.nan, nil), (.infinity, nil), (-.infinity, nil), (1e300, 100.0), (40, 40)] as [(Double, Double?)])
    func restoredSince(_ since: Double, _ stored: Double?) {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.restore(Fixture.region("room"), state: .inside, since: Timestamp(seconds: since), at: Timestamp(seconds: 100))
        let record = engine.monitoredRegion("room")
        #expect(record?.state == .inside)
        #expect(record?.stateSince == stored.map { Timestamp(seconds: $0) })
        #expect(record == engine.monitoredRegion("room"))
    }

    @Test("A fix's accuracy that is NaN, infinite or negative is taken as not given: the event's evidence has none (engine fuzz finding: a NaN accuracy made equal events compare unequal, and cannot be written as JSON)",
          arguments: [Double.nan, .infinity, -1])
    func untrustedAccuracy(_ accuracy: Double) throws {
        var engine = Fixture.engine(.coreLocation, sources: [.beacon: .authorized, .circular: .authorized])
        let park = Region.circular(try CircularRegion(identifier: "park", latitude: 48.8566, longitude: 2.3522, radius: 150))
        _ = engine.startMonitoring(park, at: .zero)
        _ = engine.requestState(for: park, at: .zero)
        let events = engine.ingest(LocationFix(timestamp: Timestamp(seconds: 1), latitude: 48.8566, longitude: 2.3522, horizontalAccuracy: accuracy))
        #expect(events.map(\.kind) == [.didDetermineState(.inside, park)])
        #expect(events.first?.evidence?.horizontalAccuracy == nil)
        #expect(events == events, "no NaN left in the events")
    }

    @Test("§5 adapter off → monitoringDidFail; retried every 1 s; recovers when the adapter is back")
    func retryAfterAdapterToggle() {
        var engine = Fixture.engine(.coreLocation, automation: Automation(requestStateOnStart: true, retry: .init(delay: 1, maximumAttempts: 5)))
        _ = engine.startMonitoring(Fixture.region("room"), at: .zero)
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 0.5))
        var events = engine.setSourceStatus(.restricted(reason: "adapter off"), for: .beacon, at: Timestamp(seconds: 10))
        #expect(events.summary == ["didChangeAuthorization:-", "monitoringDidFail:room"])
        #expect(engine.monitoredRegions.isEmpty)
        events = engine.advance(to: Timestamp(seconds: 12.5))
        #expect(events.summary == ["monitoringDidFail:room", "monitoringDidFail:room"])
        #expect(events.map(\.timestamp.seconds) == [11, 12])
        events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 12.7))
        events += engine.advance(to: Timestamp(seconds: 13.5))
        // Registered again with the state it had (inside): the requested state answers at once.
        #expect(events.summary == ["didChangeAuthorization:-", "didStartMonitoring:room", "didDetermineState:room:inside"])
        events = engine.ingest(Fixture.seen(Fixture.a, at: 13.6))
        #expect(events.summary == [], "the sighting confirms it: no spurious didEnter")
        #expect(engine.state(of: "room") == .inside)
    }

    @Test("§5 retries stop after the maximum failure count")
    func retryLimit() {
        var engine = Fixture.engine(.coreLocation, automation: Automation(retry: .init(delay: 1, maximumAttempts: 3)))
        _ = engine.startMonitoring(Fixture.region("room"), at: .zero)
        var events = engine.setSourceStatus(.restricted(reason: "adapter off"), for: .beacon, at: Timestamp(seconds: 1))
        events += engine.advance(to: Timestamp(seconds: 60))
        let failures = events.of("monitoringDidFail")
        #expect(failures.count == 4, "the failure plus 3 retries")
        // The count says what failed: the registration, then each retry (it said "4 failures (limit 3)").
        #expect(failures.last?.evidence?.reason?.hasPrefix("retries exhausted: the registration and 3 retries failed (maximumAttempts 3)") == true,
                "\(failures.last?.evidence?.reason ?? "-")")
        #expect(engine.nextDeadline == nil)
        // However long the outage, the region comes back with its source.
        let back = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 600))
        #expect(back.summary == ["didChangeAuthorization:-", "didStartMonitoring:room"])
        #expect(engine.monitoredRegions.map(\.identifier) == ["room"])
        // A region stopped meanwhile is not resurrected.
        _ = engine.setSourceStatus(.restricted(reason: "off"), for: .beacon, at: Timestamp(seconds: 601))
        _ = engine.advance(to: Timestamp(seconds: 700))
        _ = engine.stopMonitoring(identifier: "room", at: Timestamp(seconds: 701))
        #expect(engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 702)).summary == ["didChangeAuthorization:-"])
    }

    @Test("Without the retry helper a failed region stays failed (Core Location's own behaviour)")
    func noRetryByDefault() {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startMonitoring(Fixture.region("room"), at: .zero)
        var events = engine.setSourceStatus(.restricted(reason: "off"), for: .beacon, at: Timestamp(seconds: 1))
        events += engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 2))
        events += engine.advance(to: Timestamp(seconds: 60))
        #expect(events.of("didStartMonitoring").isEmpty)
        #expect(engine.monitoredRegions.isEmpty)
    }

    @Test("§5 wake: notifyEntryStateOnDisplay regions get their state at once; every state is re-requested 1 s later")
    func wake() {
        var engine = Fixture.engine(.coreLocation, automation: Automation(wakeRequestDelay: 1))
        _ = engine.startMonitoring(Fixture.region("plain"), at: .zero)
        _ = engine.startMonitoring(Fixture.region("display") { $0.notifyEntryStateOnDisplay = true }, at: .zero)
        _ = Fixture.feed(&engine, Fixture.stream(Fixture.a, from: 0.5, to: 20, every: 0.5))
        var events = engine.wake(at: Timestamp(seconds: 20))
        #expect(events.summary == ["didDetermineState:display:inside"])
        events = engine.advance(to: Timestamp(seconds: 21.5))
        #expect(events.summary == ["didDetermineState:plain:inside", "didDetermineState:display:inside"])
        #expect(events.allSatisfy { $0.timestamp == Timestamp(seconds: 21) })
    }

    @Test("Ranging fails when the scanner goes away")
    func rangingFailsWithTheSource() {
        var engine = Fixture.engine()
        _ = engine.startRanging(try! BeaconIdentityConstraint(uuid: Fixture.uuid), label: "hall", at: .zero)
        let events = engine.setSourceStatus(.denied(reason: "needs CAP_NET_RAW"), for: .beacon, at: Timestamp(seconds: 0.5))
        #expect(events.map(\.typeName) == ["didChangeAuthorization", "didFailRanging"])
        #expect(engine.rangedConstraints.isEmpty)
    }

    @Test("An unchanged source status reports nothing")
    func unchangedStatus() {
        var engine = Fixture.engine()
        #expect(engine.setSourceStatus(.authorized, for: .beacon, at: .zero).isEmpty)
        #expect(engine.sourceStatus(for: .beacon) == .authorized)
        #expect(!Fixture.engine(sources: [:]).sourceStatus(for: .circular).isAuthorized)
    }
}
