import Foundation

extension BeaconIdentity {
    /// The most bytes a device id keeps as it is (the identity's 16 UUID bytes, major and minor).
    public static let deviceIDCapacity = 20

    /// A device that is no beacon, named by the id a scanner gives it: an ESPresense node's id of
    /// a phone or watch it resolved (`irk:` and the device's identity resolving key, 32 hex
    /// digits), of an address (`c80f104dc7eb`, `known:c80f104dc7eb`), of a tracker (`tile:…`,
    /// `nut:…`), or an alias set in ESPresense; a Theengs gateway's device address
    /// (`C8:0F:10:4D:C7:EB`). Format ``BeaconFormat/device``.
    ///
    /// The id is kept whole, so ``deviceID`` gives it back: an `irk:` id as its 16 key bytes
    /// (major and minor `0xFFFF`, which no id kept as text has: UTF-8 never has a byte `0xFF`),
    /// any other id as its bytes, padded with zeros. An address in any of its forms (12 hex
    /// digits, `known:` and them, or `XX:XX:XX:XX:XX:XX`, any case) is one device, kept as
    /// `XX:XX:XX:XX:XX:XX` in upper case, so an ESPresense node and a Theengs gateway hearing it
    /// name the same device; an `irk:` key is kept in lower case. `nil` when the id cannot be
    /// one: empty, longer than ``deviceIDCapacity`` bytes (an `irk:` id excepted: ESPresense's
    /// `tractive:<address>` is 21; give such a device an alias in ESPresense), or with a byte
    /// that is not printable ASCII or is `/`, `+` or `#` (no MQTT topic level could carry it).
    ///
    /// ```swift
    /// BeaconIdentity(deviceID: "irk:0123456789abcdef0123456789ABCDEF")?.deviceID   // "irk:0123456789abcdef0123456789abcdef"
    /// BeaconIdentity(deviceID: "alice-phone")?.description                        // "device:alice-phone"
    /// BeaconIdentity(deviceID: "known:c80f104dc7eb")?.deviceID                    // "C8:0F:10:4D:C7:EB"
    /// ```
    public init?(deviceID id: String) {
        let bytes = Array(id.utf8)
        if bytes.count == 36, String(decoding: bytes[0..<4], as: UTF8.self).lowercased() == "irk:",
           let key = BeaconIdentityConstraint.bytes(hex: String(decoding: bytes[4...], as: UTF8.self)) {
            self.init(uuid: UUID(uuid: (key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7], key[8], key[9], key[10], key[11],
                                        key[12], key[13], key[14], key[15])),
                      major: .max, minor: .max, format: .device)
            return
        }
        guard (1...Self.deviceIDCapacity).contains(bytes.count),
              bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "#") })
        else { return nil }
        var text = Self.address(bytes) ?? bytes
        text += [UInt8](repeating: 0, count: Self.deviceIDCapacity - text.count)
        self.init(uuid: UUID(uuid: (text[0], text[1], text[2], text[3], text[4], text[5], text[6], text[7], text[8], text[9], text[10], text[11],
                                    text[12], text[13], text[14], text[15])),
                  major: UInt16(text[16]) << 8 | UInt16(text[17]), minor: UInt16(text[18]) << 8 | UInt16(text[19]), format: .device)
    }

    /// The id ``init(deviceID:)`` was given (hex digits in its case), `nil` for a beacon.
    public var deviceID: String? {
        guard format == .device else { return nil }
        if major == .max && minor == .max { return "irk:" + Self.hex(uuidBytes) }
        var bytes = uuidBytes + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF)]
        if let end = bytes.firstIndex(of: 0) { bytes.removeSubrange(end...) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The device's Bluetooth address (`XX:XX:XX:XX:XX:XX`, upper case) when its id is one, else nil.
    public var deviceAddress: String? {
        guard let id = deviceID, Self.address(Array(id.utf8)) != nil else { return nil }
        return id
    }

    /// An address's one form, `XX:XX:XX:XX:XX:XX` in upper case, from any of
    /// `XX:XX:XX:XX:XX:XX`, 12 hex digits and `known:` with them (any case); nil for anything else.
    private static func address(_ bytes: [UInt8]) -> [UInt8]? {
        let digits: ArraySlice<UInt8>
        if bytes.count == 17 {
            guard stride(from: 2, to: 17, by: 3).allSatisfy({ bytes[$0] == UInt8(ascii: ":") }) else { return nil }
            digits = ArraySlice(bytes.enumerated().filter { $0.offset % 3 != 2 }.map(\.element))
        } else if bytes.count == 12 {
            digits = bytes[...]
        } else if bytes.count == 18, String(decoding: bytes[0..<6], as: UTF8.self).lowercased() == "known:" {
            digits = bytes[6...]
        } else {
            return nil
        }
        var out: [UInt8] = []
        for (index, digit) in digits.enumerated() {
            switch digit {
            case 0x30...0x39, 0x41...0x46: out.append(digit)
            case 0x61...0x66: out.append(digit - 0x20)
            default: return nil
            }
            if index % 2 == 1 && index < 11 { out.append(UInt8(ascii: ":")) }
        }
        return out
    }
}
