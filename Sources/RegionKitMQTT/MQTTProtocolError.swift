/// A malformed or unexpected packet from the broker: what was wrong and the byte offset, counted from
/// the packet's first byte (the fixed header). The connection is closed when one is seen.
///
/// ```swift
/// // 0xF0 is the reserved packet type 15:
/// // MQTTProtocolError(kind: .reservedPacketType, what: "reserved packet type 15", offset: 0)
/// ```
public struct MQTTProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rule that was broken.
    public enum Kind: Sendable, Hashable {
        /// Packet type 0 or 15.
        case reservedPacketType
        /// A QoS 2 packet type (PUBREC, PUBREL, PUBCOMP) or a QoS 2 PUBLISH: we never subscribe with QoS 2.
        case qos2NotSupported
        /// The fixed header's low nibble is not what the packet type requires.
        case invalidFixedHeaderFlags
        /// The remaining length has a fifth byte (more than 268,435,455).
        case malformedRemainingLength
        /// The packet is larger than `maximumIncomingPacketSize`.
        case packetTooLarge
        /// The remaining length ends before a field does.
        case truncated
        /// Bytes left over after the last field of a fixed-size packet.
        case trailingBytes
        /// A string that is not well-formed UTF-8 or contains U+0000.
        case invalidUTF8
        /// A field value the specification forbids (QoS 3, packet id 0, wildcard in a topic name, …).
        case invalidValue
        /// A packet a broker must not send to a client, or one out of sequence.
        case unexpectedPacket
    }

    public var kind: Kind
    /// What was wrong, in words (names the field).
    public var what: String
    /// Byte offset from the start of the packet.
    public var offset: Int

    public init(kind: Kind, what: String, offset: Int) {
        self.kind = kind
        self.what = what
        self.offset = offset
    }

    public var description: String { "\(what) at byte \(offset)" }
}
