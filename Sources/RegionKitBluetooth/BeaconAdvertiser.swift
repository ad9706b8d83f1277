import RegionKit
import RegionKitHCI
import RegionKitConcurrency

/// Advertises a beacon (iBeacon by default; AltBeacon or Eddystone UID/URL too) through an HCI controller, as `peripheralData(withMeasuredPower:)` plus
/// CoreBluetooth do on an iPhone (spec §4).
///
/// ``start()`` resets the controller, sets legacy advertising parameters (non-connectable
/// ADV_NONCONN_IND at ``Configuration/intervalMilliseconds``, or scannable ADV_SCAN_IND when a
/// local name is to be sent in the scan response), sets the advertising data (Flags + Apple
/// iBeacon manufacturer data, `IBeaconFrame.advertisingData(flags:)`) and the scan response
/// *before* enabling, then enables advertising. Every step waits for the controller's answer.
///
/// ``isAdvertising`` is the controller's real state as far as the host can know it: true only
/// after the controller confirmed the enable command, false again after ``stop()``, after any
/// command error, a Hardware Error, or a dropped transport (spec §4: iOS's `isAdvertising` can
/// claim true while nothing is transmitted; this one does not).
///
/// ```swift
/// let identity = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)
/// let transport = try await HCITransportSpecification(parsing: "tcp:127.0.0.1:9000").open()
/// let advertiser = BeaconAdvertiser(transport: transport,
///     configuration: .init(frame: IBeaconFrame(identity: identity, measuredPower: -59)))
/// try await advertiser.start()
/// advertiser.isAdvertising   // true once the controller confirmed
/// await advertiser.stop()
/// ```
public final class BeaconAdvertiser: Sendable {
    /// What to advertise.
    public struct Configuration: Sendable {
        /// The frame sent: its `BeaconFrame.advertisingData()` and, for an iBeacon with a
        /// `localName`, `BeaconFrame.scanResponseData()`.
        public var beacon: BeaconFrame
        /// The iBeacon sent, when it is one (setting it sends that iBeacon).
        public var frame: IBeaconFrame? {
            get { if case .iBeacon(let frame) = beacon { frame } else { nil } }
            set { if let newValue { beacon = .iBeacon(newValue) } }
        }
        /// Advertising interval, ms: 100 by default (what iOS uses for an app-advertised iBeacon,
        /// and what beacon vendors ship); 20...10240 ms allowed (Core spec Vol 4 Part E 7.8.5).
        public var intervalMilliseconds: Double = 100
        /// Time limit for each HCI command.
        public var commandTimeout: Duration = HCICommandChannel.defaultCommandTimeout

        public init(frame: IBeaconFrame, intervalMilliseconds: Double = 100) {
            self.beacon = .iBeacon(frame)
            self.intervalMilliseconds = intervalMilliseconds
        }

        /// Any beacon frame: `.init(beacon: .altBeacon(AltBeaconFrame(identity: id)))`.
        public init(beacon: BeaconFrame, intervalMilliseconds: Double = 100) {
            self.beacon = beacon
            self.intervalMilliseconds = intervalMilliseconds
        }

        /// The advertising parameters command's values, range-checked.
        public func advertisingParameters() throws(BluetoothError) -> LEAdvertisingParameters {
            guard intervalMilliseconds.isFinite, (20...10_240).contains(intervalMilliseconds) else {
                throw BluetoothError(.invalidConfiguration, "advertising interval \(intervalMilliseconds) ms is outside 20...10240 ms")
            }
            let units = LEScanParameters.units(milliseconds: intervalMilliseconds)
            return LEAdvertisingParameters(intervalMin: units, intervalMax: units,
                                           type: hasScanResponse ? .scannableUndirected : .nonConnectableUndirected)
        }

        /// True when a local name is sent (in the scan response, so the advertising type is ADV_SCAN_IND).
        public var hasScanResponse: Bool { !beacon.scanResponseData().isEmpty }
    }

    private struct State {
        var advertising = false
        var started = false
        var lastError: BluetoothError?
    }

    public let configuration: Configuration
    public let transportName: String
    /// Measures command timeouts.
    public let clock: any Clock<Duration>
    private let channel: LockedBox<HCICommandChannel?> = LockedBox(nil)
    private let transport: any HCITransport
    private let state = LockedBox(State())

    /// - Parameters:
    ///   - transport: an open transport to the controller; the advertiser closes it on ``stop()``.
    ///   - transportName: names it in messages.
    ///   - clock: measures command timeouts; `ContinuousClock` unless a test brings its own.
    public init(transport: any HCITransport, transportName: String = "controller", clock: any Clock<Duration> = ContinuousClock(),
                configuration: Configuration) {
        self.transport = transport
        self.transportName = transportName
        self.clock = clock
        self.configuration = configuration
    }

    /// Whether the controller is advertising: confirmed by its answer to the enable command and
    /// not contradicted since (no error, no Hardware Error, transport alive, not stopped).
    public var isAdvertising: Bool { state.withLock { $0.advertising } }

    /// What ended advertising, if something did.
    public var lastError: BluetoothError? { state.withLock { $0.lastError } }

    /// Configures the controller and enables advertising. Throws a ``BluetoothError`` naming the
    /// failing command; ``isAdvertising`` is then false.
    public func start() async throws(BluetoothError) {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { throw BluetoothError(.invalidConfiguration, "\(transportName): the advertiser was already started; create a new one") }
        let parameters = try configuration.advertisingParameters()
        let channel = HCICommandChannel(transport: transport, name: transportName, clock: clock, onEvent: { _ in }, onFailure: { [weak self] error in
            self?.state.withLock { state in
                state.advertising = false
                state.lastError = error
            }
        })
        self.channel.withLock { $0 = channel }
        let timeout = configuration.commandTimeout
        do {
            try await channel.execute(.reset, timeout: timeout)
            // Disconnection Complete (bit 4), Hardware Error (bit 15), LE Meta (bit 61).
            try await channel.execute(.setEventMask(1 << 4 | 1 << 15 | 1 << 61), timeout: timeout)
            try await channel.execute(Self.command { () throws(HCIError) in try .leSetAdvertisingParameters(parameters) }, timeout: timeout)
            let data = configuration.beacon.advertisingData()
            try await channel.execute(Self.command { () throws(HCIError) in try .leSetAdvertisingData(data) }, timeout: timeout)
            let response = configuration.beacon.scanResponseData()
            try await channel.execute(Self.command { () throws(HCIError) in try .leSetScanResponseData(response) }, timeout: timeout)
            try await channel.execute(.leSetAdvertisingEnable(true), timeout: timeout)
        } catch {
            state.withLock { state in
                state.advertising = false
                state.lastError = error
            }
            throw error
        }
        state.withLock { state in
            // A failure reported while the enable command was in flight wins.
            state.advertising = state.lastError == nil && channel.failure == nil
        }
        if let failure = channel.failure { throw failure }
    }

    /// Disables advertising (waiting for the controller's answer, bounded) and closes the transport.
    public func stop() async {
        let channel = self.channel.withLock { $0 }
        if let channel, isAdvertising {
            do {
                try await channel.execute(.leSetAdvertisingEnable(false), timeout: configuration.commandTimeout)
            } catch {
                state.withLock { $0.lastError = error }
            }
        }
        state.withLock { $0.advertising = false }
        if let channel { await channel.close() } else { await transport.close() }
    }

    /// Builders throw HCIError for out-of-range values; callers see a BluetoothError.
    private static func command(_ build: () throws(HCIError) -> HCICommand) throws(BluetoothError) -> HCICommand {
        do { return try build() } catch {
            throw BluetoothError(.invalidConfiguration, error.message, cause: error)
        }
    }
}
