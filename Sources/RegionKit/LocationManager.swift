import RegionKitCore
import RegionKitEngine
import RegionKitConcurrency
import Synchronization

/// The public facade, with Core Location's vocabulary: monitor regions, range beacons, receive
/// callbacks through a delegate or an `AsyncStream`.
///
/// Input sources (Bluetooth scanner, gpsd, simulator, replay) call ``ingest(_:)-(BeaconObservation)``,
/// ``ingest(_:)-(LocationFix)`` and ``setSourceStatus(_:for:)``. Events are delivered one at a time,
/// in order; a delegate may call back into the manager (its events are delivered after the
/// current one).
///
/// ```swift
/// let manager = LocationManager(profile: .coreLocation, sources: [.beacon: .authorized])
/// manager.delegate = myDelegate
/// let events = manager.events()        // before starting: a stream delivers what follows its creation
/// manager.startMonitoring(for: try BeaconRegion(identifier: "lobby", uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
/// for await event in events { print(event.typeName) }   // didStartMonitoring, ...
/// ```
public final class LocationManager: Sendable {
    private struct State: Sendable {
        var engine: MonitoringEngine
        weak var delegate: (any LocationManagerDelegate)?
        var timer: ScheduledTimer?
        var timerDeadline: Timestamp?
        var pending: [LocationEvent] = []
        var delivering = false
    }

    public let clock: any MonitoringClock
    private let state: LockedBox<State>
    /// The streams of ``events(bufferingPolicy:)``.
    private let streams = Broadcast<LocationEvent>()
    /// Events produced, and events delivered, since the manager was made (monotonic: a stop
    /// waits for the events produced before it, not for a queue that sources keep filling).
    private let produced = Atomic<Int>(0)
    private let delivered = Atomic<Int>(0)
    /// ``sightingsAheadOfClock``.
    private let aheadOfClock = Atomic<Int>(0)

    /// - Parameters:
    ///   - profile: timings and thresholds (`MonitoringProfile.responsive` by default).
    ///   - automation: opt-in helpers (request state on start, range while inside, wake, retry).
    ///   - clock: ``SystemClock`` for real time, ``VirtualClock`` for tests and simulation.
    ///   - sources: the current status of the source for each region kind; missing = none configured.
    public init(profile: MonitoringProfile = .responsive, automation: Automation = Automation(),
                clock: any MonitoringClock = SystemClock(), sources: [RegionKind: AuthorizationStatus] = [:]) {
        self.clock = clock
        self.state = LockedBox(State(engine: MonitoringEngine(profile: profile, automation: automation, sources: sources, start: clock.now)))
    }

    /// Receives callbacks; held weakly, as in Core Location.
    public var delegate: (any LocationManagerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    // MARK: - Capabilities

    /// Whether a source for `kind` regions is configured (it may still be switched off: see
    /// ``authorizationStatus(for:)``).
    public func isMonitoringAvailable(for kind: RegionKind) -> Bool {
        state.withLock { $0.engine.hasSource(for: kind) }
    }

    /// Whether beacon ranging is possible now.
    public var isRangingAvailable: Bool { authorizationStatus(for: .beacon).isAuthorized }

    /// The largest radius accepted for a circular region, metres.
    public var maximumRegionMonitoringDistance: Double { state.withLock { $0.engine.profile.maximumRegionMonitoringDistance } }

    /// The timings and thresholds the manager monitors with.
    public var profile: MonitoringProfile { state.withLock { $0.engine.profile } }

    /// Whether this process may use the source for `kind` now, with the reason when not.
    public func authorizationStatus(for kind: RegionKind) -> AuthorizationStatus {
        state.withLock { $0.engine.sourceStatus(for: kind) }
    }

    /// The status of the beacon source if one is configured, else of the location source.
    public var authorizationStatus: AuthorizationStatus {
        state.withLock { $0.engine.sourceStatus(for: $0.engine.hasSource(for: .beacon) ? .beacon : .circular) }
    }

    // MARK: - Monitoring

    /// Monitored regions, in registration order.
    public var monitoredRegions: [Region] { state.withLock { $0.engine.monitoredRegions } }

    /// Constraints currently ranged.
    public var rangedBeaconConstraints: [BeaconIdentityConstraint] { state.withLock { $0.engine.rangedConstraints } }

    /// The engine's record of a monitored region (state, since when, evidence streams).
    public func monitoredRegion(_ identifier: String) -> MonitoredRegion? { state.withLock { $0.engine.monitoredRegion(identifier) } }

    /// The region of `identifier` waiting for its source (see `MonitoringEngine.waitingRegion(_:)`).
    public func waitingRegion(_ identifier: String) -> Region? { state.withLock { $0.engine.waitingRegion(identifier) } }

    /// The monitored region of `identifier`, else the one waiting for its source: read together,
    /// so a retry registering it between two reads cannot hide it from both.
    public func monitoredOrWaitingRegion(_ identifier: String) -> Region? {
        state.withLock { $0.engine.monitoredRegion(identifier)?.region ?? $0.engine.waitingRegion(identifier) }
    }

    /// The last known state of a monitored region (`nil` if not monitored).
    public func state(for region: Region) -> RegionState? { state.withLock { $0.engine.state(of: region.identifier) } }
    public func state(for region: BeaconRegion) -> RegionState? { state(for: .beacon(region)) }
    public func state(for region: CircularRegion) -> RegionState? { state(for: .circular(region)) }

    /// Starts monitoring `region` (replacing one with its identifier): `didStartMonitoring`, or
    /// `monitoringDidFail` with the reason. Registered before its source reported (the manager
    /// made with `sources: [.beacon: .notDetermined]`, a scanner not started yet), it waits
    /// without an event and starts when the source reports `authorized`, as Core Location keeps
    /// regions registered before the authorization prompt is answered.
    ///
    /// ```swift
    /// let manager = LocationManager(sources: [.beacon: .notDetermined])
    /// manager.startMonitoring(for: lobby)            // no event yet: manager.waitingRegion("lobby") is the lobby
    /// manager.setSourceStatus(.authorized, for: .beacon)   // didStartMonitoring(lobby)
    /// ```
    public func startMonitoring(for region: Region) {
        run { $0.startMonitoring(region, at: $1) }
    }

    /// Starts monitoring every region of `regions`, in order, in one step (see
    /// `MonitoringEngine.startMonitoring(contentsOf:at:)`): the same events as one call per
    /// region, with the engine's tables grown once.
    ///
    /// ```swift
    /// manager.startMonitoring(for: configuration.regions)
    /// ```
    public func startMonitoring(for regions: [Region]) {
        run { $0.startMonitoring(contentsOf: regions, at: $1) }
    }

    public func startMonitoring(for region: BeaconRegion) { startMonitoring(for: .beacon(region)) }
    public func startMonitoring(for region: CircularRegion) { startMonitoring(for: .circular(region)) }

    /// Re-registers a region with the state stored before a restart (see
    /// `MonitoringEngine.restore(_:state:since:at:)`): no `didStartMonitoring`, no spurious enter.
    public func restoreMonitoring(for region: Region, state: RegionState, since: Timestamp?) {
        run { $0.restore(region, state: state, since: since, at: $1) }
    }

    /// Places beacons in the rooms they were known to be in (an engine set aside for a broker
    /// outage, a restart), without events: see `MonitoringEngine.restoreNearestScanner(_:scanner:at:)`.
    /// Each stays while heard; one heard by no scanner leaves its room when a beacon heard once
    /// now would be called gone.
    ///
    /// ```swift
    /// manager.restoreNearestScanners(previous.nearestScanners)
    /// ```
    public func restoreNearestScanners(_ rooms: [BeaconIdentity: String]) {
        guard !rooms.isEmpty else { return }
        run { engine, now in
            // In one order whatever the dictionary's (equal absence times fire by identity anyway).
            rooms.sorted { $0.key < $1.key }.flatMap { engine.restoreNearestScanner($0.key, scanner: $0.value, at: now) }
        }
    }

    public func stopMonitoring(for region: Region) {
        run { $0.stopMonitoring(identifier: region.identifier, at: $1) }
    }
    public func stopMonitoring(for region: BeaconRegion) { stopMonitoring(for: .beacon(region)) }
    public func stopMonitoring(for region: CircularRegion) { stopMonitoring(for: .circular(region)) }

    /// Forgets a retry filed for `identifier` (see `MonitoringEngine.cancelRetry(identifier:)`);
    /// a monitored region of that identifier stays.
    public func cancelRetry(for identifier: String) {
        run { engine, _ in
            engine.cancelRetry(identifier: identifier)
            return []
        }
    }

    /// Asks for `didDetermineState` for `region`.
    public func requestState(for region: Region) {
        run { $0.requestState(for: region, at: $1) }
    }
    public func requestState(for region: BeaconRegion) { requestState(for: .beacon(region)) }
    public func requestState(for region: CircularRegion) { requestState(for: .circular(region)) }

    public func startRangingBeacons(satisfying constraint: BeaconIdentityConstraint) {
        run { $0.startRanging(constraint, at: $1) }
    }

    /// Ranges the beacons of `region`, reporting deliveries under the region's identifier; a
    /// region bound to a scanner (`BeaconRegion.scannerID`) ranges that scanner's sightings only.
    ///
    /// ```swift
    /// manager.startRangingBeacons(in: kitchen)      // didRange every second, from "kitchen-node"
    /// manager.stopRangingBeacons(in: kitchen)
    /// ```
    public func startRangingBeacons(in region: BeaconRegion) {
        run { $0.startRanging(region.constraint, label: region.identifier, scannerID: region.scannerID, at: $1) }
    }

    public func stopRangingBeacons(satisfying constraint: BeaconIdentityConstraint) {
        run { $0.stopRanging(constraint, at: $1) }
    }

    /// Stops what ``startRangingBeacons(in:)`` started for `region`.
    public func stopRangingBeacons(in region: BeaconRegion) {
        run { $0.stopRanging(region.constraint, scannerID: region.scannerID, label: region.identifier, at: $1) }
    }

    /// The device "woke" (display on, app activated, operator signal): see `MonitoringEngine.wake(at:)`.
    public func wake() {
        run { $0.wake(at: $1) }
    }

    // MARK: - Inputs

    /// A sighting from a scanner, at its timestamp — but never later than the manager's clock: a
    /// sighting stamped ahead of ``clock`` (a gateway whose clock runs fast, a forged message) is
    /// taken at the clock's time and counted in ``sightingsAheadOfClock``. Taken at its own time,
    /// it moved the engine's time forward for good: one sighting stamped 10 minutes ahead put
    /// every later exit 10 minutes late. One stamped in the past counts as now (time never runs
    /// back). Stamp live sightings with `manager.clock.now`.
    ///
    /// ```swift
    /// manager.ingest(BeaconObservation(identity: beacon, rssi: -64, measuredPower: -59, timestamp: manager.clock.now))
    /// ```
    public func ingest(_ observation: BeaconObservation) {
        run { engine, now in engine.ingest(notAhead(observation, of: now, \.timestamp)) }
    }

    /// Sightings and fixes stamped ahead of the manager's clock, taken at the clock's time
    /// (``ingest(_:)-(BeaconObservation)``): a source whose clock runs ahead of this one.
    public var sightingsAheadOfClock: Int { aheadOfClock.load(ordering: .relaxed) }

    /// Sightings in order, in one call: one lock, one timer update and one engine call for the
    /// whole batch (a scanner's buffer of reports, an MQTT message, a gateway batch), with the
    /// same events, in the same order, as ingesting each.
    ///
    /// ```swift
    /// manager.ingest(contentsOf: observations)
    /// ```
    /// Each sighting is taken at its timestamp but never later than the clock, as in
    /// ``ingest(_:)-(BeaconObservation)``.
    public func ingest(contentsOf observations: [BeaconObservation]) {
        guard !observations.isEmpty else { return }
        run { engine, now in
            guard observations.contains(where: { $0.timestamp > now }) else { return engine.ingest(contentsOf: observations) }
            return engine.ingest(contentsOf: observations.map { notAhead($0, of: now, \.timestamp) })
        }
    }

    /// Sightings in order at their own timestamps, also those ahead of the clock: a replay that
    /// feeds a batch and then moves its ``VirtualClock`` to the batch's last time.
    package func ingestAheadOfClock(contentsOf observations: [BeaconObservation]) {
        guard !observations.isEmpty else { return }
        run { engine, _ in engine.ingest(contentsOf: observations) }
    }

    /// A fix from a location source, at its timestamp but never later than the manager's clock
    /// (as ``ingest(_:)-(BeaconObservation)``; counted in ``sightingsAheadOfClock``).
    public func ingest(_ fix: LocationFix) {
        run { engine, now in engine.ingest(notAhead(fix, of: now, \.timestamp)) }
    }

    /// `input` at its time, or at `now` (counted) when it is stamped later.
    private func notAhead<Input>(_ input: Input, of now: Timestamp, _ time: WritableKeyPath<Input, Timestamp>) -> Input {
        guard input[keyPath: time] > now else { return input }
        aheadOfClock.add(1, ordering: .relaxed)
        var stamped = input
        stamped[keyPath: time] = now
        return stamped
    }

    /// A source became usable or unusable.
    public func setSourceStatus(_ status: AuthorizationStatus, for kind: RegionKind) {
        run { $0.setSourceStatus(status, for: kind, at: $1) }
    }

    /// Scanner `scannerID` said it is offline (`online: false`) or back: the status it publishes
    /// (ESPresense's retained `espresense/rooms/<room>/status`, a Theengs gateway's will). While it
    /// is away, the beacons only it hears do not leave their regions or rooms, for up to
    /// `ScannerChannel.offlineExcuseLimit` (`MonitoringEngine.setScannerStatus(_:online:at:)`).
    ///
    /// ```swift
    /// manager.setScannerStatus("kitchen", online: false)
    /// ```
    public func setScannerStatus(_ scannerID: String, online: Bool) {
        run { $0.setScannerStatus(scannerID, online: online, at: $1) }
    }

    /// The scanners that said they are offline and have not come back, sorted.
    public var offlineScanners: [String] { state.withLock { $0.engine.offlineScanners } }

    /// The scanner (room) `identity` is nearest to now, when the profile tracks nearest scanners.
    public func nearestScanner(for identity: BeaconIdentity) -> String? { state.withLock { $0.engine.nearestScanner(for: identity) } }

    /// Whether `constraint` is still ranged under `label` (`MonitoringEngine.isRanging(_:label:)`).
    public func isRanging(_ constraint: BeaconIdentityConstraint, label: String) -> Bool {
        state.withLock { $0.engine.isRanging(constraint, label: label) }
    }

    /// For each of `rangings`, whether it is still ranged (`MonitoringEngine.isRanging(_:label:)`),
    /// asked under one lock: the presence hub asks every second about each ranging it published
    /// distances from.
    public func isRanging(_ rangings: [(constraint: BeaconIdentityConstraint, label: String)]) -> [Bool] {
        state.withLock { state in rangings.map { state.engine.isRanging($0.constraint, label: $0.label) } }
    }

    /// How far `identity` is from `scanner` by that scanner's readings alone, in the ranging of
    /// `constraint` under `label` (`MonitoringEngine.rangedDistance(of:from:ranging:label:)`).
    public func rangedDistance(of identity: BeaconIdentity, from scanner: String, ranging constraint: BeaconIdentityConstraint, label: String) -> Double? {
        state.withLock { $0.engine.rangedDistance(of: identity, from: scanner, ranging: constraint, label: label) }
    }

    /// Every tracked beacon's nearest scanner (room) now.
    public var nearestScanners: [BeaconIdentity: String] { state.withLock { $0.engine.nearestScanners } }

    /// A snapshot of the engine (for inspection and persistence).
    public var engineSnapshot: MonitoringEngine { state.withLock { $0.engine } }

    // MARK: - Events

    /// A new stream of every event from now on; it ends when the manager is deallocated.
    public func events(bufferingPolicy: AsyncStream<LocationEvent>.Continuation.BufferingPolicy = .unbounded) -> AsyncStream<LocationEvent> {
        streams.subscribe(bufferingPolicy: bufferingPolicy)
    }

    deinit {
        state.withLock { $0.timer?.cancel() }
        streams.finish()
    }

    // MARK: - Driving the engine

    private func run(_ body: (inout MonitoringEngine, Timestamp) -> [LocationEvent]) {
        let now = clock.now
        let shouldDeliver = state.withLock { state -> Bool in
            let events = body(&state.engine, now)
            if !events.isEmpty { produced.add(events.count, ordering: .relaxed) }
            state.pending += events
            reschedule(&state)
            guard !state.delivering, !state.pending.isEmpty else { return false }
            state.delivering = true
            return true
        }
        if shouldDeliver { drain() }
    }

    private func tick() {
        // The timer that called us is spent: forget it so the next deadline is always scheduled,
        // even if this wake-up came a hair early and the same deadline is still pending.
        state.withLock { state in
            state.timer = nil
            state.timerDeadline = nil
        }
        run { $0.advance(to: $1) }
    }

    private func reschedule(_ state: inout State) {
        let deadline = state.engine.nextDeadline
        guard deadline != state.timerDeadline else { return }
        state.timer?.cancel()
        state.timerDeadline = deadline
        state.timer = deadline.map { clock.schedule(at: $0) { [weak self] in self?.tick() } }
    }

    /// Delivers pending events in order, outside the lock; only one caller drains. It takes every
    /// event pending at once and delivers them one by one (what is added meanwhile is the next
    /// batch): taking them one at a time with `removeFirst()` moved the whole queue each time, so
    /// a backlog of n events cost n²/2 moves — under a flood of new beacons the drain spent 88 %
    /// of its time moving memory and fell minutes behind (audit).
    private func drain() {
        while true {
            let next = state.withLock { state -> ([LocationEvent], (any LocationManagerDelegate)?, Broadcast<LocationEvent>.Subscribers)? in
                guard !state.pending.isEmpty else {
                    state.delivering = false
                    return nil
                }
                var batch: [LocationEvent] = []
                swap(&batch, &state.pending)
                // (The streams as of the batch: one that starts meanwhile gets the next batch.)
                return (batch, state.delegate, streams.snapshot())
            }
            guard let (batch, delegate, subscribers) = next else { return }
            for event in batch {
                subscribers.yield(event)
                if let delegate { Self.dispatch(event, to: delegate, from: self) }
                // Releasing: a waiter that reads the count sees what the delegate did with the event.
                delivered.add(1, ordering: .releasing)
            }
            delegate?.locationManagerDidFinishDelivering(self)
        }
    }

    /// The number of events the engine produced that are not delivered yet (queued behind the
    /// one being delivered, or not yet taken by a drain): 0 when the delegate and the streams
    /// have had every event so far.
    public var undeliveredCount: Int {
        let done = delivered.load(ordering: .acquiring)
        return max(0, produced.load(ordering: .relaxed) - done)
    }

    /// Events produced since the manager was made (counted before the call that produced them
    /// returns), and events delivered (the delegate returned from each): a consumer that must know
    /// when what one call decided has been handled notes ``eventsProduced`` after the call and
    /// waits for ``eventsDelivered`` to reach it.
    package var eventsProduced: Int { produced.load(ordering: .relaxed) }
    package var eventsDelivered: Int { delivered.load(ordering: .acquiring) }

    /// Waits, up to `timeout` of real time, until every event produced before the call is
    /// delivered (the delegate returned from it and the streams have it), and returns how many of
    /// those are still undelivered then: 0 when all were. Events produced meanwhile (a source
    /// still feeding, a timer) are not waited for. Events are delivered by whichever thread is
    /// draining the queue (a source's, a timer's, a caller's); a stop waits here so that a
    /// backlog (a flood of new beacons) is logged before "process stopped" instead of dropped.
    ///
    /// ```swift
    /// let left = await manager.waitUntilDelivered(timeout: .seconds(10))
    /// if left > 0 { print("\(left) events were not delivered in time") }
    /// ```
    public func waitUntilDelivered(timeout: Duration) async -> Int {
        let target = produced.load(ordering: .relaxed)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let left = max(0, target - delivered.load(ordering: .acquiring))
            if left == 0 || clock.now >= deadline || Task.isCancelled { return left }
            // Polled: a stop is rare and 5 ms is nothing beside it; a waiter list resumed by the
            // drain would put a lock and a branch on every delivery for it.
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    private static func dispatch(_ event: LocationEvent, to delegate: any LocationManagerDelegate, from manager: LocationManager) {
        delegate.locationManager(manager, didReceive: event)
        switch event.kind {
        case .didStartMonitoring(let region): delegate.locationManager(manager, didStartMonitoringFor: region)
        case .monitoringDidFail(let region, let error): delegate.locationManager(manager, monitoringDidFailFor: region, withError: error)
        case .didEnterRegion(let region): delegate.locationManager(manager, didEnterRegion: region)
        case .didExitRegion(let region): delegate.locationManager(manager, didExitRegion: region)
        case .didDetermineState(let state, let region): delegate.locationManager(manager, didDetermineState: state, for: region)
        case .didRangeBeacons(let beacons, let constraint, let label): delegate.locationManager(manager, didRange: beacons, satisfying: constraint, label: label)
        case .didFailRanging(let constraint, _, let error): delegate.locationManager(manager, didFailRangingFor: constraint, error: error)
        case .didChangeAuthorization: delegate.locationManagerDidChangeAuthorization(manager)
        case .didChangeNearestScanner: break
        }
    }
}
