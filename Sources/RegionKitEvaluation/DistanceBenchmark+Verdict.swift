import RegionKitEngine

extension DistanceBenchmark {
    /// Issue 15's goal for one pairing: RegionKit's row at least ``requiredGain`` (20 %) below the
    /// best anchor row on the sample-weighted median error **and** on the balanced median (every
    /// distance weighing the same), and a proximity class accuracy above every anchor row's.
    /// Anchor rows are all rows that are not RegionKit's (with or without device offset) nor the
    /// in-sample reference: the anchors with the fit file's measured power and, when a device
    /// calibration was taken, the anchors with their own learned device offset too.
    ///
    /// ```swift
    /// let verdict = pairing.verdict(model: "regionkit-linear+device", filter: "median(5s)")
    /// verdict?.met        // false
    /// verdict?.medianGain // 0.31 = 31 % below the best anchor
    /// ```
    public struct Verdict: Sendable {
        public static let requiredGain = 0.2

        public var ours: DistanceEvaluation
        public var bestMedian: DistanceEvaluation
        public var bestBalanced: DistanceEvaluation
        public var bestAccuracy: DistanceEvaluation

        /// 1 − ours / best anchor on the sample-weighted median (`nil` when the best anchor's is 0).
        public var medianGain: Double? { Self.gain(ours.medianAbsoluteError, bestMedian.medianAbsoluteError) }
        /// The same on the balanced median.
        public var balancedGain: Double? { Self.gain(ours.balancedMedianAbsoluteError, bestBalanced.balancedMedianAbsoluteError) }
        public var medianMet: Bool { (medianGain ?? -1) >= Self.requiredGain }
        public var balancedMet: Bool { (balancedGain ?? -1) >= Self.requiredGain }
        /// Class accuracy strictly above every anchor row's.
        public var accuracyMet: Bool { ours.confusion.accuracy > bestAccuracy.confusion.accuracy }
        public var met: Bool { medianMet && balancedMet && accuracyMet }

        /// `nil` when `rows` has no row `model` + `filter` or no anchor row.
        public init?(rows: [DistanceEvaluation], model: String, filter: String) {
            let ownName = LinearDistanceModel(intercept: 0, slope: 0).name
            let anchors = rows.filter { DistanceBenchmark.isAnchor($0.model, ours: ownName) }
            guard let ours = rows.first(where: { $0.model == model && $0.filter == filter }),
                  let bestMedian = anchors.min(by: { $0.medianAbsoluteError < $1.medianAbsoluteError }),
                  let bestBalanced = anchors.min(by: { $0.balancedMedianAbsoluteError < $1.balancedMedianAbsoluteError }),
                  let bestAccuracy = anchors.max(by: { $0.confusion.accuracy < $1.confusion.accuracy })
            else { return nil }
            self.ours = ours
            self.bestMedian = bestMedian
            self.bestBalanced = bestBalanced
            self.bestAccuracy = bestAccuracy
        }

        static func gain(_ ours: Double, _ best: Double) -> Double? {
            guard best > 0, best.isFinite, ours.isFinite else { return nil }
            return 1 - ours / best
        }
    }
}
