/// One packet record of a btsnoop capture (RFC 1761 snoop format, Bluetooth flavour).
///
/// On disk, all big-endian: original length (4), included length (4), flags (4),
/// cumulative drops (4), timestamp (8, signed microseconds since midnight
/// 1 January 0 AD), then the included bytes. Flags bit 0 is the direction
/// (0 sent host→controller, 1 received controller→host), bit 1 marks
/// command/event packets (1) versus data packets (0).
///
/// ```swift
/// let record = BTSnoopRecord(packet: H4Packet(command: .reset), direction: .sent,
///                            unixMicroseconds: 1_700_000_000_000_000)
/// record.flags                       // [.commandOrEvent]
/// try record.packet(datalink: .h4)   // the H4 reset command again
/// ```
public struct BTSnoopRecord: Hashable, Sendable {
    /// The record flags word.
    public struct Flags: OptionSet, Hashable, Sendable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Bit 0: received (controller → host). Clear: sent (host → controller).
        public static let received = Flags(rawValue: 1 << 0)
        /// Bit 1: command or event packet. Clear: ACL/SCO/ISO data.
        public static let commandOrEvent = Flags(rawValue: 1 << 1)
    }

    /// Which way a packet travelled, from the host's point of view.
    public enum Direction: Hashable, Sendable {
        /// Host → controller.
        case sent
        /// Controller → host.
        case received
    }

    /// Microseconds from 0000-01-01 00:00 AD to 1970-01-01 00:00 UTC (0x00DCDDB30F2F8000).
    public static let unixEpochOffset: Int64 = 0x00DC_DDB3_0F2F_8000

    /// Length of the packet as it was seen; `data.count` may be smaller if the capture truncated it.
    public var originalLength: UInt32
    public var flags: Flags
    /// Packets dropped since the capture started.
    public var cumulativeDrops: UInt32
    /// Microseconds since midnight 1 January 0 AD.
    public var timestamp: Int64
    /// The included bytes (for datalink 1002: H4 type byte + packet).
    public var data: [UInt8]

    public init(originalLength: UInt32, flags: Flags, cumulativeDrops: UInt32 = 0, timestamp: Int64, data: [UInt8]) {
        self.originalLength = originalLength
        self.flags = flags
        self.cumulativeDrops = cumulativeDrops
        self.timestamp = timestamp
        self.data = data
    }

    /// A datalink-1002 (H4) record for `packet`; flags follow from the direction and packet type.
    public init(packet: H4Packet, direction: Direction, unixMicroseconds: Int64, cumulativeDrops: UInt32 = 0) {
        var flags: Flags = direction == .received ? [.received] : []
        if packet.type == .command || packet.type == .event { flags.insert(.commandOrEvent) }
        let data = packet.encoded
        self.init(
            originalLength: UInt32(truncatingIfNeeded: data.count), flags: flags, cumulativeDrops: cumulativeDrops,
            timestamp: unixMicroseconds &+ Self.unixEpochOffset, data: data
        )
    }

    public var direction: Direction { flags.contains(.received) ? .received : .sent }

    /// Microseconds since the Unix epoch.
    public var unixMicroseconds: Int64 { timestamp &- Self.unixEpochOffset }

    /// The record as an ``H4Packet``. Datalink 1002 carries the type byte; for 1001
    /// (unencapsulated HCI) the type is inferred from the flags: command if sent,
    /// event if received, ACL for data (SCO/ISO cannot be told apart there).
    public func packet(datalink: BTSnoopDatalink) throws(HCIError) -> H4Packet {
        switch datalink {
        case .h4:
            return try H4Packet(decoding: data)
        case .unencapsulatedHCI:
            let type: H4Packet.PacketType
            if flags.contains(.commandOrEvent) {
                type = direction == .sent ? .command : .event
            } else {
                type = .acl
            }
            return H4Packet(type: type, payload: data)
        default:
            throw HCIError(code: .unsupported, message: "btsnoop datalink \(datalink) is not H4 or unencapsulated HCI")
        }
    }

    /// The 24-byte record header followed by the data.
    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24 + data.count)
        bytes.appendBE(originalLength)
        bytes.appendBE(UInt32(truncatingIfNeeded: data.count))
        bytes.appendBE(flags.rawValue)
        bytes.appendBE(cumulativeDrops)
        bytes.appendBE(UInt64(bitPattern: timestamp))
        bytes.append(contentsOf: data)
        return bytes
    }
}
