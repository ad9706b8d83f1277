import ArgumentParser
import Foundation
import RegionKit
import RegionKitConcurrency
import RegionKitHTTP

extension Bench {
    /// `regionkit bench beacons`: what the listing of `GET /v1/beacons` costs with many beacons
    /// heard, the way it is built now (``BeaconReport/mostRecent(_:from:)``: only the listed
    /// reports) against every report built and then cut (``BeaconReport/all(from:)``, as before),
    /// side by side in one process, alternating. Both lists are checked to be the same.
    ///
    /// ```sh
    /// swift build -c release --product regionkit
    /// .build/release/regionkit bench beacons --beacons 100000 --limit 1000
    /// ```
    struct Beacons: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "beacons",
            abstract: "GET /v1/beacons's listing with many beacons heard: the listed reports built, against every report built and then cut.",
            discussion: """
            The engine of 'bench ingest': one UUID-wide region and one region per beacon, so every beacon has two \
            sighting streams. Each beacon is heard once, by one of two scanners, at its own time. Timed: the listing \
            of the engine's snapshot (not the JSON encoding), best and median of --repeats alternating rounds. Run a \
            release build.
            """
        )

        @Option(help: "Beacons heard (1...1000000).")
        var beacons: Int = 100_000

        @Option(help: "Beacons listed (GET /v1/beacons?limit=; the API's default is 1000).")
        var limit: Int = 1_000

        @Option(help: "Alternating rounds (1...100).")
        var repeats: Int = 5

        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard (1...1_000_000).contains(beacons) else { throw ValidationError("--beacons must be within 1...1000000, not \(beacons)") }
            guard (1...100_000).contains(limit) else { throw ValidationError("--limit must be within 1...100000 (the API's range), not \(limit)") }
            guard (1...100).contains(repeats) else { throw ValidationError("--repeats must be within 1...100, not \(repeats)") }
        }

        func run() throws {
            var engine = try IngestRun.engine(beacons: beacons)
            let step = 1 / Double(beacons)
            for index in 0..<beacons {
                _ = engine.ingest(BeaconObservation(identity: IngestRun.identity(index), rssi: -60 - index % 30, measuredPower: -59,
                                                    timestamp: Timestamp(seconds: 1 + Double(index) * step),
                                                    scannerID: index % 2 == 0 ? "hall" : "kitchen"))
            }
            var cut = RoundTimes(), listed = RoundTimes()
            var reports = (cut: [BeaconReport](), listed: [BeaconReport](), total: 0)
            for _ in 0..<repeats {
                cut.measure { reports.cut = Array(BeaconReport.all(from: engine).prefix(limit)) }
                listed.measure { (reports.listed, reports.total) = BeaconReport.mostRecent(limit, from: engine) }
            }
            guard reports.cut == reports.listed, reports.total == beacons else {
                Console.error("the two listings differ: \(reports.cut.count) and \(reports.listed.count) reports, total \(reports.total) of \(beacons) beacons")
                throw ExitCode(1)
            }
            if output.json {
                var line = JSONLine()
                line.add("bench", "beacons")
                line.add("beacons", beacons)
                line.add("limit", limit)
                line.add("repeats", repeats)
                line.add("all_then_cut", cut)
                line.add("most_recent", listed)
                Console.line(line.text)
            } else {
                Console.line("GET /v1/beacons's listing, \(beacons) beacons heard (2 streams each), limit \(limit), \(repeats) alternating rounds")
                Console.line("  every report built, then cut   \(cut.summary)")
                Console.line("  only the listed reports built  \(listed.summary)" + String(format: "   (%.1f× faster, best against best)", cut.best / listed.best))
            }
        }
    }
}
