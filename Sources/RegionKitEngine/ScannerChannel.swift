import RegionKitCore
import Foundation

/// What one scanner's channel has shown, across every stream it hears: when it last heard
/// anything, how fast it hears (all streams together), its recent **dark gaps** — silences of the
/// whole scanner far longer than its aggregate rate explains — and the tail scale its settled
/// streams have learned (a prior for its new streams).
///
/// A blackout (a person by the scanner, a Wi-Fi burst, the scanner's radio busy) silences every
/// stream of the scanner at once; a departure silences one stream while the others go on. So a
/// stream's silence is excused (``excusedSilence(from:to:streamRate:offline:)``) for the part of it
/// during which the *other* streams of the scanner, heard at rate R − r (R the scanner's rate just
/// before, r the stream's own share of it), were silent, once that silence has lasted more than
/// ``chanceGaps`` / (R − r) seconds — a silence they would show by chance with probability about
/// e^−5. A scanner that hears one stream only excuses nothing.
///
/// Plain values: a decayed sighting count, a handful of gaps (at most ``gapCapacity``), two
/// numbers for the prior. One per scanner, not per beacon.
///
/// ```swift
/// var channel = ScannerChannel()
/// for step in 0..<1000 { channel.record(at: Timestamp(seconds: Double(step) * 0.01)) }  // 100 sightings/s
/// channel.record(at: Timestamp(seconds: 12))          // 2 s of silence of the whole scanner
/// channel.excusedSilence(from: Timestamp(seconds: 9.95), to: Timestamp(seconds: 12), streamRate: 10)  // 2.01 s: the whole dark gap from 9.99 s
/// ```
public struct ScannerChannel: Hashable, Sendable {
    /// A silence of the whole scanner.
    public struct Gap: Hashable, Sendable {
        public var from: Timestamp
        public var to: Timestamp
        /// The scanner's sighting rate just before the gap, per second; infinite for a time the
        /// scanner said it was offline (``isDeclared``).
        public var rate: Double

        /// Whether the scanner said it was offline through this gap (``setOnline(_:at:)``): it
        /// counts whole, whatever the other streams' rate, up to ``offlineExcuseLimit``.
        public var isDeclared: Bool { rate == .infinity }

        /// Seconds of this gap from `start` to `end` (0 when they do not meet).
        public func seconds(from start: Timestamp, to end: Timestamp) -> Double {
            max(0, min(to, end) - max(from, start))
        }
    }

    /// The last sighting heard by this scanner.
    public private(set) var lastHeard: Timestamp?
    /// Sightings, each decayed e-fold per ``rateMemory`` seconds, as of ``weightTime``.
    public private(set) var weight: Double = 0
    public private(set) var weightTime: Timestamp = .zero
    /// The most recent dark gaps, oldest first.
    public private(set) var gaps: [Gap] = []
    /// The longest dark gap seen, decaying e-fold per hour.
    public private(set) var longestGap: Double = 0
    /// The tail scale the scanner's settled streams have learned (``ExitDetector/tailScale(of:)``),
    /// a running mean; `nil` until one has.
    public private(set) var priorScale: Double?
    /// Updates behind ``priorScale`` (counted up to ``priorMemory``).
    public private(set) var priorUpdates: Double = 0
    /// The frame loss of the scanner's settled periodic streams showing no bursts (running mean
    /// over ``priorMemory`` updates, one per sighting of such a stream) and of its square.
    public private(set) var lossMean: Double = 0
    public private(set) var lossSquares: Double = 0
    /// The running mean of each learned loss's own sampling variance, q(1 − q)/frames: the part
    /// of the losses' spread that is estimation noise, not a difference between links.
    public private(set) var lossNoise: Double = 0
    /// Updates behind ``lossMean`` (counted up to ``priorMemory``).
    public private(set) var lossUpdates: Double = 0
    /// The updates behind ``lossMean``, each decayed e-fold per ``rateMemory`` seconds, as of
    /// ``lossRateTime``: the rate at which the settled periodic streams are heard, all together.
    public private(set) var lossRateWeight: Double = 0
    public private(set) var lossRateTime: Timestamp = .zero
    /// The running mean, over the updates behind ``lossMean`` that came with a rate, of the
    /// updating stream's own sighting rate, per second.
    public private(set) var lossStreamRate: Double = 0
    /// Updates behind ``lossStreamRate`` (counted up to ``priorMemory``).
    public private(set) var lossRatedUpdates: Double = 0

    /// Since when the scanner has said it is offline (its status topic: ESPresense's retained
    /// `offline`, a Theengs gateway's will), `nil` while it is online or has said nothing.
    public private(set) var offlineSince: Timestamp?
    /// The last time the scanner said it was offline, from then to its return (among ``gaps``
    /// too, while they keep it).
    public private(set) var lastOffline: Gap?

    /// Seconds of a stream's silence excused at most because its scanner said it was offline
    /// (``offlineSilence(from:to:)``), beside what its dark gaps excuse: a node's reboot or
    /// firmware update (tens of seconds) holds no exit, a node unplugged for good lets its
    /// beacons go two minutes later than they would have gone — ESPresense-companion's own away
    /// timeout (120 s), the longest wait the presence tools we connect to use.
    public static let offlineExcuseLimit = 120.0

    /// Seconds over which the scanner's rate is averaged (e-fold decay).
    public static let rateMemory = 10.0
    /// Expected aggregate intervals of the other streams that must pass silent before a
    /// silence counts as the scanner's.
    public static let chanceGaps = 5.0
    /// Dark gaps kept.
    public static let gapCapacity = 32
    /// An excused silence is never longer than this, nor than twice the longest dark gap seen.
    public static let minimumExcuseLimit = 10.0
    /// Seconds over which the longest dark gap is forgotten (e-fold).
    public static let longestGapMemory = 3_600.0
    /// Stream updates the prior scale averages over once warmed up.
    public static let priorMemory = 1_000.0
    /// Intervals a stream must have shown before it informs the prior.
    public static let settledIntervals = 30
    /// Seconds a stream must also have been heard before it informs the prior: long enough to
    /// have met the blackouts of its channel (1 s blackouts every 7–20 s in the sweep's bursty
    /// conditions), so "no bursts" from it is evidence. (``ExitDetector/periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``
    /// was exempt until issue 15's seventh pass: 3 s streams at 10 Hz gave a scanner a prior of
    /// their ≈ 0.08 s geometric scale, and new streams at a scanner that had not yet shown a
    /// blackout exited on the first one: 2 of 300 arrivals at 10 Hz, 30 % loss, shared blackouts.)
    public static let settledSeconds = 60.0

    public init() {}

    /// The scanner's sighting rate at `time`, per second, from sightings up to then.
    public func rate(at time: Timestamp) -> Double {
        weight * exp(-max(0, time - weightTime) / Self.rateMemory) / Self.rateMemory
    }

    /// Seconds of silence after which ``sightingsPerSecond(at:)`` says 0: three of
    /// ``rateMemory``, when the decayed rate is under 5 % of what it was.
    public static let silentRateAfter = 3 * rateMemory

    /// The rate as reported to people (`/v1/scanners`, `/metrics`, the dashboard): ``rate(at:)``,
    /// and 0 once the scanner has been silent for ``silentRateAfter``. The e-fold decay alone
    /// never reaches 0 (a scanner that heard 50 sightings/s still showed 0.1/s a minute after it
    /// fell silent), while a silent scanner is what a user looks for there. The detector reads
    /// ``rate(at:)``, unchanged.
    ///
    /// ```swift
    /// channel.sightingsPerSecond(at: lastHeard + 29)   // > 0, decaying
    /// channel.sightingsPerSecond(at: lastHeard + 30)   // 0
    /// ```
    public func sightingsPerSecond(at time: Timestamp) -> Double {
        time - weightTime >= Self.silentRateAfter ? 0 : rate(at: time)
    }

    /// The longest silence this scanner excuses: twice its longest dark gap, at least
    /// ``minimumExcuseLimit``. When everything a scanner hears goes silent for good (the scanner
    /// is off, or every beacon left at once), exits come that much later.
    public var excuseLimit: Double { max(Self.minimumExcuseLimit, 2 * longestGap) }

    /// Records a sighting of any stream at `time` (earlier times count as simultaneous). A
    /// scanner that said it was offline is heard again: it is online (``setOnline(_:at:)``).
    public mutating func record(at time: Timestamp) {
        if offlineSince != nil { setOnline(true, at: time) }
        if let last = lastHeard {
            guard time > last else {
                weight += 1
                return
            }
            // (The weight is kept as of the last sighting, so its rate then needs no decay: the
            // same number `rate(at:)` gives, e^0 being 1, without the `exp`.)
            let rate = weightTime == last ? weight / Self.rateMemory : rate(at: last)
            var gap = time - last
            if let declared = lastOffline, declared.to > last {
                gap -= recordDarkGaps(aroundDeclaredFrom: last, to: time, rate: rate)
            } else {
                recordDarkGap(from: last, to: time, rate: rate)
            }
            if rate > 0 {
                let dark = gap - Self.chanceGaps / rate
                // The decayed longest gap is at most the longest gap: when that is 0 or this
                // silence is longer, the maximum is known without the `exp`.
                longestGap = longestGap == 0 || dark >= longestGap ? max(dark, 0) : max(dark, longestGap * exp(-gap / Self.longestGapMemory))
            }
        }
        weight = weight * exp(-max(0, time - weightTime) / Self.rateMemory) + 1
        weightTime = time
        lastHeard = time
    }

    /// ``record(at:)`` for an exit detector that takes nothing from the channel (one that does not
    /// ``ExitDetector/usesScannerPrior``): its last sighting, its rate and its return when it said
    /// it was offline, what the engine tells of its scanners; not its dark gaps, which cost a
    /// sighting more and would serve no stream.
    public mutating func noteHeard(at time: Timestamp) {
        if offlineSince != nil { setOnline(true, at: time) }
        if let last = lastHeard, time <= last {
            weight += 1
            return
        }
        weight = weight * exp(-max(0, time - weightTime) / Self.rateMemory) + 1
        weightTime = time
        lastHeard = time
    }

    /// The scanner said it was offline during the silence from `last` to `time` (once or more:
    /// the last gaps, nothing else is kept while nothing is heard): those times are gaps already
    /// (whole); what is dark between them counts as usual, all kept in time order. Returns the
    /// declared seconds. Out of line: rare, and inlined it made every sighting's ``record(at:)``
    /// larger (`count.sh ingest`: 17 instructions a sighting).
    @inline(never)
    private mutating func recordDarkGaps(aroundDeclaredFrom last: Timestamp, to time: Timestamp, rate: Double) -> Double {
        var said: [Gap] = []
        while let gap = gaps.last, gap.isDeclared, gap.to > last { said.append(gaps.removeLast()) }
        var (start, declaredSeconds) = (last, 0.0)
        for declared in said.reversed() {
            recordDarkGap(from: start, to: max(start, declared.from), rate: rate)
            appendGap(declared)
            declaredSeconds += declared.seconds(from: last, to: time)
            start = max(start, declared.to)
        }
        recordDarkGap(from: start, to: time, rate: rate)
        return declaredSeconds
    }

    /// Keeps the silence from `from` to `to` as a dark gap when the scanner, hearing `rate`
    /// sightings a second, would show it by chance with probability about e^−``chanceGaps``.
    private mutating func recordDarkGap(from: Timestamp, to: Timestamp, rate: Double) {
        guard rate * (to - from) > Self.chanceGaps else { return }
        appendGap(Gap(from: from, to: to, rate: rate))
    }

    private mutating func appendGap(_ gap: Gap) {
        gaps.append(gap)
        if gaps.count > Self.gapCapacity { gaps.removeFirst(gaps.count - Self.gapCapacity) }
    }

    /// The scanner said at `time` that it is offline (`false`) or online again (`true`): its
    /// status topic (ESPresense's retained `rooms/<room>/status`, a Theengs gateway's will). While
    /// it is offline, the silence of the streams it hears is excused as the scanner's from then on
    /// (``offlineSilence(from:to:)``, at most ``offlineExcuseLimit``); back online, that time
    /// stays a dark gap, counted whole. A sighting heard from it is its return as well. Saying
    /// the same twice changes nothing (a retained status comes again at every subscription).
    ///
    /// ```swift
    /// var channel = ScannerChannel()
    /// channel.record(at: Timestamp(seconds: 10))
    /// channel.setOnline(false, at: Timestamp(seconds: 12))   // its will: `offline`
    /// channel.offlineSilence(from: Timestamp(seconds: 10), to: Timestamp(seconds: 30))   // 18 s
    /// ```
    public mutating func setOnline(_ online: Bool, at time: Timestamp) {
        if online {
            guard let since = offlineSince else { return }
            offlineSince = nil
            guard time > since else { return }
            let gap = Gap(from: since, to: time, rate: .infinity)
            appendGap(gap)
            lastOffline = gap
        } else if offlineSince == nil {
            offlineSince = time
        }
    }

    /// ``lastOffline`` when it ended less than ``offlineRelevance`` before `time`: what the
    /// sighting path carries to the streams of detectors not given the channel's gaps.
    public func recentOffline(at time: Timestamp) -> Gap? {
        guard let lastOffline, time - lastOffline.to < Self.offlineRelevance else { return nil }
        return lastOffline
    }

    /// Seconds after a scanner's return that the time it was away is still left out of what its
    /// streams learn when heard again (``recentOffline(at:)``). A stream first heard later has a
    /// silence at least this long to learn anyway, beside which the ≤ ``offlineExcuseLimit``
    /// declared in it hardly matters; before this bound, every sighting of a scanner that had
    /// once been offline carried an array to every region it matched, for good.
    public static let offlineRelevance = 600.0

    /// Whether the scanner has said it is offline and has not come back.
    public var isOffline: Bool { offlineSince != nil }

    /// Seconds of a silence from `lastSighting` to `now` during which the scanner said it was
    /// offline (its current absence and those it came back from), at most ``offlineExcuseLimit``.
    /// Every detector waits them out, not only those that excuse dark gaps.
    public func offlineSilence(from lastSighting: Timestamp, to now: Timestamp) -> Double {
        guard now > lastSighting else { return 0 }
        let current = offlineSince.map { $0 < now ? now - max($0, lastSighting) : 0 } ?? 0
        return min(current + Self.declaredSilence(in: gaps, from: lastSighting, to: now), Self.offlineExcuseLimit)
    }

    /// Seconds of a silence from `lastSighting` to `now` within the declared ones of `gaps`
    /// (most recent last), at most ``offlineExcuseLimit``.
    static func declaredSilence(in gaps: [Gap], from lastSighting: Timestamp, to now: Timestamp) -> Double {
        var declared = 0.0
        for gap in gaps.reversed() {
            guard gap.to > lastSighting else { break }
            if gap.isDeclared { declared += gap.seconds(from: lastSighting, to: now) }
        }
        return min(declared, offlineExcuseLimit)
    }

    /// The loss a new periodic stream of this scanner starts from (``ReceptionEstimator/priorLoss``):
    /// its settled periodic streams' mean loss plus twice the spread between their links (the
    /// spread of their learned losses less what their estimation noise explains): a scanner whose
    /// links lose alike lends a loss near theirs, one whose links differ a cautious one; at most
    /// 0.999; `nil` until ``minimumLossUpdates`` sightings of such streams.
    ///
    /// When the links have shown that they lose alike (``priorLossWeight`` above its least
    /// value), the weight carries their spread and the uncertainty of their mean, and the loss
    /// lent is that mean.
    public var priorLoss: Double? { lossPrior?.loss }

    /// ``priorLoss`` with ``priorLossWeight``.
    public var lossPrior: (loss: Double, weight: Double)? {
        guard lossUpdates >= Self.minimumLossUpdates else { return nil }
        let variance = max(lossSquares - lossMean * lossMean, 0)
        let between = max(variance - lossNoise, 0)
        let links = lossLinks
        if links >= Self.minimumLossLinks {
            let mean = min(lossMean, 0.999)
            // A new link's loss varies around the mean by the spread between links, bounded above
            // by twice its estimate's sampling error, and by the mean's own uncertainty, V/L. (The
            // sampling error is of at least the noise: a V that came out below it by chance must
            // not shrink the allowance with it.)
            let sampled = max(variance, lossNoise)
            let bound = between + 2 * (2 / (links - 1)).squareRoot() * sampled + sampled / links
            let weight = bound > 0 ? min(mean * (1 - mean) / bound, PeriodicTail.maximumPriorFrames) : PeriodicTail.maximumPriorFrames
            if weight > PeriodicTail.scannerPriorFrames { return (mean, weight) }
        }
        return (min(lossMean + 2 * between.squareRoot(), 0.999), PeriodicTail.scannerPriorFrames)
    }

    /// Sightings of settled periodic streams before ``priorLoss`` has a value.
    public static let minimumLossUpdates = 30.0

    /// How many links ``priorLoss`` was learned from, in effect: the settled periodic streams
    /// heard lately, each counted by its share of their sightings — (Σ rᵢ)² / Σ rᵢ², the rates'
    /// inverse Simpson index, from their total rate (``lossRateWeight``) over the mean rate of
    /// the stream behind an update (``lossStreamRate``: Σ rᵢ² / Σ rᵢ). 32 streams heard alike
    /// count 32; one stream at 10 Hz beside nine at 1 Hz, 3.3. Like ``lossMean``, it describes
    /// the links as of the last update: when they all go, the prior stays what they lent.
    public var lossLinks: Double {
        guard lossStreamRate > 0 else { return 0 }
        return lossRateWeight / Self.rateMemory / lossStreamRate
    }

    /// The weight, in periods, of ``priorLoss`` in a new periodic stream's loss
    /// (``ReceptionEstimator/priorLossWeight``, ``PeriodicTail/init(_:)``): as much as the
    /// scanner's links have shown that they lose alike, between ``PeriodicTail/scannerPriorFrames``
    /// and ``PeriodicTail/maximumPriorFrames``.
    ///
    /// A link's loss q is taken as drawn from a Beta distribution around the links' mean m: with
    /// weight n, its variance is m(1 − m)/(n + 1). That variance is the spread between links —
    /// the learned losses' variance V less their estimation noise (``lossNoise``), bounded above
    /// by adding twice that estimate's own sampling error, √(2/(L − 1))·V for L links
    /// (``lossLinks``), V at least the noise — plus the uncertainty of m itself, V/L:
    /// n = m(1 − m) / bound. With fewer than
    /// ``minimumLossLinks`` links, or links that differ more than 100 periods' weight says, the
    /// least weight, and then ``priorLoss`` is the cautious mean plus twice the spread.
    /// Measured (issue 15, ninth pass, `eval detection --companions 32`): beacons staying
    /// 60–300 s beside 32 fixed beacons, all at 1 Hz losing 1 %, exit at p50 4.2 s instead of
    /// 4.9 s (p95 5.7 s instead of 5.9 s).
    ///
    /// ```swift
    /// var channel = ScannerChannel()
    /// for second in 0..<120 {   // 32 streams at 1 Hz, each with 1 % learned from 2,000 periods
    ///     for link in 0..<32 { channel.learnLoss(0.01, frames: 2_000, streamRate: 1, at: Timestamp(seconds: Double(second) + Double(link) / 32)) }
    /// }
    /// channel.priorLossWeight   // PeriodicTail.maximumPriorFrames
    /// ```
    public var priorLossWeight: Double { lossPrior?.weight ?? PeriodicTail.scannerPriorFrames }

    /// Links (``lossLinks``) before ``priorLossWeight`` can exceed its least value.
    public static let minimumLossLinks = 8.0

    /// Folds the loss of a settled periodic stream showing no bursts, learned from `frames`
    /// periods, into ``priorLoss``; `streamRate` (the stream's sightings per second) and `time`
    /// count the links behind it (``lossLinks``).
    public mutating func learnLoss(_ loss: Double, frames: Double, streamRate: Double = 0, at time: Timestamp? = nil) {
        guard loss.isFinite, loss >= 0, loss <= 1, frames.isFinite, frames >= 1 else { return }
        lossUpdates = min(lossUpdates + 1, Self.priorMemory)
        lossMean += (loss - lossMean) / lossUpdates
        lossSquares += (loss * loss - lossSquares) / lossUpdates
        lossNoise += (loss * (1 - loss) / frames - lossNoise) / lossUpdates
        if let time, streamRate.isFinite, streamRate > 0 {
            lossRatedUpdates = min(lossRatedUpdates + 1, Self.priorMemory)
            lossStreamRate += (streamRate - lossStreamRate) / lossRatedUpdates
            // exp(0) is 1: no libm call when the time has not moved (several streams heard at
            // once, or a stream's sightings within one timestamp), the same weight to the bit.
            if time > lossRateTime { lossRateWeight *= exp(-(time - lossRateTime) / Self.rateMemory) }
            lossRateWeight += 1
            lossRateTime = max(time, lossRateTime)
        }
    }

    /// Folds a settled stream's tail scale into ``priorScale``.
    public mutating func learnPrior(_ scale: Double) {
        guard scale.isFinite, scale >= 0 else { return }
        priorUpdates = min(priorUpdates + 1, Self.priorMemory)
        let current = priorScale ?? scale
        priorScale = current + (scale - current) / priorUpdates
    }

    /// When the scanner's current silence can be judged, if it cannot be yet at `now`, for a
    /// stream due to exit at `due` (its last sighting plus its silence threshold): the scanner
    /// has heard nothing since ``lastHeard``, before `due` — so a blackout from then on could
    /// have made part of the stream's silence —, and its other streams (the scanner's rate less
    /// `streamRate`, the stream's own) would be silent that long by chance, so such a blackout
    /// could not be told yet (``excusedSilence(from:to:streamRate:offline:)`` counts one only after
    /// ``chanceGaps`` of the others' intervals). `nil` when nothing waits: the scanner was heard
    /// at `now` or at `due` or later (the stream was silent its whole threshold while others were
    /// heard), it has never shown a dark gap (nothing says its silences are blackouts), or the
    /// others are less than ``undecidedOthersShare`` of the stream's own rate: the others' rate is
    /// the scanner's less the stream's, both averaged over ~10 s, and for a stream heard alone
    /// the two differ by that much from its own burstiness (a lone stream's silences are its own:
    /// they are learned, not excused).
    ///
    /// The wait ends at ``lastHeard`` plus ``chanceGaps`` of the others' intervals, and no later
    /// than twice the longest dark gap seen after it. (A first version also held lone streams up
    /// to that bound: on the recording where one beacon walks past four scanners, every silence
    /// of the walker is a "dark gap" of its scanner, and its exits went from 11–15 s to 53–60 s.)
    /// Measured (issue 15, seventh pass): at 10 Hz, 30 % loss with shared blackouts, a beacon
    /// whose scanner heard one other slow stream exited 1.3 s into a 1.1 s blackout; its earlier
    /// blackouts had been excused while more streams were around, so its own tail had never
    /// learned them.
    ///
    /// ```swift
    /// var channel = ScannerChannel()
    /// // … a scanner that has shown a 2 s blackout, and hears 3 sightings/s besides the stream's 8:
    /// channel.undecidedSilence(at: now, due: due, streamRate: 8)   // lastHeard + 5/3 s (≤ lastHeard + 4 s)
    /// ```
    public func undecidedSilence(at now: Timestamp, due: Timestamp, streamRate: Double) -> Timestamp? {
        guard let last = lastHeard, last < now, last < due, longestGap > 0 else { return nil }
        let own = max(streamRate, 0)
        let others = rate(at: last) - own
        guard others > 0, others >= Self.undecidedOthersShare * own else { return nil }
        let until = min(last + Self.chanceGaps / others, last + 2 * longestGap)
        return until > now ? until : nil
    }

    /// The least rate of the other streams, as a share of the stream's own, for which
    /// ``undecidedSilence(at:due:streamRate:)`` holds an exit.
    public static let undecidedOthersShare = 0.25

    /// Seconds of a stream's silence from `lastSighting` to `now` that were the scanner's: the
    /// parts within it of the scanner's dark gaps (and of its current silence, if it is silent
    /// now) through which the other streams, heard at the scanner's rate less `streamRate` (the
    /// stream's own, per second, decaying as it stays silent), were silent for more than
    /// ``chanceGaps`` of their intervals. At most ``excuseLimit``.
    ///
    /// Such a dark gap counts whole once recognised (its first part was the blackout too, only
    /// not yet recognisable), and not at all before — while a silence is too young to tell,
    /// ``undecidedSilence(at:due:streamRate:)`` holds the exit. (Until issue 15's seventh pass
    /// only the part after that delay counted: a stream at a scanner with few other streams
    /// learned every blackout's first ~1.5 s as a burst of its own.)
    ///
    /// The times the scanner said it was offline (``offlineSilence(from:to:)``) are added, up
    /// to ``offlineExcuseLimit`` of their own.
    ///
    /// `offline`: the declared part to add instead (the engine's hold while the scanner is still
    /// away: the whole of ``offlineExcuseLimit``).
    public func excusedSilence(from lastSighting: Timestamp, to now: Timestamp, streamRate: Double, offline: Double? = nil) -> Double {
        guard now > lastSighting else { return 0 }
        var excused = 0.0
        if let last = lastHeard, last < now {
            // The current silence: dark except where the scanner said it was offline (the gaps
            // after its last sighting, and from when it said so if it still is).
            let rate = rate(at: last)
            var (start, paused) = (last, 0.0)
            for gap in gaps where gap.isDeclared && gap.to > last {
                if gap.from > start {
                    Self.credit(Gap(from: start, to: min(gap.from, now), rate: rate), silence: lastSighting..<now, streamRate: streamRate,
                                paused: paused, to: &excused)
                }
                paused += gap.seconds(from: lastSighting, to: now)
                start = max(start, gap.to)
            }
            let end = min(now, max(offlineSince ?? now, start))
            if end > start {
                Self.credit(Gap(from: start, to: end, rate: rate), silence: lastSighting..<now, streamRate: streamRate, paused: paused, to: &excused)
            }
        }
        Self.creditGaps(gaps, silence: lastSighting..<now, streamRate: streamRate, to: &excused)
        return min(excused, excuseLimit) + (offline ?? offlineSilence(from: lastSighting, to: now))
    }

    /// Adds to `excused` the part of `silence` within each of `gaps` (most recent last) that
    /// counts as the scanner's (``excusedSilence(from:to:streamRate:offline:)``), latest gap first;
    /// the times the scanner said it was offline (``Gap/isDeclared``) go to `declared`.
    static func creditGaps(_ gaps: [Gap], silence: Range<Timestamp>, streamRate: Double, to excused: inout Double, declared: inout Double) {
        // The declared time within the silence before each gap (walking back, the declared gaps
        // after it are taken off as they are passed).
        var before = 0.0
        for gap in gaps.reversed() {
            guard gap.to > silence.lowerBound else { break }
            if gap.isDeclared { before += gap.seconds(from: silence.lowerBound, to: silence.upperBound) }
        }
        for gap in gaps.reversed() {
            guard gap.to > silence.lowerBound else { break }
            if gap.isDeclared {
                let seconds = gap.seconds(from: silence.lowerBound, to: silence.upperBound)
                declared += seconds
                before -= seconds
            } else {
                credit(gap, silence: silence, streamRate: streamRate, paused: before, to: &excused)
            }
        }
    }

    /// ``creditGaps(_:silence:streamRate:to:declared:)`` without the declared gaps (counted
    /// apart by ``offlineSilence(from:to:)``).
    static func creditGaps(_ gaps: [Gap], silence: Range<Timestamp>, streamRate: Double, to excused: inout Double) {
        var declared = 0.0
        creditGaps(gaps, silence: silence, streamRate: streamRate, to: &excused, declared: &declared)
    }

    /// Adds to `excused` the part of `silence` (a stream's, from its last sighting to now) within
    /// `gap` when the other streams, heard at `gap.rate` less the stream's own `streamRate`
    /// (decaying from the silence's start), were silent through it for more than ``chanceGaps``
    /// of their intervals.
    /// `paused`: seconds of the silence before `gap` that the scanner said it was offline, which
    /// do not count for that decay (it heard nothing then: after a long absence, a lone stream's
    /// own rate would otherwise read as other streams', and its own silence as the scanner's).
    private static func credit(_ gap: Gap, silence: Range<Timestamp>, streamRate: Double, paused: Double = 0, to excused: inout Double) {
        let own = max(streamRate, 0) * exp(-max(0, gap.from - silence.lowerBound - paused) / rateMemory)
        let others = gap.rate - own
        guard others > 0 else { return }
        guard min(gap.to, silence.upperBound) - gap.from > chanceGaps / others else { return }
        let start = max(gap.from, silence.lowerBound)
        let end = min(gap.to, silence.upperBound)
        if end > start { excused += end - start }
    }
}
