import ArgumentParser
import Foundation
import RegionKit
import RegionKitSimulation

/// `regionkit`: region monitoring and beacon ranging with Core Location's semantics, on Linux.
@main
struct RegionKitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "regionkit",
        abstract: "Region monitoring, beacon ranging and iBeacon tools with Core Location's semantics.",
        version: RegionKitVersion.current,
        subcommands: [Demo.self, Simulate.self, Replay.self, Run.self, Events.self, Bench.self, Regions.self, Scenarios.self, Scan.self, Advertise.self, Monitor.self, Eval.self, Calibrate.self]
    )

    /// ArgumentParser's `main()`, except that a `ValidationError` thrown once the command runs
    /// (an option checked with others, or against a file) is shown with that subcommand's usage:
    /// ArgumentParser showed the root's (`Usage: regionkit <subcommand>`) for those.
    static func main() async {
        var parsed: (any ParsableCommand)?
        do {
            var command = try await asyncParseAsRoot()
            parsed = command
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as ValidationError where parsed != nil {
            let usage = usageString(for: type(of: parsed!))
            // "regionkit bench store [--events <events>] …" → "regionkit bench store".
            let words = usage.split(separator: " ").prefix { !$0.hasPrefix("[") && !$0.hasPrefix("<") && !$0.hasPrefix("-") }
            FileHandle.standardError.write(Data("""
                Error: \(error.message)
                Usage: \(usage)
                  See '\(words.joined(separator: " ")) --help' for more information.

                """.utf8))
            Foundation.exit(ExitCode.validationFailure.rawValue)
        } catch {
            exit(withError: error)
        }
    }
}
