/// An HCI packet with its UART (H4) packet type (Core spec Vol 4 Part A 2):
/// 0x01 command, 0x02 ACL data, 0x03 SCO data, 0x04 event, 0x05 ISO data.
///
/// ``payload`` is the HCI packet after the type byte; ``encoded`` puts the type
/// byte in front, as H4 transports, raw HCI sockets and btsnoop (datalink 1002) carry it.
///
/// ```swift
/// let packet = H4Packet(command: .reset)
/// packet.encoded                       // [0x01, 0x03, 0x0C, 0x00]
/// let event = try H4Packet(decoding: [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]).event()
/// ```
public struct H4Packet: Hashable, Sendable, CustomStringConvertible {
    /// The H4 packet indicator byte.
    public enum PacketType: UInt8, Hashable, Sendable, CustomStringConvertible {
        case command = 0x01
        case acl = 0x02
        case sco = 0x03
        case event = 0x04
        case iso = 0x05

        public var description: String {
            switch self {
            case .command: "command"
            case .acl: "ACL"
            case .sco: "SCO"
            case .event: "event"
            case .iso: "ISO"
            }
        }

        /// Header bytes after the type byte, and how to read the payload length from them.
        var headerSize: Int {
            switch self {
            case .command: 3 // opcode (2), length (1)
            case .acl: 4     // handle+flags (2), length (2)
            case .sco: 3     // handle+flags (2), length (1)
            case .event: 2   // code (1), length (1)
            case .iso: 4     // handle+flags (2), length (14 bits) + RFU (2 bits)
            }
        }

        /// The payload length declared by a complete header (`header.count == headerSize`).
        func payloadLength(header: ArraySlice<UInt8>) -> Int {
            let start = header.startIndex
            switch self {
            case .command: return Int(header[start + 2])
            case .acl: return Int(header[start + 2]) | Int(header[start + 3]) << 8
            case .sco: return Int(header[start + 2])
            case .event: return Int(header[start + 1])
            case .iso: return (Int(header[start + 2]) | Int(header[start + 3]) << 8) & 0x3FFF
            }
        }
    }

    public var type: PacketType
    /// The HCI packet after the H4 type byte (header included).
    public var payload: [UInt8]

    public init(type: PacketType, payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }

    public init(command: HCICommand) {
        self.init(type: .command, payload: command.encoded)
    }

    public init(event: HCIEvent, advertisingReportLayout: LEAdvertisingReportLayout = .fieldArrays) {
        self.init(type: .event, payload: event.encoded(advertisingReportLayout: advertisingReportLayout))
    }

    /// Decodes exactly one H4 packet: type byte, header, and as many bytes as the header declares.
    public init(decoding bytes: [UInt8]) throws(HCIError) {
        var deframer = H4Deframer()
        deframer.append(bytes)
        guard let packet = try deframer.next() else {
            throw HCIError(code: .truncated, message: "incomplete H4 packet (\(bytes.count) byte(s))", offset: bytes.count)
        }
        guard deframer.bufferedByteCount == 0 else {
            throw HCIError(code: .lengthMismatch, message: "\(deframer.bufferedByteCount) byte(s) after a complete H4 packet", offset: bytes.count - deframer.bufferedByteCount)
        }
        self = packet
    }

    /// Type byte followed by the payload.
    public var encoded: [UInt8] { [type.rawValue] + payload }

    /// Decodes the payload as an ``HCIEvent``; throws if this is not an event packet.
    /// Error offsets count from the event code (the byte after the H4 type byte).
    public func event(advertisingReportLayout: LEAdvertisingReportLayout = .fieldArrays) throws(HCIError) -> HCIEvent {
        guard type == .event else {
            throw HCIError(code: .invalidValue, message: "H4 packet is \(type), not an event")
        }
        return try HCIEvent(decoding: payload, advertisingReportLayout: advertisingReportLayout)
    }

    /// Decodes the payload as an ``HCICommand``; throws if this is not a command packet.
    public func command() throws(HCIError) -> HCICommand {
        guard type == .command else {
            throw HCIError(code: .invalidValue, message: "H4 packet is \(type), not a command")
        }
        return try HCICommand(decoding: payload)
    }

    public var description: String { "H4 \(type) (\(payload.count) bytes)" }
}
