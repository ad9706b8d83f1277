import Foundation
import Synchronization
import Testing
@testable import RegionKitBluetooth
import RegionKitTestSupport
import RegionKitHCITesting

@Suite("btsnoop capture (host's direction bits, incremental) and replay of its advertising reports", .tags(.realTime))
struct CaptureTests {
    static func temporaryPath(_ name: String) -> String {
        TestScratch.directory.appendingPathComponent("regionkit-\(getpid())-\(name)").path
    }

    @Test("Commands are recorded as sent (flags 0b10), events as received (0b11), each on disk before close()")
    func directionBitsAndIncrementalWrites() async throws {
        let path = Self.temporaryPath("directions.btsnoop")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let micros = Atomic<Int64>(1_700_000_000_000_000)
        let capture = try BTSnoopCaptureFile(path: path) { micros.add(1000, ordering: .sequentiallyConsistent).newValue }
        let controller = InMemoryHCIController()
        let transport = CapturingTransport(wrapping: controller, capture: capture)
        let channel = HCICommandChannel(transport: transport, onEvent: { _ in }, onFailure: { _ in })
        try await channel.execute(.reset)

        // Readable now, while the capture is still open.
        let midway = try BTSnoopFile(decoding: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(midway.datalink == .h4)
        #expect(midway.records.count == 2)
        let command = midway.records[0], event = midway.records[1]
        #expect(command.flags.rawValue == 0b10)         // bit 0 clear: host → controller; bit 1: command/event
        #expect(command.data.first == 0x01)              // H4 command
        #expect(try command.packet(datalink: .h4).command() == .reset)
        #expect(event.flags.rawValue == 0b11)           // bit 0 set: controller → host
        #expect(event.data.first == 0x04)                // H4 event
        #expect(event.unixMicroseconds > command.unixMicroseconds)

        controller.inject(Sample.legacyReport(.advNonconnInd))
        try await eventually("3 records") { capture.recordCount == 3 }
        await channel.close()
        capture.close()
        capture.record(H4Packet(command: .reset), direction: .sent) // after close: ignored, no crash
        let final = try BTSnoopFile(decoding: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(final.records.count == 3)
        #expect(capture.writeError == nil)
    }

    @Test("The file is created at the first record: a capture whose controller never opened leaves an earlier capture at its path as it was (it was truncated to its header)")
    func createdAtTheFirstRecord() async throws {
        let path = Self.temporaryPath("kept.btsnoop")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let earlier = Data(BTSnoopWriter.header(datalink: .h4)) + Data(repeating: 7, count: 100)
        try earlier.write(to: URL(fileURLWithPath: path))
        let unused = try BTSnoopCaptureFile(path: path)
        unused.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == earlier)
        let used = try BTSnoopCaptureFile(path: path)
        used.record(H4Packet(command: .reset), direction: .sent)
        used.close()
        #expect(try BTSnoopFile(decoding: Array(try Data(contentsOf: URL(fileURLWithPath: path)))).records.count == 1, "replaced at the first record")
        #expect(throws: BluetoothError.self, "a directory is not a capture file") { try BTSnoopCaptureFile(path: TestScratch.directory.path) }
        // A regular file where the directory should be: refused at once (the lazy creation hid it, exit 0).
        #expect(throws: BluetoothError.self, "a file is not a directory") { try BTSnoopCaptureFile(path: path + "/cap.btsnoop") }
    }

    @Test("An unwritable capture path is a typed error naming the path")
    func unwritable() {
        #expect(throws: BluetoothError.self) { try BTSnoopCaptureFile(path: "/nonexistent-dir/x.btsnoop") }
        do { _ = try BTSnoopCaptureFile(path: "/nonexistent-dir/x.btsnoop") } catch {
            #expect(error.code == .captureFailed && error.message.contains("/nonexistent-dir/x.btsnoop"))
        }
    }

    static func record(_ event: HCIEvent, at micros: Int64, direction: BTSnoopRecord.Direction = .received) -> BTSnoopRecord {
        BTSnoopRecord(packet: H4Packet(event: event, advertisingReportLayout: .reportByReport), direction: direction, unixMicroseconds: micros)
    }

    @Test("A record whose time is years from the records around it (a flipped bit, the first one's or a later one's) is left out and counted: the others keep their times from the first record kept")
    func damagedTimestamps() throws {
        let start: Int64 = 1_700_000_000_000_000
        func capture(firstAt first: Int64, thirdAt third: Int64? = nil) -> [UInt8] {
            var writer = BTSnoopWriter()
            writer.append(Self.record(Sample.legacyReport(.advNonconnInd), at: first))
            for index in 1...4 { writer.append(Self.record(Sample.legacyReport(.advNonconnInd), at: index == 2 ? (third ?? start + 2_000_000) : start + Int64(index) * 1_000_000)) }
            return writer.bytes
        }
        let intact = try BTSnoopAdvertisingLog(bytes: capture(firstAt: start))
        #expect(intact.timeOutliers == 0 && intact.sightings.map(\.timestamp.seconds) == [0, 1, 2, 3, 4])
        for first in [start ^ (1 << 60), -start] {
            let flipped = try BTSnoopAdvertisingLog(bytes: capture(firstAt: first))
            #expect(flipped.timeOutliers == 1 && flipped.firstTimeOutlierOffset == 16, "\(first)")
            #expect(flipped.sightings.map(\.timestamp.seconds) == [0, 1, 2, 3], "timed from the first record kept: \(flipped.sightings.map(\.timestamp.seconds))")
            #expect(flipped.firstRecordUnixMicroseconds == start + 1_000_000)
        }
        let later = try BTSnoopAdvertisingLog(bytes: capture(firstAt: start, thirdAt: start ^ (1 << 50)))
        #expect(later.timeOutliers == 1 && later.sightings.map(\.timestamp.seconds) == [0, 1, 3, 4])
    }

    @Test("Replay log: recorded times from the first record, repeats dropped, commands and other events skipped")
    func advertisingLog() throws {
        let start: Int64 = 1_700_000_000_000_000
        var writer = BTSnoopWriter()
        writer.append(packet: H4Packet(command: .reset), direction: .sent, unixMicroseconds: start)
        writer.append(Self.record(.commandComplete(numPackets: 1, opcode: .reset, returnParameters: [0]), at: start + 500))
        writer.append(Self.record(Sample.legacyReport(.advInd), at: start + 2_000_000))
        writer.append(Self.record(Sample.legacyReport(.scanRsp), at: start + 2_000_150))
        writer.append(Self.record(Sample.extendedReport([.connectable], rssi: -61), at: start + 2_100_000))
        writer.append(H4Packet(type: .acl, payload: [0x01, 0x20, 0x00, 0x00]).encodedRecord(at: start + 2_200_000))
        let log = try BTSnoopAdvertisingLog(bytes: writer.bytes)
        #expect(log.records == 6)
        #expect(log.reports == 3 && log.scanResponseRepeats == 1 && log.skippedRecords == 0)
        #expect(log.sightings.map(\.timestamp.seconds) == [2.0, 2.1])
        let observations = log.observations(scannerID: "lab")
        #expect(observations.map(\.rssi) == [-50, -61])
        #expect(observations.allSatisfy { $0.identity == Sample.identity && $0.measuredPower == -59 && $0.scannerID == "lab" })
        let absolute = try BTSnoopAdvertisingLog(bytes: writer.bytes, timeOrigin: .unixEpoch)
        #expect(absolute.sightings.first?.timestamp.seconds == 1_700_000_002.0)
    }

    @Test("Android-style 1001 datalink, a garbled event and a capture cut mid-record: what is intact is used")
    func damagedAndUnencapsulated() throws {
        let start: Int64 = 1_600_000_000_000_000
        var writer = BTSnoopWriter(datalink: .unencapsulatedHCI)
        func event(_ bytes: [UInt8], at micros: Int64) -> BTSnoopRecord {
            // Datalink 1001: no H4 type byte; the flags say command/event and direction.
            BTSnoopRecord(originalLength: UInt32(bytes.count), flags: [.received, .commandOrEvent],
                          timestamp: start + micros + BTSnoopRecord.unixEpochOffset, data: bytes)
        }
        let report = Sample.legacyReport(.advNonconnInd).encoded(advertisingReportLayout: .reportByReport)
        writer.append(event(report, at: 0))
        writer.append(event([0x3E, 0x09, 0x02, 0x01], at: 1000)) // length byte lies: skipped, counted
        writer.append(event(report, at: 100_000))
        let cut = Array(writer.bytes.dropLast(7))
        let log = try BTSnoopAdvertisingLog(bytes: cut)
        #expect(log.sightings.count == 1)
        #expect(log.skippedRecords == 1)
        #expect(log.truncation?.code == .truncated)
        #expect(throws: BluetoothError.self) { try BTSnoopAdvertisingLog(bytes: Array("not a capture".utf8)) }
    }
}

extension CaptureTests {
    @Test("A garbled record in the middle: the later records are still read, the damage and undecodable events counted, far-apart times do not trap")
    func garbledRecordInTheMiddle() throws {
        let start: Int64 = 1_700_000_000_000_000
        var writer = BTSnoopWriter()
        // Records 0 and 1 are stamped at the earliest time btsnoop can hold (Int64.min µs since the
        // Unix epoch; two, so that neither is a damaged timestamp far from both neighbours): the
        // later records' times since them do not fit an Int64.
        var first = Self.record(Sample.legacyReport(.advNonconnInd), at: 0)
        first.timestamp = .min &+ BTSnoopRecord.unixEpochOffset
        writer.append(first)
        first.timestamp = .min &+ BTSnoopRecord.unixEpochOffset &+ 1
        writer.append(first)
        for index in 1..<5 { writer.append(Self.record(Sample.legacyReport(.advNonconnInd), at: start + Int64(index) * 1_000_000)) }
        // An event whose length byte lies (decodes to nothing): counted, with its offset.
        let lyingOffset = writer.bytes.count
        writer.append(BTSnoopRecord(packet: H4Packet(type: .event, payload: [0x3E, 0x09, 0x02, 0x01]), direction: .received, unixMicroseconds: start + 5_500_000))
        var bytes = writer.bytes
        let recordSize = BTSnoopReader.recordHeaderSize + first.data.count
        bytes[16 + 2 * recordSize + 8] = 0x40   // record 2's flags word gets an undefined bit
        let log = try BTSnoopAdvertisingLog(bytes: bytes)
        #expect(log.records == 6, "records 0, 1, 3, 4, 5 and the lying event")
        #expect(log.sightings.count == 5 && log.timeOutliers == 0)
        #expect(log.damage.garbledStretches == 1 && log.damage.firstError?.index == 2 && log.truncation == nil)
        #expect(log.damage.skippedBytes == recordSize)
        #expect(log.skippedRecords == 1 && log.firstSkippedRecordOffset == lyingOffset)
        #expect(log.sightings.last!.timestamp.seconds > 9e12, "seconds since record 0, computed without an overflow trap")
    }
}

extension H4Packet {
    /// A received-direction H4 record of this packet (test helper).
    func encodedRecord(at micros: Int64) -> BTSnoopRecord {
        BTSnoopRecord(packet: self, direction: .received, unixMicroseconds: micros)
    }
}
