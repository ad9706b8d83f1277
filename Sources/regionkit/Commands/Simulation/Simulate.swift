import ArgumentParser
import Foundation
import RegionKit
import RegionKitService
import RegionKitSimulation

struct Simulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a simulated scenario (built-in name or JSON file) through the monitoring engine.",
        discussion: """
        Built-in scenarios: \(Scenario.builtInNames.joined(separator: ", ")). `regionkit scenarios show NAME` \
        prints one as JSON to start your own file from.
        With --json, one JSON object per line: {"t", "type", "region", "state"?, "beacons"?, "error"?, "evidence"?}; \
        only the six Core Location callback types unless --all-events.
        """
    )

    @Argument(help: "A built-in scenario name or a path to a scenario JSON file.")
    var scenario: String

    @OptionGroup var output: EventOutputOptions

    @OptionGroup var pace: PaceOptions

    @Option(help: "Monitoring profile: corelocation, altbeacon or responsive (also the experimental periodic and evidence, the reference cautiousprior; default: the scenario's, else responsive).")
    var profile: ProfileOption?

    @Option(help: "A distance model file from `regionkit calibrate` (its model and RSSI filter replace the profile's).")
    var distanceModel: String?

    @Option(parsing: .unconditional, help: "Random seed for the radio model (default: the scenario's, else 1).")
    var seed: UInt64?

    func run() async throws {
        try await Console.reportingErrors {
            let loaded = try Scenario.builtInOrFile(scenario)
            var chosenProfile = profile?.profile
            if let distanceModel {
                var withModel = chosenProfile ?? loaded.profile.flatMap(MonitoringProfile.named) ?? .responsive
                withModel.use(try DistanceModelFile.load(path: distanceModel))
                chosenProfile = withModel
            }
            let runner = try SimulationRunner(scenario: loaded, profile: chosenProfile, seed: seed)
            let printer = output.printer()
            if !output.json {
                Console.line("Scenario \(loaded.name) — profile \(runner.profile.name), seed \(runner.seed)")
                if let description = loaded.description { Console.line(description) }
            }
            try await runner.run(pace: pace.realTimeFactor) { printer.print($0) }
        }
    }
}
