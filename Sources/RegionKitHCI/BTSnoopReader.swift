/// Reads a btsnoop capture record by record from bytes.
///
/// The header is checked on creation (magic, version 1). Each ``next()``
/// returns one record, nil at a clean end, or throws an ``HCIError`` naming the
/// record index and byte offset of a truncated or garbled record; the records
/// returned before stay valid. After an error the reader stays failed, unless
/// ``resynchronize()`` finds the next intact record past the damage.
///
/// ```swift
/// var reader = try BTSnoopReader(bytes: Array(try Data(contentsOf: url)))
/// while let record = try reader.next() {
///     let packet = try record.packet(datalink: reader.datalink)
/// }
/// ```
public struct BTSnoopReader: Sendable {
    private let bytes: [UInt8]
    public let datalink: BTSnoopDatalink
    /// Byte offset of the next record.
    public private(set) var offset: Int
    /// Index of the next record (0-based).
    public private(set) var recordIndex = 0
    private var failure: HCIError?

    public static let headerSize = 16
    public static let recordHeaderSize = 24
    /// The longest packet a record can plausibly hold when resynchronising: an H4 type byte and
    /// the largest HCI packet (ACL: 4-byte header + 65,535 bytes), with room to spare.
    public static let maximumPlausibleRecordLength: UInt32 = 1 << 17

    public init(bytes: [UInt8]) throws(HCIError) {
        var reader = ByteReader(bytes)
        guard bytes.count >= Self.headerSize else {
            throw HCIError(code: .truncated, message: "btsnoop header needs 16 bytes, file has \(bytes.count)", offset: 0)
        }
        let magic = try reader.bytes(8, "magic")
        guard magic == BTSnoopWriter.magic else {
            throw HCIError(code: .malformedFile, message: "not a btsnoop file (magic is not \"btsnoop\\0\")", offset: 0)
        }
        let version = try reader.uint32BE("version")
        guard version == 1 else {
            throw HCIError(code: .unsupported, message: "btsnoop version \(version), only version 1 exists", offset: 8)
        }
        datalink = BTSnoopDatalink(rawValue: try reader.uint32BE("datalink"))
        self.bytes = bytes
        offset = Self.headerSize
    }

    /// The next record, nil at the end of the file.
    public mutating func next() throws(HCIError) -> BTSnoopRecord? {
        if let failure { throw failure }
        guard offset < bytes.count else { return nil }
        do {
            let record = try readRecord()
            recordIndex += 1
            return record
        } catch {
            failure = error
            throw error
        }
    }

    /// After ``next()`` threw, looks for the next intact record past the damage: a record header
    /// that is consistent (included ≤ original length, defined flags, a plausible length, an H4
    /// type byte for datalink 1002) and is followed by the end of the file or another such header.
    /// On success the reader continues from there and the number of bytes passed over is
    /// returned; nil means no intact record follows (the reader stays failed, at the damage).
    ///
    /// ```swift
    /// while true {
    ///     do { guard let record = try reader.next() else { break }; use(record) }
    ///     catch { guard let skipped = reader.resynchronize() else { break }; print("skipped", skipped, "bytes") }
    /// }
    /// ```
    public mutating func resynchronize() -> Int? {
        guard failure != nil else { return 0 }
        var candidate = offset + 1
        // Offsets only move forward, so damage anywhere costs one pass over the file at most.
        while candidate + Self.recordHeaderSize <= bytes.count {
            if let end = plausibleRecordEnd(at: candidate), end == bytes.count || plausibleRecordEnd(at: end) != nil {
                let skipped = candidate - offset
                offset = candidate
                failure = nil
                recordIndex += 1   // the damaged record keeps its index
                return skipped
            }
            candidate += 1
        }
        return nil
    }

    /// Where the record starting at `start` ends, if its header is consistent; nil otherwise.
    private func plausibleRecordEnd(at start: Int) -> Int? {
        guard start + Self.recordHeaderSize <= bytes.count else { return nil }
        func word(_ at: Int) -> UInt32 {
            bytes[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) }
        }
        let original = word(start), included = word(start + 4), flags = word(start + 8)
        guard included <= original, original <= Self.maximumPlausibleRecordLength, flags & ~0x3 == 0 else { return nil }
        guard bytes[start + 16] & 0x80 == 0 else { return nil }   // a negative timestamp
        let end = start + Self.recordHeaderSize + Int(included)
        guard end <= bytes.count else { return nil }
        if datalink == .h4 {
            guard included > 0, (1...5).contains(bytes[start + Self.recordHeaderSize]) else { return nil }
        }
        return end
    }

    private mutating func readRecord() throws(HCIError) -> BTSnoopRecord {
        let start = offset
        let available = bytes.count - start
        guard available >= Self.recordHeaderSize else {
            throw HCIError(
                code: .truncated,
                message: "record header needs 24 bytes, \(available) remain",
                offset: start, index: recordIndex
            )
        }
        var reader = ByteReader(Array(bytes[start..<(start + Self.recordHeaderSize)]), baseOffset: start)
        let original = try reader.uint32BE("original length")
        let included = try reader.uint32BE("included length")
        let flags = BTSnoopRecord.Flags(rawValue: try reader.uint32BE("flags"))
        let drops = try reader.uint32BE("cumulative drops")
        let timestamp = Int64(bitPattern: try reader.uint64BE("timestamp"))
        guard included <= original else {
            throw HCIError(
                code: .malformedFile,
                message: "included length \(included) exceeds original length \(original): garbled record",
                offset: start + 4, index: recordIndex
            )
        }
        guard flags.rawValue & ~0x3 == 0 else {
            throw HCIError(
                code: .malformedFile,
                message: "flags \(flags.rawValue) use bits other than direction (0) and command/event (1): garbled record",
                offset: start + 8, index: recordIndex
            )
        }
        let dataStart = start + Self.recordHeaderSize
        guard Int(included) <= bytes.count - dataStart else {
            throw HCIError(
                code: .truncated,
                message: "record data of \(included) byte(s) but \(bytes.count - dataStart) remain",
                offset: dataStart, index: recordIndex
            )
        }
        let data = Array(bytes[dataStart..<(dataStart + Int(included))])
        offset = dataStart + Int(included)
        return BTSnoopRecord(originalLength: original, flags: flags, cumulativeDrops: drops, timestamp: timestamp, data: data)
    }
}
