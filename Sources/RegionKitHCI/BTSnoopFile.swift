/// A whole btsnoop capture: datalink and records.
///
/// ``init(decoding:)`` is strict (any bad record throws);
/// ``decodePrefix(_:)`` keeps every record before the first bad one and
/// returns the error beside them, for captures cut off by a crash;
/// ``decodeSkippingDamage(_:)`` also reads on past garbled records
/// (resynchronising on the next intact one) and reports what it skipped.
///
/// ```swift
/// let (file, error) = try BTSnoopFile.decodePrefix(bytes)
/// print(file.records.count, "records", error.map { "then \($0)" } ?? "")
/// let packets = try file.records.map { try $0.packet(datalink: file.datalink) }
/// ```
public struct BTSnoopFile: Hashable, Sendable {
    public var datalink: BTSnoopDatalink
    public var records: [BTSnoopRecord]

    public init(datalink: BTSnoopDatalink = .h4, records: [BTSnoopRecord] = []) {
        self.datalink = datalink
        self.records = records
    }

    /// Decodes the file; throws on the first truncated or garbled record.
    public init(decoding bytes: [UInt8]) throws(HCIError) {
        let (file, error) = try Self.decodePrefix(bytes)
        if let error { throw error }
        self = file
    }

    /// Decodes as many records as are intact. Throws only if the header itself is bad.
    public static func decodePrefix(_ bytes: [UInt8]) throws(HCIError) -> (file: BTSnoopFile, error: HCIError?) {
        var reader = try BTSnoopReader(bytes: bytes)
        var file = BTSnoopFile(datalink: reader.datalink)
        do {
            while let record = try reader.next() { file.records.append(record) }
            return (file, nil)
        } catch {
            return (file, error)
        }
    }

    /// Decodes every intact record, passing over garbled stretches (see
    /// ``BTSnoopReader/resynchronize()``); the damage report counts what was skipped and where.
    /// Throws only if the header itself is bad.
    ///
    /// ```swift
    /// let (file, damage) = try BTSnoopFile.decodeSkippingDamage(bytes)
    /// if damage.lostData { print(damage.summary) }   // "skipped 1 garbled stretch (31 bytes), the first at byte 44: …"
    /// ```
    public static func decodeSkippingDamage(_ bytes: [UInt8]) throws(HCIError) -> (file: BTSnoopFile, damage: BTSnoopDamage) {
        var reader = try BTSnoopReader(bytes: bytes)
        var file = BTSnoopFile(datalink: reader.datalink)
        var damage = BTSnoopDamage()
        while true {
            do {
                guard let record = try reader.next() else { break }
                file.records.append(record)
            } catch {
                if let skipped = reader.resynchronize() {
                    damage.noteGarbled(error, skippedBytes: skipped)
                } else {
                    damage.noteEnd(error, at: reader.offset, remainingBytes: bytes.count - reader.offset)
                    break
                }
            }
        }
        return (file, damage)
    }

    /// The file's bytes.
    public var encoded: [UInt8] {
        var writer = BTSnoopWriter(datalink: datalink)
        for record in records { writer.append(record) }
        return writer.bytes
    }
}
