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
        /// The device offset each `+device` row learned, dB, keyed "MODEL+device FILTER".
        public var deviceOffsets: [String: Double] = [:]
        /// Test samples used for the device calibration (excluded from every row's scoring).
        public var calibrationSamples = 0

        /// How RegionKit's row `model` (with `filter`) compares with the best anchor row of this
        /// pairing on both medians and with every anchor row on class accuracy.
        public func verdict(model: String, filter: String) -> DistanceBenchmark.Verdict? {
            DistanceBenchmark.Verdict(rows: evaluations, model: model, filter: filter)
        }
    }

    public struct Report: Sendable {
        public var pairings: [Pairing]
        /// Per model per filter, over all pairings.
        public var aggregate: [DistanceEvaluation]
        /// RegionKit's model's name in the rows.
        public var modelName: String
        /// The filter RegionKit's own setup uses.
        public var filter: RSSIFilter
        /// The device calibration taken from each test recording, if any.
        public var deviceCalibration: DeviceCalibrationPlan? = nil

        /// RegionKit's aggregate (with its filter) and the anchor row with the lowest aggregate median.
        public var comparison: (regionKit: DistanceEvaluation, bestAnchor: DistanceEvaluation)? {
            guard let ours = aggregate.first(where: { $0.model == modelName && $0.filter == filter.label }),
                  let best = aggregate.filter({ DistanceBenchmark.isAnchor($0.model, ours: modelName) }).min(by: { $0.medianAbsoluteError < $1.medianAbsoluteError })
            else { return nil }
            return (ours, best)
        }
    }

    /// Whether a row's model is an anchor (not RegionKit's, with or without device offset, and not the in-sample reference).
    public static func isAnchor(_ model: String, ours: String) -> Bool {
        model != ours && model != ours + deviceSuffix && model != inSampleName
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

    /// A short device calibration taken from each test recording: its first `seconds` at the
    /// recorded distance nearest `distance`. Those samples teach every model the test device's
    /// offset (``DeviceOffsetCalibration``) and are left out of the scoring of **every** row, so
    /// all rows of a pairing are scored on the same samples.
    public struct DeviceCalibrationPlan: Hashable, Sendable {
        public var distance: Double
        public var seconds: Double

        public init(distance: Double = 1, seconds: Double = 60) {
            self.distance = distance
            self.seconds = seconds
        }

        /// Indices of the calibration samples: from the first sample at the recorded distance
        /// nearest `distance`, the following samples at that distance less than `seconds` later
        /// (the dwell may be interrupted by nothing else).
        public func calibrationIndices(_ samples: [DistanceSample]) -> Range<Int> {
            guard let level = Set(samples.map { DistanceCalibration.level($0.distance) })
                .min(by: { (abs($0 - DistanceCalibration.level(distance)), $0) < (abs($1 - DistanceCalibration.level(distance)), $1) }),
                  let first = samples.firstIndex(where: { DistanceCalibration.level($0.distance) == level })
            else { return 0..<0 }
            var end = first
            while end < samples.count, DistanceCalibration.level(samples[end].distance) == level,
                  samples[end].time - samples[first].time < seconds {
                end += 1
            }
            return first..<end
        }
    }

    /// Suffix of the rows that use a learned device offset (`ios-curve+device`, `regionkit-linear+device`).
    public static let deviceSuffix = "+device"
    /// Name of the reference rows fitted on the test recording itself: what fitting on the test data gives, never a result.
    public static let inSampleName = "in-sample-linear"

    /// Fit on each recording, test on each other one. `filters` are the setups every model is
    /// evaluated with; the last one is RegionKit's (and `calibrate`'s).
    ///
    /// With `deviceCalibration`, each test recording also gives a short calibration
    /// (``DeviceCalibrationPlan``) excluded from scoring, and every model — anchors included — is
    /// evaluated a second time with the device offset it learns there (`+device` rows). Each
    /// pairing then also has an `in-sample-linear` row: RegionKit's linear model fitted on the
    /// scored test samples themselves: a reference for what fitting on the test data would give, never a
    /// result (the fit minimises the mean absolute error, so it is not a lower bound on the medians).
    public static func crossValidate(_ recordings: [Recording], filters: [RSSIFilter] = [.latest, defaultFilter],
                                     thresholds: ProximityThresholds = ProximityThresholds(),
                                     deviceCalibration: DeviceCalibrationPlan? = nil) throws -> Report {
        guard recordings.count >= 2 else {
            throw RegionKitError(.invalidArgument, "cross-file evaluation needs at least two recordings (fit on one, test on the others)")
        }
        guard let ownFilter = filters.last else { throw RegionKitError(.invalidArgument, "give at least one RSSI filter") }
        let filtered = recordings.map { recording in filters.map { $0.filtered(recording.samples) } }
        // Per test recording: calibration indices, and the scored samples (with their filtered RSSI per filter).
        var calibration: [Range<Int>] = []
        var scored: [[DistanceSample]] = []
        var scoredFiltered: [[[Double]]] = []
        var inSample: [[LinearDistanceModel?]] = []
        for (index, recording) in recordings.enumerated() {
            let range = deviceCalibration?.calibrationIndices(recording.samples) ?? 0..<0
            if let deviceCalibration, range.isEmpty {
                throw RegionKitError(.invalidArgument, "\(recording.name): no samples for a device calibration at \(deviceCalibration.distance) m")
            }
            calibration.append(range)
            var kept = recording.samples
            kept.removeSubrange(range)
            scored.append(kept)
            scoredFiltered.append(filtered[index].map { values in
                var values = values
                values.removeSubrange(range)
                return values
            })
            inSample.append(filters.indices.map { filterIndex in
                guard deviceCalibration != nil else { return nil }
                return try? DistanceCalibration.fit([kept], filter: filters[filterIndex], filtered: [scoredFiltered[index][filterIndex]]).model
            })
        }
        var pairings: [Pairing] = []
        for (fitIndex, fit) in recordings.enumerated() {
            let reference = try DistanceCalibration.referencePower(of: [fit.samples])
            var fitted: [String: LinearDistanceModel] = [:]
            for (filterIndex, filter) in filters.enumerated() {
                fitted[filter.label] = try DistanceCalibration.fit([fit.samples], filter: filter, filtered: [filtered[fitIndex][filterIndex]]).model
            }
            for (testIndex, test) in recordings.enumerated() where testIndex != fitIndex {
                var evaluations: [DistanceEvaluation] = []
                var offsets: [String: Double] = [:]
                for (filterIndex, filter) in filters.enumerated() {
                    let models = anchors + [fitted[filter.label]! as any DistanceModel]
                    for model in models {
                        evaluations.append(DistanceEvaluation(model: model, filter: filter, measuredPower: reference.power, samples: scored[testIndex],
                                                              filtered: scoredFiltered[testIndex][filterIndex], thresholds: thresholds))
                    }
                    guard deviceCalibration != nil else { continue }
                    let range = calibration[testIndex]
                    let calibrationSamples = Array(test.samples[range])
                    let calibrationFiltered = Array(filtered[testIndex][filterIndex][range])
                    for model in models {
                        let learned = try DeviceOffsetCalibration.learn(model: model, measuredPower: reference.power,
                                                                        samples: calibrationSamples, filtered: calibrationFiltered)
                        var evaluation = DistanceEvaluation(model: DeviceOffsetDistanceModel(base: model, offset: learned.offset), filter: filter,
                                                            measuredPower: reference.power, samples: scored[testIndex],
                                                            filtered: scoredFiltered[testIndex][filterIndex], thresholds: thresholds)
                        evaluation.model = model.name + deviceSuffix
                        offsets["\(evaluation.model) \(filter.label)"] = learned.offset
                        evaluations.append(evaluation)
                    }
                    if let bound = inSample[testIndex][filterIndex] {
                        let testReference = try DistanceCalibration.referencePower(of: [scored[testIndex]])
                        var evaluation = DistanceEvaluation(model: bound, filter: filter, measuredPower: testReference.power, samples: scored[testIndex],
                                                            filtered: scoredFiltered[testIndex][filterIndex], thresholds: thresholds)
                        evaluation.model = inSampleName
                        evaluations.append(evaluation)
                    }
                }
                pairings.append(Pairing(fit: fit.name, test: test.name, referencePower: reference.power, fitted: fitted, evaluations: evaluations,
                                        deviceOffsets: offsets, calibrationSamples: calibration[testIndex].count))
            }
        }
        return Report(pairings: pairings, aggregate: aggregate(pairings, thresholds: thresholds),
                      modelName: LinearDistanceModel(intercept: 0, slope: 0).name, filter: ownFilter, deviceCalibration: deviceCalibration)
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
