import RegionKitEngine
/// Fits RegionKit's `LinearDistanceModel` to RSSI samples taken at known distances.
///
/// The rule, the same for every model RegionKit evaluates:
/// 1. **Reference power** (the RSSI at 1 m, which the recordings do not carry): the median raw RSSI
///    of the samples at the recorded distance nearest 1 m, over all the recordings given.
/// 2. Each recording's RSSI goes through `filter` in time order (causal, as ranging does).
/// 3. `intercept` and `slope` minimise the sum of absolute distance errors (least absolute
///    deviations: what a median error rewards, and robust to the deep fades of multipath), with
///    every recorded distance weighing the same however long the robot dwelt there. The slope is
///    kept ≥ 0 (a weaker signal never means nearer).
///
/// ```swift
/// let calibration = try DistanceCalibration.fit([samples], filter: .median(window: 5))
/// calibration.model.distance(rssi: -70, measuredPower: calibration.referencePower)
/// ```
public struct DistanceCalibration: Hashable, Sendable {
    public var model: LinearDistanceModel
    public var filter: RSSIFilter
    /// The measured power (dBm at 1 m) found by the reference rule.
    public var referencePower: Double
    /// The recorded distance the reference power was taken at (1 m when recorded).
    public var referenceDistance: Double
    /// Samples fitted.
    public var sampleCount: Int

    /// Steepest slope searched, metres per dB.
    public static let maximumSlope = 5.0

    public init(model: LinearDistanceModel, filter: RSSIFilter, referencePower: Double, referenceDistance: Double, sampleCount: Int) {
        self.model = model
        self.filter = filter
        self.referencePower = referencePower
        self.referenceDistance = referenceDistance
        self.sampleCount = sampleCount
    }

    /// The median raw RSSI at the recorded distance nearest 1 m (the nearer-to-zero distance on a tie).
    public static func referencePower(of recordings: [[DistanceSample]]) throws -> (power: Double, distance: Double) {
        let all = recordings.joined()
        guard let level = Set(all.map { Self.level($0.distance) }).min(by: { (abs($0 - 1000), $0) < (abs($1 - 1000), $1) }) else {
            throw RegionKitError(.invalidArgument, "no samples to take the reference power (RSSI at 1 m) from")
        }
        let rssi = all.filter { Self.level($0.distance) == level }.map(\.rssi)
        return (quantile(rssi, 0.5), Double(level) / 1000)
    }

    /// Fits the model to one or more recordings (each a time series of its own).
    public static func fit(_ recordings: [[DistanceSample]], filter: RSSIFilter) throws -> DistanceCalibration {
        try fit(recordings, filter: filter, filtered: recordings.map { filter.filtered($0) })
    }

    /// ``fit(_:filter:)`` with each recording's RSSI already smoothed by `filter` (same shape).
    public static func fit(_ recordings: [[DistanceSample]], filter: RSSIFilter, filtered: [[Double]]) throws -> DistanceCalibration {
        let reference = try referencePower(of: recordings)
        let samples = Array(recordings.joined())
        let filtered = Array(filtered.joined())
        precondition(filtered.count == samples.count, "one filtered RSSI per sample")
        var perLevel: [Int: Int] = [:]
        for sample in samples { perLevel[level(sample.distance), default: 0] += 1 }
        guard perLevel.count >= 2 else {
            throw RegionKitError(.invalidArgument, "calibration needs samples at two or more distances, got only \(Double(perLevel.keys.first ?? 0) / 1000) m")
        }
        // Equal weight per recorded distance; identical (loss, distance) pairs merged.
        var points: [Point: Double] = [:]
        for (sample, rssi) in zip(samples, filtered) {
            let point = Point(x: reference.power - rssi, y: sample.distance)
            points[point, default: 0] += 1 / Double(perLevel[level(sample.distance)]!)
        }
        guard Set(points.keys.map(\.x)).count >= 2 else {
            throw RegionKitError(.invalidArgument, "calibration needs at least two different RSSI values")
        }
        let (intercept, slope) = leastAbsoluteDeviations(points.map { ($0.key.x, $0.key.y, $0.value) }, slopes: 0...maximumSlope)
        return DistanceCalibration(model: LinearDistanceModel(intercept: intercept, slope: slope), filter: filter,
                                   referencePower: reference.power, referenceDistance: reference.distance, sampleCount: samples.count)
    }

    /// The line `y = a + b·x` minimising `Σ w·|y − a − b·x|` with `b` in `slopes`.
    ///
    /// For a fixed slope the best intercept is a weighted median of `y − b·x`, and the remaining cost
    /// is convex in `b`, so a golden-section search over `b` finds the optimum.
    public static func leastAbsoluteDeviations(_ points: [(x: Double, y: Double, weight: Double)], slopes: ClosedRange<Double>) -> (intercept: Double, slope: Double) {
        func best(_ slope: Double) -> (intercept: Double, cost: Double) {
            let residuals = points.map { (value: $0.y - slope * $0.x, weight: $0.weight) }.sorted { $0.value < $1.value }
            let total = residuals.reduce(0) { $0 + $1.weight }
            var cumulative = 0.0, intercept = residuals.last?.value ?? 0
            for residual in residuals {
                cumulative += residual.weight
                if cumulative >= total / 2 * (1 - 1e-12) { intercept = residual.value; break }
            }
            return (intercept, residuals.reduce(0) { $0 + $1.weight * abs($1.value - intercept) })
        }
        let ratio = (5.0.squareRoot() - 1) / 2
        var low = slopes.lowerBound, high = slopes.upperBound
        var c = high - ratio * (high - low), d = low + ratio * (high - low)
        var costC = best(c).cost, costD = best(d).cost
        while high - low > 1e-10 {
            if costC <= costD {
                high = d; d = c; costD = costC
                c = high - ratio * (high - low); costC = best(c).cost
            } else {
                low = c; c = d; costC = costD
                d = low + ratio * (high - low); costD = best(d).cost
            }
        }
        // The bounds themselves may be optimal (a flat recording gives slope 0).
        let slope = [slopes.lowerBound, (low + high) / 2, slopes.upperBound].min { best($0).cost < best($1).cost }!
        return (best(slope).intercept, slope)
    }

    /// A distance in whole millimetres, to group samples by recorded position.
    static func level(_ distance: Double) -> Int { Int((distance * 1000).rounded()) }

    /// The `q` quantile (0...1) by linear interpolation between order statistics (NumPy's default).
    public static func quantile(_ values: [Double], _ q: Double) -> Double {
        quantile(sorted: values.sorted(), q)
    }

    /// ``quantile(_:_:)`` of values already in ascending order.
    public static func quantile(sorted: [Double], _ q: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let position = q * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down)), upper = min(lower + 1, sorted.count - 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
    }

    private struct Point: Hashable {
        var x: Double
        var y: Double
    }
}
