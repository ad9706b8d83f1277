import FuzzSupport
import RegionKitGateway

/// Gzip-compressed gateway recordings: the inflater fed in chunks (as ``GatewayFileReader`` does),
/// then the JSON splitter and sightings. Invariants: chunking never changes the decompressed bytes;
/// bytes decompressed before a failure are a prefix of what a larger chunking produced.
enum GatewayGzipFuzz {
    static func run(_ data: [UInt8]) {
        guard let whole = inflate(chunks: [Array(data.dropFirst())]),
              let chunked = inflate(chunks: FuzzInput.chunks(data, maximum: 64)) else { return }
        guard whole.failed == chunked.failed else {
            FuzzTarget.fail("chunking changed whether the stream fails (whole: \(whole.failed), chunked: \(chunked.failed))")
        }
        guard whole.failed ? (whole.plain.starts(with: chunked.plain) || chunked.plain.starts(with: whole.plain)) : whole.plain == chunked.plain else {
            FuzzTarget.fail("chunking changed the decompressed bytes")
        }
        let outcome = GatewayJSONFuzz.sightings(chunks: [whole.plain])
        GatewayJSONFuzz.inspect(outcome.sightings)
    }

    /// The decompressed bytes and whether the stream failed; nil past 8 MiB (a decompression bomb
    /// is bounded by the reader's caller, not here: keep the fuzzer's memory bounded).
    static func inflate(chunks: [[UInt8]]) -> (plain: [UInt8], failed: Bool)? {
        guard let inflater = try? GzipInflater(source: "fuzz") else { FuzzTarget.fail("zlib did not initialise") }
        var plain: [UInt8] = []
        do {
            for chunk in chunks {
                plain += try inflater.inflate(chunk)
                if plain.count > 8 << 20 { return nil }
            }
            try inflater.finish()
        } catch {
            return (plain, true)
        }
        return (plain, false)
    }
}
