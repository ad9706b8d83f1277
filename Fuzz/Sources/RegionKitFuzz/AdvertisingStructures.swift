import RegionKitCore

/// The AD structures of fuzzed advertising data, one byte string each, so a target can run a codec
/// and a beacon layout on the same single structure and compare what they read.
enum AdvertisingStructures {
    /// Each complete structure (length byte, AD type, data) up to the first zero length or truncation.
    static func split(_ data: [UInt8]) -> [(offset: Int, bytes: [UInt8])] {
        var pieces: [(offset: Int, bytes: [UInt8])] = []
        _ = data.withUnsafeBytes { raw in
            AdvertisingDataWalker.walk(raw) { s in
                pieces.append((s.offset, Array(data[s.offset..<(s.body + s.count)])))
                return true
            }
        }
        return pieces
    }

    /// The structure whose length byte is at `offset`.
    static func structure(at offset: Int, in data: [UInt8]) -> [UInt8]? {
        split(data).first { $0.offset == offset }?.bytes
    }
}
