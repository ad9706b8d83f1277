import ArgumentParser
import Foundation
import RegionKit
import RegionKitBluetooth
import RegionKitHCI

extension Bench {
    /// `regionkit bench ingest`: advertisement ingest throughput on one core, from raw HCI event
    /// bytes to engine state, for several beacon populations.
    struct Ingest: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Advertisement ingest per second on one core: HCI LE Advertising Report bytes → iBeacon decode → match against N regions → stream filter → state update.",
            discussion: """
            For each population N, N beacons (one proximity UUID, distinct major/minor) each have their own \
            monitored region (UUID:major:minor, so matching is against N regions), and one UUID-wide region \
            matches them all. The reports are pre-encoded HCI events (legacy, one report each; every 16th is \
            a non-iBeacon advertisement), visiting the beacons in a seeded random order with RSSI jitter, \
            10 advertisements per second per beacon in virtual time. Reported: reports/s and ns/report over \
            the whole timed loop (all events the engine produced are counted, so nothing is optimised away).
            """
        )

        @Option(help: "Comma-separated beacon populations.")
        var beacons: String = "10,1000,100000"

        @Option(help: "Reports decoded and ingested per population (after a warm-up pass over every beacon).")
        var reports: Int = 4_000_000

        @Option(help: "Repetitions per population; the best is reported (least disturbed by other load).")
        var repeats: Int = 3

        @Option(help: "Random seed of the report order.")
        var seed: UInt64 = 1

        func run() throws {
            let populations = try beacons.split(separator: ",").map { text -> Int in
                guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value > 0, value <= 1_000_000 else {
                    throw ValidationError("--beacons: '\(text)' is not a population between 1 and 1000000")
                }
                return value
            }
            guard reports > 0, repeats > 0 else { throw ValidationError("--reports and --repeats must be > 0") }
            Console.line("ingest throughput, one core, \(reports) reports per run, best of \(repeats)")
            Console.line("  beacons   regions   reports/s      ns/report   events   iBeacon reports")
            for population in populations {
                var best: IngestRun?
                for _ in 0..<repeats {
                    let run = try IngestRun.measure(beacons: population, reports: reports, seed: seed)
                    if best == nil || run.seconds < best!.seconds { best = run }
                }
                let run = best!
                Console.line(String(format: "  %7d   %7d   %11.0f   %9.1f   %6d   %d",
                                    population, population + 1, Double(run.reports) / run.seconds,
                                    run.seconds / Double(run.reports) * 1e9, run.events, run.observations))
            }
        }
    }
}
