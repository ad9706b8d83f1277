import Foundation
import Testing
@testable import RegionKitEngine
import RegionKitCore

/// The streams a region held at its last exit moved out of its record into the table's
/// ``DepartedStreams`` (session 32), and those it holds now into the engine-wide ``StreamStore``
/// (session 33: a single stream in the store's chunks, more in a table of their own): they must
/// follow their region through sightings, prunes, exits, resumptions, replacements and removals
/// as the record's own fields did, and never reach another region that reuses a slot, a
/// position or a table.
@Suite("Departed and present streams: beside the records, as they were in them")
struct DepartedStreamsTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func key(_ minor: Int) -> MonitoredRegion.StreamKey {
        MonitoredRegion.StreamKey(identity: BeaconIdentity(uuid: uuid, major: 1, minor: UInt16(minor)), scannerID: minor % 2 == 0 ? nil : "hall")
    }

    static func record(_ id: String) -> RegionRecord {
        RegionRecord(region: .beacon(try! BeaconRegion(identifier: id, uuid: uuid)), registeredAt: .zero)
    }

    @Test("random registrations, sightings, prunes, exits, resumptions and removals agree with a model", arguments: [UInt64(1), 2, 3])
    func agreesWithAModel(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var table = RegionTable()
        // id → (present stream minors, departed stream minors)
        var model: [String: (present: Set<Int>, departed: Set<Int>)] = [:]
        func pick(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        // The stream of each region and key: the time of the sighting that created it, unique per
        // step, so a stream that strayed to another region (a reused position) is told apart.
        var stamps: [String: [MonitoredRegion.StreamKey: Timestamp]] = [:]
        func check(_ id: String) {
            guard let slot = table.slot(of: id), let shown = table.monitoredRegion(slot: slot) else {
                #expect(model[id] == nil, "\(id) is missing")
                return
            }
            #expect(Set(shown.streams.keys) == Set((model[id]?.present ?? []).map(Self.key)), "\(id) present")
            #expect(Set(shown.departedStreams.keys) == Set((model[id]?.departed ?? []).map(Self.key)), "\(id) departed")
            for key in shown.streams.keys {
                #expect(shown.streams[key]?.firstSighting == stamps[id]?[key], "\(id) \(key): another region's stream")
            }
        }
        for step in 0..<4_000 {
            let id = "r\(pick(24))"
            let minor = pick(6)
            switch pick(10) {
            case 0:   // register, or replace: a fresh record, nothing departed
                var replaced: RegionRecord?
                table.insert(Self.record(id), replaced: &replaced)
                #expect(replaced?.departedPosition ?? -1 == -1, "a replaced record hands back no departed position")
                model[id] = ([], [])
                stamps[id] = nil
            case 1:   // removal, three ways
                stamps[id] = nil
                switch pick(3) {
                case 0: table.removeValue(forKey: id)
                case 1: table[id] = nil
                default: modify(&table[id]) { $0 = nil }
                }
                model[id] = nil
            case 2, 3:   // exit: present streams become the departed ones, those before are forgotten
                if let slot = table.slot(of: id) {
                    table.depart(slot: slot)
                    model[id] = ([], model[id]!.present)
                }
            case 4:   // a caller's copy of a record set back, or a change in place, keeps its streams
                if var copy = table[id] {
                    copy.departedPosition = -1
                    copy.streamsHandle = RegionStreams.none
                    table[id] = copy
                }
                table[id]?.departedPosition = Int32(pick(3))
                table[id]?.streamsHandle = Int32(pick(3))
            case 5:   // a prune: the present streams of odd (or even) minors go
                guard let slot = table.slot(of: id) else { continue }
                let parity = pick(2)
                table.updateStreams(slot: slot) { record, streams in
                    streams.removeAll(in: &record) { key, _ in Int(key.identity.minor) % 2 == parity }
                }
                model[id]!.present = model[id]!.present.filter { $0 % 2 != parity }
            default:   // a sighting: an existing stream, or a new one resuming its departed stream
                guard let slot = table.slot(of: id) else { continue }
                let stamp = Timestamp(seconds: Double(step))
                let resumed = table.updateResuming(slot: slot) { record, streams, departed -> ReceptionEstimator? in
                    if streams.index(forKey: Self.key(minor)) != nil { return nil }
                    let old = departed.take(Self.key(minor), at: &record.departedPosition)
                    streams.insertNew(Self.key(minor), ReceptionEstimator(firstSighting: stamp, priorInterval: 1), deadline: nil, in: &record)
                    return old
                }
                if !model[id]!.present.contains(minor) { stamps[id, default: [:]][Self.key(minor)] = stamp }
                let wasDeparted = model[id]!.departed.contains(minor) && !model[id]!.present.contains(minor)
                #expect((resumed! != nil) == wasDeparted, "\(id) minor \(minor): resumed \(String(describing: resumed))")
                model[id]!.present.insert(minor)
                model[id]!.departed.remove(minor)
            }
            check(id)
            #expect(table.departedCount == model.values.filter { !$0.departed.isEmpty }.count, "tables held at step \(step)")
            // A region with one present stream holds it in the store's chunks, with more a table.
            #expect(table.streamForms.single == model.values.filter { $0.present.count == 1 }.count, "single streams at step \(step)")
            #expect(table.streamForms.tables == model.values.filter { $0.present.count > 1 }.count, "stream tables at step \(step)")
        }
        for id in model.keys { check(id) }
    }

    @Test("a record's region is not changed to another kind in the table: its stream positions share bytes with a circle's distance")
    func kindKept() throws {
        var table = RegionTable()
        var replaced: RegionRecord?
        let slot = table.insert(Self.record("door"), replaced: &replaced)
        table.updateStreams(slot: slot) { record, streams in
            streams.insertNew(Self.key(1), ReceptionEstimator(firstSighting: .zero, priorInterval: 1), deadline: nil, in: &record)
        }
        let circle = Region.circular(try CircularRegion(identifier: "door", latitude: 1, longitude: 2, radius: 30))
        table["door"]?.region = circle                       // in place: undone
        var copy = try #require(table["door"])
        copy.region = circle
        table["door"] = copy                                 // set: ignored
        #expect(table["door"]?.region.kind == .beacon)
        #expect(table.monitoredRegion(slot: slot)?.streams.keys == [Self.key(1)], "the stream kept")
        #expect(table.streamForms.single == 1)
    }

    @Test("after an exit the engine shows the stream as departed; heard again soon, it resumes what was learned")
    func engineExitAndResume() throws {
        var engine = MonitoringEngine(profile: .responsive, sources: [.beacon: .authorized])
        _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "door", uuid: Self.uuid, major: 1)), at: .zero)
        let identity = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 7)
        var t = 0.0
        for _ in 0..<120 {
            t += 1
            _ = engine.ingest(BeaconObservation(identity: identity, rssi: -60, timestamp: Timestamp(seconds: t)))
        }
        #expect(engine.state(of: "door") == .inside)
        let key = MonitoredRegion.StreamKey(identity: identity, scannerID: nil)
        let learned = try #require(engine.monitoredRegion("door")?.streams[key])
        /// Advances in half seconds until the region exits; the exit's time.
        func exit() -> Double? {
            let start = t
            while t < start + 120 {
                t += 0.5
                for event in engine.advance(to: Timestamp(seconds: t)) {
                    if case .didExitRegion = event.kind { return t }
                }
            }
            return nil
        }
        #expect(exit() != nil, "no exit after 120 s of silence")
        let afterExit = try #require(engine.monitoredRegion("door"))
        #expect(afterExit.streams.isEmpty)
        #expect(afterExit.departedStreams[key] == learned, "the departed stream is the one learned before the exit")
        #expect(engine.regions.departedCount == 1)
        t += 0.5
        _ = engine.ingest(BeaconObservation(identity: identity, rssi: -60, timestamp: Timestamp(seconds: t)))
        let resumed = try #require(engine.monitoredRegion("door"))
        #expect(resumed.departedStreams.isEmpty)
        #expect(resumed.streams[key]?.sightings == learned.sightings + 1, "resumed, not started again")
        #expect(engine.regions.departedCount == 0, "its table freed once empty")
        #expect(exit() != nil)
        #expect(engine.regions.departedCount == 1)
        _ = engine.stopMonitoring(identifier: "door", at: Timestamp(seconds: t))
        #expect(engine.regions.departedCount == 0, "a removed region's departed streams are freed")
    }

    private func modify(_ value: inout RegionRecord?, _ body: (inout RegionRecord?) -> Void) { body(&value) }
}
