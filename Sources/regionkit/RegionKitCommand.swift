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
}
