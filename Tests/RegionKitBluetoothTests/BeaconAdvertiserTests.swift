import Foundation
import Testing
@testable import RegionKitBluetooth
import RegionKitTestSupport
import RegionKitHCITesting

@Suite("BeaconAdvertiser without a radio (spec §4)", .tags(.realTime))
struct BeaconAdvertiserTests {
    static let frame = IBeaconFrame(identity: Sample.identity, measuredPower: -63)

    @Test("Non-connectable legacy advertising at 100 ms; data set before enabling; isAdvertising only once confirmed")
    func commandSequence() async throws {
        let controller = InMemoryHCIController()
        let advertiser = BeaconAdvertiser(transport: controller, configuration: .init(frame: Self.frame))
        #expect(!advertiser.isAdvertising)
        try await advertiser.start()
        #expect(advertiser.isAdvertising)
        #expect(controller.sentOpcodes == [.reset, .setEventMask, .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable])
        let parameters = controller.sent[2].parameters
        #expect(parameters[0] == 0xA0 && parameters[1] == 0x00) // interval min 160 × 0.625 ms = 100 ms, little-endian
        #expect(parameters[2] == 0xA0 && parameters[3] == 0x00) // interval max
        #expect(parameters[4] == 0x03)                          // ADV_NONCONN_IND
        let data = controller.sent[3].parameters
        #expect(data.count == 32 && data[0] == 30)              // significant length, then 31 bytes
        #expect(try IBeaconFrame.decode(data[1...30]) == Self.frame)
        #expect(controller.sent[4].parameters[0] == 0)          // no scan response without a name
        #expect(controller.sent[5].parameters == [0x01])
        await advertiser.stop()
        #expect(!advertiser.isAdvertising)
        #expect(controller.sent.last?.opcode == .leSetAdvertisingEnable && controller.sent.last?.parameters == [0x00])
    }

    @Test("A local name goes in the scan response, so the PDU is scannable (ADV_SCAN_IND)")
    func localName() async throws {
        let controller = InMemoryHCIController()
        var frame = Self.frame
        frame.localName = "Gallery 3"
        let advertiser = BeaconAdvertiser(transport: controller, configuration: .init(frame: frame, intervalMilliseconds: 250))
        try await advertiser.start()
        #expect(controller.sent[2].parameters[4] == 0x02)
        #expect(controller.sent[2].parameters[0] == 0x90 && controller.sent[2].parameters[1] == 0x01) // 400 units = 250 ms
        let response = controller.sent[4].parameters
        #expect(Array(response[1...(Int(response[0]))]) == [0x0A, 0x09] + Array("Gallery 3".utf8))
        await advertiser.stop()
    }

    @Test("A controller that never answers: the command times out after the configured 2 s of (virtual) time")
    func enableUnanswered() async throws {
        let controller = InMemoryHCIController()
        controller.silentOpcodes = [.leSetAdvertisingData]
        let clock = TestClock()
        let advertiser = BeaconAdvertiser(transport: controller, clock: clock, configuration: .init(frame: Self.frame))
        let starting = Task { try await advertiser.start() }
        try await eventually("the advertising data sent") { controller.sentOpcodes.contains(.leSetAdvertisingData) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(1_999))
        #expect(clock.sleepers == 1 && !advertiser.isAdvertising)
        clock.advance(by: .milliseconds(1))
        do {
            try await starting.value
            Issue.record("start() succeeded although the controller never answered")
        } catch let error as BluetoothError {
            #expect(error.code == .commandTimedOut && error.opcode == .leSetAdvertisingData, "\(error)")
        }
        #expect(!controller.sentOpcodes.contains(.leSetAdvertisingEnable))
        await advertiser.stop()
    }

    @Test("The controller refusing to enable: typed error, isAdvertising false")
    func enableRefused() async throws {
        let controller = InMemoryHCIController()
        controller.failingOpcodes = [.leSetAdvertisingEnable: .commandDisallowed]
        let advertiser = BeaconAdvertiser(transport: controller, configuration: .init(frame: Self.frame))
        do {
            try await advertiser.start()
            Issue.record("start() succeeded although enable was refused")
        } catch {
            #expect(error.code == .controllerError && error.status == .commandDisallowed && error.opcode == .leSetAdvertisingEnable)
        }
        #expect(!advertiser.isAdvertising)
        await advertiser.stop()
    }

    @Test("A dropped transport or a Hardware Error ends isAdvertising at once")
    func lossOfController() async throws {
        let dropped = InMemoryHCIController()
        let first = BeaconAdvertiser(transport: dropped, configuration: .init(frame: Self.frame))
        try await first.start()
        dropped.drop()
        try await eventually("not advertising after the drop") { !first.isAdvertising }
        #expect(first.lastError?.code == .transportFailed)
        await first.stop()

        let broken = InMemoryHCIController()
        let second = BeaconAdvertiser(transport: broken, configuration: .init(frame: Self.frame))
        try await second.start()
        broken.inject(.hardwareError(code: 0x01))
        try await eventually("not advertising after a Hardware Error") { !second.isAdvertising }
        #expect(second.lastError?.code == .hardwareError)
        await second.stop()
    }

    @Test("Intervals outside 20...10240 ms are refused before any command", arguments: [10.0, 20_000, .nan])
    func badInterval(interval: Double) async throws {
        let controller = InMemoryHCIController()
        let advertiser = BeaconAdvertiser(transport: controller, configuration: .init(frame: Self.frame, intervalMilliseconds: interval))
        await #expect(throws: BluetoothError.self) { try await advertiser.start() }
        #expect(controller.sent.isEmpty)
    }
}
