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
/// - the longest recent interval, forgotten e-fold per hour of stream time.
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
    public private(set) var firstSighting: Timestamp
    public private(set) var lastSighting: Timestamp
    /// Estimated mean time between sightings, in seconds.
    public private(set) var meanInterval: Double
    /// Sightings recorded, including the first.
    public private(set) var sightings: Int
    /// RSSI of the last sighting, dBm.
    public var lastRSSI: Int?
    /// Estimated share of intervals longer than ``tailStart`` × the mean interval.
    public private(set) var tailShare: Double
    /// Mean excess, in seconds, of those long intervals over ``tailStart`` × the mean interval
    /// (0 until one is seen).
    public private(set) var tailExcess: Double
    /// Mean squared excess of those long intervals, seconds² (for their spread).
    public private(set) var tailExcessSquares: Double
    /// Long intervals seen (beyond ``tailStart`` × the mean interval).
    public private(set) var tailIntervals: Int
    /// The longest interval seen, decaying e-fold per ``longestIntervalMemory`` seconds of stream time.
    public private(set) var longestInterval: Double

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

    public init(firstSighting: Timestamp, priorInterval: Double, rssi: Int? = nil) {
        self.firstSighting = firstSighting
        self.lastSighting = firstSighting
        self.meanInterval = priorInterval
        self.sightings = 1
        self.lastRSSI = rssi
        self.tailShare = exp(-Self.tailStart)
        self.tailExcess = 0
        self.tailExcessSquares = 0
        self.tailIntervals = 0
        self.longestInterval = 0
    }

    /// The scale of the tail: the larger of the mean and the standard deviation of the long
    /// intervals' excess (equal for an exponential tail; the deviation is the e-folding scale of
    /// the geometric tail that independent losses on a fixed interval give, where the mean is not).
    public var tailScale: Double {
        max(tailExcess, max(tailExcessSquares - tailExcess * tailExcess, 0).squareRoot())
    }

    /// Intervals recorded (sightings − 1).
    public var intervals: Int { sightings - 1 }

    /// Records a sighting at `time` (times earlier than the last one are treated as simultaneous).
    public mutating func record(at time: Timestamp, rssi: Int? = nil) {
        let interval = max(0, time - lastSighting)
        let start = Self.tailStart * meanInterval
        let inTail = interval > start
        let shareWeight = max(1 / (Double(sightings) + Self.tailSharePriorWeight), 1 / Self.tailShareMemory)
        tailShare += shareWeight * ((inTail ? 1 : 0) - tailShare)
        if inTail {
            tailIntervals += 1
            let excessWeight = max(1 / Double(tailIntervals), 1 / Self.tailExcessMemory)
            let excess = interval - start
            tailExcess += excessWeight * (excess - tailExcess)
            tailExcessSquares += excessWeight * (excess * excess - tailExcessSquares)
        }
        longestInterval = max(interval, longestInterval * exp(-interval / Self.longestIntervalMemory))
        let weight = max(1 / Double(sightings + 1), 0.01)
        meanInterval += weight * (interval - meanInterval)
        if time > lastSighting { lastSighting = time }
        sightings += 1
        if let rssi { lastRSSI = rssi }
    }
}
