import Foundation
import Testing
@testable import RegionKitEngine

/// The exit-timing policies: the learned-gap detector's maths and the Android Beacon Library baseline.
@Suite("Exit detectors: learned gaps, AltBeacon baseline")
struct ExitDetectorTests {
    static let detector = ExitDetector.learnedGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)

    /// A stream advertising every `interval` seconds (+0–10 ms advertising delay) whose frames are
    /// lost independently with probability `loss`, recorded for `count` sightings.
    static func stream(interval: Double, loss: Double, count: Int, seed: UInt64 = 1) -> ReceptionEstimator {
        var random = SeededRandom(seed: seed)
        var t = 0.0
        var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        var recorded = 1
        while recorded < count {
            t += interval + random.uniform() * 0.01
            if random.uniform() >= loss {
                stream.record(at: Timestamp(seconds: t))
                recorded += 1
            }
        }
        return stream
    }

    @Test("The threshold follows the formula s = u + e · ln(λ/r) from the stream's own statistics")
    func thresholdFormula() {
        var stream = Self.stream(interval: 0.1, loss: 0.3, count: 20_000)
        stream.priorScale = 0   // at a scanner whose settled streams show no bursts
        let m = stream.meanInterval
        #expect(abs(m - 0.105 / 0.7) < 0.01, "mean interval \(m)")
        // Independent losses: the learned tail is lighter than exponential, so the Poisson scale m rules.
        #expect(stream.tailScale < m)
        let perHour = stream.tailShare * 3600 / m
        let logRatio = log(perHour / 1e-4)
        // Settled (≈ 50 min of stream): the mean's widening g = (e^y − 1)/y, y = L/199 (≈ 4 %), is
        // capped by the prior's faded scale, so the mean counts as exact.
        let y = logRatio / 199
        #expect(expm1(y) / y > 1.03, "the uncapped widening \(expm1(y) / y)")
        let expected = 3 * m + m * logRatio
        #expect(abs(Self.detector.silenceThreshold(for: stream) - expected) < 1e-9)
    }

    @Test("Known rates: 10 Hz at 30 % loss is gone after 1.8–3 s; 1 Hz takes proportionally longer")
    func thresholdsForKnownRates() {
        // Exact requirement for 1 false exit per 10,000 h with independent losses: k silent
        // intervals with 0.3^(k−1) · 25,200 sightings/h ≤ 1e-4 → k = 18 → 1.8 s at 10 Hz.
        let fast = Self.detector.silenceThreshold(for: Self.stream(interval: 0.1, loss: 0.3, count: 20_000))
        #expect(fast >= 1.8 && fast <= 3, "10 Hz, 30 % loss: \(fast) s")
        let slow = Self.detector.silenceThreshold(for: Self.stream(interval: 1, loss: 0.3, count: 20_000))
        #expect(slow >= 16 && slow <= 30, "1 Hz, 30 % loss: \(slow) s")
        #expect(slow / fast > 7 && slow / fast < 13, "about ten times longer: \(slow / fast)")
        let clean = Self.detector.silenceThreshold(for: Self.stream(interval: 0.1, loss: 0, count: 20_000))
        #expect(clean >= 1 && clean < fast, "no loss: \(clean) s")
        let glacial = Self.detector.silenceThreshold(for: Self.stream(interval: 30, loss: 0.1, count: 500))
        #expect(glacial == 60, "clamped to the maximum")
    }

    @Test("A new stream's bound is its short history's uncertainty (capped by the prior's): ~3 s after 2.5 s at 10 Hz, tightening as intervals come in")
    func newStreamBoundTightens() {
        var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        stream.priorScale = 0   // its scanner's settled streams have shown no bursts
        let first = Self.detector.silenceThreshold(for: stream)
        // One sighting: the rate is unknown; the widening is capped by the prior interval's bound.
        let cautious = ExitDetector.cautiousGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
        #expect(first > 10 && first == cautious.silenceThreshold(for: stream), "one sighting: \(first) s")
        var thresholds: [Double] = []
        for step in 1...600 {
            stream.record(at: Timestamp(seconds: Double(step) * 0.1))
            thresholds.append(Self.detector.silenceThreshold(for: stream))
        }
        // Known answer after 25 intervals of 0.1 s: the mean (1 + 2.5)/26 s (the prior interval
        // counts as one), the tail share e⁻³ · 20/45, L = ln(share · 3600/m / 1e-4), ν = 26.
        let m = 3.5 / 26
        let share = exp(-3.0) * 20 / 45
        let logRatio = log(share * 3600 / m / 1e-4)
        let y = logRatio / 26
        let expected = 3 * m + m * (expm1(y) / y) * logRatio
        let young = thresholds[24]
        #expect(abs(young - expected) < 0.01, "2.5 s at 10 Hz: \(young) s, expected \(expected) s")
        #expect(young > 2.5 && young < 4, "a few seconds: \(young) s")
        var replay = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        for step in 1...25 { replay.record(at: Timestamp(seconds: Double(step) * 0.1)) }
        let before = cautious.silenceThreshold(for: replay)
        #expect(before > 12 && before < 14, "the reference detector's cautious prior: \(before) s")
        // Tightening: never longer after more evidence (past the first intervals), settled at 1–3 s.
        for index in 5..<thresholds.count { #expect(thresholds[index] <= thresholds[index - 1] + 1e-9, "at \(index + 1) intervals") }
        #expect(thresholds[99] < 2.5, "10 s at 10 Hz: \(thresholds[99]) s")
        #expect(thresholds[599] >= 1 && thresholds[599] <= 2.5, "60 s at 10 Hz: \(thresholds[599]) s")
    }

    @Test("A new stream on a scanner whose streams show bursts takes their scale (cautious); a calm scanner's adds nothing")
    func scannerPriorForNewStreams() {
        var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        for step in 1...25 { stream.record(at: Timestamp(seconds: Double(step) * 0.1)) }
        // No settled stream at the scanner yet: no evidence about bursts, the cautious prior.
        let alone = Self.detector.silenceThreshold(for: stream)
        let cautious = ExitDetector.cautiousGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
        #expect(alone == cautious.silenceThreshold(for: stream), "\(alone) s")
        stream.priorScale = 0        // the other streams have shown no bursts
        let calm = Self.detector.silenceThreshold(for: stream)
        #expect(calm < alone / 3, "calm scanner \(calm) s, alone \(alone) s")
        stream.priorScale = 1.5      // they show 1 s blackouts: scale 1.5 s, fading as 10/(10 + 2.5)
        let bursty = Self.detector.silenceThreshold(for: stream)
        #expect(bursty > 15, "\(bursty) s")
        // A bursty settled stream teaches its scanner its burst scale; a calm one teaches 0.
        let calmStream = Self.stream(interval: 0.1, loss: 0.3, count: 2_000)
        #expect(Self.detector.tailScale(of: calmStream) == 0)
        var blackouts = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        var t = 0.0
        for _ in 0..<20 {
            for _ in 0..<70 { t += 0.1; blackouts.record(at: Timestamp(seconds: t)) }
            t += 2
        }
        let scale = try! #require(Self.detector.tailScale(of: blackouts))
        #expect(scale > 1.5, "burst scale \(scale) s")
        // The other detectors keep no scanner prior.
        #expect(ExitDetector.cautiousGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1).tailScale(of: blackouts) == nil)
    }

    @Test("Engine: a first-seen 10 Hz beacon heard 2.5 s at a scanner with calm settled beacons exits ~3 s after it stops (alone, or cautiousprior: ~13 s)")
    func engineNewStreamExits() {
        for (profile, others, low, high) in [(MonitoringProfile.responsive, true, 2.5, 4.0), (.responsive, false, 12.0, 14.0),
                                             (.cautiousPrior, true, 12.0, 14.0)] {
            var engine = Fixture.engine(profile)
            _ = engine.startMonitoring(Fixture.region("lobby", major: 0, minor: 1), at: .zero)
            _ = engine.startMonitoring(Fixture.region("hall", major: 7), at: .zero)
            // Four other beacons heard at 10 Hz for 100 s (settled: ≥ 60 s), then the newcomer.
            var observations: [BeaconObservation] = []
            if others {
                for step in 0..<1_000 {
                    for beacon in 0..<4 {
                        observations.append(Fixture.seen(BeaconIdentity(uuid: Fixture.uuid, major: 7, minor: UInt16(beacon)),
                                                         at: 0.5 + Double(step) * 0.1 + Double(beacon) * 0.007))
                    }
                }
            }
            let times = (0...25).map { 95 + Double($0) * 0.1 }
            observations += times.map { Fixture.seen(Fixture.a, at: $0 + 0.003) }
            observations.sort { $0.timestamp < $1.timestamp }
            let entered = Fixture.feed(&engine, observations)
            #expect(entered.of("didEnterRegion", "lobby").count == 1)
            let exit = try! #require(engine.advance(to: Timestamp(seconds: 200)).of("didExitRegion", "lobby").first)
            let delay = exit.timestamp.seconds - (times.last! + 0.003)
            #expect(delay > low && delay < high, "\(profile.name): exit \(delay) s after the last sighting")
        }
    }

    @Test("Engine: a new beacon at a scanner whose beacons show 2 s blackouts is not exited by a 4 s silence; at a calm scanner it exits ~2.7 s into it")
    func engineScannerPrior() {
        // Eight settled beacons on scanner "hall", each with its own 2 s blackout every ~9 s
        // (bursty links), or none; a ninth arrives at 120 s and is silent from 123.9 s to 128 s.
        for bursty in [true, false] {
            var engine = Fixture.engine(.responsive)
            let newcomer = BeaconIdentity(uuid: Fixture.uuid, major: 9, minor: 9)
            _ = engine.startMonitoring(Fixture.region("new", major: 9, minor: 9), at: .zero)
            _ = engine.startMonitoring(Fixture.region("hall", major: 7), at: .zero)   // the settled beacons' streams
            var observations: [BeaconObservation] = []
            var t = 0.5
            while t < 140 {
                for beacon in 0..<8 {
                    let phase = (t + Double(beacon) * 1.1).truncatingRemainder(dividingBy: 9)
                    if !(bursty && phase >= 7) {
                        observations.append(Fixture.seen(BeaconIdentity(uuid: Fixture.uuid, major: 7, minor: UInt16(beacon)), at: t + Double(beacon) * 0.007, scanner: "hall"))
                    }
                }
                if t >= 120 && (t < 124 || (t >= 128 && t < 130)) {
                    observations.append(Fixture.seen(newcomer, at: t + 0.003, scanner: "hall"))
                }
                t += 0.1
            }
            let events = Fixture.feed(&engine, observations)
            // Exits of the newcomer during its 4.1 s silence (123.9 → 128).
            let exits = events.of("didExitRegion", "new").map(\.timestamp.seconds).filter { $0 < 128 }
            if bursty {
                #expect(exits.isEmpty, "bursty scanner: the 4 s silence at 124 s exited at \(exits)")
                #expect(engine.channel(of: "hall")?.priorScale ?? 0 > 0.5, "prior \(String(describing: engine.channel(of: "hall")?.priorScale))")
            } else {
                #expect(exits.count == 1 && exits.allSatisfy { $0 > 125.5 && $0 < 127.5 }, "calm scanner: a 4 s-old stream exits ~2.7 s into its silence: \(exits)")
                // Only the newcomer's own 4 s silence (learned once it resumed at 128 s) is a tail.
                #expect((engine.channel(of: "hall")?.priorScale ?? 1) < 0.1, "prior \(String(describing: engine.channel(of: "hall")?.priorScale))")
            }
        }
    }

    @Test("Blackouts seen in a stream lengthen its threshold past the longest one")
    func burstsAreLearned() {
        // 10 Hz with a 3 s blackout every 20 s.
        var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        var t = 0.0
        for _ in 0..<60 {
            for _ in 0..<170 {
                t += 0.1
                stream.record(at: Timestamp(seconds: t))
            }
            t += 3
        }
        #expect(stream.tailIntervals == 59, "the last blackout is never ended by a sighting")
        #expect(abs(stream.longestInterval - 3.1) < 0.05)
        let threshold = Self.detector.silenceThreshold(for: stream)
        #expect(threshold > 3.1 * 2, "\(threshold) s")
        // The Poisson-only detector would exit during every blackout.
        let poisson = ExitDetector.adaptive(falseExitProbability: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
        #expect(poisson.silenceThreshold(for: stream) < 3)
    }

    @Test("Engine: a 10 Hz stream that blacks out for 3 s every 20 s exits only when it stops")
    func engineToleratesLearnedBlackouts() {
        var engine = Fixture.engine(.responsive)
        _ = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        var times: [Double] = []
        var t = 0.5
        while t < 600 {
            times.append(t)
            t += 0.1
            if times.count % 170 == 0 { t += 3 }
        }
        let events = Fixture.feed(&engine, times.map { Fixture.seen(Fixture.a, at: $0) })
        // The first blackouts come before anything was learned; after the first minute none exits.
        #expect(events.of("didExitRegion").allSatisfy { $0.timestamp.seconds < 60 }, "\(events.of("didExitRegion").map(\.timestamp))")
        let exit = try! #require(engine.advance(to: Timestamp(seconds: 700)).of("didExitRegion").first)
        #expect(exit.timestamp.seconds - times.last! > 3.1, "not before a blackout's length")
    }

    @Test("AltBeacon baseline: exit 10–11.1 s after the last sighting (10 s exit period, 1.1 s scan cycle)", arguments: [0.0, 0.37, 0.81])
    func altBeaconExit(phase: Double) {
        var engine = Fixture.engine(.altBeacon)
        _ = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        let last = 20 + phase
        _ = Fixture.feed(&engine, Fixture.stream(Fixture.a, from: 0.5, to: last, every: 0.1) + [Fixture.seen(Fixture.a, at: last)])
        #expect(engine.advance(to: Timestamp(seconds: last + 9.99)).isEmpty)
        let events = engine.advance(to: Timestamp(seconds: 100))
        #expect(events.summary == ["didExitRegion:lobby", "didDetermineState:lobby:outside"])
        let delay = events[0].timestamp - Timestamp(seconds: last)
        #expect(delay >= 10 && delay <= 11.1 + 1e-9, "exit \(delay) s after the last sighting")
        #expect(events[0].evidence?.exitThreshold == 10)
    }

    @Test("AltBeacon baseline: a 1 Hz stream missing 9 s in a row stays inside; 11 s exits")
    func altBeaconTolerance() {
        var engine = Fixture.engine(.altBeacon)
        _ = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        var events = Fixture.feed(&engine, [1, 2, 3, 12, 13, 24.2].map { Fixture.seen(Fixture.a, at: $0) })
        #expect(events.of("didExitRegion").count == 1, "13 → 24.2: 11.2 s of silence")
        events = engine.advance(to: Timestamp(seconds: 100))
        #expect(events.of("didExitRegion").count == 1)
    }

    @Test("AltBeacon baseline: named, ranges with its running-average filter and Nexus 5 curve")
    func altBeaconPreset() {
        let profile = try! #require(MonitoringProfile.named("altbeacon"))
        #expect(profile.name == "altbeacon")
        #expect(MonitoringProfile.named("android-beacon-library")?.name == "altbeacon")
        #expect(profile.rssiFilter == .altBeaconRunningAverage(window: 20))
        #expect(profile.distanceModel.name == "android-nexus5")
        #expect(profile.rangingInterval == 1.1)
    }

    @Test("AltBeacon running average: 20 s of samples, ⌊n/10⌋ + 1 dropped at each end")
    func altBeaconRunningAverage() {
        let filter = RSSIFilter.altBeaconRunningAverage(window: 20)
        var state = RSSIFilterState()
        // Ten samples: the two lowest and two highest go, the middle six are averaged.
        for (index, rssi) in [-90.0, -20, -70, -72, -68, -71, -69, -95, -30, -70].enumerated() {
            filter.add(rssi, at: Timestamp(seconds: Double(index)), to: &state)
        }
        #expect(filter.value(of: state, at: Timestamp(seconds: 9)) == -70)
        // Three samples keep the median; two are averaged; samples older than 20 s are gone.
        var few = RSSIFilterState()
        for (index, rssi) in [-60.0, -90, -70].enumerated() { filter.add(rssi, at: Timestamp(seconds: Double(index)), to: &few) }
        #expect(filter.value(of: few, at: Timestamp(seconds: 2)) == -70)
        #expect(filter.value(of: few, at: Timestamp(seconds: 20.5)) == -80, "only the last two remain")
        #expect(filter.value(of: few, at: Timestamp(seconds: 30)) == nil)
    }

    @Test("A scanner that reports a beacon once every 66 s (OpenMQTTGateway's default cycle): every profile lets it leave and come back each cycle; with a minimum silence of 150 s it stays, and leaves 150 s after its last report")
    func minimumSilenceHoldsASlowCycle() throws {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        func events(_ profile: MonitoringProfile) throws -> [String] {
            var engine = MonitoringEngine(profile: profile, sources: [.beacon: .authorized])
            _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "keys", uuid: uuid)), at: .zero)
            var kinds: [String] = []
            func note(_ events: [LocationEvent]) {
                for event in events {
                    switch event.kind {
                    case .didEnterRegion: kinds.append("enter@\(Int(event.timestamp.seconds))")
                    case .didExitRegion: kinds.append("exit@\(Int(event.timestamp.seconds))")
                    default: break
                    }
                }
            }
            for cycle in 0..<6 {
                let time = Timestamp(seconds: 1 + Double(cycle) * 66)
                note(engine.advance(to: time))
                note(engine.ingest(BeaconObservation(identity: BeaconIdentity(uuid: uuid, major: 1, minor: 2), rssi: -70, timestamp: time, scannerID: "omg")))
            }
            note(engine.advance(to: Timestamp(seconds: 1_000)))
            return kinds
        }
        for name in ["responsive", "corelocation"] {
            let profile = try #require(MonitoringProfile.named(name))
            let flapping = try events(profile)
            // (The first sighting determines the state, inside, without an entry: Core Location's rule.)
            #expect(flapping.filter { $0.hasPrefix("exit") }.count == 6 && flapping.filter { $0.hasPrefix("enter") }.count == 5, "\(name): \(flapping)")
            var floored = profile
            floored.exitDetector = profile.exitDetector.withMinimumSilence(150)
            let held = try events(floored)
            #expect(held.count == 1, "\(name): \(held)")
            // The last report at 331 s: gone at 481 s at the earliest (Core Location's 10 s grid may add to it).
            let exit = try #require(held.last.flatMap { Int($0.dropFirst("exit@".count)) })
            #expect((481...491).contains(exit), "\(name): \(held)")
        }
        // Below the detector's own minimum, or not a number: unchanged.
        #expect(Self.detector.withMinimumSilence(0.5) == Self.detector && Self.detector.withMinimumSilence(.nan) == Self.detector)
        #expect(ExitDetector.fixedSilence(seconds: 30, evaluationInterval: 10).withMinimumSilence(150) == .fixedSilence(seconds: 150, evaluationInterval: 10))
    }

    @Test("Two scanners reporting a beacon once every 65 s: the room jumps to the weaker one and back every cycle under the quick 60 s rule; with longestQuiet 150 (the daemon's minimumExitSilence) it stays in the stronger one's")
    func slowScannersKeepTheRoom() throws {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let beacon = BeaconIdentity(uuid: uuid, major: 1, minor: 2)
        func roomChanges(longestQuiet: Double?) throws -> [String] {
            var profile = MonitoringProfile.responsive
            profile.exitDetector = profile.exitDetector.withMinimumSilence(longestQuiet ?? 0)
            profile.nearestScanner = NearestScannerPolicy(longestQuiet: longestQuiet)
            var engine = MonitoringEngine(profile: profile, sources: [.beacon: .authorized])
            _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "keys", uuid: uuid)), at: .zero)
            var rooms: [String] = []
            func note(_ events: [LocationEvent]) {
                for event in events {
                    if case .didChangeNearestScanner(_, let scanner, _) = event.kind { rooms.append(scanner ?? "none") }
                }
            }
            for cycle in 0..<8 {
                let base = 1 + Double(cycle) * 65
                // The kitchen node hears it strongly; the hall node, scanning on its own cycle 62 s later, weakly.
                for (offset, scanner, rssi) in [(0.0, "kitchen", -60), (62.0, "hall", -80)] {
                    let time = Timestamp(seconds: base + offset)
                    note(engine.advance(to: time))
                    note(engine.ingest(BeaconObservation(identity: beacon, rssi: rssi, timestamp: time, scannerID: scanner)))
                }
            }
            return rooms
        }
        let quick = try roomChanges(longestQuiet: nil)
        #expect(quick.filter { $0 == "hall" }.count >= 3, "\(quick)")
        let held = try roomChanges(longestQuiet: 150)
        #expect(held == ["kitchen"], "\(held)")
    }
}
