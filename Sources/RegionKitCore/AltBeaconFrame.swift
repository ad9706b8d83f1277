import Foundation

/// The AltBeacon advertisement (AltBeacon Protocol Specification v1.0, github.com/AltBeacon/spec,
/// "AltBeacon Advertisement Data Format"): encode and decode, near-misses rejected with the reason
/// and byte offset.
///
/// On the air (legacy advertising data, 31 of 31 bytes):
/// ```
/// 02 01 06        Flags AD (Core spec; AltBeacon adds nothing here)
/// 1B FF           AD length 0x1B, AD type 0xFF Manufacturer Specific Data   (spec: "AD LENGTH", "AD TYPE")
/// LL HH           MFG ID: the beacon maker's company identifier, little-endian (spec: "MFG ID")
/// BE AC           beacon code 0xBEAC, big-endian (spec: "BEACON CODE")
/// <20 bytes>      beacon id (spec: "BEACON ID"); the Android Beacon Library splits it id1 = 16 bytes,
///                 id2 = 2, id3 = 2 (layout m:2-3=beac,i:4-19,i:20-21,i:22-23,p:24-24,d:25-25)
/// RR              reference RSSI: average received power at 1 m, signed dBm (spec: "REFERENCE RSSI")
/// VV              reserved for the manufacturer (spec: "MFG RSVD")
/// ```
///
/// ```swift
/// let frame = AltBeaconFrame(identity: BeaconIdentity(uuid: id1, major: 1, minor: 2, format: .altBeacon), referenceRSSI: -59)
/// try AltBeaconFrame.decode(frame.advertisingData()) == frame // true
/// ```
public struct AltBeaconFrame: Hashable, Sendable, Codable {
    /// The beacon code bytes after the company identifier (spec: "BEACON CODE", 0xBEAC).
    public static let beaconCode: UInt16 = 0xBEAC
    /// The manufacturer data length after the AD type: MFG ID 2 + code 2 + id 20 + RSSI 1 + reserved 1.
    public static let manufacturerDataLength = 26
    /// The company identifier the Android Beacon Library's transmitter uses by default (0x0118,
    /// Radius Networks, who published the format).
    public static let defaultManufacturerID: UInt16 = 0x0118

    /// id1/id2/id3 as ``BeaconIdentity/uuid``/``BeaconIdentity/major``/``BeaconIdentity/minor``; format `.altBeacon`.
    public var identity: BeaconIdentity
    /// Spec "REFERENCE RSSI": expected RSSI at 1 m, dBm.
    public var referenceRSSI: Int8
    /// Spec "MFG ID": the transmitter maker's Bluetooth SIG company identifier.
    public var manufacturerID: UInt16
    /// Spec "MFG RSVD": manufacturer-reserved byte.
    public var reserved: UInt8

    public init(identity: BeaconIdentity, referenceRSSI: Int8 = -59, manufacturerID: UInt16 = AltBeaconFrame.defaultManufacturerID, reserved: UInt8 = 0) {
        self.identity = BeaconIdentity(uuid: identity.uuid, major: identity.major, minor: identity.minor, format: .altBeacon)
        self.referenceRSSI = referenceRSSI
        self.manufacturerID = manufacturerID
        self.reserved = reserved
    }

    /// The 26 bytes of manufacturer data after the AD type.
    public var manufacturerData: [UInt8] {
        var bytes: [UInt8] = [UInt8(manufacturerID & 0xFF), UInt8(manufacturerID >> 8), 0xBE, 0xAC]
        bytes += identity.uuidBytes
        bytes += [UInt8(identity.major >> 8), UInt8(identity.major & 0xFF), UInt8(identity.minor >> 8), UInt8(identity.minor & 0xFF)]
        bytes += [UInt8(bitPattern: referenceRSSI), reserved]
        return bytes
    }

    /// Flags AD + the AltBeacon Manufacturer Specific Data AD: 31 bytes.
    public func advertisingData(flags: UInt8 = IBeaconFrame.defaultFlags) -> [UInt8] {
        [0x02, IBeaconFrame.adTypeFlags, flags, UInt8(Self.manufacturerDataLength + 1), IBeaconFrame.adTypeManufacturerSpecific] + manufacturerData
    }

    /// Decodes the first AltBeacon in advertising data. A Manufacturer Specific Data structure with
    /// another beacon code, or with the code but not 26 bytes, is a near-miss reported with its offset.
    public static func decode(_ data: some Collection<UInt8>) throws(BeaconDecodingError) -> AltBeaconFrame {
        try AdvertisingDataWalker.firstMatch(in: data, type: IBeaconFrame.adTypeManufacturerSpecific, kind: "Manufacturer Specific Data", check)
    }

    /// Checks one Manufacturer Specific Data structure.
    @usableFromInline
    static func check(_ bytes: UnsafeRawBufferPointer, _ s: AdvertisingDataWalker.Structure) -> Result<AltBeaconFrame, BeaconDecodingError> {
        let body = s.body
        guard s.count >= 4 else {
            return .failure(BeaconDecodingError(.truncatedStructure, at: s.offset, "manufacturer data at offset \(s.offset) has \(s.count) bytes, too short for a company identifier and beacon code"))
        }
        let code = UInt16(bytes[body + 2]) << 8 | UInt16(bytes[body + 3])
        guard code == beaconCode else {
            return .failure(BeaconDecodingError(.wrongBeaconCode, at: body + 2, String(format: "beacon code 0x%04X at offset %d is not AltBeacon's 0xBEAC", code, body + 2)))
        }
        guard s.count == manufacturerDataLength else {
            return .failure(BeaconDecodingError(.wrongLength, at: s.offset, "AltBeacon AD structure at offset \(s.offset) carries \(s.count) manufacturer data bytes, expected 26"))
        }
        return .success(frame(bytes, body: body))
    }

    /// The frame whose 26 manufacturer data bytes start at `body` (already checked).
    @inlinable
    static func frame(_ bytes: UnsafeRawBufferPointer, body: Int) -> AltBeaconFrame {
        let u = body + 4
        let uuid = UUID(uuid: (bytes[u], bytes[u + 1], bytes[u + 2], bytes[u + 3], bytes[u + 4], bytes[u + 5], bytes[u + 6], bytes[u + 7],
                               bytes[u + 8], bytes[u + 9], bytes[u + 10], bytes[u + 11], bytes[u + 12], bytes[u + 13], bytes[u + 14], bytes[u + 15]))
        let id2 = UInt16(bytes[u + 16]) << 8 | UInt16(bytes[u + 17])
        let id3 = UInt16(bytes[u + 18]) << 8 | UInt16(bytes[u + 19])
        return AltBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: id2, minor: id3, format: .altBeacon),
                              referenceRSSI: Int8(bitPattern: bytes[u + 20]),
                              manufacturerID: UInt16(bytes[body]) | UInt16(bytes[body + 1]) << 8, reserved: bytes[u + 21])
    }
}
