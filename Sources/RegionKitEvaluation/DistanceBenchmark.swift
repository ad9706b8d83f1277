import RegionKitEngine
/// Cross-file evaluation of distance models on recordings at known distances.
///
/// Every ordered pair of recordings (fit, test) is one pairing: RegionKit's model is calibrated on
/// the fit recording (``DistanceCalibration``) and every model — the iOS-like curve, the Android
/// Beacon Library's Nexus 5 curve, log-distance with ESPresense's exponent 2.7 and RegionKit's — is
/// evaluated on the test recording with the same measured power: the fit recording's median RSSI at
/// the distance nearest 1 m. Each model is evaluated after each of the given RSSI filters, so the
/// anchors get the same smoothing RegionKit uses. The aggregate merges all held-out pairings.
///
/// ```swift
/// let report = try DistanceBenchmark.crossValidate([a, b, c], filters: [.latest, .median(window: 5)])
/// report.aggregate.map(\.medianAbsoluteError)
/// ```
public enum DistanceBenchmark {
    /// A recording: a name for tables and its samples in time order.
    public struct Recording: Sendable {
        public var name: String
        public var samples: [DistanceSample]

        public init(name: String, samples: [DistanceSample]) {
            self.name = name
            self.samples = samples
        }
    }

    /// The evaluations of one (fit, test) pairing, or of one test recording for a given model file.
    public struct Pairing: Sendable {
        /// The recording fitted on (`nil` when a model file was given).
        public var fit: String?
        public var test: String
        /// The measured power every model used, dBm.
        public var referencePower: Double
        /// RegionKit's model as fitted (or loaded) for this pairing, per filter label.
        public var fitted: [String: LinearDistanceModel]
        /// One per model per filter.
        public var evaluations: [DistanceEvaluation]
    }

    public struct Report: Sendable {
        public var pairings: [Pairing]
        /// Per model per filter, over all pairings.
        public var aggregate: [DistanceEvaluation]
        /// RegionKit's model's name in the rows.
        public var modelName: String
        /// The filter RegionKit's own setup uses.
        public var filter: RSSIFilter

        /// RegionKit's aggregate (with its filter) and the anchor row with the lowest aggregate median.
        public var comparison: (regionKit: DistanceEvaluation, bestAnchor: DistanceEvaluation)? {
            guard let ours = aggregate.first(where: { $0.model == modelName && $0.filter == filter.label }),
                  let best = aggregate.filter({ $0.model != modelName }).min(by: { $0.medianAbsoluteError < $1.medianAbsoluteError })
            else { return nil }
            return (ours, best)
        }
    }

    /// The three models RegionKit is compared with.
    public static let anchors: [any DistanceModel] = [
        CurveDistanceModel.coreLocation, CurveDistanceModel.androidNexus5, LogDistanceModel(exponent: 2.7),
    ]

    /// RegionKit's default RSSI filter for distance: the median of the last 5 s. On the Herald
    /// recordings every filter tried (raw, median 5–60 s, mean 3–10 s, trimmed mean, exponential)
    /// lands within 0.02 m of the others — a phone held still sees a position-dependent multipath
    /// bias that time smoothing cannot remove — so the choice rests on robustness to single deep
    /// fades (a median ignores them, a mean does not) and on lag (a 5 s median trails a walking
    /// person by ~2.5 s, a 20 s one by ~10 s).
    public static let defaultFilter = RSSIFilter.median(window: 5)

    /// Fit on each recording, test on each other one. `filters` are the setups every model is
    /// evaluated with; the last one is RegionKit's (and `calibrate`'s).
    public static func crossValidate(_ recordings: [Recording], filters: [RSSIFilter] = [.latest, defaultFilter],
                                     thresholds: ProximityThresholds = ProximityThresholds()) throws -> Report {
        guard recordings.count >= 2 else {
            throw RegionKitError(.invalidArgument, "cross-file evaluation needs at least two recordings (fit on one, test on the others)")
        }
        guard let ownFilter = filters.last else { throw RegionKitError(.invalidArgument, "give at least one RSSI filter") }
        let filtered = recordings.map { recording in filters.map { $0.filtered(recording.samples) } }
        var pairings: [Pairing] = []
        for (fitIndex, fit) in recordings.enumerated() {
            let reference = try DistanceCalibration.referencePower(of: [fit.samples])
            var fitted: [String: LinearDistanceModel] = [:]
            for (filterIndex, filter) in filters.enumerated() {
                fitted[filter.label] = try DistanceCalibration.fit([fit.samples], filter: filter, filtered: [filtered[fitIndex][filterIndex]]).model
            }
            for (testIndex, test) in recordings.enumerated() where testIndex != fitIndex {
                var evaluations: [DistanceEvaluation] = []
                for (filterIndex, filter) in filters.enumerated() {
                    for model in anchors + [fitted[filter.label]! as any DistanceModel] {
                        evaluations.append(DistanceEvaluation(model: model, filter: filter, measuredPower: reference.power, samples: test.samples,
                                                              filtered: filtered[testIndex][filterIndex], thresholds: thresholds))
                    }
                }
                pairings.append(Pairing(fit: fit.name, test: test.name, referencePower: reference.power, fitted: fitted, evaluations: evaluations))
            }
        }
        return Report(pairings: pairings, aggregate: aggregate(pairings, thresholds: thresholds),
                      modelName: LinearDistanceModel(intercept: 0, slope: 0).name, filter: ownFilter)
    }

    /// Evaluates a model file (no fitting) on each recording, beside the anchors, all with the
    /// file's reference power, raw and after the file's filter.
    public static func evaluate(_ file: DistanceModelFile, on recordings: [Recording],
                                thresholds: ProximityThresholds = ProximityThresholds()) -> Report {
        let filters: [RSSIFilter] = file.filter == .latest ? [.latest] : [.latest, file.filter]
        var pairings: [Pairing] = []
        for test in recordings {
            var evaluations: [DistanceEvaluation] = []
            for filter in filters {
                let smoothed = filter.filtered(test.samples)
                for model in anchors + [file.distanceModel] {
                    evaluations.append(DistanceEvaluation(model: model, filter: filter, measuredPower: file.referencePower, samples: test.samples,
                                                          filtered: smoothed, thresholds: thresholds))
                }
            }
            var fitted: [String: LinearDistanceModel] = [:]
            if case .linear(let model) = file.model { fitted[file.filter.label] = model }
            pairings.append(Pairing(fit: nil, test: test.name, referencePower: file.referencePower, fitted: fitted, evaluations: evaluations))
        }
        return Report(pairings: pairings, aggregate: aggregate(pairings, thresholds: thresholds), modelName: file.distanceModel.name, filter: file.filter)
    }

    private static func aggregate(_ pairings: [Pairing], thresholds: ProximityThresholds) -> [DistanceEvaluation] {
        guard let first = pairings.first else { return [] }
        return first.evaluations.indices.map { index in
            var total = DistanceEvaluation(model: first.evaluations[index].model, filter: first.evaluations[index].filter, thresholds: thresholds)
            for pairing in pairings { total.merge(pairing.evaluations[index]) }
            return total
        }
    }
}
