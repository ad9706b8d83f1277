import Foundation
import RegionKit

/// Ground truth for gateway recordings, read from a JSON file: the shared beacon runs' README
/// transcribed (``beaconRuns()``, shipped with the module), or a file of your own in the same format:
///
/// ```json
/// {"recordings": [{"file": "run.json.gz",
///   "stationary": [{"beacon": "UUID:MAJOR:MINOR", "scanner": "Room201", "readme": "why we know"}],
///   "periods": [{"beacon": "UUID:MAJOR:MINOR", "start": "2015-03-07T11:46:11-08:00",
///                "end": "2015-03-07T11:46:26-08:00", "room": "Room201", "readme": "why we know"}],
///   "notScored": ["what the notes say without times"]}]}
/// ```
///
/// `room` `null` is a transition (carried); `start`/`end` absent is the recording's start/end.
///
/// ```swift
/// let catalog = try GroundTruthCatalog.beaconRuns()
/// let truth = catalog.truth(forRecording: recording.fileName)   // nil: not described
/// ```
public struct GroundTruthCatalog: Hashable, Sendable {
    public var recordings: [BeaconRunGroundTruth]

    public init(recordings: [BeaconRunGroundTruth]) {
        self.recordings = recordings
    }

    /// Reads a ground-truth file; a malformed one is a `.malformedInput` error naming the file and
    /// the row.
    public init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw RegionKitError(.malformedInput, "ground truth \(url.path): cannot be read", cause: error)
        }
        try self.init(data: data, source: url.lastPathComponent)
    }

    /// Parses ground truth from JSON; `source` names it in error messages.
    public init(data: Data, source: String) throws {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw RegionKitError(.malformedInput, "ground truth \(source): not the ground-truth JSON format", cause: error)
        }
        recordings = try file.recordings.map { recording in
            let place = "ground truth \(source), recording \(recording.file)"
            let stationary = try recording.stationary.enumerated().map { index, row in
                BeaconRunGroundTruth.StationaryBeacon(identity: try Self.identity(row.beacon, "\(place), stationary[\(index)]"),
                                                      scannerID: row.scanner, readme: row.readme)
            }
            let labels = try recording.periods.enumerated().map { index, row in
                let here = "\(place), periods[\(index)]"
                let period = RoomPeriod(start: try row.start.map { try Self.time($0, "\(here).start") },
                                        end: try row.end.map { try Self.time($0, "\(here).end") }, room: row.room)
                if let start = period.start, let end = period.end, end < start {
                    throw RegionKitError(.malformedInput, "\(here): ends (\(row.end ?? "")) before it starts (\(row.start ?? ""))")
                }
                return BeaconRunGroundTruth.Label(identity: try Self.identity(row.beacon, here), period: period, readme: row.readme)
            }
            return BeaconRunGroundTruth(fileName: recording.file, stationary: stationary, labels: labels, notScored: recording.notScored ?? [])
        }
    }

    /// The ground truth for a recording, by file name (`.json` or `.json.gz`, any folder; `#` in
    /// names ignored), `nil` for a recording the catalogue does not describe.
    public func truth(forRecording fileName: String) -> BeaconRunGroundTruth? {
        recordings.first { $0.describes(recording: fileName) }
    }

    /// `UUID:MAJOR:MINOR`.
    static func identity(_ text: String, _ place: String) throws -> BeaconIdentity {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 3, let uuid = UUID(uuidString: String(fields[0])),
              let major = UInt16(fields[1]), let minor = UInt16(fields[2]) else {
            throw RegionKitError(.malformedInput, "\(place): beacon '\(text)' is not UUID:MAJOR:MINOR (major and minor 0–65535)")
        }
        return BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }

    /// ISO 8601 with a UTC offset (`2015-03-07T11:46:11-08:00`), as Unix epoch seconds.
    static func time(_ text: String, _ place: String) throws -> Double {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: text) else {
            throw RegionKitError(.malformedInput, "\(place): '\(text)' is not an ISO 8601 time with offset (yyyy-MM-ddTHH:mm:ss±hh:mm)")
        }
        return date.timeIntervalSince1970
    }

    /// The file format.
    private struct File: Decodable {
        struct Recording: Decodable {
            var file: String
            var stationary: [Stationary]
            var periods: [Period]
            var notScored: [String]?
        }
        struct Stationary: Decodable {
            var beacon: String
            var scanner: String
            var readme: String
        }
        struct Period: Decodable {
            var beacon: String
            var start: String?
            var end: String?
            var room: String?
            var readme: String
        }
        var recordings: [Recording]
    }
}
