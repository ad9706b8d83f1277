import ArgumentParser
import RegionKit
import RegionKitSimulation

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Watch the museum scenario live: a visitor walks past four exhibits (simulated radio, no hardware)."
    )

    @Option(parsing: .unconditional, help: "Virtual seconds per real second.")
    var speed: Double = 8

    @Option(help: "Monitoring profile: corelocation, altbeacon or responsive (also the experimental periodic and evidence, the reference cautiousprior).")
    var profile: ProfileOption?

    func validate() throws {
        let range = SimulationRunner.paceRange
        guard speed.isFinite, range.contains(speed) else {
            throw ValidationError("--speed must be within \(range.lowerBound)...\(Int(range.upperBound)), got \(speed)")
        }
    }

    func run() async throws {
        try await Console.reportingErrors {
            let scenario = Scenario.museum
            let runner = try SimulationRunner(scenario: scenario, profile: profile?.profile)
            Console.line("""
            RegionKit demo — museum (spec §3), profile \(runner.profile.name), \(speed.compactDescription)× speed
            Four exhibit beacons share one UUID (major = exhibit number), 12 m apart. A visitor walks in,
            stops 20 s beside each exhibit and walks out. The app monitors the museum region, ranges
            while inside, and shows an exhibit when the nearest beacon is "near".
            Virtual time ~\(Int(scenario.duration)) s, about \(Int(saturating: scenario.duration / speed)) s real.

            """)
            let printer = EventPrinter(json: false, allEvents: true)
            try await runner.run(pace: speed) { printer.print($0) }
            Console.line("\nDone. Try: regionkit simulate two-beacons --instant --profile corelocation")
        }
    }
}
