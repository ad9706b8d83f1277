import Foundation

/// Which beacons a region or a ranging request matches: a UUID, optionally a major, optionally a
/// minor (only together with a major), as Core Location's `CLBeaconIdentityConstraint`.
///
/// ```swift
/// let museum = try BeaconIdentityConstraint(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
/// museum.matches(BeaconIdentity(uuid: museum.uuid, major: 7, minor: 1)) // true
/// ```
public struct BeaconIdentityConstraint: Hashable, Sendable, Codable, CustomStringConvertible {
    public let uuid: UUID
    public let major: UInt16?
    public let minor: UInt16?

    /// Creates a constraint; a minor without a major is rejected.
    public init(uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil) throws {
        if minor != nil && major == nil {
            throw RegionKitError(.invalidRegion, "beacon constraint \(uuid.uuidString): a minor (\(minor!)) needs a major")
        }
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// Creates a constraint from a UUID string, with or without dashes.
    public init(uuidString: String, major: UInt16? = nil, minor: UInt16? = nil) throws {
        guard let uuid = UUID(flexibleString: uuidString) else {
            throw RegionKitError(.invalidRegion, "proximity UUID '\(uuidString)' is not a UUID (expected 32 hex digits, dashes optional)")
        }
        try self.init(uuid: uuid, major: major, minor: minor)
    }

    /// A constraint matching exactly one beacon identity.
    public init(exactly identity: BeaconIdentity) {
        self.uuid = identity.uuid
        self.major = identity.major
        self.minor = identity.minor
    }

    /// Whether a transmitted identity satisfies this constraint.
    public func matches(_ identity: BeaconIdentity) -> Bool {
        identity.uuid == uuid
            && (major == nil || major == identity.major)
            && (minor == nil || minor == identity.minor)
    }

    /// `UUID`, `UUID:MAJOR` or `UUID:MAJOR:MINOR`.
    public var description: String {
        var text = uuid.uuidString
        if let major { text += ":\(major)" }
        if let minor { text += ":\(minor)" }
        return text
    }
}

extension UUID {
    /// Parses a UUID written with or without dashes (32 hex digits), any case.
    ///
    /// ```swift
    /// UUID(flexibleString: "DAF246CE836311E4B116123B93F75CBA") // DAF246CE-8363-11E4-B116-123B93F75CBA
    /// ```
    public init?(flexibleString text: String) {
        if let parsed = UUID(uuidString: text) {
            self = parsed
            return
        }
        let hex = Array(text.utf8)
        guard hex.count == 32, hex.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 102) }) else {
            return nil
        }
        var dashed = ""
        for (index, char) in text.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { dashed.append("-") }
            dashed.append(char)
        }
        guard let parsed = UUID(uuidString: dashed) else { return nil }
        self = parsed
    }
}
