import Foundation
import RegionKitConcurrency
import Testing
import RegionKitTestSupport
@testable import RegionKitHCI

/// End-to-end against Bumble's software controllers (an independent HCI peer).
/// Needs REGIONKIT_BUMBLE_PYTHON (see BumbleControllers.skipMessage); skipped otherwise.
@Suite(.serialized, .tags(.endToEnd), .enabled(if: BumbleControllers.python != nil, BumbleControllers.skipMessage))
struct BumbleEndToEndTests {
    static let beacon = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2:-59"
    /// Company 0x004C (LE), iBeacon type 0x02, length 0x15, then the UUID.
    static let iBeaconPrefix: [UInt8] = [0x4C, 0x00, 0x02, 0x15] + Fixtures.iBeaconUUID
    static let iBeaconTail: [UInt8] = [
        0x00, 0x01, // major 1
        0x00, 0x02, // minor 2
        0xC5, // measured power -59
    ]

    static func isIBeacon(_ data: [UInt8]) -> Bool {
        let needle = iBeaconPrefix + iBeaconTail
        guard data.count >= needle.count else { return false }
        return (0...(data.count - needle.count)).contains { Array(data[$0..<($0 + needle.count)]) == needle }
    }

    @Test func resetAndReadFeaturesOverTCP() async throws {
        let harness = try BumbleControllers(controllers: 2)
        defer { harness.stop() }
        try await harness.waitUntilReady()
        let transport = try await TCPTransport.connect(host: "127.0.0.1", port: harness.ports[0], timeout: .seconds(3))
        let inbox = EventInbox()
        await inbox.start(transport)

        let reset = try await execute(.reset, on: transport, inbox: inbox)
        #expect(reset == .commandComplete(numPackets: 1, opcode: .reset, returnParameters: [0x00]))

        let features = try await execute(.leReadLocalSupportedFeatures, on: transport, inbox: inbox)
        guard case .commandComplete(_, .leReadLocalSupportedFeatures, let returned) = features else {
            Issue.record("unexpected \(features)")
            return
        }
        #expect(returned.count == 9) // status + 8 feature bytes
        #expect(try LEFeatures(returnParameters: returned).contains(.extendedAdvertising))

        let address = try await execute(.readBDADDR, on: transport, inbox: inbox)
        guard case .commandComplete(_, .readBDADDR, let bdaddr) = address else {
            Issue.record("unexpected \(address)")
            return
        }
        #expect(bdaddr.first == 0x00)
        // The launcher gives exposed controller 0 the public address F0:00:00:00:00:01: byte order check.
        #expect(BluetoothAddress(wireBytes: Array(bdaddr.dropFirst()))?.description == "F0:00:00:00:00:01")

        // A command Bumble does not know comes back as an error status, which we name.
        let unknown = try await execute(try HCICommand(opcode: HCIOpcode(ogf: 0x08, ocf: 0x03FF)), on: transport, inbox: inbox)
        #expect(unknown.commandStatusCode == .unknownCommand)
        await transport.close()
    }

    @Test func extendedScanningReceivesTheIBeacon() async throws {
        let harness = try BumbleControllers(controllers: 2, iBeacons: [Self.beacon])
        defer { harness.stop() }
        try await harness.waitUntilReady()
        let transport = try await TCPTransport.connect(host: "127.0.0.1", port: harness.ports[0], timeout: .seconds(3))
        let inbox = EventInbox()
        await inbox.start(transport)
        #expect(try await execute(.reset, on: transport, inbox: inbox).commandStatusCode == .success)
        #expect(try await execute(.setEventMask(0x3DBF_F807_FFFB_FFFF | 1 << 61), on: transport, inbox: inbox).commandStatusCode == .success)
        #expect(try await execute(.leSetEventMask(0x1F | 1 << 12), on: transport, inbox: inbox).commandStatusCode == .success)
        let parameters = LEScanParameters(scanType: .passive, interval: 0x0060, window: 0x0030)
        #expect(try await execute(.leSetExtendedScanParameters(parameters), on: transport, inbox: inbox).commandStatusCode == .success)
        await inbox.removeAll()
        #expect(try await execute(.leSetExtendedScanEnable(true), on: transport, inbox: inbox).commandStatusCode == .success)
        let start = ContinuousClock.now
        try await Task.sleep(for: .seconds(3))
        let elapsed = ContinuousClock.now - start
        #expect(try await execute(.leSetExtendedScanEnable(false), on: transport, inbox: inbox).commandStatusCode == .success)

        let timed = await inbox.events.compactMap { entry -> (at: ContinuousClock.Instant, report: LEExtendedAdvertisingReport)? in
            if case .leMeta(.extendedAdvertisingReport(let reports)) = entry.event, let report = reports.first { return (entry.at, report) }
            return nil
        }
        let timedBeacons = timed.filter { Self.isIBeacon($0.report.data) }
        let timedFrames = timedBeacons.filter { !$0.report.eventType.contains(.scanResponse) }
        let (beacons, frames) = (timedBeacons.map(\.report), timedFrames.map(\.report))
        let frameTimes = timedFrames.map { ($0.at - start).inSeconds }
        #expect(!frames.isEmpty)
        if let first = frames.first {
            #expect(first.address.description == "C0:FF:EE:00:00:01")
            #expect(first.addressType == .public)
            #expect(first.rssi == -50) // Bumble's constant
            #expect(first.txPower == 0) // Bumble reports 0 dBm, not "unavailable"
        }
        let rate = Double(frames.count) / elapsed.inSeconds
        let gap = try #require(FrameCadence.medianGap(frameTimes), "\(frameTimes.count) frames")
        print("Bumble extended scan: \(frames.count) iBeacon frames (+\(beacons.count - frames.count) scan-response copies) in \(elapsed) = \(String(format: "%.1f", rate)) frames/s at 100 ms, median gap \(String(format: "%.1f", gap * 1000)) ms")
        // The interval by the median gap of arrivals (FrameCadence says why); the mean rate as a floor.
        #expect(gap > 0.07 && gap < 0.15, "a 100 ms interval, but frames arrived a median \(gap) s apart")
        #expect(rate > 4 && rate < 14, "expected ~10 frames/s at a 100 ms interval, got \(rate)")
        await transport.close()
    }

    @Test func legacyScanningReceivesTheIBeaconAndTSharkAgrees() async throws {
        let harness = try BumbleControllers(controllers: 2, legacyOnly: true, iBeacons: [Self.beacon])
        defer { harness.stop() }
        try await harness.waitUntilReady()
        let transport = try await TCPTransport.connect(host: "127.0.0.1", port: harness.ports[1], timeout: .seconds(3))
        let capture = BTSnoopCapture()
        let inbox = EventInbox()
        await inbox.start(transport, capture: capture)
        #expect(try await execute(.reset, on: transport, inbox: inbox, capture: capture).commandStatusCode == .success)
        let features = try await execute(.leReadLocalSupportedFeatures, on: transport, inbox: inbox, capture: capture)
        if case .commandComplete(_, _, let returned) = features {
            #expect(try !LEFeatures(returnParameters: returned).contains(.extendedAdvertising)) // --legacy-only
        }
        let parameters = LEScanParameters(scanType: .passive, interval: LEScanParameters.units(milliseconds: 60), window: LEScanParameters.units(milliseconds: 30))
        #expect(try await execute(.leSetScanParameters(parameters), on: transport, inbox: inbox, capture: capture).commandStatusCode == .success)
        await inbox.removeAll()
        #expect(try await execute(.leSetScanEnable(true), on: transport, inbox: inbox, capture: capture).commandStatusCode == .success)
        let start = ContinuousClock.now
        try await Task.sleep(for: .seconds(3))
        let elapsed = ContinuousClock.now - start
        // Scanning while enabled: changing parameters is disallowed (status 0x0C), and we name it.
        let disallowed = try await execute(.leSetScanParameters(parameters), on: transport, inbox: inbox, capture: capture)
        #expect(disallowed.commandStatusCode == .commandDisallowed)
        #expect(try await execute(.leSetScanEnable(false), on: transport, inbox: inbox, capture: capture).commandStatusCode == .success)

        let timed = await inbox.events.flatMap { entry in entry.event.advertisements.map { (at: entry.at, advertisement: $0) } }
        let timedBeacons = timed.filter { Self.isIBeacon($0.advertisement.data) }
        let timedFrames = timedBeacons.filter { !$0.advertisement.kind.isScanResponse }
        let (beacons, frames) = (timedBeacons.map(\.advertisement), timedFrames.map(\.advertisement))
        let frameTimes = timedFrames.map { ($0.at - start).inSeconds }
        #expect(!frames.isEmpty)
        #expect(frames.allSatisfy { $0.kind == .legacy(.advInd) }) // Bumble's link reports every legacy PDU as ADV_IND
        #expect(frames.allSatisfy { $0.address.description == "C0:FF:EE:00:00:01" && $0.rssi == -50 && $0.txPower == nil })
        let rate = Double(frames.count) / elapsed.inSeconds
        let gap = try #require(FrameCadence.medianGap(frameTimes), "\(frameTimes.count) frames")
        print("Bumble legacy scan: \(frames.count) iBeacon frames (+\(beacons.count - frames.count) SCAN_RSP copies) in \(elapsed) = \(String(format: "%.1f", rate)) frames/s at 100 ms, median gap \(String(format: "%.1f", gap * 1000)) ms")
        // The interval by the median gap of arrivals (FrameCadence says why); the mean rate as a floor.
        #expect(gap > 0.07 && gap < 0.15, "a 100 ms interval, but frames arrived a median \(gap) s apart")
        #expect(rate > 4 && rate < 14, "expected ~10 frames/s at a 100 ms interval, got \(rate)")
        await transport.close()

        // The host-side capture is a valid btsnoop file, and Wireshark sees as many legacy reports as we did.
        let file = try BTSnoopFile(decoding: capture.bytes)
        #expect(file.records.count > frames.count)
        if let tshark = BTSnoopTests.tshark {
            let path = TestScratch.directory.appendingPathComponent("bumble-legacy-\(getpid()).btsnoop")
            defer { try? FileManager.default.removeItem(at: path) }
            try Data(capture.bytes).write(to: path)
            let result = try await Tool.run(tshark, ["-r", path.path, "-Y", "bthci_evt.le_meta_subevent == 0x02 && btcommon.eir_ad.entry.company_id == 0x004c", "-T", "fields", "-e", "frame.number"])
            #expect(result.status == 0, "tshark: \(result.stderr)")
            let count = result.stdout.split(separator: "\n").count
            #expect(count == beacons.count, "tshark saw \(count) LE Advertising Reports with Apple data, we decoded \(beacons.count)")
        }
    }

    @Test func controllerGoingAwayFailsTheStream() async throws {
        let harness = try BumbleControllers(controllers: 1)
        try await harness.waitUntilReady()
        let transport = try await TCPTransport.connect(host: "127.0.0.1", port: harness.ports[0], timeout: .seconds(3))
        let inbox = EventInbox()
        await inbox.start(transport)
        #expect(try await execute(.reset, on: transport, inbox: inbox).commandStatusCode == .success)
        harness.stop() // SIGTERM: the launcher closes its transports
        let error = try await inbox.waitForEnd(timeout: .seconds(10))
        #expect((error as? HCIError)?.code == .connectionClosed, "\(String(describing: error))")
        await transport.close()
    }
}
