import Testing
@testable import RegionKitHCI

@Suite struct HCICommandTests {
    @Test func resetAndParameterlessCommands() {
        #expect(H4Packet(command: .reset).encoded == [
            0x01, // H4: command
            0x03, 0x0C, // opcode 0x0C03 HCI_Reset, little-endian
            0x00, // parameter length 0
        ])
        #expect(HCICommand.leReadLocalSupportedFeatures.encoded == [
            0x03, 0x20, // opcode 0x2003
            0x00, // parameter length 0
        ])
        #expect(HCICommand.readLocalVersionInformation.encoded == [0x01, 0x10, 0x00]) // 0x1001, length 0
        #expect(HCICommand.readBDADDR.encoded == [0x09, 0x10, 0x00]) // 0x1009, length 0
    }

    @Test func eventMasks() {
        #expect(HCICommand.setEventMask(0x3DBF_F807_FFFB_FFFF).encoded == [
            0x01, 0x0C, // opcode 0x0C01 HCI_Set_Event_Mask
            0x08, // parameter length 8
            0xFF, 0xFF, 0xFB, 0xFF, 0x07, 0xF8, 0xBF, 0x3D, // mask, little-endian
        ])
        #expect(HCICommand.leSetEventMask(0x1002).encoded == [
            0x01, 0x20, // opcode 0x2001 HCI_LE_Set_Event_Mask
            0x08, // parameter length 8
            0x02, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // bits 1 (adv report) and 12 (ext adv report)
        ])
    }

    @Test func scanParameters() throws {
        let command = try HCICommand.leSetScanParameters(LEScanParameters(
            scanType: .active, interval: 0x00A0, window: 0x0050, ownAddressType: .random, filterPolicy: .acceptAll
        ))
        #expect(command.encoded == [
            0x0B, 0x20, // opcode 0x200B HCI_LE_Set_Scan_Parameters
            0x07, // parameter length 7
            0x01, // LE_Scan_Type: active
            0xA0, 0x00, // LE_Scan_Interval 160 × 0.625 ms = 100 ms
            0x50, 0x00, // LE_Scan_Window 80 × 0.625 ms = 50 ms
            0x01, // Own_Address_Type: random
            0x00, // Scanning_Filter_Policy: accept all
        ])
        #expect(LEScanParameters.units(milliseconds: 100) == 160)
        #expect(LEScanParameters.units(milliseconds: 2.5) == 4)
        #expect(LEScanParameters.units(milliseconds: -1) == 0)
        #expect(LEScanParameters.units(milliseconds: .nan) == 0)
        #expect(LEScanParameters.units(milliseconds: 1e9) == UInt16.max)
    }

    @Test(arguments: [
        LEScanParameters(interval: 0x0003, window: 0x0003), // interval below 2.5 ms
        LEScanParameters(interval: 0x4001, window: 0x0010), // interval above 10.24 s
        LEScanParameters(interval: 0x0010, window: 0x0011), // window longer than interval
        LEScanParameters(interval: 0x0010, window: 0x0010, ownAddressType: LEAddressType(rawValue: 4)),
        LEScanParameters(interval: 0x0010, window: 0x0010, filterPolicy: .init(rawValue: 4)),
    ])
    func scanParametersOutOfRange(parameters: LEScanParameters) {
        #expect(throws: HCIError.self) { try HCICommand.leSetScanParameters(parameters) }
        do {
            _ = try HCICommand.leSetScanParameters(parameters)
        } catch {
            #expect(error.code == .invalidParameter)
        }
    }

    @Test func scanEnable() {
        #expect(HCICommand.leSetScanEnable(true, filterDuplicates: false).encoded == [
            0x0C, 0x20, // opcode 0x200C HCI_LE_Set_Scan_Enable
            0x02, // parameter length 2
            0x01, // LE_Scan_Enable: on
            0x00, // Filter_Duplicates: off
        ])
        #expect(HCICommand.leSetScanEnable(false, filterDuplicates: true).parameters == [0x00, 0x01])
    }

    @Test func extendedScanParametersOn1MPHY() throws {
        let command = try HCICommand.leSetExtendedScanParameters(LEScanParameters(
            scanType: .passive, interval: 0x8000, window: 0x0100, ownAddressType: .public, filterPolicy: .acceptAll
        ))
        #expect(command.encoded == [
            0x41, 0x20, // opcode 0x2041 HCI_LE_Set_Extended_Scan_Parameters
            0x08, // parameter length 8
            0x00, // Own_Address_Type: public
            0x00, // Scanning_Filter_Policy: accept all
            0x01, // Scanning_PHYs: LE 1M only
            0x00, // Scan_Type[1M]: passive
            0x00, 0x80, // Scan_Interval[1M] 0x8000 (above the legacy limit: allowed for extended)
            0x00, 0x01, // Scan_Window[1M] 0x0100
        ])
        // The same interval is rejected by the legacy command.
        #expect(throws: HCIError.self) {
            try HCICommand.leSetScanParameters(LEScanParameters(interval: 0x8000, window: 0x0100))
        }
    }

    @Test func extendedScanEnable() throws {
        #expect(try HCICommand.leSetExtendedScanEnable(true, filterDuplicates: 1, duration: 0x01F4, period: 0x0002).encoded == [
            0x42, 0x20, // opcode 0x2042 HCI_LE_Set_Extended_Scan_Enable
            0x06, // parameter length 6
            0x01, // Enable
            0x01, // Filter_Duplicates: on
            0xF4, 0x01, // Duration 500 × 10 ms
            0x02, 0x00, // Period 2 × 1.28 s
        ])
        #expect(throws: HCIError.self) { try HCICommand.leSetExtendedScanEnable(true, filterDuplicates: 3) }
    }

    @Test func advertisingParameters() throws {
        let command = try HCICommand.leSetAdvertisingParameters(LEAdvertisingParameters(
            intervalMin: 0x00A0, intervalMax: 0x00B0, type: .nonConnectableUndirected,
            ownAddressType: .random, peerAddressType: .public,
            peerAddress: try #require(BluetoothAddress("11:22:33:44:55:66")), channelMap: 0x07, filterPolicy: 0x00
        ))
        #expect(command.encoded == [
            0x06, 0x20, // opcode 0x2006 HCI_LE_Set_Advertising_Parameters
            0x0F, // parameter length 15
            0xA0, 0x00, // Advertising_Interval_Min 160 × 0.625 ms = 100 ms
            0xB0, 0x00, // Advertising_Interval_Max 176 × 0.625 ms = 110 ms
            0x03, // Advertising_Type: ADV_NONCONN_IND
            0x01, // Own_Address_Type: random
            0x00, // Peer_Address_Type: public
            0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // Peer_Address, little-endian
            0x07, // Advertising_Channel_Map: 37, 38, 39
            0x00, // Advertising_Filter_Policy
        ])
    }

    @Test(arguments: [
        LEAdvertisingParameters(intervalMin: 0x001F, intervalMax: 0x0100), // min below 20 ms
        LEAdvertisingParameters(intervalMin: 0x0100, intervalMax: 0x4001), // max above 10.24 s
        LEAdvertisingParameters(intervalMin: 0x0200, intervalMax: 0x0100), // min > max
        LEAdvertisingParameters(channelMap: 0x00), // no channel
        LEAdvertisingParameters(channelMap: 0x0F), // reserved bit
        LEAdvertisingParameters(filterPolicy: 0x04),
        LEAdvertisingParameters(ownAddressType: LEAddressType(rawValue: 0x04)),
        LEAdvertisingParameters(peerAddressType: LEAddressType(rawValue: 0x02)),
    ])
    func advertisingParametersOutOfRange(parameters: LEAdvertisingParameters) {
        #expect(throws: HCIError.self) { try HCICommand.leSetAdvertisingParameters(parameters) }
    }

    @Test func advertisingDataIsPaddedTo31Bytes() throws {
        let command = try HCICommand.leSetAdvertisingData(Fixtures.iBeaconData)
        #expect(command.encoded == [
            0x08, 0x20, // opcode 0x2008 HCI_LE_Set_Advertising_Data
            0x20, // parameter length 32
            0x1E, // Advertising_Data_Length: 30 significant bytes
        ] + Fixtures.iBeaconData + [
            0x00, // padding to 31 bytes
        ])
        let response = try HCICommand.leSetScanResponseData([0x02, 0x0A, 0x00]) // TX Power Level AD: 0 dBm
        #expect(response.opcode == .leSetScanResponseData)
        #expect(response.parameters.count == 32)
        #expect(response.parameters.prefix(4) == [0x03, 0x02, 0x0A, 0x00]) // length 3, then the AD
        #expect(response.parameters.dropFirst(4).allSatisfy { $0 == 0 })
        #expect(throws: HCIError.self) { try HCICommand.leSetAdvertisingData([UInt8](repeating: 0, count: 32)) }
        #expect(throws: HCIError.self) { try HCICommand.leSetScanResponseData([UInt8](repeating: 0, count: 32)) }
    }

    @Test func advertisingEnable() {
        #expect(HCICommand.leSetAdvertisingEnable(true).encoded == [
            0x0A, 0x20, // opcode 0x200A HCI_LE_Set_Advertising_Enable
            0x01, // parameter length 1
            0x01, // Advertising_Enable
        ])
    }

    @Test func decodesCommandPackets() throws {
        let command = try HCICommand(decoding: [
            0x0C, 0x20, // opcode 0x200C
            0x02, // parameter length 2
            0x01, 0x00, // enable, no duplicate filtering
        ])
        #expect(command == HCICommand.leSetScanEnable(true))
        // Short header.
        #expect(throws: HCIError.self) { try HCICommand(decoding: [0x0C, 0x20]) }
        // Length byte disagrees with the bytes that follow.
        do {
            _ = try HCICommand(decoding: [0x0C, 0x20, 0x03, 0x01, 0x00])
            Issue.record("expected a length mismatch")
        } catch {
            #expect(error.code == .lengthMismatch)
            #expect(error.offset == 2)
        }
        #expect(throws: HCIError.self) { try HCICommand(opcode: .reset, parameters: [UInt8](repeating: 0, count: 256)) }
    }
}
