import Foundation
import Testing
import RegionKitTestSupport
@testable import RegionKitHCI

@Suite struct BTSnoopTests {
    /// 2023-11-14 22:13:20 UTC in microseconds since the Unix epoch.
    static let t0: Int64 = 1_700_000_000_000_000

    static let header: [UInt8] = [
        0x62, 0x74, 0x73, 0x6E, 0x6F, 0x6F, 0x70, 0x00, // "btsnoop\0"
        0x00, 0x00, 0x00, 0x01, // version 1, big-endian
        0x00, 0x00, 0x03, 0xEA, // datalink 1002 (H4), big-endian
    ]

    static var resetRecord: [UInt8] {
        let timestamp = UInt64(t0 + BTSnoopRecord.unixEpochOffset) // 0x00E2_E6A5_7C48_9000 + ...
        var bytes: [UInt8] = [
            0x00, 0x00, 0x00, 0x04, // original length 4
            0x00, 0x00, 0x00, 0x04, // included length 4
            0x00, 0x00, 0x00, 0x02, // flags: sent (bit 0 clear), command/event (bit 1)
            0x00, 0x00, 0x00, 0x00, // cumulative drops 0
        ]
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: timestamp >> UInt64(shift))) } // timestamp, big-endian
        bytes += [
            0x01, // H4: command
            0x03, 0x0C, // HCI_Reset
            0x00, // parameter length 0
        ]
        return bytes
    }

    static func sampleWriter() -> BTSnoopWriter {
        var writer = BTSnoopWriter()
        writer.append(packet: H4Packet(command: .reset), direction: .sent, unixMicroseconds: t0)
        writer.append(packet: try! H4Packet(decoding: Fixtures.resetComplete), direction: .received, unixMicroseconds: t0 + 1_000)
        writer.append(packet: H4Packet(command: try! .leSetScanParameters(LEScanParameters())), direction: .sent, unixMicroseconds: t0 + 2_000)
        writer.append(packet: H4Packet(command: .leSetScanEnable(true)), direction: .sent, unixMicroseconds: t0 + 3_000)
        writer.append(packet: try! H4Packet(decoding: Fixtures.iBeaconLegacyReport), direction: .received, unixMicroseconds: t0 + 4_000)
        writer.append(packet: try! H4Packet(decoding: LEExtendedAdvertisingReportTests.iBeaconExtended), direction: .received, unixMicroseconds: t0 + 5_000)
        writer.append(packet: H4Packet(type: .acl, payload: [0x40, 0x20, 0x01, 0x00, 0xAA]), direction: .received, unixMicroseconds: t0 + 6_000)
        return writer
    }

    @Test func epochOffsetIsTheDocumentedConstant() {
        #expect(BTSnoopRecord.unixEpochOffset == 0x00DC_DDB3_0F2F_8000)
        // That is 719_540 whole days: 12 more than the 719_528 days from 0000-01-01 to 1970-01-01
        // in the proleptic Gregorian calendar (the constant counts Julian-calendar days before 1582).
        // Wireshark uses the same constant; tsharkReadsOurFiles checks its reading of our timestamps.
        #expect(BTSnoopRecord.unixEpochOffset == 719_540 * 86_400 * 1_000_000)
    }

    @Test func headerAndFirstRecordBytes() {
        let writer = Self.sampleWriter()
        #expect(Array(writer.bytes.prefix(16)) == Self.header)
        #expect(Array(writer.bytes[16..<(16 + 28)]) == Self.resetRecord)
    }

    @Test func roundTrip() throws {
        let writer = Self.sampleWriter()
        let file = try BTSnoopFile(decoding: writer.bytes)
        #expect(file.datalink == .h4)
        #expect(file.records.count == 7)
        #expect(file.encoded == writer.bytes)
        let packets = try file.records.map { try $0.packet(datalink: file.datalink) }
        #expect(packets[0] == H4Packet(command: .reset))
        #expect(try packets[4].event().advertisements.first?.data == Fixtures.iBeaconData)
        #expect(file.records.map(\.direction) == [.sent, .received, .sent, .sent, .received, .received, .received])
        #expect(file.records.map { $0.flags.contains(.commandOrEvent) } == [true, true, true, true, true, true, false])
        #expect(file.records.map(\.unixMicroseconds) == (0..<7).map { Self.t0 + Int64($0) * 1_000 })
    }

    @Test func unencapsulatedHCIInfersTheType() throws {
        var writer = BTSnoopWriter(datalink: .unencapsulatedHCI)
        writer.append(BTSnoopRecord(originalLength: 3, flags: [.commandOrEvent], timestamp: 0, data: [0x03, 0x0C, 0x00]))
        writer.append(BTSnoopRecord(originalLength: 6, flags: [.commandOrEvent, .received], timestamp: 0, data: Array(Fixtures.resetComplete.dropFirst())))
        writer.append(BTSnoopRecord(originalLength: 4, flags: [.received], timestamp: 0, data: [0x40, 0x20, 0x00, 0x00]))
        #expect(Array(writer.bytes[12..<16]) == [0x00, 0x00, 0x03, 0xE9]) // datalink 1001
        let file = try BTSnoopFile(decoding: writer.bytes)
        let packets = try file.records.map { try $0.packet(datalink: file.datalink) }
        #expect(packets.map(\.type) == [.command, .event, .acl])
        #expect(try packets[1].event() == .commandComplete(numPackets: 1, opcode: .reset, returnParameters: [0]))
        expectHCIError(.unsupported) { try file.records[0].packet(datalink: .linuxMonitor) }
    }

    // MARK: Malformed files

    @Test func rejectsBadHeaders() {
        expectHCIError(.truncated, offset: 0) { try BTSnoopReader(bytes: Array(Self.header.prefix(15))) }
        var magic = Self.header
        magic[7] = 0x20 // "btsnoop " instead of NUL
        expectHCIError(.malformedFile, offset: 0) { try BTSnoopReader(bytes: magic) }
        var version = Self.header
        version[11] = 0x02 // version 2
        expectHCIError(.unsupported, offset: 8) { try BTSnoopReader(bytes: version) }
        #expect((try? BTSnoopFile(decoding: Self.header))?.records.isEmpty == true) // header only: empty capture
    }

    @Test func truncatedRecordHeaderKeepsEarlierRecords() throws {
        let bytes = Self.sampleWriter().bytes
        // Record 0 is 16...43 (24 + 4), record 1 starts at 44 (24 + 7 bytes). Cut inside record 1's header.
        let cut = Array(bytes.prefix(44 + 10))
        let (file, error) = try BTSnoopFile.decodePrefix(cut)
        #expect(file.records.count == 1)
        #expect(error?.code == .truncated)
        #expect(error?.index == 1)
        #expect(error?.offset == 44)
        expectHCIError(.truncated, offset: 44, index: 1) { try BTSnoopFile(decoding: cut) }
    }

    @Test func truncatedRecordDataKeepsEarlierRecords() throws {
        let bytes = Self.sampleWriter().bytes
        let cut = Array(bytes.prefix(44 + 24 + 3)) // record 1 header complete, 3 of its 7 data bytes
        let (file, error) = try BTSnoopFile.decodePrefix(cut)
        #expect(file.records.count == 1)
        #expect(error?.code == .truncated)
        #expect(error?.index == 1)
        #expect(error?.offset == 68) // where record 1's data starts
        // The streaming reader stays failed after the error.
        var reader = try BTSnoopReader(bytes: cut)
        #expect(try reader.next() != nil)
        #expect(throws: HCIError.self) { try reader.next() }
        #expect(throws: HCIError.self) { try reader.next() }
    }

    @Test func garbledRecordsAreRejected() throws {
        var bytes = Self.sampleWriter().bytes
        // Record 1 included length (offset 48...51) larger than its original length (44...47).
        bytes[51] = 0x08
        expectHCIError(.malformedFile, offset: 48, index: 1) { try BTSnoopFile(decoding: bytes) }
        var flags = Self.sampleWriter().bytes
        flags[52] = 0x80 // a flags bit btsnoop does not define
        expectHCIError(.malformedFile, offset: 52, index: 1) { try BTSnoopFile(decoding: flags) }
        var huge = Self.sampleWriter().bytes
        huge[44] = 0xFF // original length 0xFF000007
        huge[48] = 0xFF // included length 0xFF000007: far beyond the file
        let (file, error) = try BTSnoopFile.decodePrefix(huge)
        #expect(file.records.count == 1)
        #expect(error?.code == .truncated)
        #expect(error?.index == 1)
    }

    @Test func oneGarbledRecordDoesNotDropTheRecordsAfterIt() throws {
        let intact = try BTSnoopFile(decoding: Self.sampleWriter().bytes)
        // Record 1 (offset 44) gets a flags bit btsnoop does not define (byte 52: flags' top byte).
        var flags = Self.sampleWriter().bytes
        flags[52] = 0x80
        let (file, damage) = try BTSnoopFile.decodeSkippingDamage(flags)
        #expect(file.records == [intact.records[0]] + intact.records[2...], "records 2...6 are kept")
        #expect(damage.garbledStretches == 1)
        #expect(damage.skippedBytes == 24 + intact.records[1].data.count, "exactly record 1 is passed over")
        #expect(damage.firstError?.offset == 52 && damage.firstError?.index == 1)
        #expect(damage.end == nil && damage.lostData)
        #expect(damage.summary.contains("skipped 1 garbled stretch(es)") && damage.summary.contains("first at byte 52 (record 1)"))
        // Lengths that run past the file (0xFF000007): resynchronised on record 2, not taken as truncation.
        var huge = Self.sampleWriter().bytes
        huge[44] = 0xFF
        huge[48] = 0xFF
        let (kept, hugeDamage) = try BTSnoopFile.decodeSkippingDamage(huge)
        #expect(kept.records.count == intact.records.count - 1 && hugeDamage.garbledStretches == 1 && hugeDamage.end == nil)
        // Garbage to the end: a damaged end, with the unused bytes counted.
        let tail = Self.sampleWriter().bytes + [UInt8](repeating: 0xEE, count: 40)
        let (all, tailDamage) = try BTSnoopFile.decodeSkippingDamage(tail)
        #expect(all.records == intact.records)
        #expect(tailDamage.end != nil && tailDamage.unusedTrailingBytes == 40 && tailDamage.unusedOffset == Self.sampleWriter().bytes.count)
        // An intact file: nothing to report.
        #expect(!(try BTSnoopFile.decodeSkippingDamage(Self.sampleWriter().bytes)).damage.lostData)
    }

    @Test func everyTruncationKeepsCompleteRecords() throws {
        let bytes = Self.sampleWriter().bytes
        var boundaries: [Int] = [16]
        var offset = 16
        let file = try BTSnoopFile(decoding: bytes)
        for record in file.records {
            offset += 24 + record.data.count
            boundaries.append(offset)
        }
        for length in 16...bytes.count {
            let (prefix, error) = try BTSnoopFile.decodePrefix(Array(bytes.prefix(length)))
            let complete = boundaries.filter { $0 <= length }.count - 1
            #expect(prefix.records == Array(file.records.prefix(complete)), "length \(length)")
            #expect((error == nil) == boundaries.contains(length), "length \(length)")
        }
    }

    // MARK: Wireshark

    static let tshark = Tool.find("tshark")

    @Test(.enabled(if: tshark != nil, "tshark not installed: apt-get install -y tshark to check btsnoop files against Wireshark"))
    func tsharkReadsOurFiles() async throws {
        let path = TestScratch.directory.appendingPathComponent("regionkit-hci-\(getpid()).btsnoop")
        defer { try? FileManager.default.removeItem(at: path) }
        try Data(Self.sampleWriter().bytes).write(to: path)
        let fields = try await runTShark([
            "-r", path.path, "-T", "fields", "-E", "separator=|",
            "-e", "frame.number", "-e", "hci_h4.direction", "-e", "hci_h4.type", "-e", "bthci_cmd.opcode",
            "-e", "bthci_evt.code", "-e", "bthci_evt.le_meta_subevent", "-e", "bthci_evt.bd_addr",
            "-e", "btcommon.eir_ad.entry.company_id", "-e", "btcommon.eir_ad.entry.data", "-e", "bthci_evt.rssi",
            "-e", "frame.time_epoch",
        ])
        let lines = fields.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        #expect(lines.count == 7)
        guard lines.count == 7, lines.allSatisfy({ $0.count == 11 }) else { return }
        #expect(lines[0][1] == "0x00" && lines[0][3] == "0x0c03") // sent HCI_Reset
        #expect(lines[1][1] == "0x01" && lines[1][4] == "0x0e") // received Command Complete
        #expect(lines[4][5] == "0x02") // LE Advertising Report
        #expect(lines[5][5] == "0x0d") // LE Extended Advertising Report
        for line in [lines[4], lines[5]] {
            #expect(line[6] == "c0:ff:ee:00:00:01")
            #expect(line[7] == "0x004c")
            #expect(line[8] == "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
            #expect(line[9] == "-50")
        }
        #expect(lines[0][10].hasPrefix("1700000000.000000"))
        #expect(lines[6][2] == "0x02") // ACL
        // Wireshark's iBeacon dissector only runs through "Decode As"; check it finds the beacon.
        let beacon = try await runTShark([
            "-r", path.path, "-d", "btcommon.eir_ad.manufacturer_company_id==0x004c,ibeacon", "-Y", "frame.number==5",
            "-T", "fields", "-e", "bluetooth.apple.ibeacon.uuid128", "-e", "bluetooth.apple.ibeacon.major", "-e", "bluetooth.apple.ibeacon.minor",
        ])
        #expect(beacon.contains("e2c56db5dffb48d2b060d0f5a710"))
    }

    private func runTShark(_ arguments: [String]) async throws -> String {
        let result = try await Tool.run(Self.tshark ?? "/usr/bin/tshark", arguments)
        #expect(result.status == 0, "tshark: \(result.stderr)")
        return result.stdout
    }
}
