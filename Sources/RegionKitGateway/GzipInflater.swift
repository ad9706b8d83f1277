import CZlib
import RegionKitCore

/// Streaming gzip decompression (zlib), fed compressed chunks, producing decompressed bytes.
/// Concatenated gzip members are decoded one after another, and bytes after the last member that
/// do not start another one are ignored and counted in ``trailingBytes``, as `gzip -d` does.
///
/// ```swift
/// let inflater = try GzipInflater()
/// var plain: [UInt8] = []
/// try inflater.inflate(chunk, into: &plain)   // on damage, `plain` keeps what came before it
/// try inflater.finish()                       // throws if the stream was cut short
/// ```
public final class GzipInflater {
    /// zlib keeps a pointer back to its stream, so the stream must never move: it lives on the heap.
    private let stream: UnsafeMutablePointer<z_stream>
    private var memberEnded = false
    /// After a member: the first byte of what follows, while the second is not known yet.
    private var pendingMagic: UInt8?
    /// Compressed bytes consumed so far (offset for error messages).
    public private(set) var compressedOffset = 0
    /// Bytes after the last complete member that are not another gzip member (ignored, like `gzip -d`).
    public private(set) var trailingBytes = 0
    /// Compressed offset where ``trailingBytes`` begin (nil when there are none).
    public private(set) var trailingOffset: Int?
    /// Whether any of ``trailingBytes`` is not zero (zero padding is normal on some media; `gzip -d`
    /// warns only about the rest).
    public private(set) var trailingIsGarbage = false
    private var failure: RegionKitError?
    private let source: String

    public init(source: String = "input") throws {
        self.source = source
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15 window bits + 16: expect a gzip header.
        let status = inflateInit2_(stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deallocate()
            throw RegionKitError(.malformedInput, "\(source): cannot initialise zlib (status \(status))")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// Decompresses one chunk; returns the bytes it produced. On damage it throws and the bytes
    /// decompressed from this chunk before the damage are lost: use ``inflate(_:into:)`` to keep them.
    public func inflate(_ chunk: [UInt8]) throws -> [UInt8] {
        var output: [UInt8] = []
        try inflate(chunk, into: &output)
        return output
    }

    /// Decompresses one chunk, appending to `output`. On corrupt data it throws a
    /// `RegionKitError` with the compressed offset, and `output` holds every byte decompressed
    /// before the damage. Once it has thrown, later calls throw the same error.
    public func inflate(_ chunk: [UInt8], into output: inout [UInt8]) throws {
        if let failure { throw failure }
        var input = chunk
        var consumed = 0
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while consumed < input.count {
            if trailingOffset != nil {
                // Past the last member: everything that follows is ignored.
                trailingBytes += input.count - consumed
                trailingIsGarbage = trailingIsGarbage || input[consumed...].contains { $0 != 0 }
                compressedOffset += input.count - consumed
                return
            }
            if memberEnded {
                // Another gzip member follows only if it starts with gzip's magic (1F 8B).
                let first = pendingMagic ?? input[consumed]
                let secondIndex = pendingMagic == nil ? consumed + 1 : consumed
                guard secondIndex < input.count else {
                    pendingMagic = first
                    consumed += 1
                    compressedOffset += 1
                    continue
                }
                if first == 0x1F && input[secondIndex] == 0x8B {
                    inflateReset(stream)
                    memberEnded = false
                    if let pending = pendingMagic {
                        // The first magic byte came in the previous chunk: give it to zlib now.
                        pendingMagic = nil
                        compressedOffset -= 1
                        input.insert(pending, at: consumed)
                    }
                } else {
                    trailingOffset = compressedOffset - (pendingMagic == nil ? 0 : 1)
                    if let pending = pendingMagic {
                        trailingBytes = 1
                        trailingIsGarbage = pending != 0
                        pendingMagic = nil
                    }
                    continue
                }
            }
            let (status, used, produced) = input.withUnsafeMutableBufferPointer { inputBuffer in
                buffer.withUnsafeMutableBufferPointer { outputBuffer in
                    stream.pointee.next_in = inputBuffer.baseAddress! + consumed
                    stream.pointee.avail_in = UInt32(inputBuffer.count - consumed)
                    stream.pointee.next_out = outputBuffer.baseAddress
                    stream.pointee.avail_out = UInt32(outputBuffer.count)
                    let status = CZlib.inflate(stream, Z_NO_FLUSH)
                    let used = (inputBuffer.count - consumed) - Int(stream.pointee.avail_in)
                    let produced = outputBuffer.count - Int(stream.pointee.avail_out)
                    return (status, used, produced)
                }
            }
            output.append(contentsOf: buffer[0..<produced])
            consumed += used
            compressedOffset += used
            switch status {
            case Z_OK, Z_BUF_ERROR:
                if used == 0 && produced == 0 { return }
            case Z_STREAM_END:
                memberEnded = true
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "status \(status)"
                let error = RegionKitError(.malformedInput, "\(source): corrupt gzip data near compressed byte \(compressedOffset): \(message)")
                failure = error
                throw error
            }
        }
    }

    /// Checks that the last member ended cleanly.
    public func finish() throws {
        if let failure { throw failure }
        if pendingMagic != nil {
            // One byte after the last member: not a member, so trailing data.
            trailingOffset = compressedOffset - 1
            trailingBytes = 1
            trailingIsGarbage = pendingMagic != 0
            pendingMagic = nil
        }
        guard memberEnded || compressedOffset == 0 else {
            throw RegionKitError(.malformedInput, "\(source): truncated gzip stream: it ends at compressed byte \(compressedOffset) before the end of its member")
        }
    }
}
