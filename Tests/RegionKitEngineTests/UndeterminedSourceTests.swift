import Foundation
import Testing
@testable import RegionKitEngine

/// Regions registered before their source has reported (`notDetermined`: a scanner not started
/// yet, a broker still connecting) wait for it, whatever the automation, as Core Location keeps
/// the regions an app registers before the user answers the authorization prompt. Before, the
/// default `Automation()` refused them for good with a `monitoringDidFail`, and the retry helper
/// logged one before every normal start-up.
@Suite("Regions registered before their source reported")
struct UndeterminedSourceTests {
    static let lobby = Fixture.region("lobby")
    static let hall = Fixture.region("hall", major: 9)
    static let undetermined: [RegionKind: AuthorizationStatus] = [.beacon: .notDetermined, .circular: .authorized]
    static let park = Region.circular(try! CircularRegion(identifier: "park", latitude: 35.68, longitude: 139.76, radius: 100))

    /// An engine under the responsive profile with `limit`, the lobby and the hall parked for the
    /// beacon source that has not reported (no event).
    static func lobbyAndHallWaiting(limit: Int) -> MonitoringEngine {
        var profile = MonitoringProfile.responsive
        profile.regionLimit = limit
        var engine = Fixture.engine(profile, sources: undetermined)
        _ = engine.startMonitoring(contentsOf: [lobby, hall], at: .zero)   // checked by startsWhenAuthorized
        return engine
    }

    @Test("Default automation: no event while the source has not reported; authorized starts the regions in the order registered, and the beacon's sightings determine the lobby inside")
    func startsWhenAuthorized() throws {
        var engine = Fixture.engine(.responsive, sources: Self.undetermined)
        let before = engine.startMonitoring(contentsOf: [Self.lobby, Self.hall], at: .zero)
        #expect(before.isEmpty, "\(before.summary)")
        #expect(engine.monitoredRegion("lobby") == nil && engine.waitingRegion("lobby") == Self.lobby)
        #expect(engine.waitingRegions == [Self.lobby, Self.hall])
        #expect(engine.waitsForSource(Fixture.region("shop")), "a PUT now is accepted as waiting, without the retry helper")
        var events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 2))
        #expect(events.summary == ["didChangeAuthorization:-", "didStartMonitoring:lobby", "didStartMonitoring:hall"])
        #expect(engine.waitingRegions.isEmpty && engine.monitoredRegions.count == 2)
        events = Fixture.feed(&engine, Fixture.stream(Fixture.a, from: 2.5, to: 6, every: 1))
        #expect(engine.state(of: "lobby") == .inside, "\(events.summary)")
        #expect(events.of("monitoringDidFail").isEmpty)
    }

    @Test("The source reports it cannot be used: the waiting regions fail then, in order, with the status; without the retry helper nothing is left waiting", arguments: [
        AuthorizationStatus.restricted(reason: "no adapter"), .denied(reason: "no CAP_NET_RAW"),
    ])
    func failsWhenUnusable(status: AuthorizationStatus) throws {
        var engine = Fixture.engine(.responsive, sources: Self.undetermined)
        _ = engine.startMonitoring(contentsOf: [Self.lobby, Self.hall], at: .zero)
        let events = engine.setSourceStatus(status, for: .beacon, at: Timestamp(seconds: 1))
        #expect(events.summary == ["didChangeAuthorization:-", "monitoringDidFail:lobby", "monitoringDidFail:hall"])
        for event in events.of("monitoringDidFail") {
            guard case .monitoringDidFail(_, let error) = event.kind else { continue }
            #expect(error.code == .sourceUnavailable && error.message.contains("\(status)"), "\(error.message)")
        }
        #expect(engine.waitingRegions.isEmpty)
        let later = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 5))
        #expect(later.summary == ["didChangeAuthorization:-"], "refused for good without the helper: \(later.summary)")
    }

    @Test("A state carried for a waiting region goes with it: kept while it waits (a retry, the source's return), dropped when it fails for good or its retry is cancelled (it was kept for ever: one entry per region restored while its source was unusable, at every start)")
    func carriedStatesGoWithTheirRegion() throws {
        // Restored inside while the source has not reported, which then says it cannot be used.
        var engine = Fixture.engine(.responsive, sources: Self.undetermined)
        _ = engine.restore(Self.lobby, state: .inside, since: .zero, at: .zero)
        #expect(engine.carriedState(of: "lobby")?.state == .inside, "waiting: the state is carried")
        _ = engine.setSourceStatus(.denied(reason: "no CAP_NET_RAW"), for: .beacon, at: Timestamp(seconds: 1))
        #expect(engine.waitingRegions.isEmpty && engine.suspendedStates.isEmpty, "\(engine.suspendedStates)")
        // Restored while the source is unusable, without the retry helper: refused for good.
        var refused = Fixture.engine(.responsive, sources: [.beacon: .denied(reason: "off"), .circular: .authorized])
        let failed = refused.restore(Self.lobby, state: .inside, since: .zero, at: .zero)
        #expect(failed.summary == ["monitoringDidFail:lobby"] && refused.suspendedStates.isEmpty, "\(refused.suspendedStates)")
        // With the helper: filed for a retry with its state, until the retry is cancelled.
        var retried = Fixture.engine(.responsive, automation: Automation(retry: Automation.Retry(delay: 1, maximumAttempts: 5)),
                                     sources: [.beacon: .denied(reason: "off"), .circular: .authorized])
        _ = retried.restore(Self.lobby, state: .inside, since: .zero, at: .zero)
        #expect(retried.carriedState(of: "lobby")?.state == .inside)
        retried.cancelRetry(identifier: "lobby")
        #expect(retried.waitingRegions.isEmpty && retried.suspendedStates.isEmpty, "\(retried.suspendedStates)")
    }

    @Test("With the retry helper the failure is filed for a retry, which registers the region once the source works")
    func retriedAfterFailure() throws {
        var engine = Fixture.engine(.responsive, automation: Automation(retry: Automation.Retry(delay: 1, maximumAttempts: 5)), sources: Self.undetermined)
        #expect(engine.startMonitoring(Self.lobby, at: .zero).isEmpty)
        var events = engine.setSourceStatus(.restricted(reason: "connecting failed"), for: .beacon, at: Timestamp(seconds: 1))
        #expect(events.summary == ["didChangeAuthorization:-", "monitoringDidFail:lobby"])
        #expect(engine.waitingRegion("lobby") == Self.lobby, "filed for a retry")
        events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 1.5))
        events += engine.advance(to: Timestamp(seconds: 2.5))
        #expect(events.of("didStartMonitoring", "lobby").count == 1, "\(events.summary)")
    }

    @Test("A region stopped, or replaced by a new definition, while it waits: the source's report starts only what is registered then")
    func stoppedOrReplacedWhileWaiting() throws {
        var engine = Fixture.engine(.responsive, sources: Self.undetermined)
        _ = engine.startMonitoring(contentsOf: [Self.lobby, Self.hall], at: .zero)
        #expect(engine.stopMonitoring(identifier: "lobby", at: Timestamp(seconds: 1)).isEmpty)
        let hall10 = Fixture.region("hall", major: 10)
        #expect(engine.startMonitoring(hall10, at: Timestamp(seconds: 1)).isEmpty)
        #expect(engine.waitingRegions == [hall10])
        let events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 2))
        #expect(events.summary == ["didChangeAuthorization:-", "didStartMonitoring:hall"])
        #expect(engine.monitoredRegion("hall")?.region == hall10 && engine.monitoredRegion("lobby") == nil)
    }

    @Test("A region restored (stored inside before a restart) while the source has not reported keeps its state for the registration: inside, stale, no enter when its beacon is heard")
    func restoredKeepsState() throws {
        var engine = Fixture.engine(.responsive, sources: Self.undetermined)
        #expect(engine.restore(Self.lobby, state: .inside, since: Timestamp(seconds: -100), at: .zero).isEmpty)
        #expect(engine.carriedState(of: "lobby")?.state == .inside)
        var events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 1))
        #expect(engine.state(of: "lobby") == .inside && engine.monitoredRegion("lobby")?.isStale == true)
        events += Fixture.feed(&engine, Fixture.stream(Fixture.a, from: 1.5, to: 5, every: 1))
        #expect(events.of("didEnterRegion").isEmpty && events.of("didExitRegion").isEmpty, "\(events.summary)")
        #expect(engine.monitoredRegion("lobby")?.isStale == false, "the sighting confirmed it")
    }

    @Test("Regions whose retries ran out in an earlier outage keep waiting when the source, back to notDetermined, then reports it cannot be used; only the regions parked undetermined fail")
    func exhaustedRetriesKeepWaiting() throws {
        var engine = Fixture.engine(.responsive, automation: Automation(retry: Automation.Retry(delay: 1, maximumAttempts: 1)))
        _ = engine.startMonitoring(Self.lobby, at: .zero)
        _ = engine.setSourceStatus(.restricted(reason: "unplugged"), for: .beacon, at: Timestamp(seconds: 1))
        var events = engine.advance(to: Timestamp(seconds: 5))
        #expect(events.of("monitoringDidFail", "lobby").first?.evidence?.reason?.contains("retries exhausted") == true, "\(events.summary)")
        _ = engine.setSourceStatus(.notDetermined, for: .beacon, at: Timestamp(seconds: 6))
        #expect(engine.startMonitoring(Self.hall, at: Timestamp(seconds: 6)).isEmpty)
        events = engine.setSourceStatus(.restricted(reason: "still unplugged"), for: .beacon, at: Timestamp(seconds: 7))
        #expect(events.summary == ["didChangeAuthorization:-", "monitoringDidFail:hall"])
        #expect(engine.waitingRegion("lobby") == Self.lobby, "the exhausted one still waits")
        events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 8))
        #expect(events.of("didStartMonitoring", "lobby").count == 1, "\(events.summary)")
    }

    @Test("The region limit counts the waiting regions: one more than the limit is refused at once, not parked to fail later")
    func limitCountsWaiting() throws {
        var engine = Self.lobbyAndHallWaiting(limit: 2)
        let refused = engine.startMonitoring(Fixture.region("shop", major: 3), at: Timestamp(seconds: 1))
        #expect(refused.summary == ["monitoringDidFail:shop"])
        if case .monitoringDidFail(_, let error) = refused.first?.kind {
            #expect(error.message.contains("limit of 2"), "\(error.message)")
        }
        #expect(engine.waitingRegion("shop") == nil)
    }

    @Test("At the limit, a new definition of a waiting region that the limit refuses leaves the waiting one (review finding: both were lost)")
    func newDefinitionRefusedKeepsTheWaiting() throws {
        var engine = Self.lobbyAndHallWaiting(limit: 3)
        let circle = Self.park
        #expect(engine.startMonitoring(circle, at: .zero).summary == ["didStartMonitoring:park"])
        engine.profile.regionLimit = 2   // the case: more regions than the limit (a lowered limit)
        let lobby2 = Fixture.region("lobby", major: 5)
        #expect(engine.startMonitoring(lobby2, at: Timestamp(seconds: 1)).summary == ["monitoringDidFail:lobby"])
        #expect(engine.waitingRegion("lobby") == Self.lobby, "the waiting definition stays")
    }

    @Test("The limit counts the waiting regions of the other kind too: a circle started while beacons wait at the limit is refused at once; the beacons start when the scanner reports (review finding: the circle started and a beacon failed then)")
    func limitCountsWaitingOfOtherKind() throws {
        var engine = Self.lobbyAndHallWaiting(limit: 2)
        #expect(engine.waitingRegions == [Self.lobby, Self.hall] && engine.monitoredRegions.isEmpty)
        let circle = Self.park
        #expect(engine.refusal(for: circle)?.message.contains("counting 2 waiting") == true, "\(String(describing: engine.refusal(for: circle)))")
        let refused = engine.startMonitoring(circle, at: Timestamp(seconds: 1))
        #expect(refused.summary == ["monitoringDidFail:park"])
        #expect(engine.monitoredRegion("park") == nil && engine.waitingRegion("park") == nil)
        let events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 2))
        #expect(events.summary == ["didChangeAuthorization:-", "didStartMonitoring:lobby", "didStartMonitoring:hall"])
        // Once one stops, the circle has its place.
        _ = engine.stopMonitoring(identifier: "hall", at: Timestamp(seconds: 3))
        #expect(engine.startMonitoring(circle, at: Timestamp(seconds: 4)).summary == ["didStartMonitoring:park"])
    }

    @Test("The same for beacon regions filed for a retry during an outage: a new circle at the limit is refused, the beacons come back with the scanner")
    func limitCountsRetriesOfOtherKind() throws {
        var profile = MonitoringProfile.responsive
        profile.regionLimit = 2
        var engine = Fixture.engine(profile, automation: Automation(retry: Automation.Retry(delay: 1, maximumAttempts: 5)))
        _ = engine.startMonitoring(contentsOf: [Self.lobby, Self.hall], at: .zero)
        _ = engine.setSourceStatus(.restricted(reason: "adapter unplugged"), for: .beacon, at: Timestamp(seconds: 1))
        #expect(engine.advance(to: Timestamp(seconds: 2.5)).of("monitoringDidFail").count == 2, "the case: both retried and failed")
        #expect(engine.monitoredRegions.isEmpty && engine.waitingRegions.count == 2)
        let circle = Self.park
        _ = engine.advance(to: Timestamp(seconds: 3))   // their retries fail again, filed for 4 s
        #expect(engine.startMonitoring(circle, at: Timestamp(seconds: 3)).summary == ["monitoringDidFail:park"])
        _ = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 3.2))
        let events = engine.advance(to: Timestamp(seconds: 5))
        #expect(events.of("monitoringDidFail").isEmpty, "\(events.summary)")
        #expect(engine.monitoredRegions.count == 2 && engine.waitingRegions.isEmpty)
    }

    @Test("A region already monitored under the identifier, of the kind whose source works, is replaced by the waiting definition (as a region filed for a retry replaces it)")
    func replacesMonitoredOfOtherKind() throws {
        var engine = Fixture.engine(.responsive, sources: Self.undetermined)
        let circle = Region.circular(try CircularRegion(identifier: "lobby", latitude: 35.68, longitude: 139.76, radius: 100))
        #expect(engine.startMonitoring(circle, at: .zero).summary == ["didStartMonitoring:lobby"])
        #expect(engine.startMonitoring(Self.lobby, at: Timestamp(seconds: 1)).isEmpty)
        #expect(engine.monitoredRegion("lobby") == nil && engine.waitingRegion("lobby") == Self.lobby)
        let events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 2))
        #expect(engine.monitoredRegion("lobby")?.region == Self.lobby, "\(events.summary)")
    }
}
