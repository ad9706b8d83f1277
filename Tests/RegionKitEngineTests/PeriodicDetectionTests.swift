import Foundation
import Testing
@testable import RegionKitEngine

/// The periodic model (learned period and loss, geometric tail), the scanner channel (shared
/// blackouts excused, the scanner's prior for new streams) and the `periodicGaps` detector, with
/// known answers on synthetic streams.
@Suite("Periodic streams, shared blackouts, new streams: the periodicGaps detector")
struct PeriodicDetectionTests {
    static let detector = ExitDetector.periodicGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)

    /// A transmitter every `interval` s (+0–10 ms advertising delay), frames lost independently
    /// with probability `loss`, for `count` sightings.
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

    @Test("Geometric tail, exact product: no loss in 2,000 periods at 1 Hz → 3 missed reports (3.25 s)")
    func geometricExact() {
        // E[q^x] = ∏ (½ + i)/(2001 + i): x = 3 gives 0.5·1.5·2.5/(2001·2002·2003) ≈ 2.3e-10 ≤ 1e-4/3600 = 2.8e-8; x = 2 gives 1.9e-7.
        let tail = PeriodicTail(period: 1, lost: 0, frames: 2_000)
        #expect(abs(tail.missProbability(2) - 0.5 * 1.5 / (2_001 * 2_002)) < 1e-15)
        #expect(tail.silence(sightingsPerHour: 3_600, falseExitsPerHour: 1e-4) == 3.25)
    }

    @Test("Geometric tail, log-normal branch: 1 % of 2,000 periods at 1 Hz → 4 missed (4.25 s); 50 % of 4,000 at 10 Hz → 28 (2.97 s)")
    func geometricApproximation() {
        // x from σ²/2·x² − ln(1/q)·x + ln(N/r) = 0: 3.86 → 4 at 1 %; 27.5 → 28 at 50 %.
        let slow = PeriodicTail(period: 1, lost: 20, frames: 2_000).silence(sightingsPerHour: 3_564, falseExitsPerHour: 1e-4)
        #expect(slow == 4.25)
        let fast = try! #require(PeriodicTail(period: 0.105, lost: 2_000, frames: 4_000).silence(sightingsPerHour: 3_600 * 0.5 / 0.105, falseExitsPerHour: 1e-4))
        #expect(abs(fast - 0.105 * 28.25) < 1e-9, "\(fast)")
        // Hopeless: every report lost so far.
        #expect(PeriodicTail(period: 1, lost: 1_000, frames: 1_000).silence(sightingsPerHour: 3_600, falseExitsPerHour: 1e-4, limit: 100) == nil)
    }

    @Test("Few periods give a longer silence than many at the same loss (the loss is uncertain)")
    func uncertaintyLengthens() {
        let few = PeriodicTail(period: 1, lost: 15, frames: 50).silence(sightingsPerHour: 2_520, falseExitsPerHour: 1e-4)!
        let many = PeriodicTail(period: 1, lost: 600, frames: 2_000).silence(sightingsPerHour: 2_520, falseExitsPerHour: 1e-4)!
        #expect(few > many, "\(few) vs \(many)")
        #expect(many == 15.25, "30 % loss, well known: 15 missed reports")
    }

    @Test("The estimator learns the period and the loss of a periodic stream", arguments: [(0.1, 0.3), (1.0, 0.01), (0.1, 0.7)])
    func learnsPeriodAndLoss(interval: Double, loss: Double) {
        let stream = Self.stream(interval: interval, loss: loss, count: 5_000)
        #expect(stream.isPeriodic)
        #expect(abs(stream.period - (interval + 0.005)) < 0.002, "period \(stream.period)")
        #expect(abs(stream.periodicLoss - loss) < 0.04, "loss \(stream.periodicLoss)")
        #expect(stream.onGridShare > 0.98)
    }

    @Test("A Poisson stream (exponential intervals) is not periodic and keeps the exponential model")
    func poissonIsNotPeriodic() {
        var random = SeededRandom(seed: 5)
        var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        var t = 0.0
        for _ in 0..<5_000 {
            t += -0.2 * log(1 - random.uniform())
            stream.record(at: Timestamp(seconds: t))
        }
        #expect(!stream.isPeriodic, "on-grid share \(stream.onGridShare)")
        #expect(PeriodicTail(stream) == nil)
        // Same figure as the learned-gap detector with its mean taken as exact (the reference,
        // cautiousGaps) for such a stream (no scanner prior set).
        let learned = ExitDetector.cautiousGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
        #expect(Self.detector.silenceThreshold(for: stream) == learned.silenceThreshold(for: stream))
    }

    @Test("Known thresholds: 10 Hz at 30 % ≈ 1.8 s, at 50 % ≈ 3 s; 1 Hz at 1 % ≈ 4.3 s, at 30 % ≈ 15 s (settled streams)")
    func knownThresholds() {
        let cases: [(Double, Double, ClosedRange<Double>)] = [(0.1, 0.3, 1.6...2.0), (0.1, 0.5, 2.7...3.2), (1, 0.01, 4.0...5.3), (1, 0.3, 14.5...16.5)]
        for (interval, loss, range) in cases {
            let stream = Self.stream(interval: interval, loss: loss, count: 20_000, seed: 3)
            let threshold = Self.detector.silenceThreshold(for: stream)
            #expect(range.contains(threshold), "\(interval) s at \(loss): \(threshold) s")
            // The learned-gap (exponential) detector needs longer on the same stream.
            let learned = ExitDetector.learnedGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
            #expect(learned.silenceThreshold(for: stream) > threshold)
        }
    }

    @Test("Bursts on a periodic stream are learned: the threshold goes past the blackouts")
    func burstsOverrideTheGeometricTail() {
        var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        var t = 0.0
        for _ in 0..<60 {
            for _ in 0..<170 {
                t += 0.1
                stream.record(at: Timestamp(seconds: t))
            }
            t += 3
        }
        #expect(stream.isPeriodic, "blackouts are whole periods: still on the grid")
        #expect(Self.detector.silenceThreshold(for: stream) > 6.2)
    }

    @Test("New 10 Hz stream after 2.5 s: the cautious prior (~13 s) without a settled stream at its scanner, ≤ 3 s with a calm scanner's, ~1 s where that scanner's links lose no more than it")
    func newStreams() {
        var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        for step in 1...25 { stream.record(at: Timestamp(seconds: Double(step) * 0.1)) }
        #expect(stream.isPeriodic)
        // Nothing known about the scanner's bursts: the cautious prior, as the reference detector
        // (a 2 s fading prior here let young streams exit on a scanner's first blackout).
        let alone = Self.detector.silenceThreshold(for: stream)
        let before = ExitDetector.cautiousGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1).silenceThreshold(for: stream)
        #expect(alone > 10 && abs(alone - before) < 1, "alone \(alone) s, learned-gap detector \(before) s")
        stream.priorScale = 0.09   // the scanner's other streams: 10 Hz at ~30 % independent loss
        // Heavier than the geometric tail of its own 25 intervals without a loss (0.026 s): the
        // learned-gap model, with its short history's uncertainty.
        let calm = Self.detector.silenceThreshold(for: stream)
        #expect(calm > 1.5 && calm <= 3, "\(calm) s")
        stream.priorScale = 0.03   // the scanner's other streams: 10 Hz at ~3 % loss
        let cleaner = Self.detector.silenceThreshold(for: stream)
        #expect(cleaner <= 1.5, "\(cleaner) s")
        stream.priorScale = 1.5    // the scanner's streams show 1 s blackouts
        #expect(Self.detector.silenceThreshold(for: stream) > 8)
    }

    @Test("The scanner's loss as a prior: a minute at 1 Hz with 1 loss alone → 7 missed reports; beside streams losing 1 % (100 periods' weight) → 5")
    func scannerLossPrior() {
        // Alone: q ~ Beta(1.5, 59.5), E[q^x] ≤ 1e-4/3600 first at x = 7. With the prior: 1 + 0.01·100
        // lost of 60 + 100 periods, Beta(2.5, 158.5), first at x = 5.
        #expect(PeriodicTail(period: 1, lost: 1, frames: 60).silence(sightingsPerHour: 3_600, falseExitsPerHour: 1e-4) == 7.25)
        #expect(PeriodicTail(period: 1, lost: 2, frames: 160).silence(sightingsPerHour: 3_600, falseExitsPerHour: 1e-4) == 5.25)
        // Through a stream: 61 reports a second apart, the 30th lost.
        var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        for second in 1...61 where second != 30 { stream.record(at: Timestamp(seconds: Double(second))) }
        #expect(stream.isPeriodic)
        // Its scanner's settled streams are calm: their geometric scale at 1 % loss, 1/ln(100) s.
        stream.priorScale = 1 / log(100)
        let alone = try! #require(PeriodicTail(stream))
        stream.priorLoss = 0.01
        let pooled = try! #require(PeriodicTail(stream))
        #expect(abs(pooled.lost - alone.lost - 1) < 1e-6 && pooled.frames - alone.frames == 100)
        let before = Self.detector.silenceThreshold(for: { var s = stream; s.priorLoss = nil; return s }())
        let after = Self.detector.silenceThreshold(for: stream)
        #expect(after < before - 1, "alone \(before) s, with the scanner's loss \(after) s")
        // A scanner whose streams lose 20 % lends a prior that makes the stream wait longer.
        stream.priorLoss = 0.2
        #expect(Self.detector.silenceThreshold(for: stream) > before)
    }

    @Test("Scanner channel: the loss it lends is its streams' mean plus twice the spread between links their estimation noise does not explain, after 30 sightings")
    func channelLossPrior() {
        var channel = ScannerChannel()
        for _ in 0..<29 { channel.learnLoss(0.01, frames: 2_000) }
        #expect(channel.priorLoss == nil)
        channel.learnLoss(0.01, frames: 2_000)
        #expect(abs((channel.priorLoss ?? 0) - 0.01) < 1e-9)
        // Half the sightings from a link losing 1 %, half from one losing 5 %, each learned from
        // 2,000 periods: mean 3 %, spread 2 %, of which noise explains √((0.0099 + 0.0475)/2/2000) ≈ 0.38 %.
        var mixed = ScannerChannel()
        for index in 0..<200 { mixed.learnLoss(index % 2 == 0 ? 0.01 : 0.05, frames: 2_000) }
        let spread = (0.0004 - (0.01 * 0.99 + 0.05 * 0.95) / 2 / 2_000).squareRoot()
        #expect(abs((mixed.priorLoss ?? 0) - (0.03 + 2 * spread)) < 1e-6, "\(mixed.priorLoss ?? -1)")
        // Two young streams (60 periods: 0 and 2 losses) whose estimates differ mostly by their
        // noise: spread² 2.78e-4, of which noise (0 + (1/30)(29/30)/60)/2 = 2.69e-4 → 0.3 %, not 1.7 %.
        var noisy = ScannerChannel()
        for index in 0..<200 { noisy.learnLoss(index % 2 == 0 ? 0 : 1.0 / 30, frames: 60) }
        let left = (1.0 / 3_600 - (1.0 / 30) * (29.0 / 30) / 60 / 2).squareRoot()
        #expect(abs((noisy.priorLoss ?? 0) - (1.0 / 60 + 2 * left)) < 1e-9 && left < 0.004, "\(noisy.priorLoss ?? -1)")
        mixed.learnLoss(.nan, frames: 100)
        mixed.learnLoss(2, frames: 100)
        mixed.learnLoss(0.1, frames: 0)
        #expect(mixed.lossUpdates == 200, "a loss outside 0...1, or from no period, is not learned")
        // The stream keeps it as a Float, within 0...1.
        var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        stream.priorLoss = 1.5
        #expect(stream.priorLoss == 1)
        stream.priorLoss = .infinity
        #expect(stream.priorLoss == nil)
        #expect(MemoryLayout<ReceptionEstimator>.stride == 128, "the prior fits the stream's 128 bytes")
    }

    @Test("Scanner channel: the links behind its loss are counted by their sighting rates (inverse Simpson): 32 alike → 32, one at 10 Hz and nine at 1 Hz → 3.3")
    func channelLossLinks() {
        var alike = ScannerChannel()
        for second in 0..<120 {
            for link in 0..<32 { alike.learnLoss(0.01, frames: 2_000, streamRate: 1, at: Timestamp(seconds: Double(second) + Double(link) / 32)) }
        }
        // The decayed count of 32 updates a second with a 10 s memory is 320: 32 a second.
        #expect(abs(alike.lossLinks - 32) < 0.1, "\(alike.lossLinks)")
        var uneven = ScannerChannel()
        var t = 0.0
        while t < 120 {
            // Ten updates a second from the 10 Hz link, one from each 1 Hz link.
            let second = t.rounded(.down) == t
            uneven.learnLoss(0.01, frames: 2_000, streamRate: 10, at: Timestamp(seconds: t))
            if second { for _ in 0..<9 { uneven.learnLoss(0.01, frames: 2_000, streamRate: 1, at: Timestamp(seconds: t)) } }
            t = (t * 10 + 1).rounded() / 10
        }
        // (10 + 9)² / (10² + 9) = 3.31; the running mean of the rates lags the updates' order a little.
        #expect(abs(uneven.lossLinks - 361.0 / 109) < 0.15, "\(uneven.lossLinks)")
        #expect(ScannerChannel().lossLinks == 0)
    }

    @Test("Scanner channel: its loss weighs up to 1,000 periods when enough links lose alike; 100 with few links or links that differ")
    func channelLossWeight() {
        func channel(links: Int, loss: (Int) -> Double, frames: Double = 2_000) -> ScannerChannel {
            var channel = ScannerChannel()
            for second in 0..<120 {
                for link in 0..<links {
                    channel.learnLoss(loss(link), frames: frames, streamRate: 1, at: Timestamp(seconds: Double(second) + Double(link) / Double(links)))
                }
            }
            return channel
        }
        // 32 links losing 1 % alike: no spread between links at all.
        #expect(channel(links: 32, loss: { _ in 0.01 }).priorLossWeight == PeriodicTail.maximumPriorFrames)
        // Four links alike: too few to say the next one will be like them.
        #expect(channel(links: 4, loss: { _ in 0.01 }).priorLossWeight == PeriodicTail.scannerPriorFrames)
        // 32 links, half losing 1 %, half 5 %: mean 3 %, variance 4e-4, noise 1.435e-5; bound
        // 3.857e-4 + 2·√(2/31)·4e-4 + 4e-4/32 = 6.01e-4: weight 0.0291/6.01e-4 ≈ 48, below 100.
        // So the least weight, and the cautious loss: mean plus twice the spread, 3 % + 2·1.96 % = 6.93 %.
        let mixed = channel(links: 32, loss: { $0 % 2 == 0 ? 0.01 : 0.05 })
        let between = 0.0004 - (0.01 * 0.99 + 0.05 * 0.95) / 2 / 2_000
        #expect(mixed.priorLossWeight == PeriodicTail.scannerPriorFrames)
        #expect(abs((mixed.priorLoss ?? 0) - (0.03 + 2 * between.squareRoot())) < 5e-5, "\(mixed.priorLoss ?? -1)")
        // 32 links alike at 1 %: the loss lent is their mean (no spread, no standard error).
        let alike = channel(links: 32, loss: { _ in 0.01 })
        #expect(abs((alike.priorLoss ?? 0) - 0.01) < 1e-6)
        // 32 young links (60 periods each) whose learned losses, 1 % and 2 % in turn, vary less
        // (2.5e-5) than 60 periods' estimation noise makes them vary ((0.0099 + 0.0196)/2/60 =
        // 2.46e-4): no spread between links shows, but the sampling allowance is of the noise, not
        // of the smaller variance: mean 1.5 %, bound 2·√(2/31)·2.46e-4 + 2.46e-4/32 = 1.33e-4,
        // weight 0.0148/1.33e-4 ≈ 111 (with the variance instead: 1,000, more than 60-period
        // links can vouch for).
        let young = channel(links: 32, loss: { $0 % 2 == 0 ? 0.01 : 0.02 }, frames: 60)
        let noise = (0.01 * 0.99 + 0.02 * 0.98) / 2 / 60
        let youngWeight = 0.015 * 0.985 / (2 * (2 / (young.lossLinks - 1)).squareRoot() * noise + noise / young.lossLinks)
        #expect(abs(young.priorLossWeight - youngWeight) < 2 && young.priorLossWeight < 120, "\(young.priorLossWeight) vs \(youngWeight)")
        // Without rates (an older caller), no links are counted: the least weight; and updates
        // without a rate do not dilute the rates of those with one (999 unrated, then one link at
        // 1 Hz, is one link, not 1,000).
        var unrated = ScannerChannel()
        for _ in 0..<200 { unrated.learnLoss(0.01, frames: 2_000) }
        #expect(unrated.priorLoss != nil && unrated.priorLossWeight == PeriodicTail.scannerPriorFrames)
        for _ in 0..<799 { unrated.learnLoss(0.01, frames: 2_000) }
        unrated.learnLoss(0.01, frames: 2_000, streamRate: 1, at: Timestamp(seconds: 1))
        #expect(abs(unrated.lossLinks - 0.1) < 1e-9 && unrated.priorLossWeight == PeriodicTail.scannerPriorFrames, "\(unrated.lossLinks)")
    }

    @Test("A stream's own losses contradict its scanner's loss beyond 2 σ + ½: then the prior weighs 100 periods, not 1,000")
    func priorContradiction() {
        #expect(!PeriodicTail.contradicts(lost: 2, frames: 60, loss: 0.01))   // 0.6 expected, bound 2.64
        #expect(PeriodicTail.contradicts(lost: 3, frames: 60, loss: 0.01))
        #expect(!PeriodicTail.contradicts(lost: 6, frames: 300, loss: 0.01))  // 3 expected, bound 6.95
        #expect(PeriodicTail.contradicts(lost: 7, frames: 300, loss: 0.01))
        #expect(!PeriodicTail.contradicts(lost: 0, frames: 0, loss: 0.01))
        #expect(!PeriodicTail.contradicts(lost: 30, frames: 100, loss: .nan))
        // Through a stream: reports a second apart for 119 s, every 20th lost (5 %), beside a
        // scanner whose 32 links lose 1 % alike (weight 1,000): 5 lost of ~118 periods contradict
        // 1 % (bound 3.8), so the prior weighs 100 periods and the stream waits for more missed reports.
        var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        for second in 1...120 where second % 20 != 0 { stream.record(at: Timestamp(seconds: Double(second))) }
        #expect(stream.isPeriodic)
        stream.setPriorLoss(0.01, weight: 1_000)
        #expect(stream.priorLossWeight == 1_000)
        let tail = try! #require(PeriodicTail(stream))
        #expect(abs(tail.frames - stream.periodicFrames - 100) < 1e-9, "\(tail.frames) of which own \(stream.periodicFrames)")
        // A stream losing nothing beside the same scanner takes the whole 1,000.
        var calm = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        for second in 1...120 { calm.record(at: Timestamp(seconds: Double(second))) }
        calm.setPriorLoss(0.01, weight: 1_000)
        calm.priorScale = 1 / log(100)   // its scanner's settled streams are calm (as in scannerLossPrior)
        let calmTail = try! #require(PeriodicTail(calm))
        #expect(abs(calmTail.frames - calm.periodicFrames - 1_000) < 1e-9)
        #expect(Self.detector.silenceThreshold(for: calm) == 4.25, "1 % over 1,000 periods: 4 missed reports")
        calm.setPriorLoss(nil, weight: 1_000)
        #expect(calm.priorLoss == nil && calm.priorLossWeight == PeriodicTail.scannerPriorFrames)
    }

    @Test("Engine: a new 1 Hz stream beside 32 links that lose 1 % alike exits 4 missed reports after it stops; a new link losing 25 % there does not exit, and makes the links differ")
    func engineScannerLinksAlike() {
        // 32 beacons at 1 Hz for 1,200 s, each at its own phase of the second (a scanner's beacons
        // are not in step), every 100th report lost (1 %); from 600 s a newcomer: either one
        // heard without loss until 800.4 s, or one losing a quarter of its reports until the end. One
        // region holds every link's streams; the newcomer has its own.
        func run(newcomer: (Int) -> Bool, until end: Double) -> (events: [LocationEvent], channel: ScannerChannel?) {
            var observations: [BeaconObservation] = []
            for second in 1...Int(end) {
                for link in 0..<32 where (second + link * 3) % 100 != 0 {
                    observations.append(Fixture.seen(BeaconIdentity(uuid: Fixture.uuid, major: 8, minor: UInt16(link)), at: Double(second) + Double(link) / 32, scanner: "hall"))
                }
                if second >= 600, newcomer(second) { observations.append(Fixture.seen(BeaconIdentity(uuid: Fixture.uuid, major: 8, minor: 100), at: Double(second) + 0.4, scanner: "hall")) }
            }
            observations.sort { $0.timestamp < $1.timestamp }
            var engine = Fixture.engine(.periodic)
            _ = engine.startMonitoring(Fixture.region("hall", major: 8), at: .zero)
            _ = engine.startMonitoring(Fixture.region("newcomer", major: 8, minor: 100), at: .zero)
            let events = Fixture.feed(&engine, observations) + engine.advance(to: Timestamp(seconds: end + 0.9))
            return (events, engine.channel(of: "hall"))
        }
        let calm = run(newcomer: { $0 <= 800 }, until: 900)
        let exit = try! #require(calm.events.of("didExitRegion", "newcomer").first?.timestamp.seconds)
        #expect(abs(exit - 800.4 - 4.25) < 0.05, "exit \(exit - 800.4) s after the last sighting")
        let channel = try! #require(calm.channel)
        #expect(channel.lossLinks > 30 && channel.priorLossWeight == PeriodicTail.maximumPriorFrames,
                "\(channel.lossLinks) links, weight \(channel.priorLossWeight), loss \(String(describing: channel.priorLoss))")
        // A link losing 25 % at random: its own losses contradict the scanner's 1 % within
        // seconds, and once settled it makes the scanner's links differ (the least weight, the
        // cautious loss).
        var random = SeededRandom(seed: 15)
        let heard = (0...1_200).map { _ in random.uniform() >= 0.25 }
        let worse = run(newcomer: { heard[$0] }, until: 1_200)
        let exits = worse.events.of("didExitRegion", "newcomer").map(\.timestamp.seconds)
        #expect(exits.isEmpty, "the 25 % link exited at \(exits)")
        #expect(worse.channel?.priorLossWeight == PeriodicTail.scannerPriorFrames)
    }

    @Test("Scanner channel: a silence of the whole scanner is excused whole once longer than the others' chance gap; its own silence is not")
    func channelExcuses() {
        var channel = ScannerChannel()
        // 10 beacons × 10 Hz for 20 s.
        for step in 0..<2_000 { channel.record(at: Timestamp(seconds: Double(step) * 0.01)) }
        let rate = channel.rate(at: Timestamp(seconds: 19.99))
        #expect(abs(rate - 100 * (1 - exp(-2))) < 1, "decayed rate \(rate)")
        // Blackout 19.99 → 22.
        channel.record(at: Timestamp(seconds: 22))
        #expect(channel.gaps.count == 1)
        let excused = channel.excusedSilence(from: Timestamp(seconds: 19.95), to: Timestamp(seconds: 22), streamRate: 10)
        // Recognised (the others, ~76/s, silent for far more than 5 of their intervals): whole.
        #expect(abs(excused - (22 - 19.99)) < 1e-9, "\(excused)")
        // A gap the others could show by chance (5 of their intervals or less) is not excused.
        var short = channel
        short.record(at: Timestamp(seconds: 22.05))
        short.record(at: Timestamp(seconds: 22.1))
        #expect(short.excusedSilence(from: Timestamp(seconds: 22.05), to: Timestamp(seconds: 22.1), streamRate: 10) == 0)
        // Silent now: the open gap is excused too, up to twice the longest dark gap.
        let open = channel.excusedSilence(from: Timestamp(seconds: 22), to: Timestamp(seconds: 40), streamRate: 10)
        #expect(abs(open - channel.excuseLimit) < 1e-9 && channel.excuseLimit == ScannerChannel.minimumExcuseLimit)
        // A scanner that hears only this stream excuses nothing.
        var lone = ScannerChannel()
        for step in 0..<200 { lone.record(at: Timestamp(seconds: Double(step) * 0.1)) }
        #expect(lone.excusedSilence(from: Timestamp(seconds: 19.9), to: Timestamp(seconds: 30), streamRate: 10) == 0)
    }

    @Test("The view of a channel just heard excuses what the channel itself does, gap by gap, for silences ending then")
    func channelViewExcusesAsTheChannel() {
        // A scanner hearing 10 streams at 10 Hz with 26 blackouts of 0.3–3 s: every silence that
        // ends at a sighting (the only ones the engine asks a view about) gets the channel's answer.
        var engine = MonitoringEngine(profile: .periodic, sources: [.beacon: .authorized])
        var channel = ScannerChannel()
        var random = SeededRandom(seed: 21)
        var time = 0.0
        var checked = 0, excusing = 0, differences: [String] = []
        for blackout in 0..<26 {
            for _ in 0..<Int(50 + random.uniform() * 400) {
                time += 0.01 * (0.5 + random.uniform())
                channel.record(at: Timestamp(seconds: time))
                let (view, gaps) = engine.recordChannel(scannerID: "hall", at: Timestamp(seconds: time), sharing: true)
                // Silences of streams heard 0–40 s ago, ending now.
                for back in [0.005, 0.2, 1, 2.5, 4, 9, 40] {
                    let from = Timestamp(seconds: time - back)
                    let expected = channel.excusedSilence(from: from, to: Timestamp(seconds: time), streamRate: 10)
                    let got = view.excusedSilence(from: from, to: Timestamp(seconds: time), streamRate: 10, gaps: gaps)
                    if got != expected, differences.count < 5 { differences.append("blackout \(blackout), t \(time), back \(back): \(got) vs \(expected)") }
                    checked += 1
                    if expected > 0 { excusing += 1 }
                }
            }
            time += 0.3 + random.uniform() * 2.7
        }
        #expect(differences.isEmpty, "\(differences)")
        #expect(engine.channel(of: "hall")?.gaps == channel.gaps && channel.gaps.count >= 20, "\(channel.gaps.count) gaps")
        // Without sharing (detectors that do not excuse), nothing is excused.
        let quiet = engine.recordChannel(scannerID: "hall", at: Timestamp(seconds: time + 5), sharing: false)
        #expect(quiet.gaps.isEmpty)
        #expect(quiet.view.excusedSilence(from: Timestamp(seconds: time - 20), to: Timestamp(seconds: time + 5), streamRate: 10,
                                          gaps: channel.gaps) == 0)
        #expect(excusing > 1_000, "\(excusing) of \(checked) silences excused: the check must reach the gaps")
    }

    @Test("nearestWhole equals rounded() (ties away from zero) on 0…2⁵², at ties, beside them, and elsewhere")
    func nearestWhole() {
        var failures: [String] = []
        func check(_ value: Double) {
            let expected = value.rounded()
            if value.nearestWhole.bitPattern != expected.bitPattern || (value.isNaN && !value.nearestWhole.isNaN) {
                if failures.count < 10 { failures.append("\(value): \(value.nearestWhole) vs \(expected)") }
            }
        }
        for k in 0..<100_000 {
            let tie = Double(k) + 0.5
            for value in [tie, tie.nextUp, tie.nextDown, Double(k), Double(k).nextUp, Double(k).nextDown] { check(value) }
        }
        var random = SeededRandom(seed: 7)
        for _ in 0..<200_000 { check(random.uniform() * 50) }
        for value in [0, -0.0, -0.5, -2.5, 0x1p52, 0x1p52.nextUp, 0x1p53 + 2, 1e300, -.infinity, .infinity, .nan, 0.49999999999999994] { check(value) }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("Bursts beyond the geometric tail: 2 long gaps in 10 min at 1 % loss are bursts; 6 in 700 intervals at 30 % are not")
    func burstsBeyondGeometric() {
        let calm = PeriodicTail(period: 1, lost: 6, frames: 600)
        // A 3.03 s tail start: 3 reports lost in a row, E[q³] ≈ 1.4e-6 → 594 intervals expect 0.0008.
        #expect(calm.showsBursts(tailIntervals: 2, intervals: 594, tailStart: 3.03))
        #expect(!calm.showsBursts(tailIntervals: 1, intervals: 594, tailStart: 3.03), "one long gap is not a pattern")
        let lossy = PeriodicTail(period: 1, lost: 300, frames: 1_000)
        // Tail start 3/0.7 = 4.3 s: 4 reports lost in a row, ≈ 0.3⁴ = 0.0081 → 700 intervals
        // expect ≈ 5.7 (σ ≈ 2.4): bursts beyond 2 · 5.7 + 3 · 2.4 ≈ 18.6.
        #expect(!lossy.showsBursts(tailIntervals: 6, intervals: 700, tailStart: 3 / 0.7))
        #expect(!lossy.showsBursts(tailIntervals: 18, intervals: 700, tailStart: 3 / 0.7))
        #expect(lossy.showsBursts(tailIntervals: 20, intervals: 700, tailStart: 3 / 0.7))
    }

    @Test("A 1 Hz stream at 1 % loss with a 5 s blackout every 10 min leaves the geometric tail (5.25 s) for the learned-gap model")
    func periodicStreamWithBursts() {
        var random = SeededRandom(seed: 4)
        var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        for frame in 1...3_600 {
            let second = frame % 600
            if second >= 300 && second < 305 { continue }      // the blackout
            if random.uniform() < 0.01 { continue }
            stream.record(at: Timestamp(seconds: Double(frame) + random.uniform() * 0.01))
        }
        #expect(stream.isPeriodic && stream.tailIntervals >= 5)
        let threshold = Self.detector.silenceThreshold(for: stream)
        #expect(threshold > 12, "\(threshold) s")
        // The same stream without its blackouts keeps the geometric tail.
        let calm = Self.stream(interval: 1, loss: 0.01, count: 3_500, seed: 4)
        #expect(Self.detector.silenceThreshold(for: calm) < 6.5)
    }

    @Test("Excused intervals count for the loss: 1 Hz, 1/3 lost between 2 s blackouts → learned loss ≈ 1/3 (leaving them out: 0.23)")
    func excusedIntervalsCountForTheLoss() {
        // A 1 Hz transmitter losing each frame with probability 1/3 on its own link, and its
        // scanner blacked out for 2 s (two frames) every 7 s, the blackouts excused as the
        // channel would (their seconds taken off the interval that spans them). Leaving those
        // intervals out drops the link's longest runs of losses (a long run is more likely to
        // span a blackout), and the loss came out 0.23.
        var random = SeededRandom(seed: 11)
        var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        var excused = 0.0
        for frame in 1...20_000 {
            let t = Double(frame) + random.uniform() * 0.01
            if frame % 7 == 0 || frame % 7 == 1 {
                excused += 1     // each blacked-out frame: one period of the scanner's, excused
                continue
            }
            guard random.uniform() >= 1.0 / 3 else { continue }
            stream.record(at: Timestamp(seconds: t), excused: excused)
            excused = 0
        }
        #expect(stream.isPeriodic)
        #expect(abs(stream.periodicLoss - 1.0 / 3) < 0.03, "learned loss \(stream.periodicLoss)")
    }

    @Test("Scanner channel: a silence too young to tell a blackout waits for the others' chance gap (at most 2× the longest dark gap); a lone stream does not wait")
    func channelUndecided() {
        var channel = ScannerChannel()
        // 10 beacons × 10 Hz for 20 s, a 2 s blackout, then 60 s of one 10 Hz stream and one at 3.3 Hz.
        for step in 0..<2_000 { channel.record(at: Timestamp(seconds: Double(step) * 0.01)) }
        channel.record(at: Timestamp(seconds: 22))
        #expect(channel.longestGap > 1.9)
        var t = 22.0
        while t < 82 {
            channel.record(at: Timestamp(seconds: t))
            if Int((t * 10).rounded()) % 3 == 0 { channel.record(at: Timestamp(seconds: t + 0.001)) }
            t += 0.1
        }
        let last = try! #require(channel.lastHeard)
        let others = channel.rate(at: last) - 10
        #expect(others > 2 && others < 5, "others \(others)/s")
        // The 10 Hz stream, last heard at `last`, due at last + 1: the scanner silent since then.
        let wait = try! #require(channel.undecidedSilence(at: last + 1, due: last + 1, streamRate: 10))
        #expect(abs(wait.seconds - (last.seconds + ScannerChannel.chanceGaps / others)) < 1e-9, "\(wait.seconds - last.seconds)")
        // Once past it, nothing waits (the silence is the scanner's and is excused, or it is not).
        #expect(channel.undecidedSilence(at: wait + 0.01, due: last + 1, streamRate: 10) == nil)
        // Others heard up to the stream's due time: its whole threshold was its own silence.
        #expect(channel.undecidedSilence(at: last + 1, due: last, streamRate: 10) == nil)
        // A lone stream (others below a quarter of its own rate: the estimates' noise) waits for nothing.
        #expect(channel.undecidedSilence(at: last + 1, due: last + 1, streamRate: 100) == nil)
        #expect(channel.undecidedSilence(at: last + 1, due: last + 1, streamRate: (others + 10) / 1.24) == nil)
        // Others heard rarely: at most twice the longest dark gap.
        var sparse = ScannerChannel()
        for step in 0..<2_000 { sparse.record(at: Timestamp(seconds: Double(step) * 0.01)) }
        sparse.record(at: Timestamp(seconds: 20.5))      // a 0.5 s dark gap
        for step in 0..<600 { sparse.record(at: Timestamp(seconds: 21 + Double(step))) }   // then 1 sighting/s for 10 min
        let sparseLast = try! #require(sparse.lastHeard)
        let bounded = try! #require(sparse.undecidedSilence(at: sparseLast + 0.5, due: sparseLast + 0.5, streamRate: 0.1))
        #expect(abs(bounded.seconds - (sparseLast.seconds + 2 * sparse.longestGap)) < 1e-9, "\(bounded.seconds - sparseLast.seconds) s, longest gap \(sparse.longestGap)")
        // A scanner that never showed a dark gap has nothing to wait for.
        var calm = ScannerChannel()
        for step in 0..<2_000 { calm.record(at: Timestamp(seconds: Double(step) * 0.01)) }
        #expect(calm.undecidedSilence(at: Timestamp(seconds: 20.5), due: Timestamp(seconds: 21), streamRate: 10) == nil)
    }

    @Test("Engine: a blackout after the scanner's other streams thinned out does not exit the stream that stays (it exited before)")
    func engineBlackoutWithFewOthers() {
        // Until 300 s: ten 10 Hz beacons, blacked out together 4 s every 30 s (each blackout
        // excused, so beacon 0 never learns one). Then nine leave; beacon 0 stays with one 3 Hz
        // beacon, and by the blackout at 356–360 s the others' ~3 sightings/s cannot show it as
        // the scanner's within beacon 0's 1 s threshold (5 of their intervals: ~1.5 s). Before,
        // beacon 0 exited 1 s into it. It stops at 450.3 s.
        var observations: [BeaconObservation] = []
        let slow = BeaconIdentity(uuid: Fixture.uuid, major: 7, minor: 20)
        var t = 0.5
        while t < 500 {
            if t.truncatingRemainder(dividingBy: 30) < 26 {
                for beacon in 0..<10 where (beacon == 0 && t < 450.3) || t < 300 {
                    observations.append(Fixture.seen(BeaconIdentity(uuid: Fixture.uuid, major: 7, minor: UInt16(beacon)), at: t + Double(beacon) * 0.007, scanner: "hall"))
                }
                if t >= 300, Int((t * 10).rounded()) % 3 == 0 { observations.append(Fixture.seen(slow, at: t + 0.05, scanner: "hall")) }
            }
            t += 0.1
        }
        var engine = Fixture.engine(.periodic)
        _ = engine.startMonitoring(Fixture.region("zero", major: 7, minor: 0), at: .zero)
        let events = Fixture.feed(&engine, observations) + engine.advance(to: Timestamp(seconds: 550))
        let exits = events.of("didExitRegion").map(\.timestamp.seconds)
        #expect(exits.filter { $0 < 450.3 }.isEmpty, "false exits at \(exits)")
        let exit = try! #require(exits.first { $0 >= 450.3 })
        #expect(exit - 450.3 < 2, "departure exit after \(exit - 450.3) s")
    }

    /// Ten beacons at 10 Hz on one scanner, every one blacked out together for 4 s every 30 s;
    /// beacon 0 stops at `stop`.
    static func sharedBlackouts(until end: Double, stop: Double) -> [BeaconObservation] {
        var observations: [BeaconObservation] = []
        var t = 0.5
        while t < end {
            let dark = t.truncatingRemainder(dividingBy: 30) >= 26
            if !dark {
                for beacon in 0..<10 where beacon != 0 || t < stop {
                    let identity = BeaconIdentity(uuid: Fixture.uuid, major: 7, minor: UInt16(beacon))
                    observations.append(Fixture.seen(identity, at: t + Double(beacon) * 0.007, scanner: "hall"))
                }
            }
            t += 0.1
        }
        return observations
    }

    @Test("Engine: blackouts shared by a scanner's streams never exit, and a departure still exits in ~1–2 s (learnedgaps: > 4 s)")
    func engineSharedBlackouts() {
        for profile in [MonitoringProfile.periodic, .responsive] {
            var engine = Fixture.engine(profile)
            _ = engine.startMonitoring(Fixture.region("zero", major: 7, minor: 0), at: .zero)
            let stop = 600.3
            let events = Fixture.feed(&engine, Self.sharedBlackouts(until: 700, stop: stop)) + engine.advance(to: Timestamp(seconds: 800))
            let exits = events.of("didExitRegion").map(\.timestamp.seconds)
            let exit = try! #require(exits.first { $0 >= stop })
            if profile.name == "periodic" {
                #expect(exits.filter { $0 < stop }.isEmpty, "false exits at \(exits)")
                #expect(exit - stop < 2.5, "departure exit after \(exit - stop) s")
            } else {
                // It learned the 4 s blackouts as the stream's own gaps.
                #expect(exit - stop > 4, "learnedgaps: departure exit after \(exit - stop) s")
            }
        }
    }

    @Test("Engine: everything at a scanner going silent (the scanner is off) still exits, at most ~10 s (or 2× the longest blackout) later")
    func engineScannerOff() {
        var engine = Fixture.engine(.periodic)
        _ = engine.startMonitoring(Fixture.region("zero", major: 7, minor: 0), at: .zero)
        // Blackouts as above until 300 s, then nothing at all.
        let events = Fixture.feed(&engine, Self.sharedBlackouts(until: 300, stop: 1_000)) + engine.advance(to: Timestamp(seconds: 400))
        let exits = events.of("didExitRegion").map(\.timestamp.seconds)
        #expect(exits.count == 1, "\(exits)")
        if let exit = exits.first { #expect(exit > 300 && exit < 300 + 13, "exit at \(exit)") }
    }

    @Test("Core Location and AltBeacon presets keep their fixed silences; responsive keeps learned gaps; periodic is opt-in")
    func presetsUnchanged() {
        #expect(MonitoringProfile.coreLocation.exitDetector == .fixedSilence(seconds: 30, evaluationInterval: 10))
        #expect(MonitoringProfile.altBeacon.exitDetector == .fixedSilence(seconds: 10, evaluationInterval: 1.1))
        #expect(MonitoringProfile.responsive.exitDetector == .learnedGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1))
        #expect(MonitoringProfile.named("periodic")?.exitDetector == Self.detector)
    }
}
