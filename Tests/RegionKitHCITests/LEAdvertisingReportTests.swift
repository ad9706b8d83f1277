import Testing
@testable import RegionKitHCI

@Suite struct LEAdvertisingReportTests {
    static let beacon = LEAdvertisingReport(
        eventType: .advNonconnInd, addressType: .random,
        address: BluetoothAddress(uncheckedBytes: [0xC0, 0xFF, 0xEE, 0x00, 0x00, 0x01]),
        data: [0x02, 0x01, 0x06], rawRSSI: -50
    )
    static let response = LEAdvertisingReport(
        eventType: .scanRsp, addressType: .public,
        address: BluetoothAddress(uncheckedBytes: [0x11, 0x22, 0x33, 0x44, 0x55, 0x66]),
        data: [0x01, 0x09], rawRSSI: 127
    )

    /// Two reports in the Core spec's array-of-fields layout.
    static let twoReportsFieldArrays: [UInt8] = [
        0x04, // H4: event
        0x3E, // LE Meta
        0x1B, // parameter length 27
        0x02, // subevent: LE Advertising Report
        0x02, // Num_Reports 2
        0x03, // Event_Type[0]: ADV_NONCONN_IND
        0x04, // Event_Type[1]: SCAN_RSP
        0x01, // Address_Type[0]: random
        0x00, // Address_Type[1]: public
        0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0, // Address[0] C0:FF:EE:00:00:01, little-endian
        0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // Address[1] 11:22:33:44:55:66, little-endian
        0x03, // Data_Length[0] 3
        0x02, // Data_Length[1] 2
        0x02, 0x01, 0x06, // Data[0]: Flags AD
        0x01, 0x09, // Data[1]: empty Complete Local Name AD
        0xCE, // RSSI[0] -50 dBm
        0x7F, // RSSI[1] 127: not available
    ]

    /// The same two reports, whole reports one after another (BlueZ/Zephyr/Bumble).
    static let twoReportsSequential: [UInt8] = [
        0x04, // H4: event
        0x3E, // LE Meta
        0x1B, // parameter length 27
        0x02, // subevent: LE Advertising Report
        0x02, // Num_Reports 2
        0x03, // report 0 Event_Type: ADV_NONCONN_IND
        0x01, // report 0 Address_Type: random
        0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0, // report 0 Address
        0x03, // report 0 Data_Length 3
        0x02, 0x01, 0x06, // report 0 Data
        0xCE, // report 0 RSSI -50
        0x04, // report 1 Event_Type: SCAN_RSP
        0x00, // report 1 Address_Type: public
        0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // report 1 Address
        0x02, // report 1 Data_Length 2
        0x01, 0x09, // report 1 Data
        0x7F, // report 1 RSSI: not available
    ]

    @Test func singleIBeaconReport() throws {
        let event = try H4Packet.event(Fixtures.iBeaconLegacyReport)
        guard case .leMeta(.advertisingReport(let reports)) = event, let report = reports.first else {
            Issue.record("unexpected \(event)")
            return
        }
        #expect(reports.count == 1)
        #expect(report.eventType == .advNonconnInd)
        #expect(report.addressType == .random)
        #expect(report.address.description == "C0:FF:EE:00:00:01")
        #expect(report.data == Fixtures.iBeaconData)
        #expect(report.rssi == -50)
        // With one report both layouts are the same bytes.
        #expect(try H4Packet.event(Fixtures.iBeaconLegacyReport, layout: .reportByReport) == event)
        #expect(H4Packet(event: event, advertisingReportLayout: .fieldArrays).encoded == Fixtures.iBeaconLegacyReport)
        #expect(H4Packet(event: event, advertisingReportLayout: .reportByReport).encoded == Fixtures.iBeaconLegacyReport)

        let advertisement = try #require(event.advertisements.first)
        #expect(advertisement.address.bytes == [0xC0, 0xFF, 0xEE, 0x00, 0x00, 0x01])
        #expect(advertisement.kind == .legacy(.advNonconnInd))
        #expect(!advertisement.kind.isConnectable)
        #expect(advertisement.rssi == -50)
        #expect(advertisement.txPower == nil)
        #expect(advertisement.data == Fixtures.iBeaconData)
    }

    @Test func multipleReportsInSpecFieldArrayLayout() throws {
        let event = try H4Packet.event(Self.twoReportsFieldArrays)
        #expect(event == .leMeta(.advertisingReport([Self.beacon, Self.response])))
        #expect(event.encoded(advertisingReportLayout: .fieldArrays) == Array(Self.twoReportsFieldArrays.dropFirst()))
        let advertisements = event.advertisements
        #expect(advertisements.map(\.rssi) == [-50, nil])
        #expect(advertisements.map(\.kind.isScanResponse) == [false, true])
    }

    @Test func multipleReportsReportByReport() throws {
        let event = try H4Packet.event(Self.twoReportsSequential, layout: .reportByReport)
        #expect(event == .leMeta(.advertisingReport([Self.beacon, Self.response])))
        #expect(event.encoded(advertisingReportLayout: .reportByReport) == Array(Self.twoReportsSequential.dropFirst()))
    }

    @Test func layoutsAreNotInterchangeableForSeveralReports() {
        // Reading field arrays as sequential reports: report 0 would take Data_Length 0xFF from
        // the middle of Address[0], which overruns; the decoder says so instead of inventing reports.
        expectHCIError(.dataLengthOverrun, offset: 12, index: 0) {
            try H4Packet.event(Self.twoReportsFieldArrays, layout: .reportByReport)
        }
        // And the other way round, the data/RSSI block does not add up.
        #expect(throws: HCIError.self) { try H4Packet.event(Self.twoReportsSequential, layout: .fieldArrays) }
    }

    @Test func zeroReportsIsAnEmptyList() throws {
        let event = try HCIEvent(decoding: [
            0x3E, // LE Meta
            0x02, // parameter length 2
            0x02, // subevent: LE Advertising Report
            0x00, // Num_Reports 0
        ])
        #expect(event == .leMeta(.advertisingReport([])))
    }

    // MARK: Malformed

    @Test(arguments: [LEAdvertisingReportLayout.fieldArrays, .reportByReport])
    func missingNumReports(layout: LEAdvertisingReportLayout) {
        expectHCIError(.truncated, offset: 3, messageContains: "Num_Reports") {
            try HCIEvent(decoding: [
                0x3E, // LE Meta
                0x01, // parameter length 1
                0x02, // subevent: LE Advertising Report, nothing after
            ], advertisingReportLayout: layout)
        }
    }

    @Test(arguments: [LEAdvertisingReportLayout.fieldArrays, .reportByReport])
    func reportCountOverruns(layout: LEAdvertisingReportLayout) {
        var bytes = Fixtures.iBeaconLegacyReport
        bytes[4] = 0x02 // Num_Reports 2, but the event holds 41 bytes: less than 2 × 10 fixed + 30 data
        // 41 bytes after Num_Reports ≥ 20 fixed bytes, so the count check passes and the data check fails.
        #expect(throws: HCIError.self) { try H4Packet.event(bytes, layout: layout) }
        bytes[4] = 0x05 // Num_Reports 5 needs 50 fixed bytes, only 41 remain
        expectHCIError(.countOverrun, offset: 3) { try H4Packet.event(bytes, layout: layout) }
        bytes[4] = 0xFF // Num_Reports 255
        expectHCIError(.countOverrun, offset: 3) { try H4Packet.event(bytes, layout: layout) }
    }

    @Test(arguments: [LEAdvertisingReportLayout.fieldArrays, .reportByReport])
    func truncatedSingleReport(layout: LEAdvertisingReportLayout) {
        expectHCIError(.countOverrun, offset: 3) {
            try HCIEvent(decoding: [
                0x3E, // LE Meta
                0x07, // parameter length 7
                0x02, // subevent: LE Advertising Report
                0x01, // Num_Reports 1 (needs ≥ 10 more bytes)
                0x03, // Event_Type
                0x01, // Address_Type
                0x01, 0x00, 0x00, // half an address
            ], advertisingReportLayout: layout)
        }
    }

    @Test(arguments: [LEAdvertisingReportLayout.fieldArrays, .reportByReport])
    func dataLengthOverrunsTheEvent(layout: LEAdvertisingReportLayout) {
        var bytes = Fixtures.iBeaconLegacyReport
        bytes[13] = 0x1F // Data_Length 31, but 30 data bytes + RSSI follow
        // Offsets count from the event code: Num_Reports 3, type 4, address type 5, address 6...11, length 12.
        expectHCIError(.dataLengthOverrun, offset: 12, index: 0) { try H4Packet.event(bytes, layout: layout) }
        bytes[13] = 0xFF
        expectHCIError(.dataLengthOverrun, offset: 12, index: 0) { try H4Packet.event(bytes, layout: layout) }
    }

    @Test(arguments: [LEAdvertisingReportLayout.fieldArrays, .reportByReport])
    func dataLengthTooShortLeavesBytesOver(layout: LEAdvertisingReportLayout) {
        var bytes = Fixtures.iBeaconLegacyReport
        bytes[13] = 0x1D // Data_Length 29: the last data byte is read as RSSI and the real RSSI is left over
        expectHCIError(.lengthMismatch, offset: 43) { try H4Packet.event(bytes, layout: layout) }
    }

    @Test func secondReportDataOverrunsInFieldArrays() {
        var bytes = Self.twoReportsFieldArrays
        bytes[22] = 0x05 // Data_Length[1] 5: data block 3 + 5 leaves no room for the two RSSI bytes
        // Lengths array starts at event offset 20 (count 3, types 4-5, address types 6-7, addresses 8-19).
        expectHCIError(.dataLengthOverrun, offset: 21, index: 1) { try H4Packet.event(bytes) }
    }

    @Test func secondReportDataOverrunsReportByReport() {
        var bytes = Self.twoReportsSequential
        bytes[26] = 0x04 // report 1 Data_Length 4, only 2 data bytes + RSSI remain
        expectHCIError(.dataLengthOverrun, offset: 25, index: 1) { try H4Packet.event(bytes, layout: .reportByReport) }
        var first = Self.twoReportsSequential
        first[13] = 0x0E // report 0 Data_Length 14 would eat report 1's fixed fields
        expectHCIError(.dataLengthOverrun, offset: 12, index: 0) { try H4Packet.event(first, layout: .reportByReport) }
    }

    @Test(arguments: [LEAdvertisingReportLayout.fieldArrays, .reportByReport])
    func trailingBytesAreRejected(layout: LEAdvertisingReportLayout) {
        var bytes = Fixtures.iBeaconLegacyReport
        bytes[2] += 1 // parameter length 43
        bytes.append(0x00) // one byte after the RSSI
        expectHCIError(.lengthMismatch, offset: 44) { try H4Packet.event(bytes, layout: layout) }
    }

    @Test func eventLengthDisagreesWithReports() {
        var bytes = Fixtures.iBeaconLegacyReport
        bytes[2] = 0x2B // parameter length 43, but 42 bytes follow
        expectHCIError(.lengthMismatch, offset: 1) { try HCIEvent(decoding: Array(bytes.dropFirst())) }
        // Through the H4 layer, the same packet is simply incomplete.
        expectHCIError(.truncated) { try H4Packet(decoding: bytes) }
        bytes[2] = 0x29 // 41, but 42 follow
        expectHCIError(.lengthMismatch, offset: 1) { try HCIEvent(decoding: Array(bytes.dropFirst())) }
        // Through the H4 layer, the last byte is left over after a complete packet.
        expectHCIError(.lengthMismatch, offset: 44) { try H4Packet(decoding: bytes) }
    }
}
