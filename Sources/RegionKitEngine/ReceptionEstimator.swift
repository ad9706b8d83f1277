import RegionKitCore
import Foundation

/// What the engine knows about one sighting stream (one beacon identity at one scanner): when it
/// was last heard, how often it is heard, and how long its silences get.
///
/// Two views of the intervals between sightings are kept, both as plain numbers:
/// - the **mean interval**, a running mean seeded with a prior, turning into an exponentially
///   weighted mean (weight floor 0.01, ≈ the last 100 intervals) once enough samples exist;
/// - the **tail**: intervals longer than ``tailStart`` mean intervals. Their share of all
///   intervals (a running mean seeded with e⁻³, what exponential intervals would give, worth
///   ``tailSharePriorWeight`` intervals, then ≈ the last 2,000 intervals) and their mean excess
///   over that start (≈ the last 100 such intervals). Bursty losses show up here as a share and an
///   excess far above what the mean interval predicts.
/// - the longest recent interval, forgotten e-fold per hour of stream time;
/// - the **periodic** view: most streams come from a transmitter with a fixed advertising
///   interval (or a gateway reporting on a fixed period), so intervals fall on multiples k·T of a
///   base period T. The period is learned from the intervals on that grid, the share of intervals
///   on it says whether the stream is periodic, and the mean k gives the loss per period,
///   q = 1 − 1/E[k] (``periodicLoss``).
///
/// ``ExitDetector`` turns these into a silence threshold.
///
/// ```swift
/// var stream = ReceptionEstimator(firstSighting: Timestamp(seconds: 0), priorInterval: 1)
/// stream.record(at: Timestamp(seconds: 0.1))
/// stream.meanInterval // 0.55: halfway from the prior to the first interval
/// stream.intervals    // 1
/// ```
public struct ReceptionEstimator: Hashable, Sendable, Codable {
    // Storage (issue 13, memory per tracked beacon): 8-byte fields first, then the narrow counts
    // and flags, so the record is 128 bytes; the evidence detector's state (RSSI trend, fading,
    // other scanners: ``ReceptionEvidence``) lives out of line and only for streams that track it.
    public private(set) var firstSighting: Timestamp
    public private(set) var lastSighting: Timestamp
    /// Estimated mean time between sightings, in seconds.
    public private(set) var meanInterval: Double
    /// Estimated share of intervals longer than ``tailStart`` × the mean interval.
    public private(set) var tailShare: Double
    /// Mean excess, in seconds, of those long intervals over ``tailStart`` × the mean interval
    /// (0 until one is seen).
    public private(set) var tailExcess: Double
    /// Mean squared excess of those long intervals, seconds² (for their spread).
    public private(set) var tailExcessSquares: Double
    /// The longest interval seen, decaying e-fold per ``longestIntervalMemory`` seconds of stream time.
    public private(set) var longestInterval: Double
    /// The learned base period T, seconds (0 before the first interval).
    public private(set) var period: Double
    /// Share of the intervals (running mean, then ≈ the last ``periodMemory``) that fall on the
    /// period's grid: within ±``gridTolerance`` periods of a whole number k ≥ 1 of periods.
    public private(set) var onGridShare: Double
    /// Mean number of periods k per on-grid interval (1 = nothing lost).
    public private(set) var periodsPerInterval: Double
    /// Seconds of the current silence excused as the scanner's own (a blackout shared by every
    /// stream it hears, see ``ScannerChannel``): the exit deadline moves that much later, and the
    /// interval that ends the silence is recorded without them. Reset by every sighting.
    public var excusedSilence: Double
    /// ``priorScale``'s value when ``Flags/hasPriorScale`` is set.
    private var priorScaleValue: Double
    /// The evidence detector's state: one element when the stream tracks it, none otherwise (an
    /// empty array allocates nothing).
    var evidenceStorage: [ReceptionEvidence]
    /// ``sightings``, saturating at `UInt32.max`.
    private var sightingCount: UInt32
    /// ``tailIntervals``, saturating.
    private var tailIntervalCount: UInt32
    /// ``periodIntervals``, saturating.
    private var periodIntervalCount: UInt32
    /// ``priorLoss``'s value when ``Flags/hasPriorLoss`` is set.
    private var priorLossValue: Float
    /// ``gridIntervals``: a whole number in 0...``lossMemory``.
    private var gridIntervalCount: UInt16
    /// ``lastRSSI``'s value when ``Flags/hasRSSI`` is set (clamped to `Int16`: received powers
    /// are tens of dBm; with the fields above the stream stays 128 bytes).
    private var lastRSSIValue: Int16
    private var flags: Flags
    /// ``priorLossWeight`` in whole periods (0 with no ``priorLoss``).
    private var priorLossWeightValue: UInt16

    /// Which optional values are present.
    struct Flags: OptionSet, Hashable, Sendable, Codable {
        var rawValue: UInt8
        static let hasRSSI = Flags(rawValue: 1)
        static let hasPriorScale = Flags(rawValue: 2)
        static let hasPriorLoss = Flags(rawValue: 4)
    }

    /// Sightings recorded, including the first (saturating at 2³² − 1).
    public var sightings: Int { Int(sightingCount) }
    /// RSSI of the last sighting, dBm.
    public var lastRSSI: Int? {
        get { flags.contains(.hasRSSI) ? Int(lastRSSIValue) : nil }
        set {
            if let newValue { lastRSSIValue = Int16(clamping: newValue); flags.insert(.hasRSSI) } else { lastRSSIValue = 0; flags.remove(.hasRSSI) }
        }
    }
    /// Long intervals seen (beyond ``tailStart`` × the mean interval).
    public var tailIntervals: Int { Int(tailIntervalCount) }
    /// On-grid intervals behind ``periodsPerInterval`` (counted up to ``lossMemory``).
    public var gridIntervals: Double { Double(gridIntervalCount) }
    /// Intervals behind ``onGridShare`` since the period was last re-seeded.
    public var periodIntervals: Int { Int(periodIntervalCount) }
    /// The tail scale this stream's scanner had learned from its other streams when the stream
    /// was last heard (``ScannerChannel/priorScale``), the prior it starts from; `nil` = the
    /// detector's own prior.
    public var priorScale: Double? {
        get { flags.contains(.hasPriorScale) ? priorScaleValue : nil }
        set {
            if let newValue { priorScaleValue = newValue; flags.insert(.hasPriorScale) } else { priorScaleValue = 0; flags.remove(.hasPriorScale) }
        }
    }
    /// The frame loss this stream's scanner had learned from its settled periodic streams when
    /// the stream was last heard (``ScannerChannel/priorLoss``): the prior its own periodic loss
    /// is learned from (``PeriodicTail/init(_:)``); `nil` = none. Kept as a `Float`.
    public var priorLoss: Double? {
        get { flags.contains(.hasPriorLoss) ? Double(priorLossValue) : nil }
        set { setPriorLoss(newValue, weight: PeriodicTail.scannerPriorFrames) }
    }
    /// The weight of ``priorLoss`` in periods (``ScannerChannel/priorLossWeight``): how many of
    /// its own periods the stream's loss is learned against. Kept in whole periods, at most
    /// 65,535; ``PeriodicTail/scannerPriorFrames`` when no weight was given.
    public var priorLossWeight: Double {
        priorLossWeightValue == 0 ? PeriodicTail.scannerPriorFrames : Double(priorLossWeightValue)
    }

    /// Sets ``priorLoss`` and its ``priorLossWeight`` (`nil`: no prior).
    public mutating func setPriorLoss(_ loss: Double?, weight: Double) {
        if let loss, loss.isFinite {
            priorLossValue = Float(min(max(loss, 0), 1))
            flags.insert(.hasPriorLoss)
            priorLossWeightValue = weight.isFinite ? UInt16(min(max(weight.rounded(), 1), Double(UInt16.max))) : 0
        } else {
            priorLossValue = 0
            flags.remove(.hasPriorLoss)
            priorLossWeightValue = 0
        }
    }
    /// Whether the stream keeps the evidence detector's state (``ReceptionEvidence``: the RSSI
    /// trend, fading, sightings elsewhere). Streams of other detectors do not: it is never read.
    public var tracksEvidence: Bool { !evidenceStorage.isEmpty }

    /// Where the tail starts, in mean intervals.
    public static let tailStart = 3.0
    /// How many intervals the prior tail share (e⁻³) is worth.
    public static let tailSharePriorWeight = 20.0
    /// Intervals the tail share averages over once warmed up.
    public static let tailShareMemory = 2_000.0
    /// Long intervals the tail excess averages over once warmed up.
    public static let tailExcessMemory = 100.0
    /// Seconds over which the longest interval is forgotten (e-fold).
    public static let longestIntervalMemory = 3_600.0
    /// Intervals the on-grid share and the period average over once warmed up.
    public static let periodMemory = 200.0
    /// Intervals the loss per period averages over once warmed up.
    public static let lossMemory = 2_000.0
    /// How far from a whole number of periods an interval may be and still be on the grid.
    public static let gridTolerance = 0.25
    /// Intervals longer than this many periods are not checked against the grid (jitter adds up).
    public static let gridReach = 50.0
    /// On-grid share from which a stream counts as periodic.
    public static let periodicShare = 0.9
    /// Intervals a stream must show before it can count as periodic.
    public static let periodicEvidence = 20
    /// Intervals shorter than this many periods are duplicates (ignored by the periodic view).
    public static let duplicateRatio = 0.2

    /// - Parameter tracksEvidence: keep the evidence detector's state (``ReceptionEvidence``);
    ///   the engine sets it only for ``ExitDetector/usesEvidence`` detectors.
    public init(firstSighting: Timestamp, priorInterval: Double, rssi: Int? = nil, tracksEvidence: Bool = true) {
        self.firstSighting = firstSighting
        self.lastSighting = firstSighting
        self.meanInterval = priorInterval
        self.tailShare = exp(-Self.tailStart)
        self.tailExcess = 0
        self.tailExcessSquares = 0
        self.longestInterval = 0
        self.period = 0
        self.onGridShare = 0
        self.periodsPerInterval = 1
        self.excusedSilence = 0
        self.priorScaleValue = 0
        self.lastRSSIValue = 0
        self.evidenceStorage = tracksEvidence ? [ReceptionEvidence()] : []
        self.sightingCount = 1
        self.tailIntervalCount = 0
        self.periodIntervalCount = 0
        self.priorLossValue = 0
        self.gridIntervalCount = 0
        self.flags = []
        self.priorLossWeightValue = 0
        self.lastRSSI = rssi
        if tracksEvidence, let rssi { recordTrend(rssi: Double(rssi), after: 0) }
    }

    /// Starts keeping the evidence detector's state from its prior (a stream created under
    /// another detector, heard after the profile switched to ``ExitDetector/evidenceGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``).
    public mutating func startTrackingEvidence() {
        if evidenceStorage.isEmpty { evidenceStorage = [ReceptionEvidence()] }
    }

    /// The scale of the tail: the larger of the mean and the standard deviation of the long
    /// intervals' excess (equal for an exponential tail; the deviation is the e-folding scale of
    /// the geometric tail that independent losses on a fixed interval give, where the mean is not).
    public var tailScale: Double {
        max(tailExcess, max(tailExcessSquares - tailExcess * tailExcess, 0).squareRoot())
    }

    /// Intervals recorded (sightings − 1).
    public var intervals: Int { sightings - 1 }

    /// Whether the stream has shown a fixed period: at least ``periodicEvidence`` intervals on the
    /// current period's grid, and ``periodicShare`` of all recent intervals on a grid.
    public var isPeriodic: Bool {
        periodIntervals >= Self.periodicEvidence && gridIntervals >= Double(Self.periodicEvidence)
            && onGridShare >= Self.periodicShare && period > 0
    }

    /// The share of periods without a sighting, 1 − 1/E[k] (0 before any on-grid interval).
    public var periodicLoss: Double {
        min(max(1 - 1 / max(periodsPerInterval, 1), 0), 1)
    }

    /// Periods (sent frames) behind ``periodicLoss``.
    public var periodicFrames: Double { gridIntervals * max(periodsPerInterval, 1) }

    /// Records a sighting at `time` (times earlier than the last one are treated as simultaneous).
    /// `excused` seconds of the silence it ends were the scanner's (shared blackout): the interval
    /// is recorded without them; it does not count for the period's grid, but its periods outside
    /// the blackout count for the loss (`recordExcusedPeriods(_:)`).
    public mutating func record(at time: Timestamp, rssi: Int? = nil, excused: Double = 0) {
        let raw = max(0, time - lastSighting)
        let interval = max(0, raw - max(excused, 0))
        if excused <= 0 { recordPeriod(interval) } else { recordExcusedPeriods(interval) }
        excusedSilence = 0
        let start = Self.tailStart * meanInterval
        let inTail = interval > start
        let shareWeight = max(1 / (Double(sightings) + Self.tailSharePriorWeight), 1 / Self.tailShareMemory)
        tailShare += shareWeight * ((inTail ? 1 : 0) - tailShare)
        if tracksEvidence { recordEvidence(inTail: inTail) }
        if inTail {
            if tailIntervalCount < .max { tailIntervalCount += 1 }
            let excessWeight = max(1 / Double(tailIntervalCount), 1 / Self.tailExcessMemory)
            let excess = interval - start
            tailExcess += excessWeight * (excess - tailExcess)
            tailExcessSquares += excessWeight * (excess * excess - tailExcessSquares)
        }
        longestInterval = max(interval, longestInterval * exp(-interval / Self.longestIntervalMemory))
        let weight = max(1 / Double(sightings + 1), 0.01)
        meanInterval += weight * (interval - meanInterval)
        if tracksEvidence { recordTrend(rssi: rssi.map(Double.init), after: raw) }
        if time > lastSighting { lastSighting = time }
        if sightingCount < .max { sightingCount += 1 }
        if let rssi { lastRSSI = rssi }
    }

    /// Updates the loss per period with an interval part of which was a shared blackout, excused:
    /// `interval` is what is left of it, the periods the stream's own link had to lose.
    ///
    /// Leaving such intervals out (as before) biased the loss low: a long run of the link's own
    /// losses is more likely to meet a blackout than a short one, so dropping the intervals that
    /// met one drops the long runs (length-biased sampling). Measured in `eval detection` at 1 s,
    /// 50 % loss with shared blackouts: a learned loss of ≈ 0.26 where the link lost 1/3 between
    /// blackouts, and false exits after 13 missed frames. The interval is off the grid (the
    /// blackout's edges are not on it), so it counts as the nearest whole number of periods,
    /// at least one, and moves neither the period nor the on-grid share.
    private mutating func recordExcusedPeriods(_ interval: Double) {
        guard period > 0, interval > 0 else { return }
        let ratio = interval / period
        guard ratio <= Self.gridReach else { return }
        recordLoss(periods: max(ratio.nearestWhole, 1))
    }

    /// Counts one interval of `periods` periods (one received, `periods` − 1 lost) for the loss.
    private mutating func recordLoss(periods: Double) {
        gridIntervalCount = UInt16(min(gridIntervals + 1, Self.lossMemory))
        periodsPerInterval += (1 / gridIntervals) * (periods - periodsPerInterval)
    }

    /// Updates the periodic view with one interval.
    private mutating func recordPeriod(_ interval: Double) {
        guard interval > 0 else { return }
        guard period > 0 else {
            period = interval
            return
        }
        let ratio = interval / period
        guard ratio <= Self.gridReach else { return }
        // Much shorter than the period: a duplicate report, not informative.
        guard ratio >= Self.duplicateRatio else { return }
        if periodIntervalCount < .max { periodIntervalCount += 1 }
        if ratio < 1 - Self.gridTolerance {
            // Shorter than the period: the period was a multiple of the real one (frames were
            // lost at the start), or the stream is not periodic. Off the grid; start the period
            // and the loss again from this interval.
            onGridShare -= max(1 / Double(periodIntervalCount), 1 / Self.periodMemory) * onGridShare
            period = interval
            periodsPerInterval = 1
            gridIntervalCount = 0
            return
        }
        let k = ratio.nearestWhole
        let onGrid = abs(ratio - k) <= Self.gridTolerance
        onGridShare += max(1 / Double(periodIntervalCount), 1 / Self.periodMemory) * ((onGrid ? 1 : 0) - onGridShare)
        guard onGrid else { return }
        recordLoss(periods: k)
        period += max(1 / gridIntervals, 1 / Self.periodMemory) * (interval / k - period)
    }
}
