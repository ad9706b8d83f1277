/// Walks the AD structures of advertising data (Core spec Vol 3 Part C §11: length, AD type,
/// length − 1 data bytes; a zero length ends the significant part).
///
/// ```swift
/// let truncated = AdvertisingDataWalker.walk(bytes) { structure in print(structure.type); return true }
/// ```
public enum AdvertisingDataWalker {
    /// One AD structure: `offset` of its length byte, its `type`, and where its data lies.
    public struct Structure: Sendable {
        public var offset: Int
        public var type: UInt8
        /// Offset of the first byte after the AD type.
        public var body: Int
        /// Number of bytes after the AD type.
        public var count: Int

        @inlinable
        public init(offset: Int, type: UInt8, body: Int, count: Int) {
            self.offset = offset
            self.type = type
            self.body = body
            self.count = count
        }
    }

    /// Calls `visit` for each structure until it returns false; returns the offset and declared
    /// length of a structure that runs past the end, if one does.
    @inlinable
    public static func walk(_ bytes: UnsafeRawBufferPointer, _ visit: (Structure) -> Bool) -> (offset: Int, length: Int)? {
        var offset = 0
        while offset < bytes.count {
            let length = Int(bytes[offset])
            if length == 0 { return nil }
            guard offset + 1 + length <= bytes.count else { return (offset, length) }
            if !visit(Structure(offset: offset, type: bytes[offset + 1], body: offset + 2, count: length - 1)) { return nil }
            offset += 1 + length
        }
        return nil
    }

    /// The error for a structure that runs past the end of `total` bytes.
    static func truncation(_ at: (offset: Int, length: Int), total: Int) -> BeaconDecodingError {
        BeaconDecodingError(.truncatedStructure, at: at.offset,
                            "AD structure at offset \(at.offset) declares \(at.length) bytes but only \(total - at.offset - 1) follow")
    }
}
