import Foundation
import RegionKitConcurrency
import Testing
@testable import RegionKitBluetooth
import RegionKitTestSupport
import RegionKitHCITesting

/// The scanner against an in-memory controller: command sequence, mode choice, counting, and the
/// mapping of every failure to a typed error and a source status (spec §2 monitoringDidFail, §5 retry).
@Suite("BeaconScanner without a radio", .tags(.realTime))
struct BeaconScannerTests {
    /// A factory handing out the given fakes in order (the last one again if it runs out).
    final class Factory: @unchecked Sendable {
        private let lock = NSLock()
        private var queue: [Result<InMemoryHCIController, HCIError>]
        private(set) var opened = 0
        init(_ queue: [Result<InMemoryHCIController, HCIError>]) { self.queue = queue }
        func open() throws -> any HCITransport {
            try lock.withLock {
                opened += 1
                let next = queue.count > 1 ? queue.removeFirst() : queue[0]
                return try next.get()
            }
        }
    }

    static func scanner(_ factory: Factory, manager: LocationManager?, clock: VirtualClock, delayClock: any Clock<Duration> = ContinuousClock(),
                        configure: (inout BeaconScanner.Configuration) -> Void = { _ in }) -> BeaconScanner {
        var configuration = BeaconScanner.Configuration()
        configuration.commandTimeout = .milliseconds(200)
        configuration.reconnect = ReconnectPolicy(initialDelay: 0.02, maximumDelay: 0.05)
        configure(&configuration)
        return BeaconScanner(manager: manager, clock: clock, delayClock: delayClock, configuration: configuration, transportName: "fake") { try factory.open() }
    }

    @Test("Start: reset, event masks, features, then extended scan commands on a BT5 controller, legacy on a 4.x one", arguments: [true, false])
    func startSequence(extended: Bool) async throws {
        let controller = InMemoryHCIController(supportsExtendedAdvertising: extended)
        let scanner = Self.scanner(Factory([.success(controller)]), manager: nil, clock: VirtualClock())
        try await scanner.start()
        let expectedScan: [HCIOpcode] = extended ? [.leSetExtendedScanParameters, .leSetExtendedScanEnable] : [.leSetScanParameters, .leSetScanEnable]
        #expect(controller.sentOpcodes == [.reset, .setEventMask, .leReadLocalSupportedFeatures, .leSetEventMask] + expectedScan)
        #expect(scanner.isScanning)
        if case .scanning(let mode) = scanner.state { #expect(mode == (extended ? .extended : .legacy)) }
        // LE Meta (bit 61) must be unmasked or no advertising report ever arrives.
        #expect(controller.sent[1].parameters[7] & 0x20 != 0)
        await scanner.stop()
        #expect(!scanner.isScanning)
        #expect(controller.sentOpcodes.last == (extended ? .leSetExtendedScanEnable : .leSetScanEnable))
        #expect(controller.sent.last?.parameters.first == 0x00) // disabled before closing
    }

    @Test("Mode override: legacy on a BT5 controller; extended on a 4.x controller fails as unsupported")
    func modeOverride() async throws {
        let controller = InMemoryHCIController(supportsExtendedAdvertising: true)
        let legacy = Self.scanner(Factory([.success(controller)]), manager: nil, clock: VirtualClock()) { $0.mode = .legacy }
        try await legacy.start()
        #expect(controller.sentOpcodes.contains(.leSetScanEnable) && !controller.sentOpcodes.contains(.leSetExtendedScanEnable))
        await legacy.stop()

        let manager = LocationManager(clock: VirtualClock(), sources: [.beacon: .authorized])
        let old = Self.scanner(Factory([.success(InMemoryHCIController(supportsExtendedAdvertising: false))]), manager: manager, clock: VirtualClock()) { $0.mode = .extended }
        await #expect(throws: BluetoothError.self) { try await old.start() }
        #expect(old.lastError?.code == .unsupported)
        #expect(!old.isScanning)
        #expect(manager.authorizationStatus(for: .beacon) == .restricted(reason: old.lastError!.message))
    }

    @Test("Reports: a Bumble-style ADV + SCAN_RSP pair is one frame, one observation on the injected clock; non-iBeacons are sightings only")
    func countsFramesOnce() async throws {
        let controller = InMemoryHCIController()
        let clock = VirtualClock(start: Timestamp(seconds: 50))
        let manager = LocationManager(clock: clock, sources: [.beacon: .authorized])
        let log = EventLog()
        manager.delegate = log
        let scanner = Self.scanner(Factory([.success(controller)]), manager: manager, clock: clock) { $0.scannerID = "desk" }
        let events = scanner.events()
        try await scanner.start()
        manager.startMonitoring(for: try BeaconRegion(identifier: "lobby", uuidString: Sample.uuid.uuidString))
        clock.advance(by: 4) // no sighting within the initial window: outside
        controller.inject(Sample.extendedReport([.connectable]))
        controller.inject(Sample.extendedReport([.connectable, .scannable, .scanResponse]))
        controller.inject(Sample.legacyReport(.advInd, data: [0x02, 0x01, 0x06], address: BluetoothAddress("11:22:33:44:55:66")!))
        controller.inject(Sample.legacyReport(.advNonconnInd, rssi: 127)) // RSSI unavailable: a frame, not an observation
        try await eventually("4 reports") { scanner.statistics.reports == 4 }
        let statistics = scanner.statistics
        #expect(statistics.frames == 3)
        #expect(statistics.scanResponseRepeats == 1)
        #expect(statistics.iBeaconFrames == 2)
        #expect(statistics.observations == 1)
        #expect(log.types("lobby").contains("didEnterRegion"))
        let enter = try #require(log.events.first { $0.typeName == "didEnterRegion" })
        #expect(enter.timestamp == Timestamp(seconds: 54)) // the virtual clock's time at reception
        #expect(enter.evidence?.scannerID == "desk")
        await scanner.stop()
        var sightings: [AdvertisementSighting] = []
        for await event in events { if case .sighting(let sighting) = event { sightings.append(sighting) } }
        #expect(sightings.count == 3)
        #expect(sightings.first?.iBeacon?.identity == Sample.identity)
        #expect(sightings.first?.iBeacon?.measuredPower == -59)
        #expect(sightings[1].iBeacon == nil)
    }

    @Test("Command timeout (virtual time): typed error naming the command at exactly 200 ms, source restricted, monitoringDidFail, never 'scanning'", .timeLimit(.minutes(1)))
    func commandTimeout() async throws {
        let controller = InMemoryHCIController()
        controller.silentOpcodes = [.leSetScanParameters, .leSetExtendedScanParameters]
        let clock = VirtualClock()
        let manager = LocationManager(clock: clock, sources: [.beacon: .authorized])
        let log = EventLog()
        manager.delegate = log
        manager.startMonitoring(for: try BeaconRegion(identifier: "lobby", uuidString: Sample.uuid.uuidString))
        // The 200 ms command timeout runs on a test clock: no real waiting.
        let delays = TestClock()
        let scanner = Self.scanner(Factory([.success(controller)]), manager: manager, clock: clock, delayClock: delays)
        let starting = Task { try await scanner.start() }
        try await eventually("the scan parameters sent") { controller.sentOpcodes.contains(.leSetExtendedScanParameters) }
        try await delays.waitForSleepers(1)
        delays.advance(by: .milliseconds(199))
        #expect(delays.sleepers == 1, "still waiting 1 ms before the timeout")
        #expect(!scanner.isScanning)
        delays.advance(by: .milliseconds(1))
        do {
            try await starting.value
            Issue.record("start() succeeded against a silent controller")
        } catch let error as BluetoothError {
            #expect(error.code == .commandTimedOut)
            #expect(error.opcode == .leSetExtendedScanParameters)
            #expect(error.message.contains("HCI_LE_Set_Extended_Scan_Parameters"))
            #expect(error.message.contains("within 0.2 seconds"), "\(error.message)")
        }
        #expect(!scanner.isScanning)
        guard case .restricted = manager.authorizationStatus(for: .beacon) else {
            Issue.record("status \(manager.authorizationStatus(for: .beacon))")
            return
        }
        #expect(log.types("lobby").contains("monitoringDidFail"))
    }

    @Test("Controller error status and missing permission map to controllerError/.restricted and permissionDenied/.denied")
    func errorMapping() async throws {
        let controller = InMemoryHCIController()
        controller.failingOpcodes = [.leSetExtendedScanEnable: .commandDisallowed]
        let manager = LocationManager(clock: VirtualClock(), sources: [.beacon: .authorized])
        let refused = Self.scanner(Factory([.success(controller)]), manager: manager, clock: VirtualClock())
        await #expect(throws: BluetoothError.self) { try await refused.start() }
        #expect(refused.lastError?.code == .controllerError)
        #expect(refused.lastError?.status == .commandDisallowed)
        #expect(refused.lastError?.message.contains("Command Disallowed") == true)
        #expect(manager.authorizationStatus(for: .beacon) == .restricted(reason: refused.lastError!.message))

        let denied = HCIError(code: .permissionDenied, message: "hci0 needs CAP_NET_ADMIN")
        let manager2 = LocationManager(clock: VirtualClock(), sources: [.beacon: .authorized])
        let noPermission = Self.scanner(Factory([.failure(denied)]), manager: manager2, clock: VirtualClock())
        await #expect(throws: BluetoothError.self) { try await noPermission.start() }
        #expect(noPermission.lastError?.code == .permissionDenied)
        #expect(manager2.authorizationStatus(for: .beacon) == .denied(reason: noPermission.lastError!.message))

        let noKernel = HCIError(code: .noBluetoothSupport, message: "no Bluetooth support in this kernel")
        let unavailable = Self.scanner(Factory([.failure(noKernel)]), manager: nil, clock: VirtualClock())
        await #expect(throws: BluetoothError.self) { try await unavailable.start() }
        #expect(unavailable.lastError?.code == .transportUnavailable)
        #expect(unavailable.lastError?.authorizationStatus == .restricted(reason: "cannot open fake: no Bluetooth support in this kernel"))
    }

    @Test("A region registered before the scanner starts (the guide's order, default automation) waits for it: didStartMonitoring once scanning, no monitoringDidFail 'notDetermined'")
    func regionBeforeStart() async throws {
        let controller = InMemoryHCIController()
        let clock = VirtualClock()
        let manager = LocationManager(clock: clock, sources: [.beacon: .notDetermined])
        let log = EventLog()
        manager.delegate = log
        let region = try BeaconRegion(identifier: "lobby", uuidString: Sample.uuid.uuidString)
        manager.startMonitoring(for: region)
        #expect(log.types("lobby").isEmpty && manager.waitingRegion("lobby") == .beacon(region))
        let scanner = Self.scanner(Factory([.success(controller)]), manager: manager, clock: clock)
        try await scanner.start()
        #expect(log.types("lobby") == ["didStartMonitoring"], "\(log.types())")
        #expect(manager.monitoredRegion("lobby") != nil)
        await scanner.stop()
    }

    @Test("Dropped transport mid-scan (reconnect backoff in virtual time): recovering + restricted + monitoringDidFail; reconnect → authorized, region registered again (retry)")
    func dropAndRecover() async throws {
        let first = InMemoryHCIController(), second = InMemoryHCIController()
        let refused = HCIError(code: .connectionFailed, message: "nothing listens there")
        let factory = Factory([.success(first), .failure(refused), .success(second)])
        let clock = VirtualClock()
        let manager = LocationManager(automation: Automation(retry: Automation.Retry(delay: 1, maximumAttempts: 5)), clock: clock, sources: [.beacon: .notDetermined])
        let log = EventLog()
        manager.delegate = log
        let delays = TestClock()
        let scanner = Self.scanner(factory, manager: manager, clock: clock, delayClock: delays)
        let states = LockedBox<[String]>([])
        let events = scanner.events()
        let watcher = Task {
            for await event in events { if case .stateChanged(let state) = event { states.withLock { $0.append("\(state)") } } }
        }
        try await scanner.start()
        let region = try BeaconRegion(identifier: "lobby", uuidString: Sample.uuid.uuidString)
        manager.startMonitoring(for: region)
        #expect(log.types("lobby") == ["didStartMonitoring"])

        first.drop()
        try await eventually("monitoringDidFail") { log.types("lobby").contains("monitoringDidFail") }
        let failure = try #require(log.events.first { $0.typeName == "monitoringDidFail" })
        if case .monitoringDidFail(_, let error) = failure.kind {
            #expect(error.code == .sourceUnavailable)
            #expect(error.message.contains("fake"))
        }
        // The reconnect backoff runs on the test clock: attempt 1 after 20 ms (refused), attempt 2
        // after 40 ms more.
        try await delays.waitForSleepers(1)
        #expect(factory.opened == 1)
        delays.advance(by: .milliseconds(20))
        try await eventually("attempt 1") { factory.opened == 2 }
        try await delays.waitForSleepers(1)
        delays.advance(by: .milliseconds(39))
        #expect(factory.opened == 2 && !scanner.isScanning, "attempt 2 waits its 40 ms")
        delays.advance(by: .milliseconds(1))
        try await eventually("scanning again") { scanner.isScanning }
        #expect(factory.opened == 3) // refused once, then back
        #expect(manager.authorizationStatus(for: .beacon) == .authorized)
        #expect(scanner.statistics.failures == 1 && scanner.statistics.scanningStarts == 2)
        clock.advance(by: 1.5) // the manager's retry (spec §5) registers the region again
        #expect(log.types("lobby").suffix(1) == ["didStartMonitoring"])
        // Reports of the new session feed the engine.
        second.inject(Sample.legacyReport(.advNonconnInd))
        try await eventually("a sighting after recovery") { scanner.statistics.observations == 1 }
        await scanner.stop()
        await watcher.value
        let seen = states.withLock { $0 }
        #expect(seen.first == "starting")
        #expect(seen.contains { $0.hasPrefix("recovering (attempt 1)") })
        #expect(seen.contains { $0.hasPrefix("recovering (attempt 2)") && $0.contains("nothing listens there") })
        #expect(seen.last == "stopped")
    }

    @Test("A Hardware Error event is a failure too; with reconnects exhausted the scanner ends failed")
    func hardwareErrorGivesUp() async throws {
        let controller = InMemoryHCIController()
        let refused = HCIError(code: .connectionFailed, message: "nothing listens there")
        let factory = Factory([.success(controller), .failure(refused)])
        let scanner = Self.scanner(factory, manager: nil, clock: VirtualClock()) { $0.reconnect = ReconnectPolicy(initialDelay: 0.01, maximumDelay: 0.01, maximumAttempts: 2) }
        try await scanner.start()
        controller.inject(.hardwareError(code: 0x2A))
        try await eventually("failed") { if case .failed = scanner.state { return true } else { return false } }
        #expect(!scanner.isScanning)
        #expect(scanner.statistics.failures == 1)
        if case .failed(let error) = scanner.state { #expect(error.message.contains("gave up after 2")) }
        #expect(factory.opened == 3)
        await scanner.stop()
    }

    @Test("Bad scan parameters are refused before touching the controller")
    func badParameters() async throws {
        let controller = InMemoryHCIController()
        let scanner = Self.scanner(Factory([.success(controller)]), manager: nil, clock: VirtualClock()) {
            $0.intervalMilliseconds = 50
            $0.windowMilliseconds = 80
        }
        await #expect(throws: BluetoothError.self) { try await scanner.start() }
        #expect(scanner.lastError?.code == .invalidConfiguration)
        #expect(controller.sent.isEmpty)
    }
}
