import ArgumentParser
import Foundation
import RegionKit
import RegionKitEvaluation
import RegionKitStore

struct Calibrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fit RegionKit's distance model to RSSI samples at known distances and write a model file.",
        discussion: """
        FILE: CSV rows time,rssi,distance (distance in cm), e.g. a phone moved away from a beacon in steps. Several files \
        are fitted together (each filtered as its own time series).
        The fit: measured power = median raw RSSI at the recorded distance nearest 1 m; RSSI smoothed by --filter; then \
        distance = intercept + slope · (power − rssi) by least absolute deviations, every recorded distance weighing the same.
        The model file is JSON: {"format": "regionkit-distance-model", "version": 1, "reference_power_dbm", \
        "model": {"type": "linear", "intercept_m", "slope_m_per_db"}, "filter": {"type": "median", "window_s"}, \
        "calibration": {"files", "samples", "reference_distance_m", "median_abs_error_m", "p90_abs_error_m"}}; \
        model types linear, log-distance (exponent), curve (coefficient, exponent, offset); filter types raw, mean, \
        median (window_s), trimmed-mean (window_s, trim_fraction), exponential (half_life_s). It is read by \
        `eval distance --model`, `monitor`/`simulate --distance-model` and the `run` configuration's `distanceModel:` \
        (the engine uses its model and filter, with each beacon's advertised measured power).
        Device calibration: with --model FILE, nothing is fitted; FILE's model is kept and the receiving device's RSSI \
        offset is learned from the recordings instead (a short one is enough: say a minute at 1 m from the beacon). For \
        every sample (RSSI through FILE's filter) the model is inverted at the true distance with the measured power \
        (--measured-power, default FILE's reference_power_dbm: give the calibration beacon's advertised power when the \
        engine will use it); the offset is the median of the differences. The output is FILE with \
        "device_offset_db" set, which the engine applies to every reading of this device. --model also takes a built-in \
        model: android-nexus5, ios-curve or log-distance (exponent 2.7), with --measured-power required and --filter as \
        the file's filter; on the Herald recordings the Android curve with a one-minute device calibration at 1 m is the \
        most accurate across phones (BENCHMARKS.md, issue 15 — distance).
        """
    )

    @Argument(help: "Recordings: CSV time,rssi,distance (cm).")
    var files: [String]

    @Option(help: "Where to write the model file (JSON).")
    var output: String

    @Option(help: "RSSI filter: raw, median:SECONDS, mean:SECONDS, trimmed-mean:SECONDS:FRACTION or exponential:HALF_LIFE.")
    var filter: RSSIFilterOption = RSSIFilterOption(filter: DistanceBenchmark.defaultFilter)

    @Option(help: "Learn this model file's (or built-in model's: android-nexus5, ios-curve, log-distance) device offset from the recordings instead of fitting a model.")
    var model: String?

    @Option(parsing: .unconditional, help: "With --model: the measured power (dBm at 1 m) to invert the model with (negative values are fine: --measured-power -59). Default: the file's reference_power_dbm.")
    var measuredPower: Double?

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one recording FILE") }
        // The model file is written over `--output`: never over a recording it is fitted from.
        if let recording = files.first(where: { Self.sameFile($0, output) }) {
            throw ValidationError("--output \(output) is the recording \(recording): it would be overwritten by the model file")
        }
        try filter.validate()
        if let measuredPower {
            guard model != nil else { throw ValidationError("--measured-power applies to a device calibration (--model FILE)") }
            guard measuredPower.isFinite, measuredPower < 0, measuredPower >= -200 else {
                throw ValidationError("--measured-power must be negative, at least -200 dBm (-200..<0), got \(measuredPower)")
            }
        }
    }

    /// Writes `file` at `path` (through a symbolic link to its target, replaced atomically), once
    /// the loader has read it back: a fit the loader refuses (an intercept past ±1000 m from
    /// distances of kilometres) is an error here, not at the next `--distance-model`.
    static func write(_ file: DistanceModelFile, to path: String) throws {
        do {
            _ = try DistanceModelFile(json: file.json, source: path)
        } catch let error as RegionKitError {
            throw RegionKitError(.invalidArgument, "the model fitted cannot be used, nothing written: \(error.message)")
        }
        do {
            try Data(file.json.utf8).write(to: URL(fileURLWithPath: path).resolvingSymlinksInPath(), options: .atomic)
        } catch {
            throw RegionKitError(.invalidArgument, "\(path): cannot write the model file", cause: error)
        }
    }

    /// Whether two paths name one file: the same path once symbolic links and `.`/`..` are
    /// resolved, or the same device and inode (a hard link).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        let resolved = { (path: String) in URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path }
        if resolved(a) == resolved(b) { return true }
        guard let first = StoreFileIdentity(path: a) else { return false }
        return first == StoreFileIdentity(path: b)
    }

    func run() async throws {
        try await Console.reportingErrors {
            let recordings = try EvalDistance.recordings(files)
            if let model {
                try calibrateDevice(model, recordings)
                return
            }
            let calibration = try DistanceCalibration.fit(recordings.map(\.samples), filter: filter.filter)
            var fit = DistanceEvaluation(model: calibration.model.name, filter: calibration.filter.label)
            for recording in recordings {
                fit.merge(DistanceEvaluation(model: calibration.model, filter: calibration.filter, measuredPower: calibration.referencePower,
                                             samples: recording.samples, filtered: calibration.filter.filtered(recording.samples)))
            }
            let file = DistanceModelFile(
                model: .linear(calibration.model), filter: calibration.filter, referencePower: calibration.referencePower,
                calibration: DistanceModelFile.Calibration(files: recordings.map(\.name), samples: calibration.sampleCount,
                                                           referenceDistance: calibration.referenceDistance,
                                                           medianAbsoluteError: fit.medianAbsoluteError, p90AbsoluteError: fit.p90AbsoluteError))
            try Self.write(file, to: output)
            Console.line("\(output): \(calibration.model.name), distance = \(EvalDistance.format(calibration.model.intercept, 3)) m + "
                + "\(EvalDistance.format(calibration.model.slope, 4)) m/dB · (power − rssi), filter \(calibration.filter.label)")
            Console.line("  measured power \(EvalDistance.format(calibration.referencePower, 1)) dBm (median RSSI at \(EvalDistance.format(calibration.referenceDistance, 2)) m); "
                + "\(calibration.sampleCount) samples; error on these samples: median \(EvalDistance.format(fit.medianAbsoluteError, 3)) m, "
                + "p90 \(EvalDistance.format(fit.p90AbsoluteError, 3)) m (check other recordings with `regionkit eval distance --model`)")
        }
    }

    /// The models `--model` takes by name (when no file of that name exists).
    static let builtInModels: [String: DistanceModelFile.Model] = [
        "android-nexus5": .curve(CurveDistanceModel(coefficient: CurveDistanceModel.androidNexus5.coefficient, exponent: CurveDistanceModel.androidNexus5.exponent,
                                                    offset: CurveDistanceModel.androidNexus5.offset, name: "curve")),
        "ios-curve": .curve(CurveDistanceModel(coefficient: CurveDistanceModel.coreLocation.coefficient, exponent: CurveDistanceModel.coreLocation.exponent,
                                               offset: CurveDistanceModel.coreLocation.offset, name: "curve")),
        "log-distance": .logDistance(LogDistanceModel(exponent: 2.7)),
    ]

    /// `--model FILE`: learns the device offset of FILE's model and writes FILE with it.
    private func calibrateDevice(_ path: String, _ recordings: [DistanceBenchmark.Recording]) throws {
        var file: DistanceModelFile
        if let builtIn = Self.builtInModels[path], !FileManager.default.fileExists(atPath: path) {
            guard let measuredPower else {
                throw RegionKitError(.invalidArgument, "--model \(path) (built in) needs --measured-power: the beacon's advertised RSSI at 1 m, dBm")
            }
            file = DistanceModelFile(model: builtIn, filter: filter.filter, referencePower: measuredPower)
        } else {
            file = try DistanceModelFile.load(path: path)
        }
        let power = measuredPower ?? file.referencePower
        let samples = recordings.flatMap(\.samples)
        let filtered = recordings.flatMap { file.filter.filtered($0.samples) }
        let learned = try DeviceOffsetCalibration.learn(model: file.model.distanceModel, measuredPower: power, samples: samples, filtered: filtered)
        let previous = file.deviceOffset
        file.deviceOffset = learned.offset
        try Self.write(file, to: output)
        let distances = learned.distances.map { EvalDistance.format($0, 2) }.joined(separator: ", ")
        Console.line("\(output): \(file.distanceModel.name) (\(path)'s model, filter \(file.filter.label)); device offset \(EvalDistance.format(learned.offset, 2)) dB "
            + "(this device reads \(learned.offset >= 0 ? "stronger" : "weaker") than the calibration receiver)"
            + (previous.map { "; replaces \(EvalDistance.format($0, 2)) dB" } ?? ""))
        Console.line("  from \(learned.samples) samples at \(distances) m with measured power \(EvalDistance.format(power, 1)) dBm; "
            + "spread (median |deviation|) \(EvalDistance.format(learned.spread, 2)) dB")
    }
}
