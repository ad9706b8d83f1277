import ArgumentParser
import Foundation
import RegionKit
import RegionKitHTTP

extension Bench {
    /// `regionkit bench scanners`: what `GET /v1/scanners` and every `/metrics` scrape cost with
    /// many beacons placed in rooms and many scanners: the listing (``ScannerReport/all(from:at:)``),
    /// and its room counts both ways side by side, alternating — counted from
    /// ``MonitoringEngine/nearestScanners`` (a dictionary of every placed beacon, as before) and
    /// ``MonitoringEngine/beaconsPerRoom`` (counted in place). Both counts are checked equal.
    ///
    /// ```sh
    /// swift build -c release --product regionkit
    /// .build/release/regionkit bench scanners --beacons 100000 --scanners 1000
    /// ```
    struct Scanners: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "scanners",
            abstract: "GET /v1/scanners and /metrics with many beacons in rooms: the listing, and its room counts two ways.",
            discussion: """
            An engine under the responsive profile with rooms (the nearest-scanner policy), one UUID-wide region. \
            Each beacon is heard by one scanner (beacon i by scanner i mod --scanners) for longer than the policy's \
            dwell, so it is placed in that scanner's room. Timed: the room counts built from the placed beacons' \
            dictionary and counted in place, and the whole listing of the scanners at the engine's time (not the \
            JSON encoding); best and median of --repeats alternating rounds. Run a release build.
            """
        )

        @Option(help: "Beacons placed in rooms (1...1000000).")
        var beacons: Int = 100_000

        @Option(help: "Scanners, one room each (1...65536, the engine's channel limit).")
        var scanners: Int = 100

        @Option(help: "Alternating rounds (1...100).")
        var repeats: Int = 5

        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard (1...1_000_000).contains(beacons) else { throw ValidationError("--beacons must be within 1...1000000, not \(beacons)") }
            guard (1...MonitoringEngine.maximumChannels).contains(scanners) else {
                throw ValidationError("--scanners must be within 1...\(MonitoringEngine.maximumChannels), not \(scanners)")
            }
            guard (1...100).contains(repeats) else { throw ValidationError("--repeats must be within 1...100, not \(repeats)") }
            guard scanners <= beacons else {
                throw ValidationError("--scanners (\(scanners)) must not exceed --beacons (\(beacons)): each scanner hears its own beacons, so one without any would never be heard")
            }
        }

        func run() throws {
            var profile = MonitoringProfile.responsive
            let policy = NearestScannerPolicy()
            profile.nearestScanner = policy
            var engine = MonitoringEngine(profile: profile, sources: [.beacon: .authorized])
            _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "all", uuid: IngestRun.uuid)), at: .zero)
            // Three sightings each, spread over more than the dwell: the first places a beacon
            // heard by one scanner only at once; the others keep it there.
            let rounds = 3, spacing = (policy.dwell + 1) / Double(rounds - 1)
            let step = min(1, spacing) / Double(beacons)
            for round in 0..<rounds {
                for index in 0..<beacons {
                    _ = engine.ingest(BeaconObservation(identity: IngestRun.identity(index), rssi: -60 - index % 30, measuredPower: -59,
                                                        timestamp: Timestamp(seconds: 1 + Double(round) * spacing + Double(index) * step),
                                                        scannerID: "room-\(index % scanners)"))
                }
            }
            let placed = engine.nearestScanners.count
            guard placed == beacons else {
                Console.error("\(placed) of \(beacons) beacons placed in a room: the input does not exercise the counts")
                throw ExitCode(1)
            }
            var dictionary = RoundTimes(), inPlace = RoundTimes(), listing = RoundTimes()
            var counts = (dictionary: [String: Int](), inPlace: [String: Int]())
            var listed = 0
            for _ in 0..<repeats {
                dictionary.measure {
                    var inRoom: [String: Int] = [:]
                    for scanner in engine.nearestScanners.values { inRoom[scanner, default: 0] += 1 }
                    counts.dictionary = inRoom
                }
                inPlace.measure { counts.inPlace = engine.beaconsPerRoom }
                listing.measure { listed = ScannerReport.all(from: engine, at: engine.now).count }
            }
            guard counts.dictionary == counts.inPlace, counts.inPlace.values.reduce(0, +) == beacons else {
                Console.error("the room counts differ: \(counts.dictionary.values.reduce(0, +)) beacons in \(counts.dictionary.count) rooms from the dictionary, \(counts.inPlace.values.reduce(0, +)) in \(counts.inPlace.count) counted in place, of \(beacons)")
                throw ExitCode(1)
            }
            guard listed == scanners else {
                Console.error("\(listed) of \(scanners) scanners listed")
                throw ExitCode(1)
            }
            if output.json {
                var line = JSONLine()
                line.add("bench", "scanners")
                line.add("beacons", beacons)
                line.add("scanners", scanners)
                line.add("repeats", repeats)
                line.add("counts_from_dictionary", dictionary)
                line.add("counts_in_place", inPlace)
                line.add("listing", listing)
                Console.line(line.text)
            } else {
                Console.line("GET /v1/scanners, \(beacons) beacons placed in the rooms of \(scanners) scanners, \(repeats) alternating rounds")
                Console.line("  room counts from every placed beacon's dictionary  \(dictionary.summary)")
                Console.line("  room counts in place (beaconsPerRoom)              \(inPlace.summary)"
                             + String(format: "   (%.1f× faster, best against best)", dictionary.best / inPlace.best))
                Console.line("  the whole listing (ScannerReport.all)              \(listing.summary)")
            }
        }
    }
}
