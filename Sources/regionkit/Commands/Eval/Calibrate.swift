import ArgumentParser
import Foundation
import RegionKit
import RegionKitEvaluation

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
        """
    )

    @Argument(help: "Recordings: CSV time,rssi,distance (cm).")
    var files: [String]

    @Option(help: "Where to write the model file (JSON).")
    var output: String

    @Option(help: "RSSI filter: raw, median:SECONDS, mean:SECONDS, trimmed-mean:SECONDS:FRACTION or exponential:HALF_LIFE.")
    var filter: RSSIFilterOption = RSSIFilterOption(filter: DistanceBenchmark.defaultFilter)

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one recording FILE") }
        try filter.validate()
    }

    func run() async throws {
        try await Console.reportingErrors {
            let recordings = try EvalDistance.recordings(files)
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
            do {
                try Data(file.json.utf8).write(to: URL(fileURLWithPath: output))
            } catch {
                throw RegionKitError(.invalidArgument, "\(output): cannot write the model file", cause: error)
            }
            Console.line("\(output): \(calibration.model.name), distance = \(EvalDistance.format(calibration.model.intercept, 3)) m + "
                + "\(EvalDistance.format(calibration.model.slope, 4)) m/dB · (power − rssi), filter \(calibration.filter.label)")
            Console.line("  measured power \(EvalDistance.format(calibration.referencePower, 1)) dBm (median RSSI at \(EvalDistance.format(calibration.referenceDistance, 2)) m); "
                + "\(calibration.sampleCount) samples; error on these samples: median \(EvalDistance.format(fit.medianAbsoluteError, 3)) m, "
                + "p90 \(EvalDistance.format(fit.p90AbsoluteError, 3)) m (check other recordings with `regionkit eval distance --model`)")
        }
    }
}
