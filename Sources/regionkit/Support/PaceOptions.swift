import ArgumentParser

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

    @Option(help: "Scenario or recording seconds per real second when not --instant.")
    var speed: Double = 1

    func validate() throws {
        guard speed.isFinite, speed > 0 else { throw ValidationError("--speed must be a positive number, got \(speed)") }
    }

    /// The speed, or nil for --instant.
    var realTimeFactor: Double? { instant ? nil : speed }
}
