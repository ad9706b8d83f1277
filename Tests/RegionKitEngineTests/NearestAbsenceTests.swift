import Foundation
import Testing
@testable import RegionKitEngine

/// A beacon whose nearest scanner is tracked and that no scanner hears any more leaves its last
/// scanner (`didChangeNearestScanner` to none), at the time its last track is gone, and its state
/// is dropped: the engine keeps nearest-scanner state only for beacons heard lately.
@Suite("Nearest scanner: a beacon heard by no scanner leaves its room")
struct NearestAbsenceTests {
    static func engine() -> MonitoringEngine {
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        return Fixture.engine(profile)
    }

    static func changes(_ events: [LocationEvent]) -> [(time: Double, beacon: BeaconIdentity, to: String?, from: String?)] {
        events.compactMap { event in
            guard case .didChangeNearestScanner(let beacon, let to, let from) = event.kind else { return nil }
            return (event.timestamp.seconds, beacon, to, from)
        }
    }

    @Test("Heard in the kitchen for 20 s at 2 Hz, then nowhere: placed at once, gone when the kitchen's track is gone, state dropped")
    func leavesWhenHeardNowhere() throws {
        var engine = Self.engine()
        var events: [LocationEvent] = []
        for t in stride(from: 0.0, to: 20, by: 0.5) { events += engine.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen")) }
        #expect(Self.changes(events).map { [$0.to, $0.from] } == [["kitchen", nil]])
        // The time the last track is gone, as the state computes it (under the profile's exit detector).
        let state = try #require(engine.nearest[Fixture.a])
        let absent = try #require(state.absentDeadline(detector: engine.profile.exitDetector))
        #expect(absent.seconds > 19.5 && absent.seconds < 19.5 + 60, "\(absent)")
        #expect(engine.nextDeadline.map { $0 <= absent } == true, "the engine wakes for it (never late)")
        // Just before: still in the kitchen. At the time: gone, with the previous scanner and a reason.
        events = engine.advance(to: Timestamp(seconds: absent.seconds - 0.001))
        #expect(Self.changes(events).isEmpty && engine.nearestScanner(for: Fixture.a) == "kitchen")
        events = engine.advance(to: absent)
        let gone = Self.changes(events)
        #expect(gone.count == 1 && gone.first?.to == nil && gone.first?.from == "kitchen" && gone.first?.time == absent.seconds)
        #expect(events.first?.evidence?.reason == "heard by no scanner" && events.first?.evidence?.beacon == Fixture.a)
        #expect(engine.nearestScanner(for: Fixture.a) == nil && engine.nearest.isEmpty && engine.nearestAbsences.isEmpty)
        // Heard again: placed again, from nowhere.
        events = engine.ingest(Fixture.seen(Fixture.a, at: absent.seconds + 100, scanner: "hall"))
        #expect(Self.changes(events).map { [$0.to, $0.from] } == [["hall", nil]])
    }

    @Test("A beacon heard on by another scanner stays placed; only the one heard nowhere leaves; the queue stays small")
    func onlyTheSilentOneLeaves() throws {
        var engine = Self.engine()
        var events: [LocationEvent] = []
        for t in stride(from: 0.0, to: 20, by: 0.5) {
            events += engine.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen"))
            events += engine.ingest(Fixture.seen(Fixture.b, at: t + 0.25, scanner: "hall"))
        }
        // b moves on to the office and is heard there for two more minutes; a goes quiet at 19.5 s.
        for t in stride(from: 20.0, to: 140, by: 0.5) { events += engine.ingest(Fixture.seen(Fixture.b, at: t, rssi: -50, scanner: "office")) }
        let changes = Self.changes(events)
        #expect(changes.contains { $0.beacon == Fixture.a && $0.to == nil && $0.from == "kitchen" })
        #expect(!changes.contains { $0.beacon == Fixture.b && $0.to == nil })
        #expect(engine.nearestScanner(for: Fixture.b) == "office" && engine.nearest.count == 1)
        // Lazy entries: about one per beacon, not one per sighting (280 sightings of b).
        #expect(engine.nearestAbsences.count <= 3, "\(engine.nearestAbsences.count)")
    }

    @Test("Without a nearest-scanner policy nothing is tracked or filed")
    func offWithoutPolicy() {
        var engine = Fixture.engine(.responsive)
        for t in stride(from: 0.0, to: 10, by: 0.5) { _ = engine.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen")) }
        #expect(engine.nearest.isEmpty && engine.nearestAbsences.isEmpty)
        #expect(Self.changes(engine.advance(to: Timestamp(seconds: 1000))).isEmpty)
    }

    @Test("A beacon reported under thousands of room names keeps at most 32 scanner tracks, the current room's always among them (every sighting walked and sorted them all: audit)")
    func scannerTracksBounded() {
        var state = NearestScannerState()
        let policy = NearestScannerPolicy()
        // The kitchen hears it loudly every second; a flood names a new room 50 times a second.
        var t = 0.0
        for i in 0..<3_000 {
            if i % 50 == 0 { _ = state.record(Fixture.seen(Fixture.a, at: t, rssi: -50, scanner: "kitchen"), scanner: "kitchen", policy: policy) }
            _ = state.record(Fixture.seen(Fixture.a, at: t, rssi: -95, scanner: "room-\(i)"), scanner: "room-\(i)", policy: policy)
            #expect(state.tracks.count <= NearestScannerState.maximumTracks)
            t += 0.02
        }
        #expect(state.tracks.count == 32)
        #expect(state.current == "kitchen" && state.tracks["kitchen"] != nil)
        #expect(state.tracks["room-2999"] != nil && state.tracks["room-0"] == nil, "the newest kept, the oldest let go")
    }

    /// Sightings of `Fixture.a`: the kitchen every 2 s (loud) for 10 minutes, the hall every 14 s
    /// (faint, 0.3 s later); returns the events and the last sighting's time.
    static func kitchenAndSparseHall(_ engine: inout MonitoringEngine, others: [BeaconIdentity] = []) -> (events: [LocationEvent], last: Double) {
        var events: [LocationEvent] = []
        var last = 0.0
        for step in 0..<300 {
            let t = Double(step) * 2
            events += engine.ingest(Fixture.seen(Fixture.a, at: t, rssi: -55, scanner: "kitchen"))
            last = t
            if step % 7 == 0 {
                events += engine.ingest(Fixture.seen(Fixture.a, at: t + 0.3, rssi: -80, scanner: "hall"))
                last = t + 0.3
            }
            for (n, other) in others.enumerated() { events += engine.ingest(Fixture.seen(other, at: t + 0.5, rssi: -60, scanner: n % 2 == 0 ? "kitchen" : "hall")) }
        }
        return (events, last)
    }

    @Test("A beacon a scanner hears only every 14 s leaves its room when its region exits, not when the loud room's track is gone (the room went at 28 s, the region at 50 s: a Home Assistant tracker away while its presence sensor stayed on)")
    func roomWaitsForTheRegion() throws {
        var engine = Self.engine()
        _ = engine.startMonitoring(Fixture.region("desk", major: 0, minor: 1), at: Timestamp(seconds: 0))
        var (events, last) = Self.kitchenAndSparseHall(&engine)
        // The kitchen's track alone would say gone here (the hall's is gone under the quick rule between its sightings).
        let state = try #require(engine.nearest[Fixture.a])
        let trackGone = try #require(state.absentDeadline(detector: engine.profile.exitDetector))
        events = engine.advance(to: Timestamp(seconds: last + 300))
        let exit = try #require(events.of("didExitRegion", "desk").first?.timestamp)
        let gone = Self.changes(events)
        #expect(gone.count == 1 && gone.first?.to == nil && gone.first?.from == "kitchen")
        #expect(trackGone.seconds < exit.seconds - 10, "the case this test is about: track \(trackGone), exit \(exit)")
        #expect(gone.first?.time == exit.seconds, "room gone at \(gone.first?.time ?? -1), region exit at \(exit.seconds)")
        #expect(engine.nearest.isEmpty && engine.nearestAbsences.isEmpty)
    }

    @Test("A room held for its region's streams goes when that region is removed, at once, not at the time the removed region would have exited (engine fuzz finding: the absence was late)")
    func heldRoomGoesWithItsRegion() throws {
        var engine = Self.engine()
        _ = engine.startMonitoring(Fixture.region("desk", major: 0, minor: 1), at: Timestamp(seconds: 0))
        let (_, last) = Self.kitchenAndSparseHall(&engine)
        let trackGone = try #require(engine.nearest[Fixture.a]?.absentDeadline(detector: engine.profile.exitDetector))
        // Past the tracks' deadline: the room is held for the desk's streams.
        var events = engine.advance(to: trackGone + 1)
        #expect(Self.changes(events).isEmpty && engine.heldAbsences == [Fixture.a], "the case: held, \(events.summary)")
        let held = try #require(engine.nearest[Fixture.a]?.absentAt)
        #expect(held.seconds > trackGone.seconds + 5 && held.seconds > last)
        let removedAt = trackGone + 2
        events = engine.stopMonitoring(identifier: "desk", at: removedAt)
        let gone = Self.changes(events)
        #expect(gone.count == 1 && gone.first?.to == nil && gone.first?.from == "kitchen", "\(events.summary)")
        #expect(gone.first?.time == removedAt.seconds, "gone at \(gone.first?.time ?? -1), the region removed at \(removedAt.seconds), held till \(held.seconds)")
        #expect(engine.nearest.isEmpty && engine.heldAbsences.isEmpty)
        #expect(Self.changes(engine.advance(to: held + 10)).isEmpty, "no second departure")
    }

    @Test("In a UUID region of many beacons the room waits for this beacon's own streams (looked up by scanner), not for the region, which stays inside")
    func roomWaitsForItsOwnStreams() throws {
        var engine = Self.engine()
        _ = engine.startMonitoring(Fixture.region("shop"), at: Timestamp(seconds: 0))
        let others = (10..<16).map { BeaconIdentity(uuid: Fixture.uuid, major: 0, minor: UInt16($0)) }
        var (events, _) = Self.kitchenAndSparseHall(&engine, others: others)
        // The others go on being heard; this beacon's streams in the region say when it is gone.
        var ownDeadline: Timestamp?
        engine.forEachStream { _, key, stream in
            guard key.identity == Fixture.a else { return }
            let deadline = engine.profile.exitDetector.goneDeadline(for: stream, gridOrigin: Timestamp(seconds: 0))
            if ownDeadline.map({ deadline > $0 }) ?? true { ownDeadline = deadline }
        }
        let expected = try #require(ownDeadline)
        let trackGone = try #require(engine.nearest[Fixture.a]?.absentDeadline(detector: engine.profile.exitDetector))
        #expect(trackGone < expected)
        for t in stride(from: 600.0, to: expected.seconds + 30, by: 2) {
            for other in others { events += engine.ingest(Fixture.seen(other, at: t, rssi: -60, scanner: "kitchen")) }
        }
        let gone = Self.changes(events).filter { $0.beacon == Fixture.a && $0.to == nil }
        #expect(gone.count == 1 && gone.first?.from == "kitchen")
        #expect(gone.first.map { $0.time >= expected.seconds && $0.time < expected.seconds + 2 } == true, "gone at \(gone.first?.time ?? -1), its streams at \(expected.seconds)")
        #expect(events.of("didExitRegion").isEmpty)
    }
}
