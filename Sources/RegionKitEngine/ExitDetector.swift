import RegionKitCore
import Foundation

/// Decides when a beacon stream that has gone silent is gone: the exit-timing policy.
///
/// ```swift
/// // Core Location: 30 s of silence, noticed on a 10 s evaluation grid → exits 30–40 s after the last sighting.
/// let ios = ExitDetector.fixedSilence(seconds: 30, evaluationInterval: 10)
/// // Silence improbable (p < 1e-4) under the stream's own mean reception rate.
/// let poisson = ExitDetector.adaptive(falseExitProbability: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
/// // Responsive: silence improbable under the stream's learned gap distribution, at most
/// // 1 false exit per 10,000 stream-hours.
/// let fast = ExitDetector.learnedGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
/// ```
public enum ExitDetector: Hashable, Sendable, Codable {
    /// Gone after `seconds` without a sighting; when `evaluationInterval` is set the decision is
    /// only taken on a grid of that period from the region's registration, as iOS appears to do.
    case fixedSilence(seconds: Double, evaluationInterval: Double?)
    /// Gone when a silence this long has probability below `falseExitProbability` under the
    /// stream's learned reception rate (sightings modelled as a Poisson process with the stream's
    /// mean interval m: P(silence ≥ s) = e^(−s/m), so s = m · ln(1/p)), clamped to
    /// `minimumSilence...maximumSilence`. `priorInterval` seeds m before any interval is seen.
    case adaptive(falseExitProbability: Double, minimumSilence: Double, maximumSilence: Double, priorInterval: Double)
    /// Gone when a silence this long would come at most `falseExitsPerHour` times per hour of a
    /// stream that is still there, under the stream's learned gap distribution (``ReceptionEstimator``),
    /// clamped to `minimumSilence...maximumSilence`, with the uncertainty of the stream's short
    /// history and the bursts its scanner's other streams have shown. `priorInterval` seeds the
    /// mean interval (as one interval). See ``silenceThreshold(for:)`` for the model.
    case learnedGaps(falseExitsPerHour: Double, minimumSilence: Double, maximumSilence: Double, priorInterval: Double)
    /// ``learnedGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)`` with three
    /// more models (the default of ``MonitoringProfile/responsive``):
    /// - a **periodic** stream (``ReceptionEstimator/isPeriodic``) gets the geometric tail of its
    ///   learned loss per period (``PeriodicTail``) unless its tail has shown bursts;
    /// - a silence **shared** by every stream of a scanner is the scanner's (a blackout), not a
    ///   departure: it is excused (``ScannerChannel``) — the exit waits, and the stream does not
    ///   learn the blackout as one of its own gaps;
    /// - a **new** stream starts from what the other streams of its scanner have shown
    ///   (``ScannerChannel/priorScale``) rather than from a cautious prior for ~10 s.
    /// The decision stays: a silence this long would come at most `falseExitsPerHour` times per
    /// hour of a stream that is still there.
    case periodicGaps(falseExitsPerHour: Double, minimumSilence: Double, maximumSilence: Double, priorInterval: Double)
    /// The learned-gap detector as it was before new streams were given a principled bound (the
    /// reference for measurements, `--profile cautiousprior`): a new stream's tail scale is the
    /// prior interval fading as 30/(30 + n) over its first n intervals and no faster than
    /// 10/(10 + t) over its first t seconds, whatever its scanner's other streams show — a 10 Hz
    /// stream heard 2.5 s exits ~13 s after it stops — and its mean interval counts as exact.
    case cautiousGaps(falseExitsPerHour: Double, minimumSilence: Double, maximumSilence: Double, priorInterval: Double)
    /// Experimental (`--profile evidence`, issue 15 items 3 and 4):
    /// ``learnedGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)`` with two
    /// more kinds of evidence about a silence (``ReceptionEstimator/evidenceFactor``):
    /// - the stream was **fading** at its last sighting (its RSSI trend falling, significant against
    ///   its own spread): the rate of such silences is the rate of fading sightings followed by a
    ///   long gap, both learned per stream, so a departing beacon that walked away exits earlier;
    ///   a steady one is unchanged;
    /// - the beacon was **heard elsewhere**, at least as strongly, by another scanner during the
    ///   silence (scanner-bound regions only: an unbound region is still inside): the rate is
    ///   scaled by the share of this stream's long silences it came back from despite that.
    case evidenceGaps(falseExitsPerHour: Double, minimumSilence: Double, maximumSilence: Double, priorInterval: Double)

    /// The prior mean interval new streams start from.
    public var priorInterval: Double {
        switch self {
        case .fixedSilence(let seconds, _): seconds
        case .adaptive(_, _, _, let prior), .learnedGaps(_, _, _, let prior), .periodicGaps(_, _, _, let prior),
             .cautiousGaps(_, _, _, let prior), .evidenceGaps(_, _, _, let prior): prior
        }
    }

    /// The silence, in seconds, after which `stream` counts as gone.
    ///
    /// For ``learnedGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)`` the
    /// intervals between sightings are modelled as a body (up to u = 3 m, m the mean interval) and
    /// an exponential tail beyond u (peaks over a threshold): a share f of the intervals reach the
    /// tail and their excess over u has scale e, so P(interval > s) = f · e^(−(s − u)/e). The
    /// stream sends 3600/m intervals an hour, of which λ = f · 3600/m reach the tail; a silence s
    /// is then exceeded λ · e^(−(s − u)/e) times an hour. Setting that to the target rate r:
    ///
    ///     s = u + e · ln(λ / r)
    ///
    /// The scale e is the largest of:
    /// - the mean interval m, the scale if sightings were a Poisson process. Independent losses
    ///   on a fixed advertising interval give a geometric tail, lighter than that, so for them m
    ///   is a safe scale and the learned tail share f already captures how light the tail is;
    /// - the tail's learned scale (``ReceptionEstimator/tailScale``: the mean or, if larger, the
    ///   spread of the excesses), once it exceeds m by more than its relative uncertainty 1/√k
    ///   after k tail intervals, plus a margin of 1/√k times the part of it beyond m: bursts make
    ///   the tail heavier than m predicts, and a scale learned from few bursts is uncertain (but
    ///   a few long-ish gaps of an independent-loss stream do not count as bursts);
    /// - bursts a new stream cannot have shown yet: the tail scale its scanner's other settled
    ///   streams have shown (``ReceptionEstimator/priorScale``, 0 when they show no bursts),
    ///   fading as 30/(30 + n) over the first n intervals and no faster than 10/(10 + t) over the
    ///   first t seconds (bursts come on their own time scale, a person passing, a Wi-Fi burst,
    ///   whatever the advertising rate, hence the seconds). Nothing when the scanner has no such
    ///   evidence: then the stream's own history decides;
    ///
    /// and, at such a scanner, the mean interval m is used with its uncertainty
    /// (`meanUncertainty(logRatio:intervals:)`): the scale is m · g with g = (e^y − 1)/y,
    /// y = ln(λ/r)/ν, for a rate known from ν = n + 1 intervals — the Poisson tail's predictive
    /// exceedance, so the decision "less than once per 10,000 stream-hours" holds for the rate as
    /// known, and tightens as the history grows: a 10 Hz stream heard 2.5 s ≈ 3.3 s (the fixed
    /// prior of ``cautiousGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``
    /// gave ≈ 13 s), 10 s ≈ 2.1 s. The widened scale is capped by the fixed prior's fading scale
    /// (or m if larger): a ~1 Hz stream heard three times keeps the old bound instead of the
    /// 60 s cap its three intervals alone would give, and a stream older than ~10 minutes uses m
    /// as exact, as before. A scanner without a settled stream (≥ 30 intervals and ≥ 60 s,
    /// ``ScannerChannel/settledSeconds``) has shown nothing about bursts: its new streams keep
    /// the cautious fixed prior (measured: without that, stationary beacons switched on together
    /// under shared 1 s blackouts had 25 false exits in 20 h in their first minutes).
    ///
    /// The tail share is floored at 1/2000 (what its memory can resolve). The silence is never
    /// shorter than the longest interval seen recently (forgotten e-fold per hour), so a tail
    /// heavier than exponential that has already shown itself is respected.
    ///
    /// With the defaults of ``MonitoringProfile/responsive`` (r = 1e-4/h): 10 Hz at 30 %
    /// independent loss ≈ 2.6 s; 1 Hz at 30 % ≈ 22 s; 10 Hz with 1 s blackouts every 7 s ≈ 16 s.
    ///
    /// ``cautiousGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)`` (the
    /// reference) and ``periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``
    /// take m as exact and, for new streams, the prior interval (or, with periodicGaps, the
    /// scanner's prior scale when it has one) with the same fading, whatever the scanner shows.
    ///
    /// With ``periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``, a
    /// periodic stream that has not shown bursts beyond its geometric tail
    /// (``PeriodicTail/showsBursts(tailIntervals:intervals:tailStart:)``; one that has is modelled
    /// as any other stream) gets as silence the largest of its geometric tail (``PeriodicTail``), the
    /// burst scale above when its tail has shown bursts, and a prior: the stream's
    /// ``ReceptionEstimator/priorScale`` (what its scanner's settled streams have shown) fading
    /// over its first 10 intervals and 2 s, or, at a scanner without a settled stream, the
    /// cautious prior interval fading as above (30 intervals, 10 s). Other streams use the model
    /// above, with the scanner's prior too.
    public func silenceThreshold(for stream: ReceptionEstimator) -> Double {
        let priorScale = stream.priorScale
        switch self {
        case .fixedSilence(let seconds, _):
            return seconds
        case .adaptive(let probability, let minimum, let maximum, _):
            let p = min(max(probability, 1e-12), 0.5)
            return min(max(stream.meanInterval * log(1 / p), minimum), maximum)
        case .learnedGaps(let rate, let minimum, let maximum, let prior), .periodicGaps(let rate, let minimum, let maximum, let prior),
             .cautiousGaps(let rate, let minimum, let maximum, let prior), .evidenceGaps(let rate, let minimum, let maximum, let prior):
            let mean = max(stream.meanInterval, 1e-6)
            let intervals = Double(stream.intervals)
            let tail = Double(stream.tailIntervals)
            // The learned tail scale counts once it exceeds the Poisson scale by more than its own
            // uncertainty (1/√k), and then with that margin added to the part beyond it.
            let tailScale = stream.tailScale
            let root = min(tail, ReceptionEstimator.tailExcessMemory).squareRoot()
            let learned = tail > 0 && tailScale > mean * (1 + 1 / root) ? tailScale + (tailScale - mean) / root : 0
            let age = stream.lastSighting - stream.firstSighting
            // evidenceGaps: the rate of silences like this one (after a fading sighting, with the
            // beacon heard elsewhere), not of every silence: the tail share times the evidence.
            let evidence = usesEvidence ? stream.evidenceFactor : 1
            let share = max(stream.tailShare, 1 / ReceptionEstimator.tailShareMemory) * evidence
            let tailPerHour = share * 3600 / mean
            let start = ReceptionEstimator.tailStart * mean
            let logRatio = log(max(tailPerHour / max(rate, 1e-12), 1))
            let silence: Double
            let fade = max(Self.priorIntervals / (Self.priorIntervals + intervals), Self.priorSeconds / (Self.priorSeconds + age))
            if usesChannels, let periodic = PeriodicTail(stream), !Self.isBursty(stream, periodic, tailStart: start),
               let geometric = periodic.silence(sightingsPerHour: 3600 / mean, falseExitsPerHour: rate) {
                // A periodic stream: the geometric tail of its learned loss, unless its tail has
                // shown itself heavier (bursts), or its scanner's streams have (the prior).
                // Its scanner's settled streams have shown their tails: their scale, fading fast.
                // None yet: nothing is known about the channel's bursts, the cautious prior.
                let fading = priorScale.map { $0 * max(Self.periodicPriorIntervals / (Self.periodicPriorIntervals + intervals),
                                                       Self.periodicPriorSeconds / (Self.periodicPriorSeconds + age)) }
                    ?? prior * fade
                let heavy = learned > 0 ? start + learned * logRatio : 0
                silence = max(geometric, heavy, start + fading * logRatio)
            } else if usesChannels || usesCautiousPrior || priorScale == nil {
                // (learnedGaps: its scanner has no settled stream yet, no evidence either way
                // about bursts: the cautious prior.)
                let fading = (usesChannels ? priorScale ?? prior : prior) * fade
                silence = start + max(learned, mean, fading) * logRatio
            } else {
                // learnedGaps at a scanner whose settled streams (≥ 30 intervals and ≥ 60 s) have
                // shown their tails: the mean interval with the uncertainty of the stream's
                // history, and bursts the stream cannot have shown yet at the scale those streams
                // show (0 when calm), worth ~30 intervals or ~10 s of the stream's own evidence.
                // The widening is capped by the previous detector's fading prior (prior interval ×
                // fade, or the mean if larger): a stream heard only a few times at ~1 Hz keeps the
                // old bound instead of the cap of 60 s its three intervals alone would give.
                // The uncertainty factor is at least 1: with the cap at the mean, the mean (without
                // the factor's `expm1`: every stream once its prior has faded below its mean).
                let cap = max(mean, prior * fade)
                let poisson = cap == mean ? mean : min(mean * Self.meanUncertainty(logRatio: logRatio, intervals: intervals), cap)
                let fading = (priorScale ?? 0) * fade
                silence = start + max(learned, poisson, fading) * logRatio
            }
            return min(max(silence, stream.longestInterval, minimum), maximum)
        }
    }

    /// The scale of `stream`'s tail as a prior for other streams of its scanner: its learned
    /// (burst) scale when its tail has shown itself heavier than its mean interval, else, with
    /// ``periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``, the
    /// scale its own model uses (the geometric scale T / ln(1/q) of a periodic stream showing no bursts, the mean
    /// interval otherwise) and, with ``learnedGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``,
    /// 0 (no bursts shown: the scanner's prior is the scale of the bursts its streams show,
    /// averaged over calm and bursty streams alike). `nil` for the other detectors.
    public func tailScale(of stream: ReceptionEstimator) -> Double? {
        streamPrior(of: stream)?.scale
    }

    /// What `stream` lends its scanner's prior (``StreamPrior``): ``tailScale(of:)`` and, with
    /// ``periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``, the loss
    /// of a periodic stream whose tail shows no bursts; `nil` for detectors without a scanner
    /// prior.
    public func streamPrior(of stream: ReceptionEstimator) -> StreamPrior? {
        guard usesScannerPrior else { return nil }
        let mean = max(stream.meanInterval, 1e-6)
        let tail = Double(stream.tailIntervals)
        let tailScale = stream.tailScale
        let root = min(tail, ReceptionEstimator.tailExcessMemory).squareRoot()
        if tail > 0 && tailScale > mean * (1 + 1 / root) { return StreamPrior(scale: tailScale + (tailScale - mean) / root) }
        // Its own bursts only (not ``isBursty(_:_:tailStart:)``): the scanner's prior must not
        // feed on itself. (Its loss as learned alone, without the scanner's prior, for the same reason.)
        if usesChannels, let periodic = PeriodicTail(stream),
           !periodic.showsBursts(tailIntervals: stream.tailIntervals, intervals: stream.intervals,
                                 tailStart: ReceptionEstimator.tailStart * mean) {
            return StreamPrior(scale: Self.geometricScale(of: stream), loss: stream.periodicLoss, frames: stream.periodicFrames, rate: 1 / mean)
        }
        // learnedGaps: the prior is the scale of bursts, and a stream that has shown none adds 0.
        return StreamPrior(scale: usesChannels ? mean : 0)
    }

    /// The e-folding scale of a periodic stream's geometric tail, T / ln(1/q), seconds.
    static func geometricScale(of stream: ReceptionEstimator) -> Double {
        let loss = min(max(stream.periodicLoss, 0.5 / max(stream.periodicFrames, 1)), 0.999)
        return stream.period / -log(loss)
    }

    /// Whether a periodic stream's silences are not geometric (``periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``
    /// then models it as any other stream): it has shown bursts its learned loss does not explain
    /// (``PeriodicTail/showsBursts(tailIntervals:intervals:tailStart:)``), or its scanner's
    /// settled streams have — their tail scale (``ReceptionEstimator/priorScale``) more than
    /// ``burstyPriorRatio`` times this stream's geometric scale. Bursts that are not shared
    /// (a link's own blackouts) are rare per stream, but a property of the place: at 1 Hz, 1 %
    /// loss in per-link 1 s blackouts, streams waiting for their own second burst had 103 false
    /// exits per 1000 beacon-hours (issue 15, seventh pass). Shared blackouts are excused and
    /// leave the tails calm, so they do not count here.
    static func isBursty(_ stream: ReceptionEstimator, _ periodic: PeriodicTail, tailStart: Double) -> Bool {
        if periodic.showsBursts(tailIntervals: stream.tailIntervals, intervals: stream.intervals, tailStart: tailStart) { return true }
        guard let prior = stream.priorScale else { return false }
        return prior > burstyPriorRatio * geometricScale(of: stream)
    }

    /// How much heavier than a periodic stream's own geometric tail its scanner's prior must be
    /// for the stream to count as bursty.
    static let burstyPriorRatio = 1.5

    /// The stream for a sighting at `time` of a beacon whose stream was declared gone
    /// (`departed`, when the region exited with it).
    ///
    /// With ``learnedGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``, a
    /// stream heard again within twice its silence threshold was not gone: the exit was false. It
    /// resumes with everything learned about it and the silence recorded as one of its intervals,
    /// so a silence of that length is expected next time (a scanner pausing 3 s every 20 s exits
    /// once, not every 20 s). Anything later is a new arrival and starts a new stream, as it
    /// always does with the other detectors.
    ///
    /// ```swift
    /// let stream = detector.stream(resuming: departed, at: now, rssi: -70)
    /// ```
    public func stream(resuming departed: ReceptionEstimator?, at time: Timestamp, rssi: Int?) -> ReceptionEstimator {
        if isLearned, var stream = departed,
           time - stream.lastSighting <= max(2 * silenceThreshold(for: stream), usesChannels ? Self.resumeWindow : 0) {
            if usesEvidence { stream.startTrackingEvidence() }
            stream.record(at: time, rssi: rssi)
            return stream
        }
        return ReceptionEstimator(firstSighting: time, priorInterval: priorInterval, rssi: rssi, tracksEvidence: usesEvidence)
    }

    /// Whether this detector learns each stream's gaps (``learnedGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``
    /// or ``periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``).
    public var isLearned: Bool {
        switch self {
        case .learnedGaps, .periodicGaps, .cautiousGaps, .evidenceGaps: true
        default: false
        }
    }

    /// Whether new streams take their scanner's prior (``ScannerChannel/priorScale``: the tail
    /// scale its settled streams have learned) as the scale of bursts they cannot have shown yet
    /// (``learnedGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)`` and
    /// ``periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``).
    public var usesScannerPrior: Bool {
        switch self {
        case .learnedGaps, .periodicGaps, .evidenceGaps: true
        default: false
        }
    }

    /// Whether this is the reference detector with the cautious fixed prior for new streams
    /// (``cautiousGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``).
    public var usesCautiousPrior: Bool {
        if case .cautiousGaps = self { return true }
        return false
    }

    /// Whether this detector uses the periodic model and the scanners' channels
    /// (``periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``).
    public var usesChannels: Bool {
        if case .periodicGaps = self { return true }
        return false
    }

    /// Whether this detector uses the RSSI trend and other scanners as evidence
    /// (``evidenceGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``).
    public var usesEvidence: Bool {
        if case .evidenceGaps = self { return true }
        return false
    }

    /// The longest silence this detector waits for (the cap on excused shared silences).
    public var maximumSilence: Double {
        switch self {
        case .fixedSilence(let seconds, _): seconds
        case .adaptive(_, _, let maximum, _), .learnedGaps(_, _, let maximum, _), .periodicGaps(_, _, let maximum, _),
             .cautiousGaps(_, _, let maximum, _), .evidenceGaps(_, _, let maximum, _): maximum
        }
    }

    /// How much the Poisson scale m must grow so that the silence threshold holds for the mean
    /// interval *as known from the stream's history*, not as if m were exact.
    ///
    /// The stream's rate 1/m is known from n intervals (its running mean seeds with the prior
    /// interval as one more, then turns into an exponentially weighted mean worth ≈ 199
    /// intervals): with a Gamma posterior of shape ν = min(n + 1, 199) and mean 1/m, the predictive
    /// tail of an interval's excess x is the Lomax (1 + x/(ν·m))^−ν instead of e^(−x/m). Setting
    /// λ · (1 + x/(ν·m))^−ν = r gives x = ν·m·(e^(L/ν) − 1) with L = ln(λ/r): the scale m times
    ///
    ///     g = (e^y − 1) / y,   y = L / ν
    ///
    /// — 1 for a long history, about 1.4 after 2.5 s at 10 Hz (ν ≈ 26, L ≈ 16), very large after
    /// a few sightings (then the maximum silence rules). The bound tightens as intervals come in.
    static func meanUncertainty(logRatio: Double, intervals: Double) -> Double {
        let samples = min(max(intervals, 0) + 1, meanSampleCeiling)
        let y = min(max(logRatio, 0) / samples, 50)
        guard y > 1e-9 else { return 1 }
        return expm1(y) / y
    }

    /// The effective number of intervals behind a settled stream's mean interval: its weight
    /// floor α = 0.01 averages like (2 − α)/α ≈ 199 independent intervals.
    static let meanSampleCeiling = 199.0

    /// Intervals over which the prior interval's weight as a tail scale halves.
    static let priorIntervals = 30.0
    /// Seconds of stream over which the prior interval's weight as a tail scale halves.
    static let priorSeconds = 10.0
    /// ``periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``: a stream
    /// heard again within this many seconds of its exit (or twice its threshold) resumes, so a
    /// fast-exiting stream still learns the blackout that made it exit.
    static let resumeWindow = 10.0
    /// Periodic streams: intervals over which the prior's weight halves.
    static let periodicPriorIntervals = 10.0
    /// Periodic streams: seconds over which the prior's weight halves.
    static let periodicPriorSeconds = 2.0

    /// When `stream` will count as gone if nothing more is heard.
    /// - Parameter gridOrigin: origin of the evaluation grid (the region's registration time).
    /// The stream's ``ReceptionEstimator/excusedSilence`` is added: with detectors that
    /// ``usesChannels``, a blackout of its whole scanner, up to the maximum silence; with every
    /// detector, the time its scanner said it was offline, up to
    /// ``ScannerChannel/offlineExcuseLimit`` more.
    public func goneDeadline(for stream: ReceptionEstimator, gridOrigin: Timestamp) -> Timestamp {
        let threshold = silenceThreshold(for: stream)
        // (Almost always 0: no `min` of a cap computed for nothing on every sighting.)
        let excused = stream.excusedSilence > 0
            ? min(stream.excusedSilence, (usesChannels ? max(maximumSilence - threshold, 0) : 0) + ScannerChannel.offlineExcuseLimit) : 0
        let raw = stream.lastSighting + threshold + excused
        guard case .fixedSilence(_, let interval?) = self, interval > 0 else { return raw }
        let steps = ((raw - gridOrigin) / interval).rounded(.up)
        return gridOrigin + max(0, steps) * interval
    }
}
