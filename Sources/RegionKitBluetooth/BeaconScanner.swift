import RegionKit
import RegionKitHCI
import RegionKitConcurrency

/// Scans for BLE advertisements through any `HCITransport` and feeds the iBeacons it hears into
/// a `LocationManager`: the live input of region monitoring and ranging on Linux.
///
/// ``start()`` resets the controller, sets the event masks, reads its LE features, picks legacy or
/// extended scanning (``ScanningMode``), sets the scan parameters and enables scanning, waiting
/// for the controller to confirm each step (bounded by ``Configuration/commandTimeout``). Each
/// report is timestamped on the injected clock, scan-response repeats are dropped
/// (``ScanResponseDeduplicator``), and every remaining frame is published on
/// ``events(bufferingPolicy:)``; an iBeacon frame with an RSSI also becomes a `BeaconObservation`
/// for the manager.
///
/// When the controller fails (a command times out or returns an error status, a Hardware Error,
/// the transport drops) the scanner stops claiming to scan, reports the failure to the manager with
/// `setSourceStatus(.restricted(reason:), for: .beacon)` (so every beacon region gets
/// `monitoringDidFail`), and reopens the transport with ``ReconnectPolicy`` backoff. Once scanning
/// again it reports `.authorized`; with the manager's `Automation.retry` the regions come back
/// (spec §5).
///
/// ```swift
/// let manager = LocationManager(automation: .all, sources: [.beacon: .notDetermined])
/// let spec = try HCITransportSpecification(parsing: "tcp:127.0.0.1:9000")
/// let scanner = BeaconScanner(specification: spec, manager: manager)
/// manager.startMonitoring(for: try BeaconRegion(identifier: "lobby", uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
/// try await scanner.start()                  // throws BluetoothError if the controller is unusable
/// for await event in scanner.events() {
///     if case .sighting(let sighting) = event { print(sighting.advertisement.address) }
/// }
/// ```
public final class BeaconScanner: Sendable {
    /// What to scan and how.
    public struct Configuration: Sendable {
        /// Passive (listen only, the default) or active (also SCAN_REQ, to get scan responses).
        public var scanType: LEScanParameters.ScanType = .passive
        /// Scan interval and window, milliseconds (2.5...10240; window ≤ interval). Both 100 ms by
        /// default: window = interval means listening all the time, so no beacon frame falls
        /// between two windows and the frame rate the engine learns is the beacon's own.
        public var intervalMilliseconds: Double = 100
        public var windowMilliseconds: Double = 100
        public var mode: ScanningMode = .automatic
        /// Put on every observation (gateway deployments bind regions to scanners with it).
        public var scannerID: String?
        /// See ``ScanResponseDeduplicator/window``.
        public var repeatWindow: Double = ScanResponseDeduplicator.defaultWindow
        /// Time limit for each HCI command.
        public var commandTimeout: Duration = HCICommandChannel.defaultCommandTimeout
        /// Time limit for opening the transport (a TCP connect).
        public var openTimeout: Duration = .seconds(3)
        public var reconnect = ReconnectPolicy()
        /// How multi-report legacy events are read; `.reportByReport` is what controllers send.
        public var reportLayout: LEAdvertisingReportLayout = .reportByReport
        /// Custom beacon layouts (Android Beacon Library syntax) tried after the built-in formats.
        public var beaconLayouts: [BeaconLayout] = []

        public init() {}

        func scanParameters() throws(BluetoothError) -> LEScanParameters {
            guard intervalMilliseconds.isFinite, windowMilliseconds.isFinite,
                  (2.5...10_240).contains(intervalMilliseconds), (2.5...10_240).contains(windowMilliseconds),
                  windowMilliseconds <= intervalMilliseconds else {
                throw BluetoothError(.invalidConfiguration,
                    "scan interval \(intervalMilliseconds) ms / window \(windowMilliseconds) ms: each must be 2.5...10240 ms and the window at most the interval")
            }
            return LEScanParameters(scanType: scanType, interval: LEScanParameters.units(milliseconds: intervalMilliseconds),
                                    window: LEScanParameters.units(milliseconds: windowMilliseconds))
        }
    }

    /// What the scanner is doing. Only ``scanning(_:)`` means the controller confirmed scanning.
    public enum State: Sendable, CustomStringConvertible {
        case idle
        case starting
        /// The controller confirmed the scan enable command, in this mode (legacy or extended).
        case scanning(ScanningMode)
        /// Scanning failed; reopening the transport, `attempt` counts from 1.
        case recovering(BluetoothError, attempt: Int)
        case stopped
        /// Gave up: the first start failed, or the reconnect attempts ran out.
        case failed(BluetoothError)

        public var description: String {
            switch self {
            case .idle: "idle"
            case .starting: "starting"
            case .scanning(let mode): "scanning (\(mode))"
            case .recovering(let error, let attempt): "recovering (attempt \(attempt)) after \(error)"
            case .stopped: "stopped"
            case .failed(let error): "failed: \(error)"
            }
        }
    }

    /// What ``events(bufferingPolicy:)`` delivers.
    public enum Event: Sendable {
        case sighting(AdvertisementSighting)
        case stateChanged(State)
    }

    private struct Inner {
        var state: State = .idle
        var generation = 0
        var channel: HCICommandChannel?
        /// Statistics, scan-response de-duplication and iBeacon decoding of every report.
        var pipeline: BeaconReportPipeline
        var lastError: BluetoothError?
        var recovery: Task<Void, Never>?
        var stopping = false
    }

    public let configuration: Configuration
    /// A name for the transport in messages (`tcp:127.0.0.1:9000`, `hci0:user`).
    public let transportName: String
    public let clock: any MonitoringClock
    /// Measures command timeouts and reconnect delays.
    public let delayClock: any Clock<Duration>
    private let manager: LocationManager?
    /// Where availability goes instead of the manager's beacon source status (a daemon judging
    /// several sources one by one).
    private let statusHandler: (@Sendable (AuthorizationStatus) -> Void)?
    private let capture: BTSnoopCaptureFile?
    private let makeTransport: @Sendable () async throws -> any HCITransport
    private let inner: LockedBox<Inner>
    /// The streams of ``events(bufferingPolicy:)``; finished at ``stop()``.
    private let streams = Broadcast<Event>()

    /// - Parameters:
    ///   - manager: receives the observations and the source status (nil: only
    ///     ``events(bufferingPolicy:)``).
    ///   - clock: timestamps the reports; defaults to the manager's clock, else `SystemClock`.
    ///   - delayClock: measures command timeouts and reconnect delays; `ContinuousClock` unless a
    ///     test brings a clock it advances by hand.
    ///   - capture: if given, every packet crossing the transport is recorded there.
    ///   - transportName: names the transport in messages.
    ///   - transportFactory: opens a fresh transport, at start and at each reconnect.
    ///   - onSourceStatus: receives the scanner's availability (authorized while scanning, the
    ///     failure's status otherwise) instead of the manager's `setSourceStatus(_:for: .beacon)`.
    public init(manager: LocationManager?, clock: (any MonitoringClock)? = nil, delayClock: any Clock<Duration> = ContinuousClock(),
                configuration: Configuration = Configuration(), capture: BTSnoopCaptureFile? = nil, transportName: String,
                onSourceStatus: (@Sendable (AuthorizationStatus) -> Void)? = nil,
                transportFactory: @escaping @Sendable () async throws -> any HCITransport) {
        self.manager = manager
        self.statusHandler = onSourceStatus
        self.clock = clock ?? manager?.clock ?? SystemClock()
        self.delayClock = delayClock
        self.configuration = configuration
        self.capture = capture
        self.transportName = transportName
        self.makeTransport = transportFactory
        inner = LockedBox(Inner(pipeline: BeaconReportPipeline(scannerID: configuration.scannerID,
                                                           deduplicator: ScanResponseDeduplicator(window: configuration.repeatWindow),
                                                           layout: configuration.reportLayout, layouts: configuration.beaconLayouts)))
    }

    /// Scans through the transport `specification` names (`hci0`, `tcp:HOST:PORT`, `serial:PATH`).
    public convenience init(specification: HCITransportSpecification, manager: LocationManager?, clock: (any MonitoringClock)? = nil,
                            configuration: Configuration = Configuration(), capture: BTSnoopCaptureFile? = nil,
                            onSourceStatus: (@Sendable (AuthorizationStatus) -> Void)? = nil) {
        let timeout = configuration.openTimeout
        self.init(manager: manager, clock: clock, configuration: configuration, capture: capture,
                  transportName: specification.description, onSourceStatus: onSourceStatus) { try await specification.open(timeout: timeout) }
    }

    /// Tells the status handler, else the manager, whether the beacon source is usable.
    private func reportStatus(_ status: AuthorizationStatus) {
        if let statusHandler { statusHandler(status) } else { manager?.setSourceStatus(status, for: .beacon) }
    }

    // MARK: - Observing

    public var state: State { inner.withLock { $0.state } }

    /// True only while the controller has confirmed scanning and nothing has failed since.
    public var isScanning: Bool {
        if case .scanning = state { return true }
        return false
    }

    public var statistics: ScanStatistics { inner.withLock { $0.pipeline.statistics } }

    /// The latest failure, if any (kept after recovery, for diagnostics).
    public var lastError: BluetoothError? { inner.withLock { $0.lastError } }

    /// A new stream of sightings and state changes from now on; it ends after ``stop()``.
    public func events(bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .unbounded) -> AsyncStream<Event> {
        streams.subscribe(bufferingPolicy: bufferingPolicy)
    }

    // MARK: - Running

    /// Opens the transport and starts scanning. Throws (and reports the failure to the manager)
    /// if the controller cannot be brought to scanning; later failures are recovered from.
    public func start() async throws(BluetoothError) {
        let generation = try inner.withLock { inner throws(BluetoothError) -> Int in
            guard case .idle = inner.state else {
                throw BluetoothError(.invalidConfiguration, "\(transportName): start() called while the scanner is \(inner.state)")
            }
            inner.generation += 1
            return inner.generation
        }
        transition(to: .starting)
        do {
            let mode = try await openSession(generation: generation)
            didStartScanning(mode, generation: generation)
        } catch {
            let stopped = inner.withLock { inner -> Bool in
                inner.lastError = error
                return inner.stopping
            }
            if !stopped {
                transition(to: .failed(error))
                reportStatus(error.authorizationStatus)
            }
            throw error
        }
    }

    /// Disables scanning (best effort), closes the transport and ends the event streams. The
    /// manager is told the beacon source is gone (`.restricted`), since nothing scans any more.
    public func stop() async {
        let (channel, recovery, scanningMode) = inner.withLock { inner -> (HCICommandChannel?, Task<Void, Never>?, ScanningMode?) in
            inner.stopping = true
            inner.generation += 1 // late reports and failures of the old session are ignored
            var mode: ScanningMode?
            if case .scanning(let current) = inner.state { mode = current }
            defer { inner.channel = nil; inner.recovery = nil }
            return (inner.channel, inner.recovery, mode)
        }
        recovery?.cancel()
        if let channel {
            if let mode = scanningMode {
                let disable: HCICommand? = mode == .extended ? try? .leSetExtendedScanEnable(false) : .leSetScanEnable(false)
                if let disable { _ = try? await channel.execute(disable, timeout: configuration.commandTimeout) }
            }
            await channel.close()
        }
        await recovery?.value
        let alreadyStopped = inner.withLock { inner -> Bool in
            if case .stopped = inner.state { return true }
            inner.state = .stopped
            return false
        }
        guard !alreadyStopped else { return }
        streams.finish(last: .stateChanged(.stopped))
        reportStatus(.restricted(reason: "the Bluetooth scanner on \(transportName) was stopped"))
    }

    // MARK: - Sessions

    /// One transport connection brought to scanning; returns the mode used.
    private func openSession(generation: Int) async throws(BluetoothError) -> ScanningMode {
        let parameters = try configuration.scanParameters()
        let opened: any HCITransport
        do {
            opened = try await makeTransport()
        } catch {
            throw BluetoothError(transport: error, "cannot open \(transportName)")
        }
        let transport: any HCITransport = capture.map { CapturingTransport(wrapping: opened, capture: $0) } ?? opened
        let channel = HCICommandChannel(
            transport: transport, name: transportName, layout: configuration.reportLayout, clock: delayClock,
            onAdvertisingReport: { [weak self] packet in self?.handleReport(packet, generation: generation) ?? true },
            onEvent: { [weak self] event in self?.handle(event, generation: generation) },
            onFailure: { [weak self] error in self?.sessionFailed(error, generation: generation) }
        )
        let current = inner.withLock { inner -> Bool in
            guard inner.generation == generation, !inner.stopping else { return false }
            inner.channel = channel
            return true
        }
        guard current else {
            await channel.close()
            throw BluetoothError(.stopped, "\(transportName): the scanner was stopped while starting")
        }
        let timeout = configuration.commandTimeout
        do {
            try await channel.execute(.reset, timeout: timeout)
            // Disconnection Complete (bit 4), Hardware Error (bit 15), LE Meta (bit 61).
            try await channel.execute(.setEventMask(1 << 4 | 1 << 15 | 1 << 61), timeout: timeout)
            let returned = try await channel.execute(.leReadLocalSupportedFeatures, timeout: timeout)
            let features: LEFeatures
            do {
                features = try LEFeatures(returnParameters: returned)
            } catch {
                throw BluetoothError(.malformedResponse, "\(transportName): LE Read Local Supported Features: \(error.message)", opcode: .leReadLocalSupportedFeatures, cause: error)
            }
            let mode = try configuration.mode.resolved(for: features)
            // LE Advertising Report (bit 1), LE Extended Advertising Report (bit 12): both, since
            // some controllers answer legacy commands with extended reports.
            let leMask: UInt64 = features.contains(.extendedAdvertising) ? (1 << 1 | 1 << 12) : (1 << 1)
            try await channel.execute(.leSetEventMask(leMask), timeout: timeout)
            do {
                switch mode {
                case .extended:
                    try await channel.execute(try .leSetExtendedScanParameters(parameters), timeout: timeout)
                    try await channel.execute(try .leSetExtendedScanEnable(true, filterDuplicates: 0), timeout: timeout)
                case .legacy, .automatic:
                    try await channel.execute(try .leSetScanParameters(parameters), timeout: timeout)
                    try await channel.execute(.leSetScanEnable(true, filterDuplicates: false), timeout: timeout)
                }
            } catch let error as HCIError {
                throw BluetoothError(.invalidConfiguration, "\(transportName): \(error.message)", cause: error)
            }
            return mode
        } catch let error as BluetoothError {
            await channel.close()
            throw error
        } catch {
            await channel.close()
            throw BluetoothError(.transportFailed, "\(transportName): \(error)", cause: error)
        }
    }

    private func didStartScanning(_ mode: ScanningMode, generation: Int) {
        let current = inner.withLock { inner -> Bool in
            guard inner.generation == generation, !inner.stopping else { return false }
            inner.pipeline.statistics.scanningStarts += 1
            inner.pipeline.deduplicator.reset()
            return true
        }
        guard current else { return }
        transition(to: .scanning(mode))
        reportStatus(.authorized)
    }

    /// The link of session `generation` failed: report, then reconnect in the background.
    private func sessionFailed(_ error: BluetoothError, generation: Int) {
        let act = inner.withLock { inner -> Bool in
            guard inner.generation == generation, !inner.stopping, case .scanning = inner.state else { return false }
            inner.pipeline.statistics.failures += 1
            inner.lastError = error
            return true
        }
        guard act else { return }
        transition(to: .recovering(error, attempt: 1))
        reportStatus(error.authorizationStatus)
        let task = Task { [weak self] () -> Void in await self?.recover(from: error) }
        inner.withLock { inner in
            if inner.stopping { task.cancel() } else { inner.recovery = task }
        }
    }

    private func recover(from error: BluetoothError) async {
        let old = inner.withLock { inner -> HCICommandChannel? in
            defer { inner.channel = nil }
            return inner.channel
        }
        await old?.close()
        var attempt = 1
        var lastError = error
        while !Task.isCancelled {
            if let maximum = configuration.reconnect.maximumAttempts, attempt > maximum {
                let finalError = BluetoothError(lastError.code, "\(lastError.message) (gave up after \(maximum) reconnect attempt(s))",
                                                opcode: lastError.opcode, status: lastError.status, cause: lastError.cause)
                if inner.withLock({ !$0.stopping }) { transition(to: .failed(finalError)) }
                return
            }
            let delay = configuration.reconnect.delay(beforeAttempt: attempt)
            do { try await delayClock.sleep(for: .seconds(saturating: delay)) } catch { return }
            let generation = inner.withLock { inner -> Int? in
                guard !inner.stopping else { return nil }
                inner.generation += 1
                return inner.generation
            }
            guard let generation else { return }
            do {
                let mode = try await openSession(generation: generation)
                didStartScanning(mode, generation: generation)
                return
            } catch {
                lastError = error
                attempt += 1
                let stopping = inner.withLock { inner -> Bool in
                    inner.lastError = error
                    return inner.stopping
                }
                if stopping { return }
                transition(to: .recovering(error, attempt: attempt))
            }
        }
    }

    // MARK: - Reports

    /// The fast path: an advertising report packet decoded in place, when nobody listens for
    /// raw sightings (those need the decoded advertisement: false sends the packet to `handle`).
    private func handleReport(_ packet: [UInt8], generation: Int) -> Bool {
        let now = clock.now
        var observations: [BeaconObservation] = []
        guard streams.subscriberCount == 0 else { return false }
        let handled = inner.withLock { inner -> Bool in
            guard inner.generation == generation, !inner.stopping else { return true }
            packet.withUnsafeBytes { bytes in
                inner.pipeline.process(event: bytes, at: now) { observations.append($0) }
            }
            return true
        }
        manager?.ingest(contentsOf: observations)
        return handled
    }

    private func handle(_ event: HCIEvent, generation: Int) {
        guard !event.advertisements.isEmpty else { return }
        let now = clock.now
        let (sightings, observations) = inner.withLock { inner -> ([AdvertisementSighting], [BeaconObservation]) in
            guard inner.generation == generation, !inner.stopping else { return ([], []) }
            var sightings: [AdvertisementSighting] = []
            var observations: [BeaconObservation] = []
            inner.pipeline.process(event, at: now, sighting: { sightings.append($0) }) { observations.append($0) }
            return (sightings, observations)
        }
        if !sightings.isEmpty {
            let subscribers = streams.snapshot()
            for sighting in sightings { subscribers.yield(.sighting(sighting)) }
        }
        manager?.ingest(contentsOf: observations)
    }

    private func transition(to state: State) {
        inner.withLock { $0.state = state }
        streams.yield(.stateChanged(state))
    }
}
