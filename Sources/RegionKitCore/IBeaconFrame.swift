import Foundation

/// The iBeacon advertisement: encodes what Core Location's `peripheralData(withMeasuredPower:)`
/// plus CoreBluetooth put on the air, and decodes it from any advertising-data byte string.
///
/// On the air (legacy advertising data, 30 of 31 bytes):
/// ```
/// 02 01 06                 Flags AD: LE General Discoverable, BR/EDR not supported
/// 1A FF                    Manufacturer Specific Data AD, 26 bytes follow the length
/// 4C 00                    company identifier 0x004C (Apple), little-endian
/// 02 15                    iBeacon type 0x02, payload length 0x15 (21)
/// <16 bytes>               proximity UUID, network order
/// MM MM                    major, big-endian
/// mm mm                    minor, big-endian
/// PP                       measured power: expected RSSI at 1 m, signed dBm
/// ```
///
/// ```swift
/// let frame = IBeaconFrame(identity: id, measuredPower: -59)
/// let bytes = frame.advertisingData()
/// try IBeaconFrame.decode(bytes) == frame // true
/// ```
public struct IBeaconFrame: Hashable, Sendable, Codable {
    /// Measured power used when none is given (`nil`), like `peripheralData(withMeasuredPower: nil)`:
    /// −59 dBm, the value commonly calibrated for iPhone-class transmitters at 1 m.
    public static let defaultMeasuredPower = -59
    /// Apple's Bluetooth SIG company identifier.
    public static let appleCompanyID: UInt16 = 0x004C
    /// iBeacon type byte after the company identifier.
    public static let beaconType: UInt8 = 0x02
    /// iBeacon payload length byte: UUID (16) + major (2) + minor (2) + power (1).
    public static let beaconPayloadLength: UInt8 = 0x15
    /// AD type: Flags.
    public static let adTypeFlags: UInt8 = 0x01
    /// AD type: Shortened Local Name.
    public static let adTypeShortenedLocalName: UInt8 = 0x08
    /// AD type: Complete Local Name.
    public static let adTypeCompleteLocalName: UInt8 = 0x09
    /// AD type: Manufacturer Specific Data.
    public static let adTypeManufacturerSpecific: UInt8 = 0xFF
    /// Flags value: LE General Discoverable Mode (bit 1) + BR/EDR Not Supported (bit 2).
    public static let defaultFlags: UInt8 = 0x06
    /// Maximum legacy advertising / scan response data length.
    public static let legacyDataLimit = 31

    public var identity: BeaconIdentity
    /// Expected RSSI at 1 m, dBm (signed byte on the air).
    public var measuredPower: Int8
    /// A local name found in the same data when decoding, or to put in the scan response.
    public var localName: String?

    /// - Parameter measuredPower: dBm at 1 m; `nil` gives ``defaultMeasuredPower``.
    public init(identity: BeaconIdentity, measuredPower: Int8? = nil, localName: String? = nil) {
        self.identity = identity
        self.measuredPower = measuredPower ?? Int8(Self.defaultMeasuredPower)
        self.localName = localName
    }

    /// The 21-byte iBeacon payload: UUID, major (BE), minor (BE), measured power.
    public var payload: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(21)
        let u = identity.uuid.uuid
        bytes += [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
        bytes += [UInt8(identity.major >> 8), UInt8(identity.major & 0xFF)]
        bytes += [UInt8(identity.minor >> 8), UInt8(identity.minor & 0xFF)]
        bytes.append(UInt8(bitPattern: measuredPower))
        return bytes
    }

    /// The legacy advertising data: Flags AD + Manufacturer Specific AD (30 bytes).
    ///
    /// The local name does not fit beside them in 31 bytes; see ``scanResponseData()``.
    public func advertisingData(flags: UInt8 = IBeaconFrame.defaultFlags) -> [UInt8] {
        var bytes: [UInt8] = [0x02, Self.adTypeFlags, flags]
        bytes += [0x1A, Self.adTypeManufacturerSpecific]
        bytes += [UInt8(Self.appleCompanyID & 0xFF), UInt8(Self.appleCompanyID >> 8)]
        bytes += [Self.beaconType, Self.beaconPayloadLength]
        bytes += payload
        return bytes
    }

    /// The scan response data carrying the local name (Complete Local Name AD, or Shortened Local
    /// Name truncated at a UTF-8 character boundary when longer than 29 bytes); empty without a name.
    public func scanResponseData() -> [UInt8] {
        guard let localName, !localName.isEmpty else { return [] }
        var name = Array(localName.utf8)
        var type = Self.adTypeCompleteLocalName
        let room = Self.legacyDataLimit - 2
        if name.count > room {
            type = Self.adTypeShortenedLocalName
            var cut = room
            // Do not split a UTF-8 sequence: back up over continuation bytes.
            while cut > 0 && name[cut] & 0xC0 == 0x80 { cut -= 1 }
            name = Array(name[..<cut])
        }
        return [UInt8(name.count + 1), type] + name
    }

    /// Decodes an iBeacon from advertising data (or a scan response, or both concatenated).
    ///
    /// Every AD structure is walked and checked; a zero length ends the significant part (padding).
    /// Near-misses — another company, another Apple type, a wrong payload length, a truncated
    /// structure — are rejected with the reason and the byte offset.
    public static func decode(_ data: some Collection<UInt8>) throws(BeaconDecodingError) -> IBeaconFrame {
        let bytes = Array(data)
        let outcome = bytes.withUnsafeBytes { scan($0) }
        switch outcome {
        case .found(let identity, let power, let name):
            return IBeaconFrame(identity: identity, measuredPower: power,
                                localName: name.map { String(decoding: bytes[$0], as: UTF8.self) })
        case .truncated(let offset, let length):
            throw BeaconDecodingError(.truncatedStructure, at: offset,
                "AD structure at offset \(offset) declares \(length) bytes but only \(bytes.count - offset - 1) follow")
        case .notFound(let nearMiss?):
            throw nearMiss.error
        case .notFound(nil):
            throw BeaconDecodingError(.noBeaconData, at: bytes.count,
                "no Manufacturer Specific Data AD structure in \(bytes.count) bytes")
        }
    }

    /// The identity and measured power of the iBeacon in `data`, or `nil` where ``decode(_:)``
    /// would throw: the same checks, without allocating (the scanner's per-report fast path).
    ///
    /// ```swift
    /// frame.advertisingData().withUnsafeBytes { IBeaconFrame.identity(in: $0)?.identity } // == frame.identity
    /// ```
    @inlinable
    public static func identity(in data: UnsafeRawBufferPointer) -> (identity: BeaconIdentity, measuredPower: Int8)? {
        guard case .found(let identity, let power, _) = scan(data) else { return nil }
        return (identity, power)
    }

    /// Where a walk of the AD structures ended.
    @usableFromInline
    enum ScanOutcome {
        case found(BeaconIdentity, Int8, name: Range<Int>?)
        case truncated(offset: Int, length: Int)
        case notFound(NearMiss?)
    }

    /// Why a Manufacturer Specific Data structure was not an iBeacon (the message is only built
    /// when ``decode(_:)`` reports it).
    @usableFromInline
    struct NearMiss {
        @usableFromInline enum Kind { case short(Int), company(UInt16), shortApple, type(UInt8), lengthByte(UInt8), payload(Int) }
        @usableFromInline var kind: Kind
        /// Offset of the AD structure's length byte.
        @usableFromInline var offset: Int

        @usableFromInline init(_ kind: Kind, at offset: Int) {
            self.kind = kind
            self.offset = offset
        }

        var error: BeaconDecodingError {
            switch kind {
            case .short(let count):
                BeaconDecodingError(.truncatedStructure, at: offset, "manufacturer data at offset \(offset) has \(count) bytes, too short for a company identifier")
            case .company(let company):
                BeaconDecodingError(.wrongCompany, at: offset + 2, String(format: "company identifier 0x%04X at offset %d is not Apple's 0x004C", company, offset + 2))
            case .shortApple:
                BeaconDecodingError(.truncatedStructure, at: offset, "Apple manufacturer data at offset \(offset) ends before the iBeacon type and length")
            case .type(let type):
                BeaconDecodingError(.wrongType, at: offset + 4, String(format: "Apple data type 0x%02X at offset %d is not iBeacon (0x02)", type, offset + 4))
            case .lengthByte(let length):
                BeaconDecodingError(.wrongLength, at: offset + 5, "iBeacon payload length byte at offset \(offset + 5) is \(length), expected 21")
            case .payload(let count):
                BeaconDecodingError(.wrongLength, at: offset, "iBeacon AD structure at offset \(offset) carries \(count) payload bytes, expected 21")
            }
        }
    }

    /// Walks the AD structures of `bytes`: the first Manufacturer Specific Data structure that
    /// is an iBeacon wins; the first near-miss is kept for the error; a local name is noted.
    /// Inlinable, so that the scanner's ``identity(in:)`` (one call per advertising report) is
    /// specialised where it is used: called across the module it went through a thunk that
    /// copied the whole outcome back (a stall on every report, measured with `perf`).
    @inlinable
    static func scan(_ bytes: UnsafeRawBufferPointer) -> ScanOutcome {
        var offset = 0
        var name: Range<Int>?
        var found: (identity: BeaconIdentity, power: Int8)?
        var nearMiss: NearMiss?
        while offset < bytes.count {
            let length = Int(bytes[offset])
            if length == 0 { break }
            guard offset + 1 + length <= bytes.count else { return .truncated(offset: offset, length: length) }
            let type = bytes[offset + 1]
            let body = offset + 2
            let count = length - 1
            switch type {
            case adTypeCompleteLocalName, adTypeShortenedLocalName:
                name = body..<(body + count)
            case adTypeManufacturerSpecific where found == nil:
                let miss: NearMiss.Kind?
                if count < 2 {
                    miss = .short(count)
                } else if UInt16(bytes[body]) | UInt16(bytes[body + 1]) << 8 != appleCompanyID {
                    miss = .company(UInt16(bytes[body]) | UInt16(bytes[body + 1]) << 8)
                } else if count < 4 {
                    miss = .shortApple
                } else if bytes[body + 2] != beaconType {
                    miss = .type(bytes[body + 2])
                } else if bytes[body + 3] != beaconPayloadLength {
                    miss = .lengthByte(bytes[body + 3])
                } else if count != 4 + Int(beaconPayloadLength) {
                    miss = .payload(count - 4)
                } else {
                    miss = nil
                    let u = body + 4
                    let uuid = UUID(uuid: (bytes[u], bytes[u + 1], bytes[u + 2], bytes[u + 3], bytes[u + 4], bytes[u + 5], bytes[u + 6], bytes[u + 7],
                                           bytes[u + 8], bytes[u + 9], bytes[u + 10], bytes[u + 11], bytes[u + 12], bytes[u + 13], bytes[u + 14], bytes[u + 15]))
                    let major = UInt16(bytes[body + 20]) << 8 | UInt16(bytes[body + 21])
                    let minor = UInt16(bytes[body + 22]) << 8 | UInt16(bytes[body + 23])
                    found = (BeaconIdentity(uuid: uuid, major: major, minor: minor), Int8(bitPattern: bytes[body + 24]))
                }
                if let miss, nearMiss == nil { nearMiss = NearMiss(miss, at: offset) }
            default:
                break
            }
            offset += 1 + length
        }
        if let found { return .found(found.identity, found.power, name: name) }
        return .notFound(nearMiss)
    }
}
