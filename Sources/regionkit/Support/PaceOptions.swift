import ArgumentParser
import RegionKitSimulation

/// `--instant` and `--speed`, shared by simulate and replay: run as fast as possible, or in real
/// time scaled by a factor.
///
/// ```swift
/// @OptionGroup var pace: PaceOptions
/// try await runner.run(pace: pace.realTimeFactor) { printer.print($0) }
/// ```
struct PaceOptions: ParsableArguments {
    @Flag(help: "Run as fast as possible instead of at the scenario's or recording's own timing.")
    var instant = false

    // .unconditional: `--speed -1` is refused by the range check, not as a missing value.
    @Option(parsing: .unconditional, help: "Scenario or recording seconds per real second when not --instant.")
    var speed: Double = 1

    func validate() throws {
        let range = SimulationRunner.paceRange
        guard speed.isFinite, range.contains(speed) else {
            throw ValidationError("--speed must be within \(range.lowerBound)...\(Int(range.upperBound)), got \(speed)")
        }
    }

    /// The speed, or nil for --instant.
    var realTimeFactor: Double? { instant ? nil : speed }
}
