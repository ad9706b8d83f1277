/// One MQTT 3.1.1 control packet as a value. `encode(into:)` writes its bytes and
/// `decode(from:maximumPacketSize:)` reads them back (both directions are decodable, so that the
/// codec can be tested as a round trip); QoS 2 packets are not modelled.
///
/// ```swift
/// var buffer = ByteBufferAllocator().buffer(capacity: 16)
/// try MQTTPacket.puback(packetID: 10).encode(into: &buffer)     // 40 02 00 0A
/// let packet = try MQTTPacket.decode(from: &buffer)             // .puback(packetID: 10)
/// ```
public enum MQTTPacket: Sendable, Hashable {
    case connect(Connect)
    case connack(ConnAck)
    case publish(Publish)
    case puback(packetID: UInt16)
    case subscribe(Subscribe)
    case suback(SubAck)
    case unsubscribe(Unsubscribe)
    case unsuback(packetID: UInt16)
    case pingreq
    case pingresp
    case disconnect

    /// The largest remaining length MQTT can express (four varint bytes).
    public static let maximumRemainingLength = 268_435_455

    /// The packet type number of the fixed header's high nibble.
    public var typeNumber: UInt8 {
        switch self {
        case .connect: 1
        case .connack: 2
        case .publish: 3
        case .puback: 4
        case .subscribe: 8
        case .suback: 9
        case .unsubscribe: 10
        case .unsuback: 11
        case .pingreq: 12
        case .pingresp: 13
        case .disconnect: 14
        }
    }
}
