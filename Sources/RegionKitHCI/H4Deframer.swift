/// Cuts an H4 byte stream into ``H4Packet``s, whatever the chunk boundaries.
///
/// Feed it bytes as they arrive (one byte, half a header, three packets at once)
/// and pull complete packets out. An unknown packet type byte cannot be skipped
/// (H4 has no resynchronisation), so it fails the stream: that error names the
/// absolute stream offset, and every later call throws it again.
///
/// ```swift
/// var deframer = H4Deframer()
/// for chunk in chunks {
///     for packet in try deframer.feed(chunk) {
///         handle(packet)
///     }
/// }
/// ```
public struct H4Deframer: Sendable {
    private var buffer: [UInt8] = []
    /// Index in `buffer` of the first byte not yet consumed.
    private var start = 0
    /// Stream offset of `buffer[0]`.
    private var bufferStreamOffset = 0
    private var failure: HCIError?
    /// Largest payload accepted; longer declared lengths fail the stream (default: the H4 maximum, 65535).
    public var maximumPayloadLength: Int

    public init(maximumPayloadLength: Int = 0xFFFF) {
        self.maximumPayloadLength = maximumPayloadLength
    }

    /// Number of bytes received but not yet returned as packets.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Total number of bytes consumed into returned packets.
    public var streamOffset: Int { bufferStreamOffset + start }

    /// Adds bytes to the internal buffer without decoding.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// Returns the next complete packet, nil if more bytes are needed.
    public mutating func next() throws(HCIError) -> H4Packet? {
        if let failure { throw failure }
        guard start < buffer.count else {
            compact()
            return nil
        }
        let typeByte = buffer[start]
        guard let type = H4Packet.PacketType(rawValue: typeByte) else {
            let error = HCIError(
                code: .unknownPacketType,
                message: "unknown H4 packet type \(hex(typeByte)) (expected 0x01 command, 0x02 ACL, 0x03 SCO, 0x04 event, 0x05 ISO)",
                offset: streamOffset
            )
            failure = error
            throw error
        }
        let headerEnd = start + 1 + type.headerSize
        guard headerEnd <= buffer.count else { return nil }
        let payloadLength = type.payloadLength(header: buffer[(start + 1)..<headerEnd])
        guard payloadLength <= maximumPayloadLength else {
            let error = HCIError(
                code: .lengthMismatch,
                message: "H4 \(type) packet declares \(payloadLength) byte(s), above the limit of \(maximumPayloadLength)",
                offset: streamOffset
            )
            failure = error
            throw error
        }
        let end = headerEnd + payloadLength
        guard end <= buffer.count else { return nil }
        let packet = H4Packet(type: type, payload: Array(buffer[(start + 1)..<end]))
        start = end
        if start >= 4096 { compact() }
        return packet
    }

    /// Appends `bytes` and returns every packet now complete. If the stream
    /// fails after some packets were cut from this chunk, those packets are
    /// returned and the error is thrown by the next call.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(HCIError) -> [H4Packet] {
        append(bytes)
        var packets: [H4Packet] = []
        do {
            while let packet = try next() { packets.append(packet) }
        } catch {
            if packets.isEmpty { throw error }
        }
        return packets
    }

    private mutating func compact() {
        guard start > 0 else { return }
        buffer.removeFirst(start)
        bufferStreamOffset += start
        start = 0
    }
}
