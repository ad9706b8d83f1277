import Foundation
import Testing
@testable import RegionKitEngine

/// A beacon's room carried over to a fresh engine (``MonitoringEngine/restoreNearestScanner(_:scanner:at:)``:
/// a cluster partition's engine set aside for a broker outage, a restart): no event; it stays while
/// heard, moves at once when another scanner hears it first, and leaves when heard by none.
@Suite("Nearest scanner: a room carried over to a fresh engine")
struct NearestScannerRestoreTests {
    static func changes(_ events: [LocationEvent]) -> [[String?]] {
        NearestAbsenceTests.changes(events).map { [$0.to, $0.from] }
    }

    @Test("Not heard again: no event at the restore, still in the kitchen, then leaves it once (the stale room a fresh engine never cleared)")
    func leavesWhenNotHeard() throws {
        var engine = NearestAbsenceTests.engine()
        var events = engine.restoreNearestScanner(Fixture.a, scanner: "kitchen", at: Timestamp(seconds: 100))
        #expect(events.isEmpty)
        #expect(engine.nearestScanner(for: Fixture.a) == "kitchen" && engine.nearestScanners == [Fixture.a: "kitchen"])
        let absent = try #require(engine.nearest[Fixture.a]?.absentAt)
        #expect(absent.seconds > 100 && absent.seconds <= 160, "\(absent)")
        #expect(engine.nextDeadline.map { $0 <= absent } == true, "the engine wakes for it")
        events = engine.advance(to: Timestamp(seconds: 1_000))
        #expect(Self.changes(events) == [[nil, "kitchen"]])
        #expect(events.first?.timestamp == absent && events.first?.evidence?.reason == "heard by no scanner")
        #expect(engine.nearest.isEmpty && engine.nearestAbsences.isEmpty)
    }

    @Test("Heard again by its room's scanner: no event, and its rhythm learned from the sightings only (the outage is no interval of its)")
    func staysWhenHeardThere() throws {
        // One engine carries the beacon over at 100 s; it is heard again halfway to the time it
        // would leave, from then on at 2 Hz. A fresh engine hears the same sightings.
        var restored = NearestAbsenceTests.engine()
        var events = restored.restoreNearestScanner(Fixture.a, scanner: "kitchen", at: Timestamp(seconds: 100))
        let carriedUntil = try #require(restored.nearest[Fixture.a]?.absentAt).seconds
        let heard = (100 + carriedUntil) / 2
        #expect(heard - 100 >= 1, "the gap is a real one: \(heard - 100) s")
        var fresh = NearestAbsenceTests.engine()
        _ = fresh.advance(to: Timestamp(seconds: 100))
        var freshEvents: [LocationEvent] = []
        for t in stride(from: heard, to: heard + 20, by: 0.5) {
            freshEvents += fresh.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen"))
            events += restored.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen"))
        }
        #expect(Self.changes(freshEvents) == [["kitchen", nil]])
        #expect(Self.changes(events).isEmpty, "already in the kitchen")
        // Both leave at the same time: the gap before the first sighting learned nothing.
        let freshAbsent = try #require(fresh.nearest[Fixture.a]?.absentDeadline(detector: fresh.profile.exitDetector))
        let restoredAbsent = try #require(restored.nearest[Fixture.a]?.absentDeadline(detector: restored.profile.exitDetector))
        #expect(restoredAbsent == freshAbsent, "\(restoredAbsent) vs \(freshAbsent)")
        events = restored.advance(to: Timestamp(seconds: 1_000))
        #expect(Self.changes(events) == [[nil, "kitchen"]] && events.first?.timestamp == restoredAbsent)
    }

    @Test("Heard weakly by a neighbouring room first, then by its own: stays, no event (it moved to the hall and back: two false room events)")
    func staysWhenHeardElsewhereFirst() {
        var engine = NearestAbsenceTests.engine()
        _ = engine.restoreNearestScanner(Fixture.a, scanner: "kitchen", at: Timestamp(seconds: 100))
        var events: [LocationEvent] = []
        for t in stride(from: 100.3, to: 130, by: 1) {
            events += engine.ingest(Fixture.seen(Fixture.a, at: t, rssi: -80, scanner: "hall"))
            events += engine.ingest(Fixture.seen(Fixture.a, at: t + 0.4, rssi: -60, scanner: "kitchen"))
        }
        #expect(Self.changes(events).isEmpty, "\(Self.changes(events))")
        #expect(engine.nearestScanner(for: Fixture.a) == "kitchen")
    }

    @Test("Heard only by another scanner: moves there after the policy's dwell, once")
    func movesWhenHeardOnlyElsewhere() throws {
        var engine = NearestAbsenceTests.engine()
        _ = engine.restoreNearestScanner(Fixture.a, scanner: "kitchen", at: Timestamp(seconds: 100))
        var moved: [(time: Double, to: String?, from: String?)] = []
        for t in stride(from: 100.5, to: 120, by: 0.5) {
            moved += NearestAbsenceTests.changes(engine.ingest(Fixture.seen(Fixture.a, at: t, rssi: -80, scanner: "hall"))).map { ($0.time, $0.to, $0.from) }
        }
        #expect(moved.map { [$0.to, $0.from] } == [["hall", "kitchen"]])
        let dwell = try #require(engine.profile.nearestScanner?.dwell)
        // At the dwell after the hall first heard it (not at once: the carried kitchen track is
        // not gone yet), within one sighting's interval.
        #expect(moved.first.map { $0.time >= 100.5 + dwell && $0.time <= 100.5 + dwell + 0.5 } == true, "\(moved)")
        #expect(engine.nearestScanner(for: Fixture.a) == "hall")
    }

    @Test("Ignored for a beacon the engine tracks already, for an empty scanner name, and without a nearest-scanner policy")
    func ignored() {
        var engine = NearestAbsenceTests.engine()
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 10, scanner: "hall"))
        let before = engine.nearest
        #expect(engine.restoreNearestScanner(Fixture.a, scanner: "kitchen", at: Timestamp(seconds: 11)).isEmpty)
        #expect(engine.nearest == before && engine.nearestScanner(for: Fixture.a) == "hall")
        _ = engine.restoreNearestScanner(Fixture.b, scanner: "", at: Timestamp(seconds: 11))
        #expect(engine.nearest[Fixture.b] == nil)

        var off = Fixture.engine(.responsive)
        _ = off.restoreNearestScanner(Fixture.a, scanner: "kitchen", at: Timestamp(seconds: 1))
        #expect(off.nearest.isEmpty && off.nearestAbsences.isEmpty)
    }

    @Test("The beacon source away (a broker outage) longer than a room's absence: no room event during it or at its return; heard again there after it, it stays; not heard, it leaves once, counted from the return")
    func roomsSurviveASourceOutage() throws {
        var engine = NearestAbsenceTests.engine()
        var events: [LocationEvent] = []
        for t in stride(from: 0.0, to: 20, by: 0.5) {
            events += engine.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen"))
            events += engine.ingest(Fixture.seen(Fixture.b, at: t + 0.2, scanner: "hall"))
        }
        #expect(Self.changes(events) == [["kitchen", nil], ["hall", nil]])
        let usualAbsence = try #require(engine.nearest[Fixture.a]?.absentAt).seconds
        // The source goes away at 20 s and comes back at 600 s: far past the absence.
        events = engine.setSourceStatus(.restricted(reason: "broker unreachable"), for: .beacon, at: Timestamp(seconds: 20))
        events += engine.advance(to: Timestamp(seconds: 600))
        #expect(Self.changes(events).isEmpty, "an outage is not every beacon leaving: \(Self.changes(events))")
        #expect(engine.nearestScanners == [Fixture.a: "kitchen", Fixture.b: "hall"], "their rooms while the source is away")
        #expect(engine.nearestScanner(for: Fixture.a) == "kitchen" && engine.nearestAbsences.isEmpty)
        events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 600))
        #expect(Self.changes(events).isEmpty)
        // The kitchen's beacon is heard again there; the hall's is not.
        for t in stride(from: 601.0, through: 700, by: 0.5) { events += engine.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen")) }
        events += engine.advance(to: Timestamp(seconds: 700))
        let changes = NearestAbsenceTests.changes(events)
        #expect(changes.map { [$0.to, $0.from] } == [[nil, "hall"]], "\(changes)")
        #expect(changes.first?.beacon == Fixture.b)
        // It leaves as a beacon heard once at the return would: as long after 600 s as a fresh
        // room restored then (no earlier: the outage counted for nothing).
        var carried = NearestAbsenceTests.engine()
        _ = carried.restoreNearestScanner(Fixture.b, scanner: "hall", at: Timestamp(seconds: 600))
        #expect(changes.first?.time == carried.nearest[Fixture.b]?.absentAt?.seconds, "\(changes) vs \(String(describing: carried.nearest[Fixture.b]?.absentAt))")
        #expect(usualAbsence < 60 && (changes.first?.time ?? 0) > 600)
        #expect(engine.nearestScanner(for: Fixture.a) == "kitchen")
    }

    /// ``MonitoringEngine/nearestScanners`` counted per room, as `GET /v1/scanners` counted them before ``MonitoringEngine/beaconsPerRoom``.
    static func counted(_ engine: MonitoringEngine) -> [String: Int] {
        engine.nearestScanners.values.reduce(into: [:]) { $0[$1, default: 0] += 1 }
    }

    @Test("beaconsPerRoom is nearestScanners counted per room: tracked rooms, rooms set aside during an outage, a beacon heard again meanwhile, a room restored during it, and after the return")
    func beaconsPerRoom() {
        var engine = NearestAbsenceTests.engine()
        let c = BeaconIdentity(uuid: Fixture.uuid, major: 0, minor: 3)
        #expect(engine.beaconsPerRoom.isEmpty)
        for t in stride(from: 0.0, to: 10, by: 0.5) {
            _ = engine.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen"))
            _ = engine.ingest(Fixture.seen(Fixture.b, at: t + 0.2, scanner: "hall"))
        }
        #expect(engine.beaconsPerRoom == ["kitchen": 1, "hall": 1] && engine.beaconsPerRoom == Self.counted(engine))
        _ = engine.setSourceStatus(.restricted(reason: "broker unreachable"), for: .beacon, at: Timestamp(seconds: 10))
        _ = engine.restoreNearestScanner(c, scanner: "kitchen", at: Timestamp(seconds: 10))
        #expect(!engine.suspendedRooms.isEmpty)
        #expect(engine.beaconsPerRoom == ["kitchen": 2, "hall": 1] && engine.beaconsPerRoom == Self.counted(engine), "\(engine.beaconsPerRoom)")
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 20, scanner: "kitchen"))   // heard through what still works
        #expect(engine.beaconsPerRoom == Self.counted(engine), "\(engine.beaconsPerRoom) against \(Self.counted(engine))")
        _ = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 30))
        for t in stride(from: 31.0, to: 40, by: 0.5) { _ = engine.ingest(Fixture.seen(Fixture.b, at: t, scanner: "kitchen")) }
        #expect(engine.beaconsPerRoom == Self.counted(engine), "\(engine.beaconsPerRoom) against \(Self.counted(engine))")
        _ = engine.advance(to: Timestamp(seconds: 1_000))
        #expect(engine.beaconsPerRoom.isEmpty && Self.counted(engine).isEmpty, "every room left")
    }

    @Test("A beacon heard while the source is away (another scanner's path) starts from its carried room, not afresh")
    func heardDuringTheOutage() {
        var engine = NearestAbsenceTests.engine()
        for t in stride(from: 0.0, to: 10, by: 0.5) { _ = engine.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen")) }
        _ = engine.setSourceStatus(.restricted(reason: "controller gone"), for: .beacon, at: Timestamp(seconds: 10))
        var events = engine.ingest(Fixture.seen(Fixture.a, at: 30, scanner: "kitchen"))
        events += engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 31))
        #expect(Self.changes(events).isEmpty, "placed anew in the room it never left: \(Self.changes(events))")
        #expect(engine.nearestScanner(for: Fixture.a) == "kitchen" && engine.suspendedRooms.isEmpty)
    }

    @Test("During a source outage: a room restored (a restart) is set aside with the others; a beacon heard through what still works and then not leaves no room; the policy switched off forgets them")
    func outageEdges() throws {
        var engine = NearestAbsenceTests.engine()
        _ = engine.setSourceStatus(.restricted(reason: "broker unreachable"), for: .beacon, at: Timestamp(seconds: 10))
        // A restart during the outage restores a room: set aside, its absence not running.
        var events = engine.restoreNearestScanner(Fixture.a, scanner: "kitchen", at: Timestamp(seconds: 10))
        #expect(engine.nearest[Fixture.a] == nil && engine.suspendedRooms == [Fixture.a: "kitchen"] && engine.nearestScanner(for: Fixture.a) == "kitchen")
        // One sighting through a filter the broker still serves, then silence past its absence.
        events += engine.ingest(Fixture.seen(Fixture.a, at: 20, scanner: "kitchen"))
        events += engine.advance(to: Timestamp(seconds: 500))
        #expect(Self.changes(events).isEmpty, "the outage's silence is no departure: \(Self.changes(events))")
        #expect(engine.suspendedRooms == [Fixture.a: "kitchen"] && engine.nearest.isEmpty)
        // Back: carried over from the return, and leaves once not heard.
        events = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 500))
        events += engine.advance(to: Timestamp(seconds: 1_000))
        #expect(Self.changes(events) == [[nil, "kitchen"]])
        #expect((events.first { if case .didChangeNearestScanner = $0.kind { true } else { false } }?.timestamp.seconds ?? 0) > 500)

        // The policy switched off during an outage: the rooms set aside are forgotten.
        var other = NearestAbsenceTests.engine()
        for t in stride(from: 0.0, to: 10, by: 0.5) { _ = other.ingest(Fixture.seen(Fixture.b, at: t, scanner: "hall")) }
        _ = other.setSourceStatus(.restricted(reason: "controller gone"), for: .beacon, at: Timestamp(seconds: 10))
        #expect(other.suspendedRooms == [Fixture.b: "hall"])
        other.profile.nearestScanner = nil
        #expect(other.suspendedRooms.isEmpty && other.nearestScanners.isEmpty)
    }
}
