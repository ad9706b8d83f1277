import Foundation
import RegionKitCore

/// Reads a gateway recording (`.json` or `.json.gz`: concatenated JSON sighting objects) and hands
/// each sighting to `body` as soon as it is decoded.
///
/// Damage never loses what came before it: ``read(_:)`` skips objects that do not decode and bytes
/// between objects that are not JSON, stops at corrupt or truncated gzip data keeping every byte
/// decompressed before it, ignores trailing garbage after the last gzip member (as `gzip -d`
/// does), and returns a ``GatewayReadReport`` with the counts and the first offset of each problem.
/// ``forEach(_:)`` does the same and then throws if anything was lost.
///
/// ```swift
/// let report = try GatewayFileReader(path: "run.json.gz").read { sighting in manager.ingest(sighting.observation(originMilliseconds: t0)) }
/// if let error = report.error(path: "run.json.gz") { print(error.message) }   // "… 3 damaged sighting(s); the first: …"
/// ```
public struct GatewayFileReader: Sendable {
    public let path: String
    /// Read chunk size in bytes.
    public var chunkSize = 256 * 1024
    /// The most bytes (decompressed) a stream that is not a regular file (a device, a pipe, a
    /// socket) may give without a sighting that decodes before the reading stops: `/dev/zero` or
    /// a pipe of noise has no end, and was read for ever. A regular file is read to its end
    /// whatever it holds.
    public var maximumBytesWithoutObject = 16 << 20

    public init(path: String) {
        self.path = path
    }

    /// The most compressed bytes inflated at once (their output is bounded by ~1,032 times this).
    static let compressedChunkLimit = 16 * 1024

    /// How far (ms) a sighting's time may be from both sightings around it before it is taken
    /// for a damaged timestamp: a day.
    static let outlierMilliseconds = 86_400_000.0

    /// Calls `body` for each sighting in file order, reading past damaged sightings and to the end
    /// of the intact data; returns what was delivered and what was skipped or cut off.
    /// - Throws: a `RegionKitError` when the file cannot be opened, or what `body` throws.
    public func read(_ body: (GatewaySighting) throws -> Void) throws -> GatewayReadReport {
        let reading = try open()
        while let sightings = reading.next() {
            for sighting in sightings { try body(sighting) }
        }
        return reading.report
    }

    /// Opens the recording to read it a chunk at a time (``GatewayFileReading``): what a paced
    /// replay uses, so the file is never held whole.
    /// - Throws: a `RegionKitError` when the file cannot be opened.
    public func open() throws -> GatewayFileReading {
        try GatewayFileReading(self)
    }

    /// What a file that is not a regular one is, for messages.
    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFCHR, S_IFBLK: "device"
        case S_IFIFO: "pipe"
        case S_IFSOCK: "socket"
        default: "stream"
        }
    }

    /// Like ``read(_:)``, then throws the report's error if anything was lost (after delivering
    /// everything that could be read); returns how many sightings were delivered.
    @discardableResult
    public func forEach(_ body: (GatewaySighting) throws -> Void) throws -> Int {
        let report = try read(body)
        if let error = report.error(path: path) { throw error }
        return report.sightings
    }
}
