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

    public var isGzip: Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return path.hasSuffix(".gz") }
        defer { try? handle.close() }
        let magic = (try? handle.read(upToCount: 2)) ?? Data()
        return magic == Data([0x1F, 0x8B])
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
        guard UnreadableFile.reason(path) == nil, let handle = FileHandle(forReadingAtPath: path) else {
            throw RegionKitError(.malformedInput, UnreadableFile.message(path, "cannot open the gateway recording"))
        }
        defer { try? handle.close() }
        let gzip = isGzip
        let inflater = gzip ? try GzipInflater(source: path) : nil
        var splitter = ConcatenatedJSONSplitter(source: gzip ? "\(path) (decompressed)" : path, skipsDamage: true)
        var report = GatewayReadReport()
        // A sighting whose time is over a day from the sightings around it is a damaged timestamp
        // (a flipped bit moves it by years), or a lone sighting beyond a long gap: left out with a
        // warning (``GatewayReadReport/timeOutliers``). Made the replay's origin, the first
        // sighting's collapsed the whole recording.
        var outliers = TimestampOutlierFilter<GatewaySighting>(threshold: Self.outlierMilliseconds)
        var status = stat()
        let endless = stat(path, &status) == 0 && (status.st_mode & S_IFMT) != S_IFREG
        var sinceObject = 0
        func deliver(_ plain: [UInt8]) throws {
            // Cannot throw with skipsDamage: damage is counted by the splitter.
            // Counted from the last sighting that decodes: random bytes balance braces now and then.
            sinceObject += plain.count
            for object in try splitter.feed(plain) {
                let sighting: GatewaySighting
                do {
                    sighting = try GatewaySighting(json: object.bytes, offset: object.offset, source: splitter.source)
                    sinceObject = 0
                } catch let error as RegionKitError {
                    report.skippedSightings += 1
                    if report.firstSkipOffset == nil { report.note(skip: error, at: object.offset) }
                    continue
                }
                try outliers.insert(sighting, time: Double(sighting.timeMilliseconds), offset: object.offset) { kept, _ in
                    try body(kept)
                    report.sightings += 1
                }
            }
        }
        reading: while true {
            let chunk: Data
            do {
                // Compressed, a chunk is read 16 KiB at most: its bytes inflate to up to ~1,000
                // times as many, and 256 KiB of compressed white space made one 256 MB buffer.
                chunk = try handle.read(upToCount: gzip ? Swift.min(chunkSize, Self.compressedChunkLimit) : chunkSize) ?? Data()
            } catch {
                report.stoppedBy = RegionKitError(.malformedInput, "\(path): read error after \(report.sightings) sightings", cause: error)
                break
            }
            if chunk.isEmpty { break }
            // Checked before the next read, which may block for good on a pipe gone quiet.
            defer {
                if endless, sinceObject > maximumBytesWithoutObject, report.stoppedBy == nil {
                    report.stoppedBy = RegionKitError(.malformedInput, """
                        \(splitter.source): \(maximumBytesWithoutObject >> 20) MiB read without a sighting (up to offset \(splitter.offset)): \
                        not a gateway recording, and a \(Self.kind(status.st_mode)) may not end: stopped
                        """)
                }
            }
            guard let inflater else {
                try deliver(Array(chunk))
                if endless, sinceObject > maximumBytesWithoutObject { break reading }
                continue
            }
            var plain: [UInt8] = []
            do {
                try inflater.inflate(Array(chunk), into: &plain)
            } catch let error as RegionKitError {
                // What was decompressed before the damage is still delivered.
                try deliver(plain)
                report.stoppedBy = error
                break reading
            }
            try deliver(plain)
            if endless, sinceObject > maximumBytesWithoutObject { break reading }
        }
        try outliers.finish { kept, _ in
            try body(kept)
            report.sightings += 1
        }
        report.timeOutliers = outliers.dropped
        report.firstTimeOutlier = outliers.firstDropped.map { offset, time in
            "\(splitter.source): the sighting at offset \(offset), time \(Int64(exactly: time.rounded()).map(String.init) ?? "\(time)") ms"
        }
        if report.stoppedBy == nil, let inflater {
            do { try inflater.finish() } catch let error as RegionKitError { report.stoppedBy = error }
        }
        if let inflater {
            report.trailingBytes = inflater.trailingBytes
            report.trailingOffset = inflater.trailingOffset
            report.trailingIsGarbage = inflater.trailingIsGarbage
        }
        if report.stoppedBy == nil {
            do { try splitter.finish() } catch let error as RegionKitError { report.stoppedBy = error }
        }
        report.skippedBytes = splitter.skippedBytes
        if let skip = splitter.firstSkip, skip.offset < report.firstSkipOffset ?? .max {
            // The skipped bytes came before the first damaged sighting.
            report.note(skip: RegionKitError(.malformedInput, "\(splitter.source): \(skip.reason)"), at: skip.offset)
        }
        return report
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
