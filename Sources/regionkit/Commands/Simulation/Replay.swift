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
        With --all-events the nearest-scanner (room) changes are printed as didChangeNearestScanner.
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

    @Option(help: "Input format (default: from the file name; .json and .json.gz are gateway recordings, .btsnoop, .log and .cfa btsnoop captures).")
    var format: Format?

    @OptionGroup var regionOptions: RegionOptions

    @Option(help: "Walking speed in m/s for GPX tracks without usable timestamps.")
    var gpxSpeed: Double = 1.4

    @OptionGroup var output: EventOutputOptions

    @OptionGroup var pace: PaceOptions

    @Option(help: "Monitoring profile: corelocation, altbeacon or responsive.")
    var profile: ProfileOption?

    @Option(help: "Seconds to keep the clock running after the last sighting, so exits at the end fire.")
    var tail: Double = 60

    @Option(help: "Seconds of out-of-order arrival to put back in time order (gateway scanners upload in batches).")
    var reorderWindow: Double = 2

    func validate() throws {
        guard reorderWindow.isFinite, reorderWindow >= 0 else { throw ValidationError("--reorder-window must be >= 0 seconds, got \(reorderWindow)") }
        guard tail.isFinite, tail >= 0 else { throw ValidationError("--tail must be >= 0 seconds, got \(tail)") }
        if format == nil && Format.inferred(from: file) == nil {
            throw ValidationError("cannot tell the format of '\(file)' from its name: give --format (\(Format.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
    }

    func run() async throws {
        try await Console.reportingErrors {
            let regionList = try regionOptions.regions()
            var chosen = profile?.profile ?? .responsive
            chosen.nearestScanner = chosen.nearestScanner ?? NearestScannerPolicy()
            let printer = output.printer()
            let session = ReplaySession(profile: chosen, regions: regionList) { printer.print(.location($0)) }
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
            let reader = GatewayFileReader(path: file)
            var origin: Int64?
            var pending: [BeaconObservation] = []
            // The reader is synchronous; pacing needs `await`, so sightings are fed in small batches.
            func drain() async {
                for observation in pending { await session.feed(observation, pace: pace.speed) }
                pending.removeAll(keepingCapacity: true)
            }
            var failure: Error?
            var buffer = ReorderBuffer<BeaconObservation>(window: reorderWindow)
            func accept(_ observation: BeaconObservation) {
                if pace.instant { session.feed(observation) } else { pending.append(observation) }
            }
            do {
                try reader.forEach { sighting in
                    if origin == nil { origin = sighting.timeMilliseconds }
                    let observation = sighting.observation(originMilliseconds: origin!)
                    buffer.insert(observation, at: observation.timestamp).forEach(accept)
                }
            } catch {
                failure = error
            }
            // What was read before any damage is still replayed.
            buffer.drain().forEach(accept)
            await drain()
            if buffer.tooLate > 0 {
                Console.warning("\(buffer.tooLate) sightings arrived more than \(reorderWindow) s out of order (--reorder-window)")
            }
            session.finish(tail: failure == nil ? tail : 0)
            if let failure { throw failure }
        }
    }
}

extension Replay {
    /// Replays the advertising reports of a btsnoop capture (timestamps: seconds since its first record).
    func replayCapture(_ session: ReplaySession) async throws {
        let log = try BluetoothError.bridged { () throws(BluetoothError) in try BTSnoopAdvertisingLog(contentsOfFile: file) }
        if let truncation = log.truncation {
            Console.warning("\(file): \(truncation); replaying the \(log.records) intact record(s) before it")
        }
        for observation in log.observations(scannerID: nil) {
            if pace.instant { session.feed(observation) } else { await session.feed(observation, pace: pace.speed) }
        }
        session.finish(tail: tail)
    }
}

extension Replay {
    /// Replays location fixes from an NMEA log or a GPX track; `t` = seconds since the first fix.
    func replayFixes(_ session: ReplaySession, format: Format) async throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw RegionKitError(.malformedInput, "\(file): cannot read the recording")
        }
        var fixes: [LocationFix]
        if format == .nmea {
            let result = NMEAReader.read(bytes: Array(data))
            for diagnostic in result.diagnostics.prefix(20) { Console.warning("\(file): \(diagnostic)") }
            if result.diagnostics.count > 20 { Console.warning("\(file): \(result.diagnostics.count - 20) more malformed lines") }
            fixes = result.fixes
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
        var previous = 0.0
        for var fix in fixes where fix.timestamp.seconds.isFinite {
            fix.timestamp = Timestamp(seconds: fix.timestamp - origin)
            if !pace.instant, fix.timestamp.seconds > previous {
                try await Task.sleep(for: .milliseconds(Int((fix.timestamp.seconds - previous) / pace.speed * 1000)))
            }
            previous = max(previous, fix.timestamp.seconds)
            session.feed(fix)
        }
        session.finish(tail: tail)
    }
}
