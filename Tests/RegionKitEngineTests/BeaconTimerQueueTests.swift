import Foundation
import Testing
@testable import RegionKitEngine

/// The engine finds beacon regions through a constraint index and keeps region timers in a lazy
/// heap (``RegionTimerQueue``). These property tests drive it and the brute-force reference
/// (`usesSpatialIndex = false`: every region scanned for its timer on every step) with the same
/// seeded random inputs — several beacons heard by several scanners at changing rates, regions of
/// every constraint shape started, replaced, stopped and restored, gaps, profile switches, source
/// outages — and require identical events, records and deadlines after every step.
@Suite("Beacon index and timer queue: identical to brute force")
struct BeaconTimerQueueTests {
    static let uuids = [UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!]
    static let scanners: [String?] = [nil, "hall", "shop"]

    static func randomRegion(_ id: String, _ rng: inout SeededRandom) -> Region {
        let uuid = uuids[Int.random(in: 0..<uuids.count, using: &rng)]
        let shape = Int.random(in: 0..<3, using: &rng)
        let major: UInt16? = shape >= 1 ? UInt16.random(in: 1...2, using: &rng) : nil
        let minor: UInt16? = shape == 2 ? UInt16.random(in: 1...3, using: &rng) : nil
        var region = try! BeaconRegion(identifier: id, uuid: uuid, major: major, minor: minor)
        region.notifyOnEntry = Int.random(in: 0..<6, using: &rng) != 0
        region.notifyOnExit = Int.random(in: 0..<6, using: &rng) != 0
        region.scannerID = Int.random(in: 0..<4, using: &rng) == 0 ? scanners[Int.random(in: 1..<scanners.count, using: &rng)] : nil
        return .beacon(region)
    }

    static func compare(profile: MonitoringProfile, automation: Automation, seed: UInt64, steps: Int) -> Int {
        var rng = SeededRandom(seed: seed)
        var indexed = MonitoringEngine(profile: profile, automation: automation, sources: [.beacon: .authorized])
        var brute = indexed
        brute.usesSpatialIndex = false
        var crossings = 0
        var t = 0.0
        func apply(_ label: String, _ body: (inout MonitoringEngine) -> [LocationEvent]) -> Bool {
            let a = body(&indexed)
            let b = body(&brute)
            crossings += a.filter { if case .didExitRegion = $0.kind { true } else if case .didEnterRegion = $0.kind { true } else { false } }.count
            guard a == b else {
                let difference = zip(a, b).first { $0 != $1 }.map { "\n  indexed \($0.0)\n  brute   \($0.1)" } ?? ""
                Issue.record("seed \(seed) t=\(t) \(label): indexed \(a.summary) vs brute \(b.summary)\(difference)")
                return false
            }
            let records = { (engine: MonitoringEngine) in engine.monitoredRegions.map { engine.monitoredRegion($0.identifier) } }
            guard records(indexed) == records(brute), indexed.nextDeadline == brute.nextDeadline else {
                Issue.record("seed \(seed) t=\(t) \(label): records or deadlines differ (\(String(describing: indexed.nextDeadline)) vs \(String(describing: brute.nextDeadline)))")
                return false
            }
            return true
        }
        var nextID = 0
        for _ in 0..<12 {
            let region = randomRegion("r\(nextID)", &rng)
            nextID += 1
            guard apply("start", { $0.startMonitoring(region, at: Timestamp(seconds: t)) }) else { return crossings }
        }
        // Sixteen beacons (up to 24 streams per UUID-wide region: past the exit cache's threshold), each with its own advertising interval that changes now and then.
        var intervals = (0..<16).map { _ in [0.1, 0.3, 1, 5].randomElement(using: &rng)! }
        for _ in 0..<steps {
            let roll = Int.random(in: 0..<1000, using: &rng)
            let ok: Bool
            switch roll {
            case 0..<15:       // silence: exits fire with nothing heard
                t += Double.random(in: 1...45, using: &rng)
                ok = apply("advance", { $0.advance(to: Timestamp(seconds: t)) })
            case 15..<25:      // start a new region or replace one (same identifier)
                let id = Bool.random(using: &rng) ? "r\(nextID)" : "r\(Int.random(in: 0..<nextID, using: &rng))"
                nextID += 1
                let region = randomRegion(id, &rng)
                ok = apply("start \(id)", { $0.startMonitoring(region, at: Timestamp(seconds: t)) })
            case 25..<30:
                let id = "r\(Int.random(in: 0..<nextID, using: &rng))"
                ok = apply("stop \(id)", { $0.stopMonitoring(identifier: id, at: Timestamp(seconds: t)) })
            case 30..<36:      // a restart restored a region with some stored state
                let region = randomRegion("r\(Int.random(in: 0..<nextID, using: &rng))", &rng)
                let state = [RegionState.inside, .outside, .unknown].randomElement(using: &rng)!
                ok = apply("restore \(region.identifier)", { $0.restore(region, state: state, since: Timestamp(seconds: t), at: Timestamp(seconds: t)) })
            case 36..<40:
                guard let region = indexed.monitoredRegions.randomElement(using: &rng) else { continue }
                ok = apply("requestState", { $0.requestState(for: region, at: Timestamp(seconds: t)) })
            case 40..<43:      // the scanner goes away and comes back
                ok = apply("source off", { $0.setSourceStatus(.restricted(reason: "test"), for: .beacon, at: Timestamp(seconds: t)) })
                    && apply("source on", { $0.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: t + 0.5)) })
                t += 0.5
            case 43..<45:      // a profile switch re-plans every timer
                let next: MonitoringProfile = Bool.random(using: &rng) ? .coreLocation : .responsive
                indexed.profile = next
                brute.profile = next
                ok = apply("profile \(next.name)", { $0.advance(to: Timestamp(seconds: t)) })
            case 45..<60:
                let beacon = Int.random(in: 0..<intervals.count, using: &rng)
                intervals[beacon] = [0.1, 0.3, 1, 5].randomElement(using: &rng)!
                continue
            default:           // a sighting, with jitter, from a random scanner
                let beacon = Int.random(in: 0..<intervals.count, using: &rng)
                t += intervals[beacon] * Double.random(in: 0.02...0.4, using: &rng)
                let identity = BeaconIdentity(uuid: uuids[beacon % 2], major: UInt16(1 + beacon / 2 % 2), minor: UInt16(1 + beacon / 4))
                let observation = BeaconObservation(identity: identity, rssi: Int.random(in: -90 ... -50, using: &rng),
                                                    timestamp: Timestamp(seconds: t), scannerID: scanners[Int.random(in: 0..<scanners.count, using: &rng)])
                ok = apply("sighting \(identity)", { $0.ingest(observation) })
            }
            guard ok else { return crossings }
        }
        return crossings
    }

    @Test("both profiles, automation on and off, several seeds", arguments: [false, true])
    func matchesBruteForce(automation: Bool) {
        for seed in UInt64(1)...4 {
            for profile in [MonitoringProfile.responsive, .coreLocation, .evidence] {
                var unlimited = profile
                unlimited.regionLimit = nil
                let crossings = Self.compare(profile: unlimited, automation: automation ? .all : Automation(), seed: seed, steps: 2_500)
                #expect(crossings > 20, "seed \(seed) \(profile.name): only \(crossings) enter/exit events, the run exercised too little")
            }
        }
    }

    @Test("a sighting is matched against UUID, UUID+major and exact regions, in registration order")
    func matchesEveryConstraintShapeInOrder() throws {
        let uuid = Self.uuids[0]
        var engine = MonitoringEngine(profile: .responsive, sources: [.beacon: .authorized])
        for (id, major, minor) in [("exact", UInt16?(1), UInt16?(2)), ("all", nil, nil), ("major", 1, nil), ("other", 2, nil)] as [(String, UInt16?, UInt16?)] {
            _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: id, uuid: uuid, major: major, minor: minor)), at: .zero)
        }
        let events = engine.ingest(BeaconObservation(identity: BeaconIdentity(uuid: uuid, major: 1, minor: 2), rssi: -60, timestamp: Timestamp(seconds: 1)))
        _ = events
        #expect(engine.state(of: "exact") == .inside)
        #expect(engine.state(of: "all") == .inside)
        #expect(engine.state(of: "major") == .inside)
        #expect(engine.state(of: "other") == .unknown)
        // Crossing order: registration order across the three index lists.
        let exits = engine.advance(to: Timestamp(seconds: 100)).compactMap { event -> String? in
            if case .didExitRegion(let region) = event.kind { return region.identifier } else { return nil }
        }
        #expect(exits == ["exact", "all", "major"])
    }

    @Test("the timer heap orders by time, then registration sequence; heapify gives the same order")
    func heapOrder() {
        var queue = RegionTimerQueue()
        var rng = SeededRandom(seed: 9)
        var entries: [RegionTimer] = []
        for sequence in 0..<500 {
            let entry = RegionTimer(time: Timestamp(seconds: Double(Int.random(in: 0..<50, using: &rng))), sequence: sequence)
            entries.append(entry)
            queue.push(entry)
        }
        var popped: [RegionTimer] = []
        while let entry = queue.popMin() { popped.append(entry) }
        #expect(popped == entries.sorted(by: <))
        queue.rebuild(entries.reversed())
        popped = []
        while let entry = queue.popMin() { popped.append(entry) }
        #expect(popped == entries.sorted(by: <))
    }

    @Test("a timer keeps 32 bits of its region's sequence: ties still go to the earlier registration across the 2³² wrap; 16 bytes")
    func sequenceBitsWrap() {
        let wrap = 1 << 32
        // Registered in this order, due at the same time: the heap gives them back in it.
        let sequences = [wrap - 3, wrap - 2, wrap - 1, wrap, wrap + 1, wrap + 2]
        var queue = RegionTimerQueue()
        for sequence in sequences.reversed() { queue.push(RegionTimer(time: Timestamp(seconds: 7), sequence: sequence)) }
        var order: [Int] = []
        while let timer = queue.popMin() { order.append(sequences.firstIndex { timer.has(sequence: $0) }!) }
        #expect(order == Array(sequences.indices))
        // An earlier time still wins whatever the sequence.
        #expect(RegionTimer(time: Timestamp(seconds: 6), sequence: wrap + 2) < RegionTimer(time: Timestamp(seconds: 7), sequence: wrap - 3))
        #expect(RegionTimer(time: .zero, sequence: wrap + 5).has(sequence: 5), "the low 32 bits are what is kept")
        #expect(!RegionTimer(time: .zero, sequence: 6).has(sequence: 5))
        #expect(MemoryLayout<RegionTimer>.stride == 16)
    }

    @Test("a UUID-wide region tracking thousands of beacons prunes gone streams in amortised time")
    func manyStreamsStayBounded() throws {
        var engine = MonitoringEngine(profile: .responsive, sources: [.beacon: .authorized])
        _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "all", uuid: Self.uuids[0])), at: .zero)
        // 20 000 beacons each heard once, 10 ms apart: only the most recent ones are still present.
        for index in 0..<20_000 {
            let identity = BeaconIdentity(uuid: Self.uuids[0], major: UInt16(index / 1000), minor: UInt16(index % 1000))
            _ = engine.ingest(BeaconObservation(identity: identity, rssi: -70, timestamp: Timestamp(seconds: Double(index) * 0.01)))
        }
        let record = try #require(engine.monitoredRegion("all"))
        let detector = engine.profile.exitDetector
        let live = record.streams.values.filter { detector.goneDeadline(for: $0, gridOrigin: record.registeredAt) > engine.now }.count
        // Pruned whenever the count doubles: never more than twice the live streams (plus the
        // small-region slack), and far fewer than the 20 000 ever heard.
        #expect(record.streams.count <= max(8, 2 * live + 2), "gone streams were not pruned: \(record.streams.count) kept, \(live) live")
        #expect(live < 10_000)
        #expect(engine.state(of: "all") == .inside)
    }
}
