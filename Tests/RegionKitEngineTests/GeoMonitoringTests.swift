import Foundation
import Testing
@testable import RegionKitEngine

@Suite("Circular regions with hysteresis (spec §1, §2)")
struct GeoMonitoringTests {
    static let centre = (latitude: 35.6812, longitude: 139.7671)
    static let park = Region.circular(try! CircularRegion(identifier: "park", latitude: centre.latitude, longitude: centre.longitude, radius: 150))

    /// A fix `distance` metres east of the centre at time `t`.
    static func fix(_ distance: Double, at t: Double, accuracy: Double = 5) -> LocationFix {
        let point = Geodesy.destination(latitude: centre.latitude, longitude: centre.longitude, distance: distance, bearing: 90)
        return LocationFix(timestamp: Timestamp(seconds: t), latitude: point.latitude, longitude: point.longitude, horizontalAccuracy: accuracy)
    }

    @Test("§2 the first fix determines the state silently: no didEnter when already inside")
    func firstFixDetermines() {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startMonitoring(Self.park, at: .zero)
        _ = engine.requestState(for: Self.park, at: .zero)
        let events = engine.ingest(Self.fix(20, at: 1))
        #expect(events.summary == ["didDetermineState:park:inside"])
    }

    @Test("requestState on a circle before any fix answers unknown at once (it waited for a fix, for ever without a receiver), and again with the state the first fix determines; the automatic request at registration does not answer unknown")
    func requestBeforeAnyFix() throws {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startMonitoring(Self.park, at: .zero)
        let answer = engine.requestState(for: Self.park, at: Timestamp(seconds: 2))
        #expect(answer.summary == ["didDetermineState:park:unknown"])
        #expect(answer.first?.timestamp.seconds == 2 && answer.first?.evidence?.reason?.contains("no location fix yet") == true)
        #expect(engine.ingest(Self.fix(300, at: 90)).summary == ["didDetermineState:park:outside"])
        // Determined: answered from the state, as before.
        #expect(engine.requestState(for: Self.park, at: Timestamp(seconds: 91)).summary == ["didDetermineState:park:outside"])

        // requestStateOnStart (the daemon's helper) waits for the first fix without an `unknown`.
        var helped = Fixture.engine(.coreLocation, automation: Automation(requestStateOnStart: true))
        #expect(helped.startMonitoring(Self.park, at: .zero).summary == ["didStartMonitoring:park"])
        #expect(helped.ingest(Self.fix(20, at: 5)).summary == ["didDetermineState:park:inside"])
    }

    @Test("§2 jitter around the boundary produces no event")
    func jitterAtTheBoundary() {
        for profile in [MonitoringProfile.coreLocation, .responsive] {
            var engine = Fixture.engine(profile)
            _ = engine.startMonitoring(Self.park, at: .zero)
            _ = engine.ingest(Self.fix(140, at: 0))
            var events: [LocationEvent] = []
            for second in 1...600 {
                let wobble = 140 + 18 * sin(Double(second) * 0.7) // 122–158 m: within the buffer band
                events += engine.ingest(Self.fix(wobble, at: Double(second)))
            }
            events += engine.advance(to: Timestamp(seconds: 700))
            #expect(events.isEmpty, "profile \(profile.name): \(events.summary)")
        }
    }

    @Test("§2 crossing by the buffer and holding gives exactly one event after the dwell (Core Location: 20 s)")
    func crossAndHold() {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startMonitoring(Self.park, at: .zero)
        _ = engine.ingest(Self.fix(20, at: 0))
        var events: [LocationEvent] = []
        // 300 m from the centre is 150 m past the 150 m boundary: not yet the 200 m the buffer asks.
        for t in 1...30 { events += engine.ingest(Self.fix(300, at: Double(t))) }
        #expect(events.isEmpty, "300 m is within 200 m of the boundary")
        for t in 31...80 { events += engine.ingest(Self.fix(400, at: Double(t))) }
        #expect(events.summary == ["didExitRegion:park", "didDetermineState:park:outside"])
        #expect(events[0].timestamp == Timestamp(seconds: 51), "crossed at 31 s, held 20 s")
        #expect(events[0].evidence?.dwell == 20)
        // Both events carry the same evidence: a constant reason, the seconds held in `dwell`.
        #expect(events.map { $0.evidence?.reason } == ["held outside the boundary buffer", "held outside the boundary buffer"])
        #expect(events[1].evidence == events[0].evidence && abs((events[0].evidence?.distance ?? 0) - 400) < 0.01)
        // And back in: the inside reason.
        for t in 81...120 { events += engine.ingest(Self.fix(20, at: Double(t))) }
        #expect(events.dropFirst(2).map { $0.evidence?.reason } == ["held inside the boundary buffer", "held inside the boundary buffer"])
        #expect(events.dropFirst(2).first?.evidence?.dwell == 20)
    }

    @Test("§2 leaving the far side before the dwell ends cancels the crossing")
    func interruptedDwell() {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startMonitoring(Self.park, at: .zero)
        _ = engine.ingest(Self.fix(20, at: 0))
        var events: [LocationEvent] = []
        for t in 1...15 { events += engine.ingest(Self.fix(400, at: Double(t))) }
        events += engine.ingest(Self.fix(100, at: 16))
        for t in 17...30 { events += engine.ingest(Self.fix(400, at: Double(t))) }
        events += engine.advance(to: Timestamp(seconds: 36))
        #expect(events.isEmpty)
        events += engine.advance(to: Timestamp(seconds: 37))
        #expect(events.summary == ["didExitRegion:park", "didDetermineState:park:outside"])
        #expect(events[0].timestamp == Timestamp(seconds: 37))
    }

    @Test("The buffer grows with the fix's horizontal accuracy")
    func bufferFollowsAccuracy() {
        var engine = Fixture.engine(.responsive)
        _ = engine.startMonitoring(Self.park, at: .zero)
        _ = engine.ingest(Self.fix(20, at: 0))
        var events: [LocationEvent] = []
        for t in 1...30 { events += engine.ingest(Self.fix(200, at: Double(t), accuracy: 80)) }
        #expect(events.isEmpty, "50 m past the edge but ±80 m accuracy: not convincing")
        for t in 31...40 { events += engine.ingest(Self.fix(200, at: Double(t), accuracy: 10)) }
        #expect(events.of("didExitRegion").count == 1)
    }

    @Test("§1 a radius above maximumRegionMonitoringDistance fails registration")
    func radiusTooLarge() {
        var engine = Fixture.engine(.coreLocation)
        let huge = Region.circular(try! CircularRegion(identifier: "country", latitude: 0, longitude: 0, radius: 500_000))
        let events = engine.startMonitoring(huge, at: .zero)
        guard case .monitoringDidFail(_, let error) = events.first?.kind else { Issue.record("no failure"); return }
        #expect(error.code == .radiusTooLarge)
    }

    @Test("A no-fix report is 'location unavailable', never a position")
    func noFixIsIgnored() {
        var engine = Fixture.engine()
        _ = engine.startMonitoring(Self.park, at: .zero)
        var noFix = Self.fix(20, at: 1)
        noFix.mode = .noFix
        #expect(engine.ingest(noFix).isEmpty)
        #expect(engine.state(of: "park") == .unknown)
    }

    @Test("A region registered after a fix is determined from that fix (requestState answers from the latest fix)")
    func determinedFromTheLatestFix() {
        var engine = Fixture.engine(.coreLocation, automation: Automation(requestStateOnStart: true))
        _ = engine.ingest(Self.fix(500, at: 1))
        let events = engine.startMonitoring(Self.park, at: Timestamp(seconds: 2))
        #expect(events.summary == ["didStartMonitoring:park", "didDetermineState:park:outside"])
    }
}
