/// The address type byte of LE commands and reports (Core spec Vol 4 Part E 7.7.65.2 / 7.8.5).
///
/// In reports: 0x00 public, 0x01 random, 0x02 public identity (resolved RPA),
/// 0x03 random static identity (resolved RPA), 0xFF anonymous (extended reports).
/// In commands (own address type): 0x00 public, 0x01 random, 0x02 RPA or public,
/// 0x03 RPA or random. Unknown values are kept, never rejected.
///
/// ```swift
/// let type = LEAddressType(rawValue: 1)
/// type == .random     // true
/// type.description    // "random"
/// ```
public struct LEAddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let `public` = LEAddressType(rawValue: 0x00)
    public static let random = LEAddressType(rawValue: 0x01)
    /// In reports: public identity address (resolved). In commands: RPA, else public.
    public static let publicIdentity = LEAddressType(rawValue: 0x02)
    /// In reports: random (static) identity address (resolved). In commands: RPA, else random.
    public static let randomIdentity = LEAddressType(rawValue: 0x03)
    /// No address provided (anonymous advertisement; extended reports only).
    public static let anonymous = LEAddressType(rawValue: 0xFF)

    public var description: String {
        switch rawValue {
        case 0x00: "public"
        case 0x01: "random"
        case 0x02: "public identity"
        case 0x03: "random identity"
        case 0xFF: "anonymous"
        default: "address type \(hex(rawValue))"
        }
    }
}
