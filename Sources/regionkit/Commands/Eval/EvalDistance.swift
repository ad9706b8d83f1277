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
        With --json, one object per line per model, filter and pairing: {"model", "n", "median_abs_error_m", \
        "p90_abs_error_m", "filter", "pairing", "fit"?, "test"?, "reference_power_dbm"?, \
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

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one recording FILE") }
        try filter.validate()
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
                report = try DistanceBenchmark.crossValidate(recordings, filters: filters)
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
        } else {
            Console.line("Distance models on each file, RegionKit's from \(model!) (no fitting); measured power: the file's reference_power_dbm.")
        }
        Console.line("Errors |estimate − truth| in m over samples; bal. = every (file, distance) weighs the same.")
        Console.line("Classes: immediate < 0.5 m, near < 3 m, far. Confusion: per true class, % estimated immediate/near/far.")
        for pairing in report.pairings {
            Console.line("")
            let fitted = pairing.fitted.sorted { $0.key < $1.key }.map { "\($0.key): \(Self.describe($0.value))" }.joined(separator: "; ")
            Console.line("\(pairing.fit.map { "fit \($0) → " } ?? "")test \(pairing.test)  (measured power \(Self.format(pairing.referencePower, 1)) dBm\(fitted.isEmpty ? "" : "; fitted \(fitted)"))")
            Self.printRows(pairing.evaluations)
        }
        Console.line("")
        Console.line(model == nil ? "Aggregate over all \(report.pairings.count) held-out pairings" : "Aggregate over all \(report.pairings.count) files")
        Self.printRows(report.aggregate)
        if let (ours, best) = report.comparison, best.medianAbsoluteError > 0 {
            let gain = 1 - ours.medianAbsoluteError / best.medianAbsoluteError
            Console.line("")
            Console.line("\(ours.model) + \(ours.filter): median \(Self.format(ours.medianAbsoluteError, 3)) m vs best anchor \(best.model) + \(best.filter): "
                + "\(Self.format(best.medianAbsoluteError, 3)) m → \(Self.format(gain * 100, 0))% lower (issue goal: ≥ 20%): \(gain >= 0.2 ? "reached" : "NOT reached")")
            if let balanced = report.aggregate.filter({ $0.model != ours.model }).min(by: { $0.balancedMedianAbsoluteError < $1.balancedMedianAbsoluteError }),
               balanced.balancedMedianAbsoluteError > 0 {
                let balancedGain = 1 - ours.balancedMedianAbsoluteError / balanced.balancedMedianAbsoluteError
                Console.line("  every (file, distance) weighing the same: \(Self.format(ours.balancedMedianAbsoluteError, 3)) m vs best anchor "
                    + "\(balanced.model) + \(balanced.filter): \(Self.format(balanced.balancedMedianAbsoluteError, 3)) m → \(Self.format(balancedGain * 100, 0))% lower")
            }
        }
    }

    private static func printRows(_ evaluations: [DistanceEvaluation]) {
        let header = "  " + pad("model", 20) + pad("filter", 13) + pad("n", 8, right: true) + pad("median", 9, right: true) + pad("p90", 8, right: true)
            + pad("bal.med", 9, right: true) + pad("class ok", 10, right: true) + "  immediate→    near→        far→"
        Console.line(header)
        for evaluation in evaluations {
            var row = "  " + pad(evaluation.model, 20) + pad(evaluation.filter, 13) + pad("\(evaluation.n)", 8, right: true)
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
