import ArgumentParser
import Foundation
import RegionKit
import RegionKitEvaluation

struct EvalDistance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "distance",
        abstract: "Distance error of the iOS, Android Beacon Library, log-distance and RegionKit models on RSSI at known distances.",
        discussion: """
        FILE: CSV rows time,rssi,distance (distance in cm), as the Herald reference data in shared/fixtures/rssi-distance.
        Cross-file: RegionKit's model is fitted on one file and tested on each other one, for every pairing; the \
        aggregate merges all held-out pairings. With --model FILE, that model file is evaluated on every FILE instead.
        Measured power (RSSI at 1 m), the same rule for every model: the median raw RSSI of the fit file at its recorded \
        distance nearest 1 m (with --model, the file's reference_power_dbm).
        Every model is evaluated on raw RSSI and after RegionKit's filter (--filter), so the anchors get the same smoothing.
        Errors are |estimate − truth| in metres over samples; "bal.med" is the median when every (test file, distance) weighs the same. \
        Proximity classes: immediate < 0.5 m, near < 3 m, else far; the truth class comes from the known distance.
        With --device-calibration SECONDS, each test file also gives a short device calibration: its first SECONDS at the \
        recorded distance nearest --calibration-distance (default 1 m). Every model, the anchors too, learns the test \
        device's RSSI offset there (median over those samples; rows "+device"); those samples are left out of the scoring \
        of every row. Each pairing then gets an "in-sample-linear" row (RegionKit's model fitted on the scored test samples \
        themselves: a reference, not a result) and a verdict per RegionKit row against issue 15's goal: ≥ 20 % below the best \
        anchor row on the median and on bal.med, and a class accuracy above every anchor row's.
        With --json, one object per line per model, filter and pairing: {"model", "n", "median_abs_error_m", \
        "p90_abs_error_m", "filter", "pairing", "fit"?, "test"?, "reference_power_dbm"?, "device_offset_db"? (+device rows), \
        "balanced_median_abs_error_m", "class_accuracy", "confusion": {TRUTH: {ESTIMATE: count}}}.
        """
    )

    @Argument(help: "Recordings: CSV time,rssi,distance (cm).")
    var files: [String]

    @Option(help: "Evaluate this model file (from `regionkit calibrate`) instead of fitting.")
    var model: String?

    @Option(help: "RegionKit's RSSI filter: raw, median:SECONDS, mean:SECONDS, trimmed-mean:SECONDS:FRACTION or exponential:HALF_LIFE.")
    var filter: RSSIFilterOption = RSSIFilterOption(filter: DistanceBenchmark.defaultFilter)

    @Flag(help: "Print one JSON object per line per model instead of a table.")
    var json = false

    @Option(help: "Take a device calibration of this many seconds from each test file (excluded from scoring) and add the +device rows.")
    var deviceCalibration: Double?

    @Option(help: "Metres: the device calibration is taken at the test file's recorded distance nearest this one.")
    var calibrationDistance: Double = 1

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one recording FILE") }
        try filter.validate()
        if let deviceCalibration {
            guard deviceCalibration.isFinite, deviceCalibration > 0, deviceCalibration <= 3600 else {
                throw ValidationError("--device-calibration must be within (0, 3600] seconds, got \(deviceCalibration)")
            }
            guard model == nil else { throw ValidationError("--device-calibration applies to the cross-file evaluation, not to --model") }
        }
        guard calibrationDistance.isFinite, calibrationDistance > 0, calibrationDistance <= 100 else {
            throw ValidationError("--calibration-distance must be within (0, 100] metres, got \(calibrationDistance)")
        }
        if model == nil && files.count < 2 {
            throw ValidationError("cross-file evaluation needs at least two files (fit on one, test on the others), or --model FILE")
        }
    }

    func run() async throws {
        try await Console.reportingErrors {
            let recordings = try Self.recordings(files)
            let report: DistanceBenchmark.Report
            if let model {
                report = DistanceBenchmark.evaluate(try DistanceModelFile.load(path: model), on: recordings)
            } else {
                let filters: [RSSIFilter] = filter.filter == .latest ? [.latest] : [.latest, filter.filter]
                let plan = deviceCalibration.map { DistanceBenchmark.DeviceCalibrationPlan(distance: calibrationDistance, seconds: $0) }
                report = try DistanceBenchmark.crossValidate(recordings, filters: filters, deviceCalibration: plan)
            }
            if json { printJSON(report) } else { printTable(report) }
        }
    }

    /// Reads and parses each recording (named by its file name in tables).
    static func recordings(_ paths: [String]) throws -> [DistanceBenchmark.Recording] {
        try paths.map { path in
            guard let data = FileManager.default.contents(atPath: path) else {
                throw RegionKitError(.invalidArgument, "\(path): cannot read the recording")
            }
            let samples = try DistanceSampleParser.parse(String(decoding: data, as: UTF8.self), source: path)
            return DistanceBenchmark.Recording(name: URL(fileURLWithPath: path).lastPathComponent, samples: samples)
        }
    }

    private func printJSON(_ report: DistanceBenchmark.Report) {
        for pairing in report.pairings {
            for evaluation in pairing.evaluations {
                Console.line(Self.jsonLine(evaluation, pairing: pairing).text)
            }
        }
        for evaluation in report.aggregate {
            Console.line(Self.jsonLine(evaluation, pairing: nil).text)
        }
    }

    static func jsonLine(_ evaluation: DistanceEvaluation, pairing: DistanceBenchmark.Pairing?) -> JSONLine {
        var line = JSONLine()
        line.add("model", evaluation.model)
        line.add("n", evaluation.n)
        line.add("median_abs_error_m", evaluation.medianAbsoluteError, decimals: 4)
        line.add("p90_abs_error_m", evaluation.p90AbsoluteError, decimals: 4)
        line.add("filter", evaluation.filter)
        if let pairing {
            line.add("pairing", "\(pairing.fit.map { "\($0)→" } ?? "")\(pairing.test)")
            if let fit = pairing.fit { line.add("fit", fit) }
            line.add("test", pairing.test)
            line.add("reference_power_dbm", pairing.referencePower, decimals: 2)
            if let offset = pairing.deviceOffsets["\(evaluation.model) \(evaluation.filter)"] { line.add("device_offset_db", offset, decimals: 2) }
        } else {
            line.add("pairing", "aggregate")
        }
        line.add("balanced_median_abs_error_m", evaluation.balancedMedianAbsoluteError, decimals: 4)
        line.add("class_accuracy", evaluation.confusion.accuracy, decimals: 4)
        var confusion = JSONLine()
        for truth in ProximityConfusion.classes where truth != .unknown {
            var row = JSONLine()
            for estimated in ProximityConfusion.classes { row.add(estimated.rawValue, evaluation.confusion.count(truth: truth, estimated: estimated)) }
            confusion.add(truth.rawValue, object: row)
        }
        line.add("confusion", object: confusion)
        return line
    }

    private func printTable(_ report: DistanceBenchmark.Report) {
        if model == nil {
            Console.line("Distance models, cross-file: RegionKit's model fitted on one file, every model tested on each other file.")
            Console.line("Measured power for every model: median raw RSSI of the fit file at its distance nearest 1 m.")
            if let plan = report.deviceCalibration {
                Console.line("Device calibration: each test file's first \(Self.format(plan.seconds, 0)) s at its distance nearest \(Self.format(plan.distance, 2)) m, "
                    + "excluded from every row's scoring; +device rows = the model with the offset learned there; "
                    + "\(DistanceBenchmark.inSampleName) = fitted on the scored test samples (a reference, not a result; it minimises the mean error, not the medians).")
            }
        } else {
            Console.line("Distance models on each file, RegionKit's from \(model!) (no fitting); measured power: the file's reference_power_dbm.")
        }
        Console.line("Errors |estimate − truth| in m over samples; bal. = every (file, distance) weighs the same.")
        Console.line("Classes: immediate < 0.5 m, near < 3 m, far. Confusion: per true class, % estimated immediate/near/far.")
        for pairing in report.pairings {
            Console.line("")
            let fitted = pairing.fitted.sorted { $0.key < $1.key }.map { "\($0.key): \(Self.describe($0.value))" }.joined(separator: "; ")
            Console.line("\(pairing.fit.map { "fit \($0) → " } ?? "")test \(pairing.test)  (measured power \(Self.format(pairing.referencePower, 1)) dBm\(fitted.isEmpty ? "" : "; fitted \(fitted)"))")
            if pairing.calibrationSamples > 0 {
                let offsets = pairing.deviceOffsets.sorted { $0.key < $1.key }.map { "\($0.key) \(Self.format($0.value, 1))" }.joined(separator: ", ")
                Console.line("  device calibration: \(pairing.calibrationSamples) samples excluded; offsets dB: \(offsets)")
            }
            Self.printRows(pairing.evaluations)
            if model == nil {
                for line in Self.verdictLines(rows: pairing.evaluations, report: report) { Console.line(line) }
            }
        }
        Console.line("")
        Console.line(model == nil ? "Aggregate over all \(report.pairings.count) held-out pairings" : "Aggregate over all \(report.pairings.count) files")
        Self.printRows(report.aggregate)
        if model == nil {
            for line in Self.verdictLines(rows: report.aggregate, report: report) { Console.line(line) }
            let names = [report.modelName] + (report.deviceCalibration != nil ? [report.modelName + DistanceBenchmark.deviceSuffix] : [])
            for name in names {
                let met = report.pairings.filter { $0.verdict(model: name, filter: report.filter.label)?.met == true }.count
                Console.line("  \(name) + \(report.filter.label): goal met on \(met) of \(report.pairings.count) pairings")
            }
        }
        if let (ours, best) = report.comparison, best.medianAbsoluteError > 0 {
            let gain = 1 - ours.medianAbsoluteError / best.medianAbsoluteError
            Console.line("")
            Console.line("\(ours.model) + \(ours.filter): median \(Self.format(ours.medianAbsoluteError, 3)) m vs best anchor \(best.model) + \(best.filter): "
                + "\(Self.format(best.medianAbsoluteError, 3)) m → \(Self.format(gain * 100, 0))% lower (issue goal: ≥ 20%): \(gain >= 0.2 ? "reached" : "NOT reached")")
            if let balanced = report.aggregate.filter({ DistanceBenchmark.isAnchor($0.model, ours: ours.model) }).min(by: { $0.balancedMedianAbsoluteError < $1.balancedMedianAbsoluteError }),
               balanced.balancedMedianAbsoluteError > 0 {
                let balancedGain = 1 - ours.balancedMedianAbsoluteError / balanced.balancedMedianAbsoluteError
                Console.line("  every (file, distance) weighing the same: \(Self.format(ours.balancedMedianAbsoluteError, 3)) m vs best anchor "
                    + "\(balanced.model) + \(balanced.filter): \(Self.format(balanced.balancedMedianAbsoluteError, 3)) m → \(Self.format(balancedGain * 100, 0))% lower")
            }
        }
    }

    /// One line per RegionKit row with RegionKit's filter: the goal per metric, met or not.
    static func verdictLines(rows: [DistanceEvaluation], report: DistanceBenchmark.Report) -> [String] {
        var names = [report.modelName]
        if report.deviceCalibration != nil { names.append(report.modelName + DistanceBenchmark.deviceSuffix) }
        return names.compactMap { name in
            guard let verdict = DistanceBenchmark.Verdict(rows: rows, model: name, filter: report.filter.label) else { return nil }
            func gain(_ value: Double?) -> String { value.map { format($0 * 100, 0) + "%" } ?? "n/a (anchor error 0)" }
            let ours = verdict.ours
            return "  goal \(name) + \(ours.filter): median \(format(ours.medianAbsoluteError, 3)) vs \(format(verdict.bestMedian.medianAbsoluteError, 3)) "
                + "(\(verdict.bestMedian.model) \(verdict.bestMedian.filter)) → \(gain(verdict.medianGain)) \(verdict.medianMet ? "met" : "NOT met"); "
                + "bal. \(format(ours.balancedMedianAbsoluteError, 3)) vs \(format(verdict.bestBalanced.balancedMedianAbsoluteError, 3)) "
                + "(\(verdict.bestBalanced.model) \(verdict.bestBalanced.filter)) → \(gain(verdict.balancedGain)) \(verdict.balancedMet ? "met" : "NOT met"); "
                + "class \(format(ours.confusion.accuracy * 100, 1))% vs \(format(verdict.bestAccuracy.confusion.accuracy * 100, 1))% "
                + "(\(verdict.bestAccuracy.model) \(verdict.bestAccuracy.filter)) \(verdict.accuracyMet ? "met" : "NOT met") ⇒ \(verdict.met ? "GOAL MET" : "goal not met")"
        }
    }

    private static func printRows(_ evaluations: [DistanceEvaluation]) {
        let header = "  " + pad("model", 26) + pad("filter", 13) + pad("n", 8, right: true) + pad("median", 9, right: true) + pad("p90", 8, right: true)
            + pad("bal.med", 9, right: true) + pad("class ok", 10, right: true) + "  immediate→    near→        far→"
        Console.line(header)
        for evaluation in evaluations {
            var row = "  " + pad(evaluation.model, 26) + pad(evaluation.filter, 13) + pad("\(evaluation.n)", 8, right: true)
            row += pad(format(evaluation.medianAbsoluteError, 3), 9, right: true) + pad(format(evaluation.p90AbsoluteError, 3), 8, right: true)
            row += pad(format(evaluation.balancedMedianAbsoluteError, 3), 9, right: true)
            row += pad(format(evaluation.confusion.accuracy * 100, 1) + "%", 10, right: true) + "  "
            for truth in [Proximity.immediate, .near, .far] {
                let counts = ProximityConfusion.classes.map { evaluation.confusion.count(truth: truth, estimated: $0) }
                let total = counts.reduce(0, +)
                let cell = total == 0 ? "-" : counts.prefix(3).map { format(Double($0) * 100 / Double(total), 0) }.joined(separator: "/")
                    + (counts[3] > 0 ? "/?\(counts[3])" : "")
                row += pad(cell, 13)
            }
            Console.line(row)
        }
    }

    static func describe(_ model: LinearDistanceModel) -> String {
        "\(format(model.intercept, 2)) m + \(format(model.slope, 4)) m/dB"
    }

    static func format(_ value: Double, _ decimals: Int) -> String {
        value.isFinite ? String(format: "%.\(decimals)f", value) : "-"
    }

    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let count = text.count
        guard count < width else { return text + " " }
        let padding = String(repeating: " ", count: width - count)
        return right ? padding + text : text + padding
    }
}
