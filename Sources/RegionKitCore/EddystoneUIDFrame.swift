/// An Eddystone-UID frame (github.com/google/eddystone, eddystone-uid/README.md "Frame
/// Specification"), the Service Data of UUID 0xFEAA:
/// ```
/// 00          Frame Type: UID (0x00)
/// TT          Ranging Data: calibrated TX power at 0 m, signed dBm
/// <10 bytes>  Namespace
/// <6 bytes>   Instance
/// 00 00       RFU: reserved, must be 0x00 (frames without these two bytes, 18 bytes long, are
///             common in deployed beacons and are accepted)
/// ```
///
/// ```swift
/// let frame = EddystoneUIDFrame(identity: BeaconIdentity(eddystoneNamespace: ns, instance: inst)!, rangingData: -18)
/// frame.measuredPower // -59: ranging data at 0 m − 41 dB
/// ```
public struct EddystoneUIDFrame: Hashable, Sendable, Codable {
    /// Namespace ‖ instance, format `.eddystoneUID`.
    public var identity: BeaconIdentity
    /// Ranging Data: TX power at 0 m, dBm.
    public var rangingData: Int8

    public init(identity: BeaconIdentity, rangingData: Int8) {
        self.identity = BeaconIdentity(uuid: identity.uuid, major: 0, minor: 0, format: .eddystoneUID)
        self.rangingData = rangingData
    }

    /// The expected RSSI at 1 m: ranging data − 41 dB (eddystone-uid "Tx Power": "41 dBm is the
    /// signal loss that occurs over 1 meter"; the Android Beacon Library's `p:3-3:-41`).
    public var measuredPower: Int { Int(rangingData) - 41 }

    /// The 20 frame bytes (type, ranging data, namespace, instance, RFU).
    public var frameBytes: [UInt8] {
        [EddystoneFrame.typeUID, UInt8(bitPattern: rangingData)] + identity.uuidBytes + [0, 0]
    }
}
