import RegionKitCore

/// What reading a gateway recording found: how many sightings were delivered, what was skipped
/// (with the first offset and reason), the damage that ended reading early, and bytes ignored after
/// the last gzip member. Returned by ``GatewayFileReader/read(_:)``.
///
/// ```swift
/// let report = try GatewayFileReader(path: "run.json.gz").read { sighting in feed(sighting) }
/// if report.lostData { print("warning:", report.summary) }   // the sightings before the damage were delivered
/// ```
public struct GatewayReadReport: Hashable, Sendable {
    /// Sightings handed to the caller.
    public var sightings = 0
    /// JSON objects that did not decode as a sighting (a field missing or out of range, invalid JSON).
    public var skippedSightings = 0
    /// Bytes between objects that were not JSON (garbage), and oversized objects, skipped.
    public var skippedBytes = 0
    /// Offset of the first skipped object or bytes (in the decompressed stream for gzip).
    public var firstSkipOffset: Int?
    /// Why the first skipped object or bytes were skipped, naming the file and the offset.
    public var firstSkip: RegionKitError?
    /// The damage that ended reading before the end of the file: corrupt or truncated gzip data,
    /// a read error, a JSON object cut off by the end of the file. Everything before it was delivered.
    public var stoppedBy: RegionKitError?
    /// Bytes after the last gzip member that are not another member: ignored, as `gzip -d` does.
    public var trailingBytes = 0
    /// Compressed offset of ``trailingBytes`` (nil when there are none).
    public var trailingOffset: Int?
    /// Whether the trailing bytes are not only zero padding (which `gzip -d` ignores silently).
    public var trailingIsGarbage = false
    /// Sightings left out because their time is over a day from the sightings around them (a
    /// damaged timestamp, or a lone sighting beyond a long gap: which one cannot be told, so it is
    /// a warning, not damage).
    public var timeOutliers = 0
    /// The first of ``timeOutliers``: its offset and time.
    public var firstTimeOutlier: String?

    public init() {}

    /// Records the first skip (the earliest offset wins).
    mutating func note(skip: RegionKitError, at offset: Int) {
        guard offset < firstSkipOffset ?? .max else { return }
        firstSkipOffset = offset
        firstSkip = skip
    }

    /// Whether something in the file was not delivered: skipped objects or bytes, or an early stop.
    /// Trailing bytes after the last gzip member are not data (see ``warnings``).
    public var lostData: Bool { skippedSightings > 0 || skippedBytes > 0 || stoppedBy != nil }

    /// One line per problem, naming the file, counts and first offset (empty when the file was whole).
    public var problems: [String] {
        var lines: [String] = []
        if skippedSightings > 0 || skippedBytes > 0 {
            var parts: [String] = []
            if skippedSightings > 0 { parts.append("\(skippedSightings) damaged sighting(s)") }
            if skippedBytes > 0 { parts.append("\(skippedBytes) byte(s) that are not JSON objects") }
            lines.append("skipped \(parts.joined(separator: " and ")); the first: \(firstSkip?.message ?? "unknown")")
        }
        if let stoppedBy { lines.append("reading stopped early: \(stoppedBy.message)") }
        return lines
    }

    /// Notes beside the damage: sightings left out for their time, trailing garbage after the last gzip member.
    public var warnings: [String] {
        var lines: [String] = []
        if timeOutliers > 0, let firstTimeOutlier {
            lines.append("\(timeOutliers) sighting(s) left out: their time is over a day from the sightings around them (damaged timestamps?); the first: \(firstTimeOutlier)")
        }
        if trailingIsGarbage, let trailingOffset {
            lines.append("\(trailingBytes) byte(s) of trailing garbage after the last gzip member at compressed byte \(trailingOffset) ignored (as gzip -d does)")
        }
        return lines
    }

    /// A one-line summary: counts, the first problem, where reading stopped.
    public var summary: String {
        ([("\(sightings) sighting(s) read")] + problems).joined(separator: "; ")
    }

    /// The report as an error when data was lost (nil otherwise): the message says what was kept.
    public func error(path: String) -> RegionKitError? {
        guard lostData else { return nil }
        return RegionKitError(.malformedInput, "\(path): damaged gateway recording: \(summary)")
    }
}
