/// The datalink type in a btsnoop file header.
///
/// 1001 is unencapsulated HCI (no packet type byte; the record flags tell
/// command/event from data), 1002 is HCI UART (H4, type byte included; what
/// Android's `btsnoop_hci.log` and Bumble write), 1003 BCSP, 1004 H5, 2001 the
/// Linux monitor channel (btmon). This library writes 1002 and reads 1001/1002.
///
/// ```swift
/// var writer = BTSnoopWriter(datalink: .h4)
/// writer.datalink.rawValue   // 1002
/// ```
public struct BTSnoopDatalink: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let unencapsulatedHCI = BTSnoopDatalink(rawValue: 1001)
    public static let h4 = BTSnoopDatalink(rawValue: 1002)
    public static let bcsp = BTSnoopDatalink(rawValue: 1003)
    public static let h5 = BTSnoopDatalink(rawValue: 1004)
    public static let linuxMonitor = BTSnoopDatalink(rawValue: 2001)

    public var description: String {
        switch rawValue {
        case 1001: "1001 (unencapsulated HCI)"
        case 1002: "1002 (HCI UART H4)"
        case 1003: "1003 (BCSP)"
        case 1004: "1004 (H5)"
        case 2001: "2001 (Linux monitor)"
        default: "\(rawValue)"
        }
    }
}
