import ArgumentParser
import Foundation
import RegionKit
import RegionKitBluetooth
import RegionKitGateway
import RegionKitLocation
import RegionKitSimulation

struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay a recording through the monitoring engine at recorded timing or instantly.",
        discussion: """
        Formats: gateway (concatenated JSON sightings from beacon gateways, optionally gzip: \
        scannerID, uuid, major, minor, calibratedPower/power, rssi, messageType, time in ms); \
        btsnoop (HCI captures: `regionkit scan/monitor --capture`, Android's btsnoop_hci.log, Bumble snoop files; \
        their LE advertising reports, legacy and extended, with scan-response repeats dropped). \
        `t` in the JSON lines is the recording's own time in seconds since its first sighting (gateway) \
        or its first record (btsnoop). \
        With --all-events the nearest-scanner (room) changes are printed as didChangeNearestScanner. \
        Paced replay (without --instant) waits at most --max-gap recorded seconds between two inputs \
        (default 60): a longer jump in the recording's time passes at once in real time, and in full in \
        virtual time. A damaged gateway recording or btsnoop capture is replayed up to and around the \
        damage; what was skipped is reported (count and first offset) and the exit status is 1. \
        Malformed NMEA lines (serial noise: gpsd skips them too) are skipped with warnings and a \
        count at the end; a GPX file must parse whole.
        """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case gateway
        case btsnoop
        case nmea
        case gpx

        /// The format a file name implies, if any. A `.log` is a btsnoop capture when it starts
        /// with btsnoop's magic (Android's btsnoop_hci.log), else an NMEA log (gpsd's regression logs).
        static func inferred(from path: String) -> Format? {
            if path.hasSuffix(".json") || path.hasSuffix(".json.gz") { return .gateway }
            if path.hasSuffix(".btsnoop") || path.hasSuffix(".cfa") { return .btsnoop }
            if path.hasSuffix(".nmea") { return .nmea }
            if path.hasSuffix(".gpx") { return .gpx }
            if path.hasSuffix(".log") {
                let magic = FileHandle(forReadingAtPath: path).flatMap { try? $0.read(upToCount: 8) } ?? Data()
                return magic == Data("btsnoop\0".utf8) ? .btsnoop : .nmea
            }
            return nil
        }
    }

    @Argument(help: "The recording to replay.")
    var file: String

    @Option(help: "Input format (default: from the file name; .json and .json.gz are gateway recordings, .btsnoop and .cfa btsnoop captures, .nmea NMEA logs, .gpx GPX tracks; a .log is a btsnoop capture when it starts with btsnoop's magic, else an NMEA log).")
    var format: Format?

    @OptionGroup var regionOptions: RegionOptions

    @Option(parsing: .unconditional, help: "Walking speed in m/s for GPX tracks without usable timestamps.")
    var gpxSpeed: Double = 1.4

    @OptionGroup var output: EventOutputOptions

    @OptionGroup var pace: PaceOptions

    @Option(help: "Monitoring profile: corelocation, altbeacon or responsive (also the experimental periodic and evidence, the reference cautiousprior).")
    var profile: ProfileOption?

    @Flag(help: "Ask each region's state when it starts, as `monitor` does: a region the recording starts inside gets didDetermineState inside (Core Location gives it no didEnterRegion).")
    var requestState = false

    @Option(parsing: .unconditional, help: "Seconds to keep the clock running after the last sighting, so exits at the end fire.")
    var tail: Double = 60

    @Option(parsing: .unconditional, help: "Seconds of out-of-order arrival to put back in time order (gateway scanners upload in batches; a btsnoop capture's clock may step back).")
    var reorderWindow: Double = 2

    @Option(parsing: .unconditional, help: "Paced replay: the longest gap in recorded seconds waited through in real time; longer jumps are shortened to it (0...86400).")
    var maxGap: Double = ReplaySession.defaultMaximumGap

    /// Upper bounds of the time options (one day): beyond them a replay only runs its clock.
    static let maximumSeconds: Double = 86_400

    func validate() throws {
        guard reorderWindow.isFinite, (0...3600).contains(reorderWindow) else { throw ValidationError("--reorder-window must be within 0...3600 seconds, got \(reorderWindow)") }
        guard tail.isFinite, (0...Self.maximumSeconds).contains(tail) else { throw ValidationError("--tail must be within 0...\(Int(Self.maximumSeconds)) seconds, got \(tail)") }
        guard maxGap.isFinite, (0...Self.maximumSeconds).contains(maxGap) else { throw ValidationError("--max-gap must be within 0...\(Int(Self.maximumSeconds)) seconds, got \(maxGap)") }
        guard gpxSpeed.isFinite, (0.01...1000).contains(gpxSpeed) else { throw ValidationError("--gpx-speed must be within 0.01...1000 m/s, got \(gpxSpeed)") }
    }

    func run() async throws {
        // Checked here, not in validate(): ArgumentParser validates before it reports an unknown
        // option, so `replay --store s.sqlite run.json.gz` took s.sqlite for the file and said
        // "cannot tell the format of 's.sqlite'" instead of "Unknown option '--store'".
        if format == nil && Format.inferred(from: file) == nil {
            // As ArgumentParser words a validation error, with this command's usage (thrown from
            // run(), it printed the root command's).
            let message = "cannot tell the format of '\(file)' from its name: give --format (\(Format.allCases.map(\.rawValue).joined(separator: ", ")))"
            FileHandle.standardError.write(Data("""
                Error: \(message)
                Usage: \(RegionKitCommand.usageString(for: Self.self))
                  See 'regionkit replay --help' for more information.\n
                """.utf8))
            throw ExitCode.validationFailure
        }
        try await Console.reportingErrors {
            let regionList = try regionOptions.regions()
            var chosen = profile?.profile ?? .responsive
            chosen.nearestScanner = chosen.nearestScanner ?? NearestScannerPolicy()
            let printer = output.printer()
            let session = ReplaySession(profile: chosen, automation: Automation(requestStateOnStart: requestState), regions: regionList,
                                        maximumGap: maxGap) { printer.print(.location($0)) }
            defer { noteShortenedGaps(session) }
            switch format ?? Format.inferred(from: file) {
            case .btsnoop:
                try await replayCapture(session)
                return
            case .nmea, .gpx:
                try await replayFixes(session, format: (format ?? Format.inferred(from: file))!)
                return
            default:
                break
            }
            let reading = try GatewayFileReader(path: file).open()
            var origin: Int64?
            var pending: [BeaconObservation] = []
            // Read a chunk at a time (the recording is never held whole); pacing needs `await`, so
            // each chunk's sightings are fed before the next chunk is read.
            func drain() async {
                if pace.instant {
                    session.feed(contentsOf: pending)
                } else {
                    for observation in pending { await session.feed(observation, pace: pace.speed) }
                }
                pending.removeAll(keepingCapacity: true)
            }
            var buffer = ReorderBuffer<BeaconObservation>(window: reorderWindow)
            // Instant replay feeds the engine in batches (one manager call per batch).
            func accept(_ observation: BeaconObservation) {
                pending.append(observation)
                if pace.instant && pending.count >= 256 {
                    session.feed(contentsOf: pending)
                    pending.removeAll(keepingCapacity: true)
                }
            }
            // Damage does not stop the reader: what it could read is replayed, the rest reported.
            while let sightings = reading.next() {
                for sighting in sightings {
                    let start = origin ?? sighting.timeMilliseconds
                    origin = start
                    let observation = sighting.observation(originMilliseconds: start)
                    buffer.insert(observation, at: observation.timestamp, release: accept)
                }
                await drain()
            }
            buffer.drain(release: accept)
            await drain()
            let report = reading.report
            if buffer.tooLate > 0 {
                Console.warning("\(buffer.tooLate) sightings arrived more than \(reorderWindow) s out of order (--reorder-window)")
            }
            if buffer.releasedEarly > 0 {
                Console.warning("\(buffer.releasedEarly) sightings replayed before --reorder-window had passed: over \(buffer.capacity) were waiting at once")
            }
            for warning in report.warnings { Console.warning("\(file): \(warning)") }
            session.finish(tail: report.stoppedBy == nil ? tail : 0)
            if let error = report.error(path: file) { throw error }
            // As an NMEA log without a fix: an empty recording (or the wrong file) is not a success.
            if report.sightings == 0 { throw RegionKitError(.malformedInput, "\(file): no sightings in the recording") }
        }
    }
}

extension Replay {
    /// Replays the advertising reports of a btsnoop capture (timestamps: seconds since its first record).
    func replayCapture(_ session: ReplaySession) async throws {
        let log = try BluetoothError.bridged { () throws(BluetoothError) in try BTSnoopAdvertisingLog(contentsOfFile: file) }
        // A capture's times can step back (the host's clock set back while it recorded, captures
        // joined end to end): put back in order within --reorder-window, as gateway sightings are,
        // and say how many stepped back further (the engine takes those at its current time).
        var buffer = ReorderBuffer<BeaconObservation>(window: reorderWindow)
        var ordered: [BeaconObservation] = []
        let observations = log.observations(scannerID: nil)
        // Nothing to replay is an error, as a gateway recording without sightings is (a capture of
        // its header only exited 0 having done nothing); damage says more, below.
        if observations.isEmpty, !log.damage.lostData {
            throw RegionKitError(.malformedInput, log.records == 0
                ? "\(file): no records in the btsnoop capture (its header only): nothing to replay"
                : "\(file): no advertising reports among the btsnoop capture's \(log.records) record(s): nothing to replay")
        }
        for observation in observations {
            buffer.insert(observation, at: observation.timestamp) { ordered.append($0) }
        }
        buffer.drain { ordered.append($0) }
        for observation in ordered {
            if pace.instant { session.feed(observation) } else { await session.feed(observation, pace: pace.speed) }
        }
        if buffer.tooLate > 0 {
            Console.warning("\(file): \(buffer.tooLate) advertising report(s) recorded more than \(reorderWindow) s before one already replayed (the capture's clock stepped back; --reorder-window): replayed at the time reached")
        }
        session.finish(tail: log.damage.endsEarly ? 0 : tail)
        if log.timeOutliers > 0 {
            // A damaged timestamp, or a lone record beyond a long gap (which one cannot be told).
            Console.warning("""
                \(file): \(log.timeOutliers) record(s) left out: their time is over a day from the records around them \
                (damaged timestamps?), the first at byte \(log.firstTimeOutlierOffset ?? 0)
                """)
        }
        if log.damage.lostData {
            throw RegionKitError(.malformedInput, "\(file): damaged btsnoop capture: replayed \(log.records - log.timeOutliers) record(s); \(log.damage.summary)")
        }
        if log.skippedRecords > 0 {
            Console.warning("\(file): \(log.skippedRecords) event record(s) that do not decode skipped (the first at byte \(log.firstSkippedRecordOffset ?? 0))")
        }

    }

    /// Says how many jumps in the recording's time paced replay shortened (--max-gap).
    func noteShortenedGaps(_ session: ReplaySession) {
        let gaps = session.shortenedGaps
        guard gaps.count > 0 else { return }
        Console.note("\(file): \(gaps.count) gap(s) in the recording longer than --max-gap \(maxGap) s were shortened to it in real time (the longest: \(gaps.longest) s)")
    }
}

extension Replay {
    /// Replays location fixes from an NMEA log or a GPX track; `t` = seconds since the first fix.
    func replayFixes(_ session: ReplaySession, format: Format) async throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw RegionKitError(.malformedInput, "\(file): cannot read the recording")
        }
        var fixes: [LocationFix]
        var malformedLines = 0
        if format == .nmea {
            var result = NMEAReader.read(bytes: Array(data))
            let timedByTimeOfDay = result.fixes.isEmpty && result.reports.contains(where: \.hasPosition)
            if timedByTimeOfDay {
                // No RMC or ZDA sentence gives a date (a GGA/GLL-only log): replay needs only the
                // times between fixes, so they are timed by their time of day (midnight rolls over).
                Console.warning("\(file): no date in the recording (no RMC or ZDA sentence): fixes timed by their time of day")
                result = NMEAReader.read(bytes: Array(data), configuration: NMEAReader.Configuration(referenceDate: NMEADate(year: 2000, month: 1, day: 1)))
            }
            for diagnostic in result.diagnostics.prefix(20) { Console.warning("\(file): \(diagnostic)") }
            if result.diagnostics.count > 20 { Console.warning("\(file): \(result.diagnostics.count - 20) more malformed lines") }
            malformedLines = result.diagnostics.count
            fixes = result.fixes
            if timedByTimeOfDay {
                // One reference day for every cycle: a time of day that falls back by more than
                // half a day went past midnight (as the reader does for dated cycles).
                var offset = 0.0, previous: Double?
                for index in fixes.indices {
                    var seconds = fixes[index].timestamp.seconds + offset
                    if let previous, seconds < previous - 43_200 {
                        offset += 86_400
                        seconds += 86_400
                    }
                    fixes[index].timestamp = Timestamp(seconds: seconds)
                    previous = seconds
                }
            }
            let undated = result.reports.prefix { $0.time == nil }.filter(\.hasPosition).count
            if undated > 0, !fixes.isEmpty {
                Console.warning("\(file): \(undated) fix(es) before the first date (RMC or ZDA sentence) skipped: their time is not known")
            }
        } else {
            let document: GPXReader.Document
            do { document = try GPXReader.read(data: data) } catch { throw RegionKitError(.malformedInput, "\(file): \(error)") }
            let points = !document.tracks.isEmpty ? document.tracks.flatMap(\.points)
                : !document.routes.isEmpty ? document.routes.flatMap(\.points) : document.waypoints
            fixes = GPXReader.fixes(points, timing: .automatic(speed: gpxSpeed, start: .zero)).fixes
        }
        guard let first = fixes.first(where: { $0.timestamp.seconds.isFinite }) else {
            throw RegionKitError(.malformedInput, "\(file): no position fixes in the recording")
        }
        let origin = first.timestamp
        // Fixes earlier than one already fed (the receiver's clock stepped back, logs joined out of
        // order) are taken at the time reached: said, as the gateway and btsnoop replays say it.
        var latest = -Double.infinity
        var back = 0
        for var fix in fixes where fix.timestamp.seconds.isFinite {
            fix.timestamp = Timestamp(seconds: fix.timestamp - origin)
            if fix.timestamp.seconds < latest { back += 1 } else { latest = fix.timestamp.seconds }
            if pace.instant { session.feed(fix) } else { await session.feed(fix, pace: pace.speed) }
        }
        session.finish(tail: tail)
        if back > 0 {
            Console.warning("\(file): \(back) fix(es) earlier than one already replayed (the receiver's clock stepped back?): replayed at the time reached")
        }
        if malformedLines > 0 {
            // Warnings, not a failure: serial NMEA carries noise, and gpsd skips such lines too.
            Console.warning("\(file): \(malformedLines) malformed line(s) skipped, \(fixes.count) fix(es) replayed")
        }
    }
}
