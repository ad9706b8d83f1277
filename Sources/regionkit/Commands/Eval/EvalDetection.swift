import ArgumentParser
import Foundation
import RegionKit
import RegionKitConcurrency
import RegionKitEvaluation
import RegionKitSimulation

/// `regionkit eval detection`: the simulated sweep of ``DetectionSweep``, one row per condition × profile.
struct EvalDetection: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detection",
        abstract: "Exit latency and false exits per profile, simulated across advertising intervals, loss rates and loss patterns.",
        discussion: """
        Drives the real monitoring engine (one per profile, all fed the same sightings) with many \
        beacons per engine. Stationary beacons never leave: each of their exits is false (rate per \
        1000 beacon-hours; "0 in N h" shows the resolution; "settled" counts those after a beacon's \
        first 10 minutes). Departing beacons stay 60–300 s, stop \
        being heard at once and come back 180 s later: exit p50/p95 is the time from stopping to \
        didExitRegion; "false exits after arrival" counts exits while they were still there. \
        Shadowing "bursty" is a Gilbert–Elliott channel with the same average loss: blackouts of \
        --burst-mean seconds on average carry --burst-share of the losses, each beacon's link \
        blacked out on its own; "shared" has the same blackouts, but the scanner's: every beacon of an \
        engine is blacked out at once, with independent losses in between. Without --interval, --loss \
        and --shadowing the standard sweep runs: 0.1 and 1 s × 10/30/50/70% × none/bursty, 1 s at 1% \
        (a periodic low-loss stream), shared at 0.1 s × 10/30/50% and 1 s × 30%. Seeded: the same \
        options give the same figures, whatever --jobs.
        """
    )

    @Option(name: .customLong("profile"), help: "A profile to evaluate (repeatable; default: corelocation, altbeacon, responsive).")
    var profiles: [ProfileOption] = []

    @Option(help: "Stationary beacon-hours per condition (sets the false-exit resolution).")
    var hours: Double = 1_000

    @Option(help: "Departures (exit-latency samples) per condition.")
    var departures: Int = 1_000

    @Option(parsing: .unconditional, help: "Seed of every random draw.")
    var seed: UInt64 = 1

    @Option(name: .customLong("interval"), help: "Advertising interval in seconds (repeatable; with --loss/--shadowing the default is 0.1 and 1).")
    var intervals: [Double] = []

    @Option(name: .customLong("loss"), help: "Average frame loss, 0..<1 (repeatable; default: 0.1, 0.3, 0.5, 0.7).")
    var losses: [Double] = []

    @Option(name: .customLong("shadowing"), help: "Loss pattern: none (independent), bursty or shared (repeatable; with --interval/--loss the default is none and bursty).")
    var shadowings: [DetectionSweep.Shadowing] = []

    @Option(help: "Bursty shadowing: mean blackout length in seconds.")
    var burstMean: Double = 1

    @Option(help: "Bursty shadowing: share of the lost frames that fall in blackouts, 0...1.")
    var burstShare: Double = 0.5

    @Option(help: "How long departing beacons stay before they stop, seconds: one value or MIN...MAX (uniform; default 60...300). A short stay (say 2.5) measures how fast new streams exit.")
    var presence: String?

    @Option(help: "Departing beacons walk away at 1 m/s from 3 m over the last SECONDS of each stay (their RSSI fades by the path loss) before they stop being heard (default 0: they stop at once).")
    var walkAway: Double = 0

    @Option(help: "Beacons monitored by each engine.")
    var beaconsPerEngine: Int = 32

    @Option(help: "Stationary beacons heard beside the departing ones by each engine's scanner, all the time (a gateway's fixed beacons among visitors); not scored (default 0).")
    var companions: Int = 0

    @Option(help: "Shards simulated at once (default: the number of cores).")
    var jobs: Int?

    @Flag(help: "Print one JSON object per line per profile and condition instead of a table.")
    var json = false

    func run() async throws {
        try await Console.reportingErrors {
            let chosen = profiles.isEmpty ? [MonitoringProfile.coreLocation, .altBeacon, .responsive] : profiles.map(\.profile)
            let standard = intervals.isEmpty && losses.isEmpty && shadowings.isEmpty
            let conditions = standard ? DetectionSweep.standardConditions : (intervals.isEmpty ? [0.1, 1] : intervals).flatMap { interval in
                (shadowings.isEmpty ? [DetectionSweep.Shadowing.none, .bursty] : shadowings).flatMap { shadowing in
                    (losses.isEmpty ? [0.1, 0.3, 0.5, 0.7] : losses).map {
                        DetectionSweep.Condition(advertisingInterval: interval, lossRate: $0, shadowing: shadowing)
                    }
                }
            }
            var sweep = DetectionSweep(conditions: conditions, profiles: chosen, seed: seed)
            sweep.stationaryHours = hours
            sweep.departures = departures
            sweep.meanBurst = burstMean
            sweep.burstShare = burstShare
            sweep.beaconsPerEngine = beaconsPerEngine
            if let presence { sweep.presence = try Self.parsePresence(presence) }
            sweep.walkAway = walkAway
            sweep.companions = companions
            try sweep.validate()
            let concurrency = jobs ?? ProcessInfo.processInfo.activeProcessorCount
            guard (1...1024).contains(concurrency) else { throw RegionKitError(.invalidArgument, "--jobs \(concurrency) must be within 1...1024") }

            if !json {
                let lifetime = sweep.shards.first { $0.kind == .stationary }?.lifetime
                Console.line("Detection sweep, seed \(seed): per condition \(DetectionReport.hours(hours)) stationary beacon-hours"
                             + (lifetime.map { String(format: " (%.1f h per beacon)", $0 / 3600) } ?? "")
                             + ", \(departures) departures staying \(String(format: "%g", sweep.presence.lowerBound))"
                             + (sweep.presence.lowerBound == sweep.presence.upperBound ? "" : "–\(String(format: "%g", sweep.presence.upperBound))")
                             + " s" + (walkAway > 0 ? String(format: ", walking away at %g m/s over their last %g s", DetectionSweep.walkSpeed, walkAway) : "")
                             + "; \(beaconsPerEngine) beacons per engine"
                             + (companions > 0 ? ", beside \(companions) stationary companions in the departures' engines." : "."))
                Console.line("Bursty and shared shadowing: blackouts of \(burstMean) s on average carrying \(Int((burstShare * 100).rounded()))% of the losses"
                             + " (bursty: each link its own; shared: the scanner's, all beacons at once).")
                Console.line("")
                Console.line(DetectionReport.tableHeader)
            }
            let interactive = isatty(STDERR_FILENO) != 0
            let started = ContinuousClock.now
            let reports = await sweep.run(concurrency: concurrency) { done, total in
                if interactive { Console.status("\r  \(done)/\(total) shards") }
            }
            if interactive { Console.status("\r") }
            var previous: DetectionSweep.Condition?
            for report in reports {
                if json {
                    Console.line(report.jsonLine.text)
                } else {
                    if let previous, previous != report.condition { Console.line("") }
                    Console.line(report.tableRow)
                    previous = report.condition
                }
            }
            if !json {
                let elapsed = started.duration(to: .now)
                Console.line("")
                Console.line(String(format: "%.0f s with %d jobs.", elapsed.inSeconds, concurrency))
            }
        }
    }
}

extension EvalDetection {
    /// `--presence`: `SECONDS` or `MIN...MAX`, finite, positive, MIN ≤ MAX.
    static func parsePresence(_ text: String) throws -> ClosedRange<Double> {
        let parts = text.components(separatedBy: "...")
        let values = parts.map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard (1...2).contains(parts.count), let low = values.first ?? nil, let high = values.last ?? nil,
              low.isFinite, high.isFinite, low > 0, low <= high else {
            throw RegionKitError(.invalidArgument, "--presence '\(text)': expected SECONDS or MIN...MAX with 0 < MIN ≤ MAX")
        }
        return low...high
    }
}

extension DetectionSweep.Shadowing: ExpressibleByArgument {}
