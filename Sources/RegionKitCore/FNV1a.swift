/// FNV-1a, the small non-cryptographic hash RegionKit uses where a value must be the same on
/// every machine and in every version: a region's one-to-one topic level, a set of region
/// definitions' digest. (`NATSPartition` computes the same 32-bit hash itself, as nats-server
/// does: the MQTT module depends on no other RegionKit module but the lock.)
///
/// ```swift
/// FNV1a.hash32("foobar".utf8)     // 0xBF9CF968
/// FNV1a.hash32([UInt8]())         // 0x811C9DC5, the offset basis
/// ```
public enum FNV1a {
    /// The 32-bit hash of `bytes`, continuing from `hash` (the offset basis by default).
    public static func hash32(_ bytes: some Sequence<UInt8>, from hash: UInt32 = 0x811C_9DC5) -> UInt32 {
        var hash = hash
        for byte in bytes { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return hash
    }

    /// The 64-bit hash of `bytes`, continuing from `hash` (the offset basis by default).
    public static func hash64(_ bytes: some Sequence<UInt8>, from hash: UInt64 = 0xCBF2_9CE4_8422_2325) -> UInt64 {
        var hash = hash
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }
}
