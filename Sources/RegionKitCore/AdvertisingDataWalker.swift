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

    /// The first structure of AD `type` that `check` accepts, as `check` read it — how the AltBeacon,
    /// Eddystone and layout decoders find their frame. When none is accepted, the error is, in
    /// order: a structure running past the end (`truncatedStructure`), the first structure of that
    /// type `check` refused (its near-miss), or `noBeaconData` naming `kind`.
    ///
    /// ```swift
    /// let frame = try AdvertisingDataWalker.firstMatch(in: bytes, type: 0xFF, kind: "Manufacturer Specific Data") { raw, s in
    ///     s.count == 26 ? .success(s.offset) : .failure(BeaconDecodingError(.wrongLength, at: s.offset, "not 26 bytes"))
    /// }
    /// ```
    public static func firstMatch<Frame>(
        in data: some Collection<UInt8>, type: UInt8, kind: String,
        _ check: (UnsafeRawBufferPointer, Structure) -> Result<Frame, BeaconDecodingError>
    ) throws(BeaconDecodingError) -> Frame {
        let bytes = Array(data)
        var found: Frame?
        var nearMiss: BeaconDecodingError?
        let truncated = bytes.withUnsafeBytes { raw in
            walk(raw) { structure in
                guard structure.type == type else { return true }
                switch check(raw, structure) {
                case .success(let frame): found = frame; return false
                case .failure(let error): if nearMiss == nil { nearMiss = error }; return true
                }
            }
        }
        if let found { return found }
        if let truncated {
            throw BeaconDecodingError(.truncatedStructure, at: truncated.offset,
                                      "AD structure at offset \(truncated.offset) declares \(truncated.length) bytes but only \(bytes.count - truncated.offset - 1) follow")
        }
        if let nearMiss { throw nearMiss }
        throw BeaconDecodingError(.noBeaconData, at: bytes.count, "no \(kind) AD structure in \(bytes.count) bytes")
    }
}
