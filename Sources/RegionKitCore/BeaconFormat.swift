/// Which over-the-air beacon format an identity was read from (one byte beside the 20-byte id in
/// ``BeaconIdentity``).
///
/// | format | id bytes (``BeaconIdentity/uuid`` ‖ major ‖ minor) |
/// |---|---|
/// | ``iBeacon`` | proximity UUID (16), major (2), minor (2) |
/// | ``altBeacon`` | beacon id: id1 (16), id2 (2), id3 (2), as the Android Beacon Library splits it |
/// | ``eddystoneUID`` | namespace (10) ‖ instance (6) in the 16 UUID bytes; major = minor = 0 |
///
/// ```swift
/// BeaconFormat(name: "altbeacon") // .altBeacon
/// BeaconFormat.eddystoneUID.name  // "eddystone-uid"
/// ```
public enum BeaconFormat: UInt8, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case iBeacon = 0
    case altBeacon = 1
    case eddystoneUID = 2
    /// A device that is no beacon (a phone, a watch, a tracker), named by the id its scanner gives
    /// it: ``BeaconIdentity/init(deviceID:)``.
    case device = 3

    /// The lower-case name used on command lines, in JSON and in configuration files.
    public var name: String {
        switch self {
        case .iBeacon: "ibeacon"
        case .altBeacon: "altbeacon"
        case .eddystoneUID: "eddystone-uid"
        case .device: "device"
        }
    }

    /// Parses ``name`` (any case); `eddystone` is accepted for `eddystone-uid`.
    public init?(name: String) {
        switch name.lowercased() {
        case "ibeacon": self = .iBeacon
        case "altbeacon": self = .altBeacon
        case "eddystone-uid", "eddystone", "eddystoneuid": self = .eddystoneUID
        case "device": self = .device
        default: return nil
        }
    }

    public var description: String { name }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let format = BeaconFormat(name: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown beacon format '\(text)' (ibeacon, altbeacon, eddystone-uid, device)"))
        }
        self = format
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
