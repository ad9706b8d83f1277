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
        subcommands: [Demo.self, Simulate.self, Replay.self, Run.self, Events.self, Bench.self, Regions.self, Scenarios.self, Scan.self, Advertise.self, Monitor.self, Eval.self, Calibrate.self]
    )
}

/// Shared output helpers: unbuffered lines on stdout, errors on stderr with a non-zero exit.
enum Console {
    static func line(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    static func error(_ text: String) {
        write("regionkit: error: \(text)\n", to: STDERR_FILENO)
    }

    /// Writes straight to the file descriptor: no buffering, so piped JSON lines arrive at once.
    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Runs `body`, turning RegionKit errors into a message on stderr and exit status 1.
    static func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as RegionKitError {
            Console.error(error.message + (error.cause.map { " (\($0))" } ?? ""))
            throw ExitCode(1)
        }
    }
}

/// Profile names accepted on the command line.
struct ProfileOption: ExpressibleByArgument {
    var profile: MonitoringProfile

    init?(argument: String) {
        guard let profile = MonitoringProfile.named(argument) else { return nil }
        self.profile = profile
    }

    static var allValueStrings: [String] { ["corelocation", "altbeacon", "responsive"] }
}
