@testable import RegionKitHCI

/// Shared byte fixtures. Every array carries a comment per field.
enum Fixtures {
    /// An iBeacon's advertising data: Flags AD + Apple manufacturer-specific AD, 30 bytes.
    /// UUID E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major 1, minor 2, measured power -59 dBm.
    static let iBeaconData: [UInt8] = [
        0x02, // AD length 2
        0x01, // AD type: Flags
        0x06, // LE General Discoverable, BR/EDR not supported
        0x1A, // AD length 26
        0xFF, // AD type: Manufacturer Specific Data
        0x4C, 0x00, // company 0x004C Apple, little-endian
        0x02, // iBeacon type
        0x15, // iBeacon length 21
        0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, // proximity UUID, bytes 0...7
        0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0, // proximity UUID, bytes 8...15
        0x00, 0x01, // major 1, big-endian
        0x00, 0x02, // minor 2, big-endian
        0xC5, // measured power -59 dBm
    ]

    static let iBeaconUUID: [UInt8] = [
        0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
    ]

    /// H4 Command Complete for HCI_Reset, success.
    static let resetComplete: [UInt8] = [
        0x04, // H4: event
        0x0E, // event code: Command Complete
        0x04, // parameter length 4
        0x01, // Num_HCI_Command_Packets 1
        0x03, 0x0C, // opcode 0x0C03 HCI_Reset, little-endian
        0x00, // status: success
    ]

    /// H4 LE Meta / LE Advertising Report, one ADV_NONCONN_IND report carrying the iBeacon.
    static let iBeaconLegacyReport: [UInt8] = [
        0x04, // H4: event
        0x3E, // event code: LE Meta
        0x2A, // parameter length 42: subevent 1 + count 1 + type 1 + address type 1 + address 6 + length 1 + data 30 + RSSI 1
        0x02, // subevent: LE Advertising Report
        0x01, // Num_Reports 1
        0x03, // Event_Type[0]: ADV_NONCONN_IND
        0x01, // Address_Type[0]: random
        0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0, // Address[0] C0:FF:EE:00:00:01, little-endian
        0x1E, // Data_Length[0] 30
    ] + iBeaconData + [
        0xCE, // RSSI[0] -50 dBm
    ]
}
