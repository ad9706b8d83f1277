import RegionKitCore

/// A short fingerprint of a set of region definitions: what each cluster member records beside
/// its heartbeat, so that members running different definitions (a rolling restart under way, or
/// one member left on an old configuration) are seen — in each member's log, in `GET /v1/cluster`
/// and in the `regionkit_cluster_region_definitions` gauge.
///
/// The same regions give the same digest whatever their order: each definition is encoded as the
/// stores keep it (JSON, keys sorted), the definitions are sorted, and the digest is FNV-1a (64
/// bits) of them, with the count. Not a cryptographic hash: it tells configurations apart, it does
/// not authenticate them.
///
/// ```swift
/// let digest = try RegionDefinitions.digest(of: regions)   // "3 regions 9f1c0d2e4b7a6358"
/// ```
public enum RegionDefinitions {
    /// The digest of `regions` (independent of their order).
    public static func digest(of regions: [Region]) throws -> String {
        let definitions = try regions.map { try StoreWrite.json($0) }.sorted()
        var hash = FNV1a.hash64([UInt8]())
        for definition in definitions {
            // Each followed by a byte no UTF-8 text contains, so ["ab", "c"] and ["a", "bc"] differ.
            hash = FNV1a.hash64(definition.utf8, from: hash)
            hash = FNV1a.hash64(CollectionOfOne(0xFF), from: hash)
        }
        let hex = String(hash, radix: 16)
        return "\(definitions.count) region\(definitions.count == 1 ? "" : "s") \(String(repeating: "0", count: 16 - hex.count))\(hex)"
    }
}
