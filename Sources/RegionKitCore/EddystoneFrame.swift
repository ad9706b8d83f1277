import Foundation

/// An Eddystone frame (github.com/google/eddystone, protocol-specification.md): Service Data AD
/// (type 0x16) of the 16-bit service UUID 0xFEAA, first byte the frame type. The advertising data
/// also lists 0xFEAA in a Complete List of 16-bit Service UUIDs AD ("Common Advertising Format").
///
/// ```
/// 02 01 06              Flags
/// 03 03 AA FE           Complete List of 16-bit Service UUIDs: 0xFEAA (little-endian)
/// LL 16 AA FE <frame>   Service Data - 16-bit UUID: 0xFEAA, then the UID, URL or TLM frame
/// ```
///
/// ```swift
/// let frame = EddystoneFrame.uid(EddystoneUIDFrame(identity: id, rangingData: -18))
/// try EddystoneFrame.decode(frame.advertisingData()) == frame // true
/// ```
public enum EddystoneFrame: Hashable, Sendable, Codable {
    case uid(EddystoneUIDFrame)
    case url(EddystoneURLFrame)
    case tlm(EddystoneTelemetry)

    /// Eddystone's 16-bit service UUID (protocol-specification.md).
    public static let serviceUUID: UInt16 = 0xFEAA
    /// AD type: Complete List of 16-bit Service UUIDs.
    public static let adTypeServiceUUIDs: UInt8 = 0x03
    /// AD type: Service Data - 16-bit UUID.
    public static let adTypeServiceData: UInt8 = 0x16
    public static let typeUID: UInt8 = 0x00
    public static let typeURL: UInt8 = 0x10
    public static let typeTLM: UInt8 = 0x20

    /// The frame bytes after the service UUID.
    public var frameBytes: [UInt8] {
        switch self {
        case .uid(let frame): frame.frameBytes
        case .url(let frame): frame.frameBytes
        case .tlm(let frame): frame.frameBytes
        }
    }

    /// Flags + the 16-bit service UUID list + the Service Data AD (31 bytes for UID).
    public func advertisingData(flags: UInt8 = IBeaconFrame.defaultFlags) -> [UInt8] {
        let frame = frameBytes
        return [0x02, IBeaconFrame.adTypeFlags, flags, 0x03, Self.adTypeServiceUUIDs, 0xAA, 0xFE,
                UInt8(frame.count + 3), Self.adTypeServiceData, 0xAA, 0xFE] + frame
    }

    /// Decodes the first Eddystone frame (UID, URL or unencrypted TLM) in advertising data.
    /// Near-misses — service data of another UUID, an unknown frame type, a wrong length, a
    /// reserved URL code, a TLM version other than 0 — are reported with their byte offset.
    public static func decode(_ data: some Collection<UInt8>) throws(BeaconDecodingError) -> EddystoneFrame {
        try AdvertisingDataWalker.firstMatch(in: data, type: adTypeServiceData, kind: "Service Data", check)
    }

    /// Checks one Service Data - 16-bit UUID structure.
    @usableFromInline
    static func check(_ bytes: UnsafeRawBufferPointer, _ s: AdvertisingDataWalker.Structure) -> Result<EddystoneFrame, BeaconDecodingError> {
        let body = s.body
        guard s.count >= 3 else {
            return .failure(BeaconDecodingError(.truncatedStructure, at: s.offset, "service data at offset \(s.offset) has \(s.count) bytes, too short for a UUID and a frame type"))
        }
        let uuid = UInt16(bytes[body]) | UInt16(bytes[body + 1]) << 8
        guard uuid == serviceUUID else {
            return .failure(BeaconDecodingError(.wrongServiceUUID, at: body, "service data UUID 0x\(hex16(uuid)) at offset \(body) is not Eddystone's 0xFEAA"))
        }
        let frame = body + 2, count = s.count - 2
        let type = bytes[frame]
        switch type {
        case typeUID:
            // eddystone-uid: 20 bytes with the RFU pair, 18 without it.
            guard count == 20 || count == 18 else {
                return .failure(BeaconDecodingError(.wrongLength, at: frame, "Eddystone-UID frame at offset \(frame) has \(count) bytes, expected 20 (or 18 without RFU)"))
            }
            if count == 20, bytes[frame + 18] != 0 || bytes[frame + 19] != 0 {
                return .failure(BeaconDecodingError(.reservedValue, at: frame + 18, "Eddystone-UID RFU bytes at offset \(frame + 18) are not 0x00"))
            }
            let b = frame + 2
            let uuid = UUID(uuid: (bytes[b], bytes[b + 1], bytes[b + 2], bytes[b + 3], bytes[b + 4], bytes[b + 5], bytes[b + 6], bytes[b + 7],
                                   bytes[b + 8], bytes[b + 9], bytes[b + 10], bytes[b + 11], bytes[b + 12], bytes[b + 13], bytes[b + 14], bytes[b + 15]))
            return .success(.uid(EddystoneUIDFrame(identity: BeaconIdentity(uuid: uuid, major: 0, minor: 0, format: .eddystoneUID),
                                                   rangingData: Int8(bitPattern: bytes[frame + 1]))))
        case typeURL:
            // eddystone-url "Frame Specification": type, TX power, scheme, then an encoded URL of 1-17 bytes.
            guard count >= 4, count <= 3 + EddystoneURLFrame.maximumEncodedLength else {
                let detail = count == 3 ? ": its encoded URL after the scheme is empty (1-17 bytes)" : ", expected 4...20 (type, TX power, scheme, a 1-17-byte encoded URL)"
                return .failure(BeaconDecodingError(.wrongLength, at: frame, "Eddystone-URL frame at offset \(frame) has \(count) bytes\(detail)"))
            }
            let scheme = bytes[frame + 2]
            guard Int(scheme) < EddystoneURLFrame.schemes.count else {
                return .failure(BeaconDecodingError(.reservedValue, at: frame + 2, "Eddystone-URL scheme code 0x\(hex8(scheme)) at offset \(frame + 2) is reserved (0...3)"))
            }
            var encoded: [UInt8] = [scheme]
            for index in (frame + 3)..<(frame + count) {
                let byte = bytes[index]
                guard Int(byte) < EddystoneURLFrame.expansions.count || (0x21...0x7E).contains(byte) else {
                    return .failure(BeaconDecodingError(.reservedValue, at: index, "Eddystone-URL byte 0x\(hex8(byte)) at offset \(index) is a reserved code"))
                }
                encoded.append(byte)
            }
            return .success(.url(EddystoneURLFrame(txPower: Int8(bitPattern: bytes[frame + 1]), encodedURL: encoded)))
        case typeTLM:
            guard count >= 2 else {
                return .failure(BeaconDecodingError(.wrongLength, at: frame, "Eddystone-TLM frame at offset \(frame) has \(count) bytes, expected 14"))
            }
            guard bytes[frame + 1] == 0 else {
                return .failure(BeaconDecodingError(.reservedValue, at: frame + 1, "Eddystone-TLM version 0x\(hex8(bytes[frame + 1])) at offset \(frame + 1) is not the unencrypted version 0x00"))
            }
            guard count == 14 else {
                return .failure(BeaconDecodingError(.wrongLength, at: frame, "Eddystone-TLM frame at offset \(frame) has \(count) bytes, expected 14"))
            }
            func word(_ at: Int) -> UInt32 {
                UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
            }
            return .success(.tlm(EddystoneTelemetry(
                version: 0,
                batteryMillivolts: UInt16(bytes[frame + 2]) << 8 | UInt16(bytes[frame + 3]),
                temperatureRaw: Int16(bitPattern: UInt16(bytes[frame + 4]) << 8 | UInt16(bytes[frame + 5])),
                advertisingCount: word(frame + 6), uptimeDeciseconds: word(frame + 10))))
        default:
            return .failure(BeaconDecodingError(.wrongFrameType, at: frame, "Eddystone frame type 0x\(hex8(type)) at offset \(frame) is not UID (0x00), URL (0x10) or TLM (0x20)"))
        }
    }

    static func hex8(_ value: UInt8) -> String { BeaconIdentity.hex([value]).uppercased() }
    static func hex16(_ value: UInt16) -> String { BeaconIdentity.hex([UInt8(value >> 8), UInt8(value & 0xFF)]).uppercased() }
}
