import NIOCore

/// The incremental decoder of the client's pipeline: turns the broker's bytes into `MQTTPacket`s.
/// A malformed packet raises `MQTTError.protocolError` through the pipeline, and the connection
/// handler closes the connection.
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

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let packet = try MQTTPacket.decode(from: &buffer, maximumPacketSize: maximumPacketSize) else {
            return .needMoreData
        }
        context.fireChannelRead(Self.wrapInboundOut(packet))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer,
                                    seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}
