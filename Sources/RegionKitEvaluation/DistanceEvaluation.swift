import RegionKitEngine
/// How well one model (after one RSSI filter) estimates known distances: absolute errors, their
/// median and 90th percentile, and the proximity-class confusion.
///
/// Samples for which the model gives no estimate count as `unknown` in the confusion and are left
/// out of the errors (``unestimated`` counts them). Evaluations of several test sets merge into one
/// whose quantiles are over all their samples.
///
/// ```swift
/// let filter = RSSIFilter.median(window: 5)
/// let result = DistanceEvaluation(model: LogDistanceModel(exponent: 2.7), filter: filter, measuredPower: -64,
///                                 samples: samples, filtered: filter.filtered(samples))
/// result.medianAbsoluteError // metres
/// ```
public struct DistanceEvaluation: Sendable {
    /// The model's name (`ios-curve`, `regionkit-linear`...).
    public var model: String
    /// The RSSI filter's label (`raw`, `median(5s)`...).
    public var filter: String
    /// Absolute errors, metres, one per estimated sample, in ascending order.
    public private(set) var errors: [Double] = []
    /// Each error's weight for the balanced median (same order): 1 / (samples at its distance in its test set).
    public private(set) var weights: [Double] = []
    public private(set) var confusion: ProximityConfusion
    /// Samples the model gave no estimate for.
    public private(set) var unestimated = 0

    /// Evaluates `model` on `samples`, whose filtered RSSI is `filtered` (same order).
    public init(model: any DistanceModel, filter: RSSIFilter, measuredPower: Double, samples: [DistanceSample], filtered: [Double],
                thresholds: ProximityThresholds = ProximityThresholds()) {
        self.model = model.name
        self.filter = filter.label
        confusion = ProximityConfusion(thresholds: thresholds)
        var perLevel: [Int: Int] = [:]
        for sample in samples { perLevel[DistanceCalibration.level(sample.distance), default: 0] += 1 }
        var weighted: [(error: Double, weight: Double)] = []
        weighted.reserveCapacity(samples.count)
        for (sample, rssi) in zip(samples, filtered) {
            let estimate = model.distance(rssi: rssi, measuredPower: measuredPower)
            confusion.add(truth: sample.distance, estimate: estimate)
            guard let estimate, estimate.isFinite else { unestimated += 1; continue }
            weighted.append((abs(estimate - sample.distance), 1 / Double(perLevel[DistanceCalibration.level(sample.distance)]!)))
        }
        weighted.sort { $0.error < $1.error }
        errors = weighted.map(\.error)
        weights = weighted.map(\.weight)
    }

    /// An empty evaluation to merge others into.
    public init(model: String, filter: String, thresholds: ProximityThresholds = ProximityThresholds()) {
        self.model = model
        self.filter = filter
        confusion = ProximityConfusion(thresholds: thresholds)
    }

    /// Estimated samples.
    public var n: Int { errors.count }
    public var medianAbsoluteError: Double { DistanceCalibration.quantile(sorted: errors, 0.5) }
    public var p90AbsoluteError: Double { DistanceCalibration.quantile(sorted: errors, 0.9) }

    /// The median error when every (test set, distance) cell weighs the same, so a long dwell at
    /// one distance does not dominate: the smallest error whose cumulative weight reaches half.
    public var balancedMedianAbsoluteError: Double {
        let total = weights.reduce(0, +)
        var cumulative = 0.0
        for index in errors.indices {
            cumulative += weights[index]
            if cumulative >= total / 2 * (1 - 1e-12) { return errors[index] }
        }
        return .nan
    }

    /// Adds another evaluation's samples (another test set).
    public mutating func merge(_ other: DistanceEvaluation) {
        var mergedErrors: [Double] = [], mergedWeights: [Double] = []
        mergedErrors.reserveCapacity(errors.count + other.errors.count)
        mergedWeights.reserveCapacity(errors.count + other.errors.count)
        var i = 0, j = 0
        while i < errors.count || j < other.errors.count {
            if j == other.errors.count || (i < errors.count && errors[i] <= other.errors[j]) {
                mergedErrors.append(errors[i]); mergedWeights.append(weights[i]); i += 1
            } else {
                mergedErrors.append(other.errors[j]); mergedWeights.append(other.weights[j]); j += 1
            }
        }
        errors = mergedErrors
        weights = mergedWeights
        confusion.merge(other.confusion)
        unestimated += other.unestimated
    }
}
