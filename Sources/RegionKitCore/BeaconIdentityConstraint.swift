import Foundation

/// Which beacons a region or a ranging request matches: a UUID, optionally a major, optionally a
/// minor (only together with a major), as Core Location's `CLBeaconIdentityConstraint` — of one
/// ``BeaconFormat``. AltBeacon constraints use id1/id2/id3 as UUID/major/minor; an Eddystone-UID
/// constraint is a namespace, optionally with an instance.
///
/// ```swift
/// let museum = try BeaconIdentityConstraint(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
/// museum.matches(BeaconIdentity(uuid: museum.uuid, major: 7, minor: 1)) // true
/// let shop = try BeaconIdentityConstraint(eddystoneNamespace: "8b0ca750e7a74e14bd99")
/// ```
public struct BeaconIdentityConstraint: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The id's first 16 bytes; for an Eddystone-UID namespace-only constraint the instance bytes are zero.
    public let uuid: UUID
    /// For Eddystone-UID: 0 when an instance is constrained, `nil` when only the namespace is.
    public let major: UInt16?
    public let minor: UInt16?
    public let format: BeaconFormat

    /// Creates a constraint; a minor without a major is rejected.
    public init(uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil, format: BeaconFormat = .iBeacon) throws {
        if let minor, major == nil {
            throw RegionKitError(.invalidRegion, "beacon constraint \(uuid.uuidString): a minor (\(minor)) needs a major")
        }
        if format == .eddystoneUID {
            throw RegionKitError(.invalidRegion, "an Eddystone-UID constraint is a namespace and an optional instance: use init(eddystoneNamespace:instance:)")
        }
        if format == .device {
            throw RegionKitError(.invalidRegion, "a device constraint is one device's id: use init(device:)")
        }
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.format = format
    }

    /// An Eddystone-UID constraint: a 10-byte namespace (20 hex digits) and optionally a 6-byte
    /// instance (12 hex digits).
    public init(eddystoneNamespace namespace: String, instance: String? = nil) throws {
        guard let ns = Self.bytes(hex: namespace), ns.count == 10 else {
            throw RegionKitError(.invalidRegion, "Eddystone namespace '\(namespace.prefix(64))' is not 20 hex digits (10 bytes)")
        }
        var inst: [UInt8] = [0, 0, 0, 0, 0, 0]
        if let instance {
            guard let parsed = Self.bytes(hex: instance), parsed.count == 6 else {
                throw RegionKitError(.invalidRegion, "Eddystone instance '\(instance.prefix(64))' is not 12 hex digits (6 bytes)")
            }
            inst = parsed
        }
        let b = ns + inst
        uuid = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        major = instance == nil ? nil : 0
        minor = instance == nil ? nil : 0
        format = .eddystoneUID
    }

    /// One device that is no beacon, by the id its scanner gives it (``BeaconIdentity/init(deviceID:)``):
    /// matches that device only.
    ///
    /// ```swift
    /// let phone = try BeaconIdentityConstraint(device: "irk:0123456789abcdef0123456789abcdef")
    /// phone.description   // "device:irk:0123456789abcdef0123456789abcdef"
    /// ```
    public init(device id: String) throws {
        guard let identity = BeaconIdentity(deviceID: id) else {
            throw RegionKitError(.invalidRegion, "device id '\(id.prefix(64))' is not one: 1 to \(BeaconIdentity.deviceIDCapacity) printable ASCII characters "
                                 + "without space, '/', '+' or '#' (or irk: and 32 hex digits); give a longer one an alias in ESPresense")
        }
        self.init(exactly: identity)
    }

    /// The device a device constraint names (``BeaconIdentity/deviceID``), nil for any other.
    public var deviceID: String? { device?.deviceID }

    /// The identity of the device a device constraint names, nil for any other.
    ///
    /// ```swift
    /// try BeaconIdentityConstraint(device: "my-keys").device?.deviceID   // "my-keys"
    /// ```
    public var device: BeaconIdentity? {
        guard format == .device, let major, let minor else { return nil }
        return BeaconIdentity(uuid: uuid, major: major, minor: minor, format: .device)
    }

    /// Bytes of an even-length hex string (any case), `nil` otherwise.
    public static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = hexNibble(digits[index]), let low = hexNibble(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func hexNibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 48...57: digit - 48
        case 97...102: digit - 87
        case 65...70: digit - 55
        default: nil
        }
    }

    /// The id bytes a namespace-only Eddystone constraint compares: `uuid` with its 6 instance bytes zeroed.
    @inlinable
    public static func namespaceKey(_ uuid: UUID) -> UUID {
        var u = uuid.uuid
        u.10 = 0; u.11 = 0; u.12 = 0; u.13 = 0; u.14 = 0; u.15 = 0
        return UUID(uuid: u)
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
        self.format = identity.format
    }

    /// Whether a transmitted identity satisfies this constraint (same format first).
    public func matches(_ identity: BeaconIdentity) -> Bool {
        guard identity.format == format else { return false }
        if format == .eddystoneUID && major == nil { return Self.namespaceKey(identity.uuid) == uuid }
        return identity.uuid == uuid
            && (major == nil || major == identity.major)
            && (minor == nil || minor == identity.minor)
    }

    /// iBeacon: `UUID`, `UUID:MAJOR` or `UUID:MAJOR:MINOR` (unchanged); AltBeacon: the same after
    /// `altbeacon:`; Eddystone-UID: `eddystone-uid:NAMESPACE[:INSTANCE]`.
    public var description: String {
        if let deviceID { return "device:" + deviceID }
        if format == .eddystoneUID {
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            var text = "eddystone-uid:" + BeaconIdentity.hex(bytes[0..<10])
            if major != nil { text += ":" + BeaconIdentity.hex(bytes[10..<16]) }
            return text
        }
        var text = format == .altBeacon ? "altbeacon:" + uuid.uuidString : uuid.uuidString
        if let major { text += ":\(major)" }
        if let minor { text += ":\(minor)" }
        return text
    }

    private enum CodingKeys: String, CodingKey { case uuid, major, minor, format, device }

    /// `format` is written only when it is not iBeacon, so iBeacon constraints encode as before.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if try container.decodeIfPresent(BeaconFormat.self, forKey: .format) == .device {
            let id = try container.decode(String.self, forKey: .device)
            guard let identity = BeaconIdentity(deviceID: id) else {
                throw DecodingError.dataCorruptedError(forKey: .device, in: container, debugDescription: "'\(id.prefix(64))' is not a device id")
            }
            self = BeaconIdentityConstraint(exactly: identity)
            return
        }
        uuid = try container.decode(UUID.self, forKey: .uuid)
        major = try container.decodeIfPresent(UInt16.self, forKey: .major)
        minor = try container.decodeIfPresent(UInt16.self, forKey: .minor)
        format = try container.decodeIfPresent(BeaconFormat.self, forKey: .format) ?? .iBeacon
        if minor != nil && major == nil {
            throw DecodingError.dataCorruptedError(forKey: .minor, in: container, debugDescription: "a minor needs a major")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let id = deviceID {
            try container.encode(format, forKey: .format)
            try container.encode(id, forKey: .device)
            return
        }
        try container.encode(uuid, forKey: .uuid)
        try container.encodeIfPresent(major, forKey: .major)
        try container.encodeIfPresent(minor, forKey: .minor)
        if format != .iBeacon { try container.encode(format, forKey: .format) }
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
