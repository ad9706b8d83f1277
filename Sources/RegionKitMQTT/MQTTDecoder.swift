import NIOCore

/// The incremental decoder of the client's pipeline: turns the broker's bytes into `MQTTPacket`s.
/// A malformed packet raises `MQTTError.protocolError` through the pipeline, and the connection
/// handler closes the connection. A PUBLISH over `maximumPacketSize` is skipped instead, its bytes
/// dropped as they arrive (never buffered): its head (``MQTTPacket/OversizedPublish``) goes down
/// the pipeline as a user inbound event, for the connection handler to acknowledge and report.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(MQTTDecoder(maximumPacketSize: 1 << 21)))
/// ```
public struct MQTTDecoder: ByteToMessageDecoder {
    public typealias InboundOut = MQTTPacket

    /// The largest whole packet accepted, fixed header included.
    public let maximumPacketSize: Int

    public init(maximumPacketSize: Int = MQTTClientConfiguration.defaultMaximumIncomingPacketSize) {
        self.maximumPacketSize = maximumPacketSize
    }

    /// Bytes of a skipped PUBLISH still to come.
    private var skipping = 0

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if skipping > 0 {
            let dropped = min(skipping, buffer.readableBytes)
            buffer.moveReaderIndex(forwardBy: dropped)
            skipping -= dropped
            return skipping == 0 ? .continue : .needMoreData
        }
        let packet: MQTTPacket?
        do {
            packet = try MQTTPacket.decode(from: &buffer, maximumPacketSize: maximumPacketSize)
        } catch {
            // (A typed pattern with a `where` clause here crashed the 6.3.1 compiler's SILGen.)
            guard Self.isTooLarge(error), buffer.getInteger(at: buffer.readerIndex, as: UInt8.self).map({ $0 >> 4 == 3 }) == true else { throw error }
            guard let head = try MQTTPacket.oversizedPublish(in: buffer, maximumPacketSize: maximumPacketSize) else { return .needMoreData }
            let dropped = min(head.size, buffer.readableBytes)
            buffer.moveReaderIndex(forwardBy: dropped)
            skipping = head.size - dropped
            context.fireUserInboundEventTriggered(head)
            return skipping == 0 ? .continue : .needMoreData
        }
        guard let packet else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(packet))
        return .continue
    }

    private static func isTooLarge(_ error: MQTTError) -> Bool {
        if case .protocolError(let problem) = error { return problem.kind == .packetTooLarge }
        return false
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer,
                                    seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}
