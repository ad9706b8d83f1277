import Foundation
import Testing
@testable import RegionKitEngine

/// Issue 15, items 3 and 4: the RSSI trend and other scanners as evidence in the exit decision
/// (`ExitDetector.evidenceGaps`, `--profile evidence`), with known answers on synthetic streams in
/// virtual time.
@Suite("RSSI trend and other scanners as evidence: the evidenceGaps detector")
struct EvidenceDetectionTests {
    static let evidence = ExitDetector.evidenceGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
    static let learned = ExitDetector.learnedGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)

    /// Sightings every `interval` s (+0–10 ms), lost with probability `loss`, from 0 to `until`, at
    /// RSSI −60 dBm plus Gaussian noise of `sigma` dB, falling `fade` dB/s over the last `fadeSeconds`.
    static func sightings(interval: Double = 0.1, loss: Double = 0.3, until: Double, sigma: Double = 4,
                          fade: Double = 0, fadeSeconds: Double = 0, seed: UInt64 = 7) -> [(t: Double, rssi: Int)] {
        var random = SeededRandom(seed: seed)
        var list: [(Double, Int)] = []
        var t = 0.0
        while t < until {
            if random.uniform() >= loss {
                let faded = max(0, t - (until - fadeSeconds)) * fade
                list.append((t, Int((-60 - faded + random.gaussian(sigma: sigma)).rounded())))
            }
            t += interval + random.uniform() * 0.01
        }
        return list
    }

    static func stream(_ list: [(t: Double, rssi: Int)]) -> ReceptionEstimator {
        var stream = ReceptionEstimator(firstSighting: Timestamp(seconds: list[0].t), priorInterval: 1, rssi: list[0].rssi)
        for (t, rssi) in list.dropFirst() { stream.record(at: Timestamp(seconds: t), rssi: rssi) }
        return stream
    }

    @Test("The trend regression: a clean 1 dB/s fade has slope −1 and is fading; a constant stream has slope 0 and is not")
    func slopeKnownAnswer() {
        var falling = ReceptionEstimator(firstSighting: .zero, priorInterval: 1, rssi: -60)
        for step in 1...50 { falling.record(at: Timestamp(seconds: Double(step) * 0.1), rssi: -60 - step / 10) }
        // Whole-dB steps of a 1 dB/s ramp: the least-squares slope is within a few % of −1.
        #expect(abs(falling.rssiSlope + 1) < 0.1, "slope \(falling.rssiSlope)")
        #expect(falling.fading)
        var flat = ReceptionEstimator(firstSighting: .zero, priorInterval: 1, rssi: -60)
        for step in 1...50 { flat.record(at: Timestamp(seconds: Double(step) * 0.1), rssi: -60) }
        #expect(abs(flat.rssiSlope) < 1e-9)
        #expect(!flat.fading)
        #expect(abs((flat.rssiLevel ?? 0) + 60) < 1e-9)
    }

    @Test("A steady noisy stream (4 dB) rarely counts as fading: under 1 % of an hour's sightings at 10 Hz")
    func steadyRarelyFades() {
        let stream = Self.stream(Self.sightings(until: 3_600))
        #expect(stream.fadeShare < 0.01, "fade share \(stream.fadeShare)")
        #expect(abs(stream.rssiVariance.squareRoot() - 4) < 1, "spread \(stream.rssiVariance.squareRoot()) dB")
    }

    @Test("Known answer: a 10 Hz / 30 % stream fading 1 dB/s for 8 s before it goes silent gets a shorter threshold; a steady one is unchanged")
    func fadingStreamExitsEarlier() {
        let steady = Self.stream(Self.sightings(until: 600))
        let fading = Self.stream(Self.sightings(until: 600, fade: 1, fadeSeconds: 8))
        #expect(!steady.fading)
        #expect(fading.fading, "slope \(fading.rssiSlope) dB/s, score \(fading.rssiSlopeScore)")
        // A steady stream: the evidence detector's threshold is learnedGaps' exactly.
        #expect(Self.evidence.silenceThreshold(for: steady) == Self.learned.silenceThreshold(for: steady))
        // Fading: the rate of silences after a fading sighting is φ·f_fade instead of f, the log
        // ratio shrinks by ln(f / (φ·f_fade)).
        let before = Self.learned.silenceThreshold(for: fading)
        let after = Self.evidence.silenceThreshold(for: fading)
        #expect(after < before - 0.3, "fading: \(after) s vs \(before) s")
        let mean = fading.meanInterval
        let share = max(fading.tailShare, 1 / ReceptionEstimator.tailShareMemory)
        let expected = ReceptionEstimator.tailStart * mean + mean * log(share * fading.evidenceFactor * 3_600 / mean / 1e-4)
        #expect(abs(after - max(expected, fading.longestInterval, 1)) < 1e-9, "\(after) vs \(expected)")
    }

    /// One unbound region per beacon; beacon A steady, beacon B fading 1 dB/s over its last 8 s; both stop at 300 s.
    static func exits(profile: MonitoringProfile) -> (steady: Double, fading: Double) {
        var engine = MonitoringEngine(profile: profile, sources: [.beacon: .authorized])
        _ = engine.startMonitoring(Fixture.region("a", major: 0, minor: 1), at: .zero)
        _ = engine.startMonitoring(Fixture.region("b", major: 0, minor: 2), at: .zero)
        let a = sightings(until: 300, seed: 3).map { Fixture.seen(Fixture.a, at: $0.t, rssi: $0.rssi) }
        let b = sightings(until: 300, fade: 1, fadeSeconds: 8, seed: 4).map { Fixture.seen(Fixture.b, at: $0.t, rssi: $0.rssi) }
        let merged = (a + b).sorted { $0.timestamp < $1.timestamp }
        let events = Fixture.feed(&engine, merged) + engine.advance(to: Timestamp(seconds: 400))
        let exits = events.filter { if case .didExitRegion = $0.kind { true } else { false } }
        let lastA = a.last!.timestamp.seconds, lastB = b.last!.timestamp.seconds
        let exitA = exits.first { $0.regionIdentifier == "a" }!.timestamp.seconds
        let exitB = exits.first { $0.regionIdentifier == "b" }!.timestamp.seconds
        #expect(exits.count == 2, "false exits: \(exits.map(\.timestamp.seconds))")
        return (exitA - lastA, exitB - lastB)
    }

    @Test("Engine: the fading beacon exits earlier with the evidence profile; the steady one exactly as with responsive")
    func engineFadingExitsEarlier() {
        let old = Self.exits(profile: .responsive)
        let new = Self.exits(profile: .evidence)
        #expect(new.steady == old.steady, "steady: \(new.steady) vs \(old.steady)")
        #expect(new.fading < old.fading - 0.3, "fading: \(new.fading) vs \(old.fading)")
    }

    /// A region bound to scanner "A" for beacon a, heard at A at 10 Hz (−60 dBm, 2 dB noise) for
    /// 120 s; then silent at A, while scanner "B" hears it every 0.1 s at `elsewhere` dBm (or never).
    static func boundExit(profile: MonitoringProfile, elsewhere: Int?) -> Double {
        var engine = MonitoringEngine(profile: profile, sources: [.beacon: .authorized])
        _ = engine.startMonitoring(Fixture.region("room-a", major: 0, minor: 1) { $0.scannerID = "A" }, at: .zero)
        var observations = sightings(loss: 0.1, until: 120, sigma: 2, seed: 5).map { Fixture.seen(Fixture.a, at: $0.t, rssi: $0.rssi, scanner: "A") }
        let last = observations.last!.timestamp.seconds
        if let elsewhere {
            observations += stride(from: last + 0.05, to: 200, by: 0.1).map { Fixture.seen(Fixture.a, at: $0, rssi: elsewhere, scanner: "B") }
        }
        let events = Fixture.feed(&engine, observations) + engine.advance(to: Timestamp(seconds: 200))
        let exits = events.filter { if case .didExitRegion = $0.kind { true } else { false } }.map(\.timestamp.seconds)
        #expect(exits.count == 1, "\(exits)")
        return (exits.first ?? .infinity) - last
    }

    @Test("Engine: heard at scanner B (as strong) while silent at A, A's scanner-bound region exits earlier; B hearing nothing or only weakly changes nothing")
    func otherScannerEvidence() {
        let baseline = Self.boundExit(profile: .responsive, elsewhere: nil)
        let withB = Self.boundExit(profile: .evidence, elsewhere: -55)
        let silentB = Self.boundExit(profile: .evidence, elsewhere: nil)
        let weakB = Self.boundExit(profile: .evidence, elsewhere: -85)
        let responsiveWithB = Self.boundExit(profile: .responsive, elsewhere: -55)
        #expect(withB < baseline - 0.2, "heard at B: \(withB) s vs \(baseline) s")
        #expect(silentB == baseline)
        #expect(weakB == baseline)
        #expect(responsiveWithB == baseline, "responsive ignores other scanners")
    }

    @Test("Nearest scanner: a quiet current scanner is let go once the beacon is heard as strongly elsewhere 3 times (not only after its own silence bound)")
    func nearestScannerEvidence() {
        func switchTime(otherScanners: Bool) -> Double? {
            var state = NearestScannerState()
            let policy = NearestScannerPolicy()
            // At A every second at −60 for 60 s; then at B every second at −58 (not the 6 dB margin).
            for t in stride(from: 0.0, to: 60, by: 1) {
                _ = state.record(Fixture.seen(Fixture.a, at: t, rssi: -60, scanner: "A"), scanner: "A", policy: policy, otherScanners: otherScanners)
            }
            for t in stride(from: 59.5, to: 90, by: 1) {
                if let change = state.record(Fixture.seen(Fixture.a, at: t, rssi: -58, scanner: "B"), scanner: "B", policy: policy, otherScanners: otherScanners),
                   change.to == "B" { return t }
            }
            return nil
        }
        let before = switchTime(otherScanners: false)
        let after = switchTime(otherScanners: true)
        // Without: A's track is gone after m·ln(10⁴) ≈ 9.2 s of silence (last heard at 59).
        #expect(before.map { $0 >= 59 + 9 } == true, "\(String(describing: before))")
        // With: quiet ≥ 3 s and three sightings at B at least as strong → 62.5.
        #expect(after == 62.5, "\(String(describing: after))")
    }

    @Test("The evidence profile is experimental (named, not the default)")
    func presets() {
        #expect(MonitoringProfile.named("evidence")?.exitDetector == Self.evidence)
        #expect(MonitoringProfile.responsive.exitDetector == Self.learned)
    }
}
