import Foundation
import Testing
import RegionKitEngine
@testable import RegionKitEvaluation

@Suite("Distance: calibration, evaluation, model files")
struct DistanceCalibrationTests {
    /// Samples of `d = 1 + 0.07 · (−60 − rssi)` m with Gaussian noise (σ 5 cm) and 15 % gross outliers
    /// (1–3 m too far, as deep fades make a phone look farther), plus a dwell at exactly 1 m / −60 dBm.
    static func synthetic(seed: UInt64) -> [DistanceSample] {
        var random = SeededRandom(seed: seed)
        var samples: [DistanceSample] = []
        var time = 0.0
        for _ in 0..<200 {
            samples.append(DistanceSample(time: Timestamp(seconds: time), rssi: -60, distance: 1))
            time += 0.5
        }
        for _ in 0..<3_000 {
            let loss = -10 + 40 * random.uniform()                     // rssi −50 ... −90
            var distance = 1 + 0.07 * loss + random.gaussian(sigma: 0.05)
            if random.uniform() < 0.15 { distance += 1 + 2 * random.uniform() }
            samples.append(DistanceSample(time: Timestamp(seconds: time), rssi: -60 - loss, distance: max(0, distance)))
            time += 0.5
        }
        return samples
    }

    @Test("The fit recovers a known intercept and slope despite 15 % outliers", arguments: [1, 2, 3] as [UInt64])
    func fitRecoversParameters(seed: UInt64) throws {
        let calibration = try DistanceCalibration.fit([Self.synthetic(seed: seed)], filter: .latest)
        #expect(calibration.referencePower == -60)
        #expect(calibration.referenceDistance == 1)
        #expect(abs(calibration.model.intercept - 1) < 0.03, "intercept \(calibration.model.intercept)")
        #expect(abs(calibration.model.slope - 0.07) < 0.003, "slope \(calibration.model.slope)")
        #expect(calibration.sampleCount == 3_200)
    }

    @Test("Least absolute deviations: exact on a line, ignores a minority of wild points, respects the slope bounds")
    func leastAbsoluteDeviations() {
        var points: [(x: Double, y: Double, weight: Double)] = (0..<10).map { (index: Int) in (x: Double(index), y: 2 + 0.5 * Double(index), weight: 1.0) }
        let exact = DistanceCalibration.leastAbsoluteDeviations(points, slopes: 0...5)
        #expect(abs(exact.intercept - 2) < 1e-6 && abs(exact.slope - 0.5) < 1e-6)
        points += [(x: 1, y: 40, weight: 1), (x: 8, y: -30, weight: 1)]
        let robust = DistanceCalibration.leastAbsoluteDeviations(points, slopes: 0...5)
        #expect(abs(robust.intercept - 2) < 1e-6 && abs(robust.slope - 0.5) < 1e-6)
        let falling: [(x: Double, y: Double, weight: Double)] = (0..<10).map { (index: Int) in (x: Double(index), y: 5 - 0.5 * Double(index), weight: 1.0) }
        #expect(DistanceCalibration.leastAbsoluteDeviations(falling, slopes: 0...5).slope == 0)
    }

    @Test("Reference power: the median RSSI at the recorded distance nearest 1 m (the nearer one on a tie)")
    func referenceRule() throws {
        func at(_ distance: Double, _ rssi: [Double]) -> [DistanceSample] {
            rssi.map { DistanceSample(time: .zero, rssi: $0, distance: distance) }
        }
        let centred = try DistanceCalibration.referencePower(of: [at(0.8, [-50]), at(1.0, [-70, -64, -66]), at(1.2, [-80])])
        #expect(centred.power == -66 && centred.distance == 1)
        let tie = try DistanceCalibration.referencePower(of: [at(0.75, [-61, -63]), at(1.25, [-70])])
        #expect(tie.power == -62 && tie.distance == 0.75)
        #expect(throws: RegionKitError.self) { try DistanceCalibration.fit([at(1, [-60, -61])], filter: .latest) }
    }

    @Test("Every recorded distance weighs the same: a long dwell does not pull the line")
    func levelsWeighEqually() throws {
        var samples: [DistanceSample] = []
        var time = 0.0
        func dwell(_ distance: Double, _ rssi: Double, _ count: Int) {
            for _ in 0..<count { samples.append(DistanceSample(time: Timestamp(seconds: time), rssi: rssi, distance: distance)); time += 1 }
        }
        dwell(1, -60, 10); dwell(2, -70, 10); dwell(3, -80, 10)
        dwell(0, -70, 5_000) // a long dwell at an odd reading
        let fit = try DistanceCalibration.fit([samples], filter: .latest).model
        #expect(abs(fit.intercept - 1) < 1e-6 && abs(fit.slope - 0.1) < 1e-6, "\(fit)")
    }

    @Test("Median filter: causal, over the last window seconds, robust to a fade")
    func medianFilter() {
        let rssi: [Double] = [-60, -61, -90, -62, -60, -59]
        let samples = rssi.enumerated().map { DistanceSample(time: Timestamp(seconds: Double($0.offset)), rssi: $0.element, distance: 1) }
        #expect(RSSIFilter.median(window: 3).filtered(samples) == [-60, -60.5, -61, -62, -62, -60])
        #expect(RSSIFilter.latest.filtered(samples) == rssi)
        #expect(RSSIFilter.median(window: 20).label == "median(20s)" && RSSIFilter.latest.label == "raw")
    }

    @Test("Proximity confusion: true class from the known distance against the estimate's class")
    func confusion() {
        var table = ProximityConfusion(thresholds: ProximityThresholds(immediate: 0.5, near: 3))
        table.add(truth: 0.2, estimate: 0.3)
        table.add(truth: 0.2, estimate: 1.0)
        table.add(truth: 2.0, estimate: 3.5)
        table.add(truth: 3.0, estimate: nil)
        table.add(truth: 3.0, estimate: 4)
        #expect(table.count(truth: .immediate, estimated: .immediate) == 1)
        #expect(table.count(truth: .immediate, estimated: .near) == 1)
        #expect(table.count(truth: .near, estimated: .far) == 1)
        #expect(table.count(truth: .far, estimated: .unknown) == 1)
        #expect(table.count(truth: .far, estimated: .far) == 1)
        #expect(table.total == 5 && table.accuracy == 0.4)
        var twice = table
        twice.merge(table)
        #expect(twice.count(truth: .immediate, estimated: .near) == 2 && twice.accuracy == 0.4)
    }

    @Test("Evaluation: median and p90 of absolute errors, balanced median, merge")
    func evaluation() {
        // A model that always says 0 m: each error is the true distance.
        let zero = LinearDistanceModel(intercept: 0, slope: 0)
        let samples = (1...10).map { DistanceSample(time: Timestamp(seconds: Double($0)), rssi: -70, distance: Double($0) / 10) }
        let result = DistanceEvaluation(model: zero, filter: .latest, measuredPower: -60, samples: samples, filtered: samples.map(\.rssi))
        #expect(result.n == 10)
        #expect(abs(result.medianAbsoluteError - 0.55) < 1e-12)
        #expect(abs(result.p90AbsoluteError - 0.91) < 1e-12)
        #expect(result.model == "regionkit-linear" && result.filter == "raw")
        // 90 more samples at 0.1 m: the plain median moves to 0.1, the balanced one stays.
        let dwell = samples + (0..<90).map { DistanceSample(time: Timestamp(seconds: 20 + Double($0)), rssi: -70, distance: 0.1) }
        let skewed = DistanceEvaluation(model: zero, filter: .latest, measuredPower: -60, samples: dwell, filtered: dwell.map(\.rssi))
        #expect(abs(skewed.medianAbsoluteError - 0.1) < 1e-12)
        #expect(abs(skewed.balancedMedianAbsoluteError - 0.5) < 1e-12)
        var merged = result
        merged.merge(skewed)
        #expect(merged.n == 110 && merged.errors == merged.errors.sorted())
    }

    static let modelFiles: [DistanceModelFile] = [
        DistanceModelFile(model: .linear(LinearDistanceModel(intercept: 0.93, slope: 0.0725)), filter: .median(window: 20), referencePower: -64,
                          calibration: .init(files: ["a \"b\".csv"], samples: 64_775, referenceDistance: 1, medianAbsoluteError: 0.12, p90AbsoluteError: 0.61)),
        DistanceModelFile(model: .logDistance(LogDistanceModel(exponent: 2.7)), filter: .latest, referencePower: -59),
        DistanceModelFile(model: .curve(CurveDistanceModel(coefficient: 0.42093, exponent: 6.9476, offset: 0.54992, name: "curve")),
                          filter: .trimmedMean(window: 20, trimFraction: 0.1), referencePower: -61.5),
        DistanceModelFile(model: .linear(LinearDistanceModel(intercept: 1, slope: 0.05)), filter: .exponential(halfLife: 2), referencePower: -70),
        DistanceModelFile(model: .linear(LinearDistanceModel(intercept: 1, slope: 0.05)), filter: .movingAverage(window: 3), referencePower: -70),
    ]

    @Test("Model file round trip: what calibrate writes is read back identically", arguments: modelFiles)
    func modelFileRoundTrip(file: DistanceModelFile) throws {
        let read = try DistanceModelFile(json: file.json, source: "m.json")
        #expect(read == file)
        var profile = MonitoringProfile.responsive
        profile.use(read)
        #expect(profile.rssiFilter == file.filter)
        #expect(profile.distanceModel.distance(rssi: -75, measuredPower: -60) == file.distanceModel.distance(rssi: -75, measuredPower: -60))
    }

    static let valid = #"{"format": "regionkit-distance-model", "version": 1, "reference_power_dbm": -64, "model": {"type": "linear", "intercept_m": 1, "slope_m_per_db": 0.07}, "filter": {"type": "median", "window_s": 20}}"#

    static func edit(_ old: String, _ new: String) -> String { valid.replacingOccurrences(of: old, with: new) }

    static let malformed: [(text: String, message: String)] = [
        ("not json", "m.json:1:1: expected a JSON value, found 'not'"),
        (edit(#", "version": 1"#, ",\n \"version\" 1"), "m.json:2:12: expected ':' after the key, found '1'"),
        ("[1]", "m.json: the file must be a JSON object"),
        (edit(#""format": "regionkit-distance-model""#, #""format": "other""#), "m.json: field 'format' must be"),
        (edit(#""version": 1"#, #""version": 2"#), "m.json: field 'version' must be 1"),
        (edit(#""reference_power_dbm": -64, "#, ""), "m.json: field 'reference_power_dbm' is missing"),
        (edit(#""reference_power_dbm": -64"#, #""reference_power_dbm": 4"#), "m.json: field 'reference_power_dbm' must be within -200...0 dBm (negative)"),
        (edit(#", "slope_m_per_db": 0.07"#, ""), "m.json: field 'model.slope_m_per_db' is missing"),
        (edit(#""intercept_m": 1"#, #""intercept_m": "1""#), "m.json: field 'model.intercept_m' must be a finite number"),
        (edit(#""intercept_m": 1"#, #""intercept_m": true"#), "m.json: field 'model.intercept_m' must be a finite number"),
        (edit(#""slope_m_per_db": 0.07"#, #""slope_m_per_db": -0.07"#), "m.json: field 'model.slope_m_per_db' must be within 0...1000"),
        // Parameters that made nonsense distances (the hostile-input review): every beacon at 0 m,
        // accuracies below 0.
        (edit(#""intercept_m": 1"#, #""intercept_m": -1e300"#), "m.json: field 'model.intercept_m' must be within -1000...1000 m"),
        (edit(#"{"type": "linear", "intercept_m": 1, "slope_m_per_db": 0.07}"#, #"{"type": "curve", "coefficient": -5, "exponent": -3, "offset": 0}"#),
         "m.json: field 'model.coefficient' must be within (0, 1000]"),
        (edit(#"{"type": "linear", "intercept_m": 1, "slope_m_per_db": 0.07}"#, #"{"type": "curve", "coefficient": 0.9, "exponent": -3, "offset": 0}"#),
         "m.json: field 'model.exponent' must be within (0, 100]"),
        (edit(#"{"type": "linear", "intercept_m": 1, "slope_m_per_db": 0.07}"#, #"{"type": "curve", "coefficient": 0.9, "exponent": 7, "offset": -1}"#),
         "m.json: field 'model.offset' must be within -coefficient...1000"),
        (edit(#""type": "linear""#, #""type": "neural""#), "m.json: field 'model.type' 'neural' is not one of"),
        (edit(#""window_s": 20"#, #""window_s": 0"#), "m.json: field 'filter.window_s' must be within (0, 600] seconds"),
        (edit(#""window_s": 20"#, #""window": 20"#), "m.json: unknown field 'filter.window' (known here: type, window_s)"),
        // Unknown fields anywhere, huge but finite numbers with the field and its limit.
        (edit(#""version": 1"#, #""version": 1, "modle": {}"#), "m.json: unknown field 'modle'"),
        // A key given twice (the decoder kept the first value silently): where, and which.
        (edit(#""window_s": 20"#, #""window_s": 20, "window_s": 60"#), "m.json:1:198: 'window_s' is given twice in one object"),
        (edit(#""window_s": 20"#, #""window_s": 1e4"#), "m.json: field 'filter.window_s' must be within (0, 600] seconds, got 10000.0"),
        (edit(#""reference_power_dbm": -64"#, #""reference_power_dbm": -1e300"#), "m.json: field 'reference_power_dbm' must be within -200...0 dBm"),
        (edit("}}", #"}, "calibration": {"files": [], "samples": 1e300, "reference_distance_m": 1, "median_abs_error_m": 0, "p90_abs_error_m": 0}}"#),
         "m.json: field 'calibration.samples' must be a whole number within 0...2147483647, got 1e+300"),
        (edit(#"{"type": "median", "window_s": 20}"#, "3"), "m.json: field 'filter' must be a JSON object"),
        (edit("}}", #"}, "calibration": {"files": "a.csv", "samples": 1, "reference_distance_m": 1, "median_abs_error_m": 0, "p90_abs_error_m": 0}}"#), "m.json: field 'calibration.files' must be a list of strings"),
    ]

    @Test("Malformed model files: an error naming the file and the field", arguments: malformed)
    func malformedModelFile(text: String, message: String) {
        #expect {
            _ = try DistanceModelFile(json: text, source: "m.json")
        } throws: { error in
            guard let error = error as? RegionKitError else { return false }
            return error.code == .malformedInput && error.message.hasPrefix(message)
        }
    }
}

/// The Herald RSSI-at-known-distance recordings in shared/fixtures/rssi-distance.
@Suite("Distance on real recordings (Herald, shared/fixtures/rssi-distance)")
struct DistanceFixtureTests {
    static let directory: URL = {
        let root: URL
        if let path = ProcessInfo.processInfo.environment["REGIONKIT_FIXTURES"], !path.isEmpty {
            root = URL(fileURLWithPath: path)
        } else {
            root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("shared/fixtures")
        }
        return root.appendingPathComponent("rssi-distance")
    }()
    static let names = ["20210103-1026-A.csv", "20210105-1754-A.csv", "20210107-1123-A.csv"]
    static var available: Bool { names.allSatisfy { FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path) } }

    static func recordings() throws -> [DistanceBenchmark.Recording] {
        try names.map { name in
            let path = directory.appendingPathComponent(name).path
            let text = try String(contentsOfFile: path, encoding: .utf8)
            return DistanceBenchmark.Recording(name: name, samples: try DistanceSampleParser.parse(text, source: path))
        }
    }

    @Test("Cross-file (fit on one recording, test on the others): RegionKit's median error ≥ 20 % below the best anchor",
          .enabled(if: available, "fixtures not found (set REGIONKIT_FIXTURES): SKIPPED, not passed"))
    func crossFile() throws {
        let recordings = try Self.recordings()
        #expect(recordings.map(\.samples.count) == [64_775, 75_633, 48_005])
        let report = try DistanceBenchmark.crossValidate(recordings)
        #expect(report.pairings.count == 6)
        let (ours, best) = try #require(report.comparison)
        #expect(ours.model == "regionkit-linear" && ours.filter == "median(5s)")
        // Every held-out sample is counted: each recording is tested against the two others.
        #expect(ours.n == 2 * (64_775 + 75_633 + 48_005))
        #expect(ours.medianAbsoluteError <= 0.8 * best.medianAbsoluteError,
                "RegionKit \(ours.medianAbsoluteError) m vs \(best.model) \(best.filter) \(best.medianAbsoluteError) m")
        // Not only the median: the tail and the distance-balanced median beat every anchor too.
        for anchor in report.aggregate where anchor.model != ours.model {
            #expect(ours.p90AbsoluteError < anchor.p90AbsoluteError, "\(anchor.model) \(anchor.filter)")
            #expect(ours.balancedMedianAbsoluteError < anchor.balancedMedianAbsoluteError, "\(anchor.model) \(anchor.filter)")
            #expect(ours.confusion.accuracy > anchor.confusion.accuracy, "\(anchor.model) \(anchor.filter)")
        }
        // The calibration rule: the fit file's median RSSI at 1 m.
        #expect(report.pairings.map(\.referencePower) == [-64, -64, -73, -73, -71, -71])
    }
}
