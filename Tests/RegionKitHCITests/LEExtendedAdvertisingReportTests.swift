import Testing
@testable import RegionKitHCI

@Suite struct LEExtendedAdvertisingReportTests {
    /// One extended report: a legacy ADV_NONCONN_IND iBeacon PDU.
    static let iBeaconExtended: [UInt8] = [
        0x04, // H4: event
        0x3E, // LE Meta
        0x38, // parameter length 56: subevent 1 + count 1 + fixed 24 + data 30
        0x0D, // subevent: LE Extended Advertising Report
        0x01, // Num_Reports 1
        0x10, 0x00, // Event_Type 0x0010: legacy, not connectable/scannable (ADV_NONCONN_IND)
        0x01, // Address_Type: random
        0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0, // Address C0:FF:EE:00:00:01, little-endian
        0x01, // Primary_PHY: LE 1M
        0x00, // Secondary_PHY: none
        0xFF, // Advertising_SID: none
        0x7F, // TX_Power 127: not available
        0xCE, // RSSI -50 dBm
        0x00, 0x00, // Periodic_Advertising_Interval: none
        0x00, // Direct_Address_Type
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // Direct_Address
        0x1E, // Data_Length 30
    ] + Fixtures.iBeaconData

    /// Two extended reports in one event.
    static let twoExtended: [UInt8] = [
        0x04, // H4: event
        0x3E, // LE Meta
        0x35, // parameter length 53: subevent 1 + count 1 + (24 + 3) + (24 + 0)
        0x0D, // subevent: LE Extended Advertising Report
        0x02, // Num_Reports 2
        // report 0
        0x1A, 0x00, // Event_Type: scannable | scan response | legacy (SCAN_RSP to ADV_SCAN_IND)
        0x00, // Address_Type: public
        0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // Address 11:22:33:44:55:66
        0x01, // Primary_PHY: LE 1M
        0x00, // Secondary_PHY: none
        0xFF, // Advertising_SID: none
        0x7F, // TX_Power: not available
        0xC4, // RSSI -60 dBm
        0x00, 0x00, // Periodic_Advertising_Interval
        0x00, // Direct_Address_Type
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // Direct_Address
        0x03, // Data_Length 3
        0x02, 0x01, 0x06, // Data: Flags AD
        // report 1
        0x21, 0x00, // Event_Type: connectable, data status 1 (incomplete, more to come)
        0xFF, // Address_Type: anonymous
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // Address (none)
        0x03, // Primary_PHY: LE Coded
        0x02, // Secondary_PHY: LE 2M
        0x03, // Advertising_SID 3
        0x04, // TX_Power +4 dBm
        0x7F, // RSSI: not available
        0x50, 0x00, // Periodic_Advertising_Interval 80 × 1.25 ms
        0x01, // Direct_Address_Type: random
        0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // Direct_Address 01:02:03:04:05:06
        0x00, // Data_Length 0
    ]

    @Test func singleLegacyPDUReport() throws {
        let event = try H4Packet.event(Self.iBeaconExtended)
        guard case .leMeta(.extendedAdvertisingReport(let reports)) = event, let report = reports.first else {
            Issue.record("unexpected \(event)")
            return
        }
        #expect(reports.count == 1)
        #expect(report.eventType == .legacy)
        #expect(report.eventType.isComplete)
        #expect(report.addressType == .random)
        #expect(report.address.description == "C0:FF:EE:00:00:01")
        #expect(report.primaryPHY == 0x01)
        #expect(report.secondaryPHY == 0x00)
        #expect(report.advertisingSID == 0xFF)
        #expect(report.txPower == nil)
        #expect(report.rssi == -50)
        #expect(report.data == Fixtures.iBeaconData)
        #expect(H4Packet(event: event).encoded == Self.iBeaconExtended)

        let advertisement = try #require(event.advertisements.first)
        #expect(advertisement.kind == .extended(.legacy))
        #expect(advertisement.kind.description == "extended(legacy)")
        #expect(advertisement.txPower == nil)
        #expect(advertisement.rssi == -50)
    }

    @Test func twoReportsWithAllFields() throws {
        let event = try H4Packet.event(Self.twoExtended)
        guard case .leMeta(.extendedAdvertisingReport(let reports)) = event, reports.count == 2 else {
            Issue.record("unexpected \(event)")
            return
        }
        #expect(reports[0].eventType == [.scannable, .scanResponse, .legacy])
        #expect(reports[0].rssi == -60)
        #expect(reports[0].data == [0x02, 0x01, 0x06])
        #expect(reports[1].eventType.contains(.connectable))
        #expect(reports[1].eventType.dataStatus == 1)
        #expect(!reports[1].eventType.isComplete)
        #expect(reports[1].addressType == .anonymous)
        #expect(reports[1].primaryPHY == 0x03)
        #expect(reports[1].secondaryPHY == 0x02)
        #expect(reports[1].advertisingSID == 3)
        #expect(reports[1].txPower == 4)
        #expect(reports[1].rssi == nil)
        #expect(reports[1].periodicAdvertisingInterval == 80)
        #expect(reports[1].directAddressType == .random)
        #expect(reports[1].directAddress.description == "01:02:03:04:05:06")
        #expect(reports[1].data.isEmpty)
        #expect(H4Packet(event: event).encoded == Self.twoExtended)
        let kinds = event.advertisements.map(\.kind)
        #expect(kinds[0].isScanResponse && !kinds[0].isConnectable)
        #expect(kinds[1].isConnectable)
        #expect(kinds[1].description == "extended(connectable, data status 1)")
    }

    // MARK: Malformed

    @Test func missingNumReports() {
        expectHCIError(.truncated, offset: 3) { try HCIEvent(decoding: [0x3E, 0x01, 0x0D]) }
    }

    @Test func reportCountOverruns() {
        var bytes = Self.iBeaconExtended
        bytes[4] = 0x03 // Num_Reports 3 needs 72 fixed bytes, 54 remain
        expectHCIError(.countOverrun, offset: 3) { try H4Packet.event(bytes) }
        bytes[4] = 0x02 // Num_Reports 2: 48 fixed bytes fit in 54, but then report 0's data overruns
        expectHCIError(.dataLengthOverrun, offset: 27, index: 0) { try H4Packet.event(bytes) }
    }

    @Test func truncatedFixedPart() {
        expectHCIError(.countOverrun, offset: 3) {
            try HCIEvent(decoding: [
                0x3E, // LE Meta
                0x05, // parameter length 5
                0x0D, // subevent: LE Extended Advertising Report
                0x01, // Num_Reports 1 (needs ≥ 24 more bytes)
                0x10, 0x00, // Event_Type
                0x01, // Address_Type, then nothing
            ])
        }
    }

    @Test func dataLengthOverrunsTheEvent() {
        var bytes = Self.iBeaconExtended
        bytes[28] = 0x1F // Data_Length 31, 30 bytes follow
        // Event offsets: count 3, event type 4-5, address type 6, address 7-12, PHYs 13-14, SID 15,
        // TX power 16, RSSI 17, interval 18-19, direct type 20, direct address 21-26, length 27.
        expectHCIError(.dataLengthOverrun, offset: 27, index: 0) { try H4Packet.event(bytes) }
    }

    @Test func firstReportDataEatsTheSecond() {
        var bytes = Self.twoExtended
        bytes[28] = 0x04 // report 0 Data_Length 4: with report 1's 24 fixed bytes, 1 byte too many
        expectHCIError(.dataLengthOverrun, offset: 27, index: 0) { try H4Packet.event(bytes) }
    }

    @Test func secondReportDataOverruns() {
        var bytes = Self.twoExtended
        bytes[55] = 0x01 // report 1 Data_Length 1, nothing follows
        expectHCIError(.dataLengthOverrun, offset: 54, index: 1) { try H4Packet.event(bytes) }
    }

    @Test func trailingBytesAreRejected() {
        var bytes = Self.iBeaconExtended
        bytes[2] += 2 // parameter length 58
        bytes += [0xAA, 0xBB] // two bytes after the last report
        expectHCIError(.lengthMismatch, offset: 58) { try H4Packet.event(bytes) }
    }
}
