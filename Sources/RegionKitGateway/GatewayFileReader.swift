import Foundation
import RegionKitCore

/// Reads a gateway recording (`.json` or `.json.gz`: concatenated JSON sighting objects) and hands
/// each sighting to `body` as soon as it is decoded. On corrupt or truncated input it throws a
/// clear error with the byte offset — after every sighting before the damage has been delivered,
/// so nothing already read is lost.
///
/// ```swift
/// try GatewayFileReader(path: "run.json.gz").forEach { sighting in manager.ingest(sighting.observation(originMilliseconds: t0)) }
/// ```
public struct GatewayFileReader: Sendable {
    public let path: String
    /// Read chunk size in bytes.
    public var chunkSize = 256 * 1024

    public init(path: String) {
        self.path = path
    }

    public var isGzip: Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return path.hasSuffix(".gz") }
        defer { try? handle.close() }
        let magic = (try? handle.read(upToCount: 2)) ?? Data()
        return magic == Data([0x1F, 0x8B])
    }

    /// Calls `body` for each sighting in file order; returns how many were delivered.
    @discardableResult
    public func forEach(_ body: (GatewaySighting) throws -> Void) throws -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw RegionKitError(.malformedInput, "\(path): cannot open the gateway recording")
        }
        defer { try? handle.close() }
        let gzip = isGzip
        let inflater = gzip ? try GzipInflater(source: path) : nil
        var splitter = ConcatenatedJSONSplitter(source: gzip ? "\(path) (decompressed)" : path)
        var delivered = 0
        while true {
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: chunkSize) ?? Data()
            } catch {
                throw RegionKitError(.malformedInput, "\(path): read error after \(delivered) sightings", cause: error)
            }
            if chunk.isEmpty { break }
            let plain = try inflater?.inflate(Array(chunk)) ?? Array(chunk)
            for object in try splitter.feed(plain) {
                try body(GatewaySighting(json: object.bytes, offset: object.offset, source: splitter.source))
                delivered += 1
            }
        }
        try inflater?.finish()
        try splitter.finish()
        return delivered
    }
}
