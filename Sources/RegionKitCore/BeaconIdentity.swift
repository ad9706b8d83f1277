import Foundation

/// The full identity a beacon transmits: a ``BeaconFormat`` tag and a 20-byte id, kept as an
/// iBeacon's proximity UUID, major and minor (AltBeacon's id1/id2/id3 have the same shape; an
/// Eddystone-UID namespace ‖ instance fills the 16 UUID bytes). 21 bytes, stride 22 — one byte
/// more than the iBeacon-only identity, and hashed as cheaply.
///
/// ```swift
/// let id = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)
/// id.description // "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2"
/// let eddy = BeaconIdentity(eddystoneNamespace: ns, instance: inst)
/// eddy.description // "eddystone-uid:8b0ca750e7a74e14bd99:0000000000a1"
/// ```
public struct BeaconIdentity: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// iBeacon proximity UUID, AltBeacon id1, or Eddystone namespace (10 bytes) ‖ instance (6 bytes).
    public var uuid: UUID
    /// iBeacon major, AltBeacon id2; 0 for Eddystone-UID.
    public var major: UInt16
    /// iBeacon minor, AltBeacon id3; 0 for Eddystone-UID.
    public var minor: UInt16
    public var format: BeaconFormat

    public init(uuid: UUID, major: UInt16, minor: UInt16, format: BeaconFormat = .iBeacon) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.format = format
    }

    /// An Eddystone-UID identity: 10-byte namespace and 6-byte instance; `nil` for other lengths.
    public init?(eddystoneNamespace namespace: some Collection<UInt8>, instance: some Collection<UInt8>) {
        guard namespace.count == 10, instance.count == 6 else { return nil }
        let b = Array(namespace) + Array(instance)
        self.init(uuid: UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])),
                  major: 0, minor: 0, format: .eddystoneUID)
    }

    /// The 16 UUID bytes in order.
    public var uuidBytes: [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    /// Eddystone-UID namespace (the first 10 of the 16 id bytes).
    public var namespace: [UInt8] { Array(uuidBytes[0..<10]) }
    /// Eddystone-UID instance (the last 6 of the 16 id bytes).
    public var instance: [UInt8] { Array(uuidBytes[10..<16]) }

    public static func < (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool {
        if lhs.format != rhs.format { return lhs.format.rawValue < rhs.format.rawValue }
        if lhs.uuid != rhs.uuid { return lhs.uuid.uuidString < rhs.uuid.uuidString }
        if lhs.major != rhs.major { return lhs.major < rhs.major }
        return lhs.minor < rhs.minor
    }

    /// iBeacon: `UUID:MAJOR:MINOR` (unchanged); AltBeacon: `altbeacon:ID1:ID2:ID3`;
    /// Eddystone-UID: `eddystone-uid:NAMESPACE:INSTANCE` (lower-case hex).
    public var description: String {
        switch format {
        case .iBeacon: "\(uuid.uuidString):\(major):\(minor)"
        case .altBeacon: "altbeacon:\(uuid.uuidString):\(major):\(minor)"
        case .eddystoneUID: "eddystone-uid:\(Self.hex(namespace)):\(Self.hex(instance))"
        case .device: "device:\(deviceID ?? "")"
        }
    }

    /// Lower-case hex digits of `bytes`.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Hashes the UUID as two words and major/minor/format as one (cheaper than hashing the UUID's
    /// 16 bytes one by one: identities are hashed on every sighting).
    public func hash(into hasher: inout Hasher) {
        let words = withUnsafeBytes(of: uuid.uuid) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
        hasher.combine(words.0)
        hasher.combine(words.1 ^ (UInt64(format.rawValue) << 32 | UInt64(major) << 16 | UInt64(minor)) &* 0x9E37_79B9_7F4A_7C15)
    }

    private enum CodingKeys: String, CodingKey { case uuid, major, minor, format, device }

    /// `format` is written only when it is not iBeacon, so iBeacon identities encode as before;
    /// a device is `{"format": "device", "device": ID}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if try container.decodeIfPresent(BeaconFormat.self, forKey: .format) == .device {
            let id = try container.decode(String.self, forKey: .device)
            guard let identity = BeaconIdentity(deviceID: id) else {
                throw DecodingError.dataCorruptedError(forKey: .device, in: container, debugDescription: "'\(id.prefix(64))' is not a device id")
            }
            self = identity
            return
        }
        uuid = try container.decode(UUID.self, forKey: .uuid)
        major = try container.decode(UInt16.self, forKey: .major)
        minor = try container.decode(UInt16.self, forKey: .minor)
        format = try container.decodeIfPresent(BeaconFormat.self, forKey: .format) ?? .iBeacon
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let deviceID {
            try container.encode(format, forKey: .format)
            try container.encode(deviceID, forKey: .device)
            return
        }
        try container.encode(uuid, forKey: .uuid)
        try container.encode(major, forKey: .major)
        try container.encode(minor, forKey: .minor)
        if format != .iBeacon { try container.encode(format, forKey: .format) }
    }
}
