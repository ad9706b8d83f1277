import ArgumentParser
import Foundation
import RegionKit
import RegionKitSimulation

struct Scenarios: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the built-in scenarios or print one as JSON.",
        subcommands: [List.self, Show.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List built-in scenarios.")

        func run() {
            for name in Scenario.builtInNames {
                let scenario = Scenario.builtIn(name)!
                Console.line("\(name.padding(toLength: 14, withPad: " ", startingAt: 0)) \(scenario.description ?? "")")
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a built-in scenario as JSON (the scenario file format).")

        @Argument(help: "Built-in scenario name.")
        var name: String

        func run() throws {
            guard let scenario = Scenario.builtIn(name) else {
                Console.error("no built-in scenario '\(name)'; built-ins: \(Scenario.builtInNames.joined(separator: ", "))")
                throw ExitCode(1)
            }
            Console.line(String(decoding: try scenario.jsonData(), as: UTF8.self))
        }
    }
}
