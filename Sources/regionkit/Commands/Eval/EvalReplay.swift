import ArgumentParser
import Foundation
import RegionKit
import RegionKitEvaluation
import RegionKitGateway
import RegionKitSimulation

/// `regionkit eval replay`: detection quality of each profile on real gateway recordings.
struct EvalReplay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Detection quality on real gateway recordings: false exits, exit latency, flaps, room assignment.",
        discussion: """
        Replays each recording (concatenated JSON sightings, optionally gzip) through the monitoring engine in \
        virtual time, once per profile, with one beacon region per stream (each beacon identity bound to each \
        scanner that heard it, UUID:MAJOR:MINOR@SCANNER; no region limit) and nearest-scanner tracking on. \
        It reports: false exits of the beacons the README says never moved, at their own scanner (count and per \
        1000 beacon-hours); exit latency from a stream's last sighting to didExitRegion, p50/p95/max per measured \
        rate class (≈10 Hz, ≈1 Hz, ≈0.2 Hz), for every silence of at least --silence seconds and every stream's \
        last sighting; flaps (an exit undone by a re-entry within --flap-window seconds) on every stream; and the \
        share of time the nearest-scanner decision names the room of the README's timeline (transitions \
        excluded, --tolerance seconds dropped at each end of every period). Each stream end is listed with how \
        long the stream had been heard and its longest gap in the --recent-window seconds before: a detector \
        that exits sooner than that gap after the last sighting would have exited during the gap too (a flap, \
        unless the beacon really left and came back within it), so for the departures (ends where the scanner \
        went on) it is reported per class as a rough floor for a detector that does not flap. \
        Without FILE: every *.json.gz in $REGIONKIT_FIXTURES/beacon-runs (default ../shared/fixtures). \
        Without --profile: corelocation, responsive, and altbeacon when that profile exists. \
        With --json, one object per line per recording × profile.
        """
    )

    @Argument(help: "Gateway recordings (.json or .json.gz). Default: the beacon runs in the fixtures folder.")
    var files: [String] = []

    @Option(name: .customLong("profile"), help: "A monitoring profile name (repeatable). Default: corelocation, responsive (and altbeacon if defined).")
    var profiles: [String] = []

    @Flag(help: "Print one JSON object per line per recording × profile instead of tables.")
    var json = false

    @Option(help: "Seconds without a sighting that count as a stream ending (shorter gaps are reception).")
    var silence: Double = 60

    @Option(parsing: .unconditional, help: "Seconds the replay runs past the last sighting so exits at the end can fire.")
    var tail: Double = 300

    @Option(help: "An exit followed by a re-entry within this many seconds is a flap.")
    var flapWindow: Double = 30

    @Option(help: "Seconds each ground-truth room period gives up at both ends (the README's times are rough).")
    var tolerance: Double = 15

    @Option(help: "Seconds before each stream end over which its longest gap is reported (a rough floor of the latency of a detector that does not flap).")
    var recentWindow: Double = 120

    /// The longest window any of the options may give, seconds (about 31 years: no recording is
    /// longer; a bound so that an absurd value is named, not carried into the tables).
    static let maximumSeconds: Double = 1e9

    /// Profiles tried when none is named; those the build does not define are skipped.
    static let defaultProfileNames = ["corelocation", "responsive", "altbeacon"]

    func validate() throws {
        let day = Self.maximumSeconds
        guard silence.isFinite, silence > 0, silence <= day else {
            throw ValidationError("--silence must be a positive number of seconds up to \(day.compactDescription), got \(silence)")
        }
        for (option, value) in [("--tail", tail), ("--flap-window", flapWindow), ("--tolerance", tolerance), ("--recent-window", recentWindow)] {
            guard value.isFinite, (0...day).contains(value) else {
                throw ValidationError("\(option) must be within 0...\(day.compactDescription) seconds, got \(value)")
            }
        }
        for name in profiles where MonitoringProfile.named(name) == nil {
            let known = Self.defaultProfileNames.filter { MonitoringProfile.named($0) != nil }
            throw ValidationError("unknown profile '\(name)' (known: \(known.joined(separator: ", ")))")
        }
    }

    func run() async throws {
        try await Console.reportingErrors {
            let chosen = (profiles.isEmpty ? Self.defaultProfileNames : profiles).compactMap(MonitoringProfile.named)
            let paths = try files.isEmpty ? Self.defaultRecordings() : files
            // Read every file first: a missing or unreadable one stops the run before any output; a
            // damaged one is evaluated on what it still holds, reported, and makes the exit status 1.
            let recordings = try paths.map { try GatewayRecording(path: $0) }
            var damaged: [RegionKitError] = []
            for recording in recordings {
                for warning in recording.readReport.warnings { Console.warning("\(recording.path): \(warning)") }
                if let error = recording.readReport.error(path: recording.path) {
                    Console.warning(error.message + " (evaluating the sightings read)")
                    damaged.append(error)
                }
            }
            let groundTruth = try GroundTruthCatalog.beaconRuns()
            let options = ReplayEvaluator.Options(silence: silence, tail: tail, flapWindow: flapWindow, tolerance: tolerance,
                                                  recentWindow: recentWindow)
            if !json { Console.line(Self.legend(options)) }
            var totals: [[ReplayEvaluation.ClassFigures]] = chosen.map { _ in StreamRateClass.allCases.map { ReplayEvaluation.ClassFigures(rateClass: $0) } }
            for recording in recordings {
                let truth = groundTruth.truth(forRecording: recording.fileName)
                let results = try chosen.map { profile in
                    try ReplayEvaluator(profile: profile, options: options).evaluate(
                        recording: recording.fileName, observations: recording.observations,
                        originMilliseconds: recording.originMilliseconds, groundTruth: truth)
                }
                for (index, result) in results.enumerated() {
                    for (classIndex, rateClass) in StreamRateClass.allCases.enumerated() { totals[index][classIndex].merge(result.figures(rateClass)) }
                }
                if json {
                    for result in results {
                        var line = result.jsonLine()
                        line.add("max_out_of_order_s", recording.maximumLateness, decimals: 3)
                        var lateness = JSONLine()
                        for (scanner, value) in recording.medianLateness.sorted(by: { $0.key < $1.key }) { lateness.add(scanner, value, decimals: 3) }
                        line.add("median_lateness_s", object: lateness)
                        Console.line(line.text)
                    }
                } else {
                    Console.line(Self.table(recording, results))
                }
            }
            if !json && !recordings.isEmpty {
                Console.line(Self.classTable(profiles: chosen.map(\.name), totals: totals, recordings: recordings.count))
            }
            if !damaged.isEmpty {
                throw RegionKitError(.malformedInput, "\(damaged.count) damaged recording(s): the figures above leave out what could not be read")
            }
        }
    }

    /// The beacon runs in the fixtures folder ($REGIONKIT_FIXTURES, else ../shared/fixtures).
    static func defaultRecordings() throws -> [String] {
        let root = ProcessInfo.processInfo.environment["REGIONKIT_FIXTURES"].flatMap { $0.isEmpty ? nil : $0 } ?? "../shared/fixtures"
        let folder = (root as NSString).appendingPathComponent("beacon-runs")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let recordings = names.filter { $0.hasSuffix(".json.gz") || $0.hasSuffix(".json") }.sorted()
        guard !recordings.isEmpty else {
            throw RegionKitError(.malformedInput, "no FILE given and no gateway recordings (*.json.gz) in \(folder): name the files, or set REGIONKIT_FIXTURES to the shared fixtures folder")
        }
        return recordings.map { (folder as NSString).appendingPathComponent($0) }
    }

    // MARK: - Tables

    static func legend(_ options: ReplayEvaluator.Options) -> String {
        """
        Detection quality on gateway recordings (one region per beacon × scanner stream, virtual time, no region limit).
        Stream end: a silence ≥ \(number(options.silence)) s, or a stream's last sighting (the replay runs \(number(options.tail)) s on); \
        latency = last sighting → didExitRegion. Flap: an exit undone by a re-entry within \(number(options.flapWindow)) s. \
        Room: share of labelled time (transitions excluded, \(number(options.tolerance)) s dropped at each end of a period) \
        the nearest-scanner decision names the README's room.
        """
    }

    static func table(_ recording: GatewayRecording, _ results: [ReplayEvaluation]) -> String {
        guard let first = results.first else { return "\(recording.fileName): no profile to evaluate" }
        let classes = StreamRateClass.allCases.map { "\(first.streamCount($0)) \($0.label)" }.joined(separator: ", ")
        let lateness = recording.medianLateness.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.2f", $0.value))" }.joined(separator: ", ")
        var out = "\n\(recording.fileName): \(first.sightings) sightings over \(String(format: "%.1f", first.duration)) s, "
        out += "\(first.streams.count) streams (\(classes))\n"
        out += "  file order: sightings up to \(String(format: "%.2f", recording.maximumLateness)) s behind newer ones; median per scanner (s): \(lateness)\n\n"

        var rows: [[String]] = [["", ] + results.map(\.profile)]
        rows.append(["false exits, stationary beacons at own scanner"] + results.map { $0.falseExits.map { "\($0.count)" } ?? "n/a" })
        if let exits = first.falseExits {
            rows.append(["  per 1000 beacon-hours (\(exits.streams) streams, \(String(format: "%.2f", exits.beaconHours)) h)"]
                        + results.map { $0.falseExits?.perThousandBeaconHours.map { String(format: "%.0f", $0) } ?? "n/a" })
        }
        rows.append(["exits of carried beacons during README stays"] + results.map { $0.stayExits.map { "\($0.count)" } ?? "n/a" })
        if let stays = first.stayExits {
            rows.append(["  per 1000 beacon-hours (\(stays.streams) stays, \(String(format: "%.2f", stays.beaconHours)) h)"]
                        + results.map { $0.stayExits?.perThousandBeaconHours.map { String(format: "%.0f", $0) } ?? "n/a" })
        }
        for rateClass in StreamRateClass.allCases {
            rows.append(["exit latency \(rateClass.label), p50/p95/max s (ends)"] + results.map { result in
                let summary = result.latency(rateClass)
                guard summary.ends > 0 else { return "-" }
                var cell = "-"
                if let p50 = summary.p50, let p95 = summary.p95, let max = summary.max {
                    cell = String(format: "%.1f/%.1f/%.1f", p50, p95, max)
                }
                cell += " (\(summary.ends)\(summary.missed > 0 ? ", \(summary.missed) no exit" : ""))"
                return cell
            })
        }
        if first.falseExits != nil {
            rows.append(["false exits, stationary, ≈10/≈1/≈0.2 Hz"] + results.map { result in
                StreamRateClass.allCases.map { "\(result.figures($0).falseExits)" }.joined(separator: "/")
            })
        }
        rows.append(["flaps (re-entry ≤ \(number(first.options.flapWindow)) s), ≈10/≈1/≈0.2 Hz"] + results.map { result in
            StreamRateClass.allCases.map { "\(result.flapCount($0))" }.joined(separator: "/")
        })
        for (label, pick) in [("room assignment, carried beacons", \ReplayEvaluation.carriedRooms),
                              ("room assignment, stationary beacons", \ReplayEvaluation.stationaryRooms)] {
            rows.append([label] + results.map { result in
                guard let rooms = result[keyPath: pick] else { return "n/a" }
                let total = rooms.total
                guard let fraction = total.fraction else { return "nothing scored" }
                return String(format: "%.1f%% of %.0f s", fraction * 100, total.scored)
            })
        }
        out += render(rows)

        if let carried = first.carriedRooms, !carried.beacons.isEmpty {
            out += "\n  room assignment per carried beacon:\n"
            var perBeacon: [[String]] = [["  beacon (scored s)"] + results.map(\.profile)]
            for identity in carried.beacons.keys.sorted() {
                let scored = carried.beacons[identity]?.scored ?? 0
                perBeacon.append(["  \(identity) (\(String(format: "%.0f", scored)))"] + results.map { result in
                    result.carriedRooms?.beacons[identity]?.fraction.map { String(format: "%.1f%%", $0 * 100) } ?? "-"
                })
            }
            out += render(perBeacon)
        }

        out += "\n  streams (beacon @ scanner):\n"
        var streams: [[String]] = [["  stream", "sightings", "first s", "last s", "rate Hz", "median interval s", "class"]]
        for stream in first.streams {
            streams.append(["  \(stream.key.identity) @ \(stream.key.scannerID ?? "-")", "\(stream.sightings)",
                            String(format: "%.1f", stream.first), String(format: "%.1f", stream.last),
                            String(format: "%.2f", stream.rate), stream.medianInterval.map { String(format: "%.3f", $0) } ?? "-",
                            stream.rateClass.label])
        }
        out += render(streams)

        out += "\n  stream ends (a silence ≥ \(number(first.options.silence)) s or the last sighting; * the recording's end, not a departure; "
            + "gap: the longest in the \(number(first.options.recentWindow)) s before):\n"
        var ends: [[String]] = [["  stream", "class", "last s", "heard s (sightings)", "gap s"] + results.map { "\($0.profile) exit s" }]
        for end in first.ends {
            ends.append(["  \(end.key.identity) @ \(end.key.scannerID ?? "-")\(end.endOfRecording ? " *" : "")", end.rateClass.label,
                         String(format: "%.1f", end.lastSighting), String(format: "%.1f", end.age) + " (\(end.history.sightings))",
                         String(format: "%.1f", end.history.longestRecentGap)]
                        + results.map { result in
                            // Every result has the same ends (they come from the sightings and the options, not the
                            // profile), found by stream and time all the same.
                            guard let same = result.ends.first(where: { $0.key == end.key && $0.lastSighting == end.lastSighting }) else { return "?" }
                            return same.latency.map { String(format: "%.1f", $0) } ?? "none"
                        })
        }
        out += render(ends)

        var notes: [String] = []
        for note in results.flatMap(\.notes) where !notes.contains(note) { notes.append(note) }
        for note in notes { out += "  note: \(note)\n" }
        return out
    }

    /// The exit figures per stream rate class over all recordings, one column per profile.
    static func classTable(profiles: [String], totals: [[ReplayEvaluation.ClassFigures]], recordings: Int) -> String {
        let out = "\nPer stream rate class, all \(recordings) recording(s) together (a stream's class: its reception rate while heard, "
            + "nearest of 10, 1 and 0.2 Hz on a log scale):\n\n"
        var rows: [[String]] = [[""] + profiles]
        for (classIndex, rateClass) in StreamRateClass.allCases.enumerated() {
            guard let reference = totals.first?[classIndex] else { continue }
            let name = rateClass == .fifthHertz ? "\(rateClass.label) (sparse)" : rateClass.label
            rows.append(["\(name): \(reference.streams) streams; \(reference.stationaryStreams) stationary (\(String(format: "%.2f", reference.stationaryHours)) h); "
                         + "\(reference.stays) with stays (\(String(format: "%.2f", reference.stayHours)) h)"] + profiles.map { _ in "" })
            rows.append(["  false exits, stationary (per 1000 h)"] + totals.map { figures in
                let item = figures[classIndex]
                guard item.stationaryStreams > 0 else { return "n/a" }
                return "\(item.falseExits) (\(item.falseExitsPerThousandHours.map { String(format: "%.0f", $0) } ?? "-"))"
            })
            rows.append(["  exits during README stays (per 1000 h)"] + totals.map { figures in
                let item = figures[classIndex]
                guard item.stays > 0 else { return "n/a" }
                return "\(item.stayExits) (\(item.stayExitsPerThousandHours.map { String(format: "%.0f", $0) } ?? "-"))"
            })
            rows.append(["  exit latency p50/p95/max s (ends)"] + totals.map { figures in
                let item = figures[classIndex]
                guard item.ends > 0 else { return "-" }
                var cell = "-"
                if let p50 = item.p50, let p95 = item.p95, let max = item.max { cell = String(format: "%.1f/%.1f/%.1f", p50, p95, max) }
                return cell + " (\(item.ends)\(item.missed > 0 ? ", \(item.missed) no exit" : ""))"
            })
            rows.append(["    of which the scanner went on (not the recording's end): p50/p95 s (ends)"] + totals.map { figures in
                let item = figures[classIndex]
                guard let p50 = item.departureP50, let p95 = item.departureP95 else { return "-" }
                return String(format: "%.1f/%.1f", p50, p95) + " (\(item.departureLatencies.count))"
            })
            rows.append(["    their streams' longest recent gap (a rough floor without flaps): p50/p95 s (departures)"] + totals.map { figures in
                let item = figures[classIndex]
                guard let p50 = item.recentGapP50, let p95 = item.recentGapP95 else { return "-" }
                return String(format: "%.1f/%.1f", p50, p95) + " (\(item.departureRecentGaps.count))"
            })
            rows.append(["  flaps"] + totals.map { "\($0[classIndex].flaps)" })
        }
        return out + render(rows)
    }

    /// Left-aligned first column, the others right-aligned, two spaces apart.
    static func render(_ rows: [[String]]) -> String {
        let columns = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        return rows.map { row in
            row.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                return index == 0 ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    static func number(_ value: Double) -> String {
        value.compactDescription
    }
}
