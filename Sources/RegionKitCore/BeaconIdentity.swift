import Foundation

/// The full identity an iBeacon transmits: proximity UUID, major and minor.
///
/// ```swift
/// let id = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)
/// id.description // "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2"
/// ```
public struct BeaconIdentity: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16

    public init(uuid: UUID, major: UInt16, minor: UInt16) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    public static func < (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool {
        if lhs.uuid != rhs.uuid { return lhs.uuid.uuidString < rhs.uuid.uuidString }
        if lhs.major != rhs.major { return lhs.major < rhs.major }
        return lhs.minor < rhs.minor
    }

    public var description: String { "\(uuid.uuidString):\(major):\(minor)" }

    /// Hashes the UUID as two words and major/minor as one (cheaper than hashing the UUID's 16
    /// bytes one by one: identities are hashed on every sighting).
    public func hash(into hasher: inout Hasher) {
        let words = withUnsafeBytes(of: uuid.uuid) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
        hasher.combine(words.0)
        hasher.combine(words.1 ^ (UInt64(major) << 16 | UInt64(minor)) &* 0x9E37_79B9_7F4A_7C15)
    }
}
