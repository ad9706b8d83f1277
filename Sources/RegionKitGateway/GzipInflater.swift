import CZlib
import RegionKitCore

/// Streaming gzip decompression (zlib), fed compressed chunks, producing decompressed bytes.
/// Concatenated gzip members are decoded one after another, as `gzip -d` does.
///
/// ```swift
/// let inflater = try GzipInflater()
/// let plain = try inflater.inflate(chunk)   // call for every chunk read from the file
/// try inflater.finish()                     // throws if the stream was cut short
/// ```
public final class GzipInflater {
    /// zlib keeps a pointer back to its stream, so the stream must never move: it lives on the heap.
    private let stream: UnsafeMutablePointer<z_stream>
    private var memberEnded = false
    /// Compressed bytes consumed so far (offset for error messages).
    public private(set) var compressedOffset = 0
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

    /// Decompresses one chunk; returns the bytes it produced.
    public func inflate(_ chunk: [UInt8]) throws -> [UInt8] {
        var output: [UInt8] = []
        var input = chunk
        var consumed = 0
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while consumed < input.count {
            if memberEnded {
                // Another gzip member follows: start over.
                inflateReset(stream)
                memberEnded = false
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
                if used == 0 && produced == 0 { return output }
            case Z_STREAM_END:
                memberEnded = true
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "status \(status)"
                throw RegionKitError(.malformedInput, "\(source): corrupt gzip data near compressed byte \(compressedOffset): \(message)")
            }
        }
        return output
    }

    /// Checks that the last member ended cleanly.
    public func finish() throws {
        guard memberEnded || compressedOffset == 0 else {
            throw RegionKitError(.malformedInput, "\(source): truncated gzip stream: it ends at compressed byte \(compressedOffset) before the end of its member")
        }
    }
}
