/// What reading a damaged btsnoop capture skipped: garbled stretches passed over (how many, how
/// many bytes, the first error with its offset and record index) and a damaged end (a capture
/// cut off mid-record, or garbage up to the end of the file).
///
/// ```swift
/// let (file, damage) = try BTSnoopFile.decodeSkippingDamage(bytes)
/// print(file.records.count, "records;", damage.lostData ? damage.summary : "intact")
/// ```
public struct BTSnoopDamage: Sendable, CustomStringConvertible {
    /// Garbled stretches passed over to reach the next intact record.
    public var garbledStretches = 0
    /// Bytes in those stretches.
    public var skippedBytes = 0
    /// The first garbled record (offset and index).
    public var firstError: HCIError?
    /// Why reading ended before the end of the file (a record cut off, garbage to the end): the
    /// bytes from its offset on were not used.
    public var end: HCIError?
    /// Bytes after the last intact record that were not used (with ``end``).
    public var unusedTrailingBytes = 0
    /// Where the unused bytes begin (with ``end``).
    public var unusedOffset: Int?

    public init() {}

    /// Whether anything in the file was not used.
    public var lostData: Bool { garbledStretches > 0 || end != nil }

    /// Whether the file's end was damaged (the capture was cut off or ends in garbage).
    public var endsEarly: Bool { end != nil }

    /// A sentence naming counts and offsets (empty when the capture was intact).
    public var summary: String {
        var parts: [String] = []
        if garbledStretches > 0, let firstError {
            parts.append("skipped \(garbledStretches) garbled stretch(es) (\(skippedBytes) bytes), the first at byte \(firstError.offset ?? 0) (record \(firstError.index ?? 0)): \(firstError.message)")
        }
        if let end {
            parts.append("the last \(unusedTrailingBytes) byte(s) from byte \(unusedOffset ?? 0) (record \(end.index ?? 0)) were not used: \(end.message)")
        }
        return parts.joined(separator: "; ")
    }

    public var description: String { lostData ? summary : "intact" }

    /// Records a garbled stretch passed over by ``BTSnoopReader/resynchronize()``.
    public mutating func noteGarbled(_ error: HCIError, skippedBytes bytes: Int) {
        garbledStretches += 1
        skippedBytes += bytes
        if firstError == nil { firstError = error }
    }

    /// Records where reading ended before the end of the file.
    public mutating func noteEnd(_ error: HCIError, at offset: Int, remainingBytes: Int) {
        end = error
        unusedOffset = offset
        unusedTrailingBytes = remainingBytes
    }
}
