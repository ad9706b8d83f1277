import ArgumentParser
import Foundation
import RegionKit
import RegionKitBluetooth
import RegionKitGateway
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

        /// The format a file name implies, if any.
        static func inferred(from path: String) -> Format? {
            if path.hasSuffix(".json") || path.hasSuffix(".json.gz") { return .gateway }
            if path.hasSuffix(".btsnoop") || path.hasSuffix(".log") || path.hasSuffix(".cfa") { return .btsnoop }
            return nil
        }
    }

    @Argument(help: "The recording to replay.")
    var file: String

    @Option(help: "Input format (default: from the file name; .json and .json.gz are gateway recordings, .btsnoop, .log and .cfa btsnoop captures).")
    var format: Format?

    @Option(name: .customLong("region"), help: "A beacon region ID:UUID[:MAJOR[:MINOR]][@SCANNER] (repeatable); @SCANNER binds it to one scanner.")
    var regionSpecifiers: [String] = []

    @Option(help: "A JSON file of regions (an array, or an object with a \"regions\" array, in the scenario format).")
    var regions: String?

    @Flag(help: "Print one JSON object per line instead of a timeline.")
    var json = false

    @Flag(help: "Replay as fast as possible instead of at recorded timing.")
    var instant = false

    @Option(help: "Recorded seconds per real second when not --instant.")
    var speed: Double = 1

    @Option(help: "Monitoring profile: corelocation or responsive.")
    var profile: ProfileOption?

    @Option(help: "Seconds to keep the clock running after the last sighting, so exits at the end fire.")
    var tail: Double = 60

    @Option(help: "Seconds of out-of-order arrival to put back in time order (gateway scanners upload in batches).")
    var reorderWindow: Double = 2

    @Flag(help: "Also print nearest-scanner changes and authorization changes in --json output.")
    var allEvents = false

    func validate() throws {
        guard speed.isFinite, speed > 0 else { throw ValidationError("--speed must be a positive number, got \(speed)") }
        guard reorderWindow.isFinite, reorderWindow >= 0 else { throw ValidationError("--reorder-window must be >= 0 seconds, got \(reorderWindow)") }
        guard tail.isFinite, tail >= 0 else { throw ValidationError("--tail must be >= 0 seconds, got \(tail)") }
        if format == nil && Format.inferred(from: file) == nil {
            throw ValidationError("cannot tell the format of '\(file)' from its name: give --format (\(Format.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
    }

    func run() async throws {
        try await Console.reportingErrors {
            var regionList = try regionSpecifiers.map { Region.beacon(try BeaconRegion(specifier: $0)) }
            if let regions { regionList += try RegionFile.load(regions) }
            var chosen = profile?.profile ?? .responsive
            chosen.nearestScanner = chosen.nearestScanner ?? NearestScannerPolicy()
            let printer = EventPrinter(json: json, allEvents: allEvents)
            let session = ReplaySession(profile: chosen, regions: regionList) { printer.print(.location($0)) }
            if (format ?? Format.inferred(from: file)) == .btsnoop {
                try await replayCapture(session)
                return
            }
            let reader = GatewayFileReader(path: file)
            var origin: Int64?
            var pending: [BeaconObservation] = []
            // The reader is synchronous; pacing needs `await`, so sightings are fed in small batches.
            func drain() async {
                for observation in pending { await session.feed(observation, pace: speed) }
                pending.removeAll(keepingCapacity: true)
            }
            var failure: Error?
            var buffer = ReorderBuffer<BeaconObservation>(window: reorderWindow)
            func accept(_ observation: BeaconObservation) {
                if instant { session.feed(observation) } else { pending.append(observation) }
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
                Console.error("warning: \(buffer.tooLate) sightings arrived more than \(reorderWindow) s out of order (--reorder-window)")
            }
            session.finish(tail: failure == nil ? tail : 0)
            if let failure { throw failure }
        }
    }
}

extension Replay {
    /// Replays the advertising reports of a btsnoop capture (timestamps: seconds since its first record).
    func replayCapture(_ session: ReplaySession) async throws {
        let log = try ControllerOptions.bluetooth { () throws(BluetoothError) in try BTSnoopAdvertisingLog(contentsOfFile: file) }
        if let truncation = log.truncation {
            FileHandle.standardError.write(Data("regionkit: warning: \(file): \(truncation); replaying the \(log.records) intact record(s) before it\n".utf8))
        }
        for observation in log.observations(scannerID: nil) {
            if instant { session.feed(observation) } else { await session.feed(observation, pace: speed) }
        }
        session.finish(tail: tail)
    }
}

/// Loads regions from a JSON file in the scenario's region format.
enum RegionFile {
    static func load(_ path: String) throws -> [Region] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RegionKitError(.malformedInput, "\(path): cannot read the regions file")
        }
        struct Wrapper: Decodable { var regions: [Scenario.RegionSpec] }
        let specs: [Scenario.RegionSpec]
        do {
            if let list = try? JSONDecoder().decode([Scenario.RegionSpec].self, from: data) {
                specs = list
            } else {
                specs = try JSONDecoder().decode(Wrapper.self, from: data).regions
            }
        } catch let error as DecodingError {
            throw RegionKitError(.malformedInput, "\(path): \(Scenario.describe(error))")
        } catch {
            throw RegionKitError(.malformedInput, "\(path): not valid JSON", cause: "\(error)")
        }
        return try specs.enumerated().map { index, spec in
            do { return try spec.region() } catch let error as RegionKitError {
                throw RegionKitError(.malformedInput, "\(path): regions[\(index)]: \(error.message)")
            }
        }
    }
}
