import NIOCore

/// The encoder of the client's pipeline: writes `MQTTPacket`s as bytes.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(MQTTEncoder()))
/// ```
public struct MQTTEncoder: MessageToByteEncoder {
    public typealias OutboundIn = MQTTPacket

    public init() {}

    public func encode(data: MQTTPacket, out: inout ByteBuffer) throws {
        try data.encode(into: &out)
    }
}
