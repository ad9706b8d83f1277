import ArgumentParser
import Foundation
import RegionKit

extension Bench {
    /// `regionkit bench memory`: resident memory per tracked beacon.
    struct Memory: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resident memory (RSS) per tracked beacon with many beacons present at once.",
            discussion: """
            Two layouts, each measured in a fresh child process (RSS never shrinks reliably after frees): \
            'uuid-region' — one UUID-wide region tracking every beacon as a sighting stream (a gateway \
            watching a fleet); 'region-per-beacon' — one monitored region per beacon (UUID:major:minor), each \
            inside with its stream and timer. Every beacon is heard once within one second, so all are present. \
            Reported: (RSS after − RSS before) ÷ beacons, engine state only (the scanner's de-duplication table \
            holds only the last 0.5 s of advertisers).
            """
        )

        @Option(help: "Beacons present at once.")
        var beacons: Int = 1_000_000

        @Option(help: "Measure one layout in this process: uuid-region or region-per-beacon (default: both, in child processes).")
        var layout: String?

        func run() throws {
            guard beacons > 0, beacons <= 10_000_000 else { throw ValidationError("--beacons must be within 1...10000000") }
            guard let layout else {
                Console.line("resident memory per tracked beacon, \(beacons) beacons present")
                for layout in ["uuid-region", "region-per-beacon"] {
                    Console.line(try Self.child(arguments: ["bench", "memory", "--beacons", "\(beacons)", "--layout", layout]))
                }
                return
            }
            guard ["uuid-region", "region-per-beacon"].contains(layout) else {
                throw ValidationError("--layout must be uuid-region or region-per-beacon, not '\(layout)'")
            }
            let before = Self.residentBytes()
            var engine = MonitoringEngine(profile: .responsive, sources: [.beacon: .authorized])
            if layout == "uuid-region" {
                _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "fleet", uuid: IngestRun.uuid)), at: .zero)
            } else {
                for index in 0..<beacons {
                    let identity = IngestRun.identity(index)
                    _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "b\(index)", uuid: identity.uuid, major: identity.major, minor: identity.minor)), at: .zero)
                }
            }
            let step = 1 / Double(beacons)
            for index in 0..<beacons {
                _ = engine.ingest(BeaconObservation(identity: IngestRun.identity(index), rssi: -70, measuredPower: -59, timestamp: Timestamp(seconds: 1 + Double(index) * step)))
            }
            let after = Self.residentBytes()
            let streams = engine.monitoredRegions.reduce(0) { $0 + (engine.monitoredRegion($1.identifier)?.streams.count ?? 0) }
            guard streams == beacons else {
                Console.error("expected \(beacons) live streams, found \(streams)")
                throw ExitCode(1)
            }
            let name = layout.padding(toLength: 18, withPad: " ", startingAt: 0)
            Console.line("  " + name + String(format: " %7.0f bytes/beacon   (RSS %.1f → %.1f MB, %d regions, %d streams)",
                                Double(after - before) / Double(beacons), Double(before) / 1e6, Double(after) / 1e6,
                                engine.monitoredRegions.count, streams))
            withExtendedLifetime(engine) {}
        }

        /// Resident set size of this process, bytes (Linux: /proc/self/statm, second field, pages).
        static func residentBytes() -> Int {
            guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
            let fields = text.split(separator: " ")
            guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        }

        /// Runs this executable with `arguments`; its standard output, trimmed.
        static func child(arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw RegionKitError(.malformedInput, "bench memory child \(arguments.joined(separator: " ")) exited with status \(process.terminationStatus)")
            }
            return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .newlines)
        }
    }
}
