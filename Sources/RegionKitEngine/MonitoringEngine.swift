import RegionKitCore
import Foundation

/// Core Location's region-monitoring and ranging state machine, as a pure value.
///
/// The engine does no I/O and reads no clock: every input carries its time, and timers (exits,
/// dwell times, ranging deliveries, retries) fire when the driver calls ``advance(to:)``. Each
/// call returns the delegate events it produced, in order. The same inputs always give the same
/// events, so tests run in virtual time and the state can be stored or moved between processes.
///
/// ```swift
/// var engine = MonitoringEngine(profile: .coreLocation, sources: [.beacon: .authorized])
/// let lobby = Region.beacon(try BeaconRegion(identifier: "lobby", uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
/// engine.startMonitoring(lobby, at: .zero)                 // [didStartMonitoring]
/// engine.ingest(BeaconObservation(identity: id, rssi: -60, timestamp: Timestamp(seconds: 5)))
/// engine.advance(to: Timestamp(seconds: 60))               // [didExitRegion, didDetermineState(outside)]
/// ```
public struct MonitoringEngine: Sendable {
    /// The timings and thresholds in force. Changing it re-plans every region timer.
    public var profile: MonitoringProfile {
        didSet { rebuildTimers() }
    }
    public var automation: Automation
    /// Whether fixes are tested only against circular regions near them (through a spatial
    /// index) and timers are looked up among pending ones only: the default. `false` evaluates
    /// every circular region on every fix and scans every region for timers, the O(n) reference
    /// behaviour; both give identical events and states (the property tests check it), so this
    /// exists for those tests and for benchmarks.
    public var usesSpatialIndex = true
    /// The latest time the engine has been advanced to.
    public private(set) var now: Timestamp
    /// The latest usable location fix.
    public internal(set) var lastFix: LocationFix?

    var regions: [String: MonitoredRegion] = [:]
    var order: [String] = []
    /// Beacon regions by constraint (UUID, UUID+major, UUID+major+minor), each list in
    /// registration order: a sighting looks up at most three keys, whatever the region count.
    var beaconIndex: [BeaconMatchKey: [RegisteredID]] = [:]
    /// Region timers (exit, initial determination window, geofence dwell) by due time. Each
    /// region's live entry is the one at `scheduled[sequence]`, never later than the region's
    /// real deadline (``dueItem(of:id:)``); after ``settleTimers()`` the minimum is exact.
    var timers = RegionTimerQueue()
    var scheduled: [Int: Timestamp] = [:]
    var idBySequence: [Int: String] = [:]
    /// Beacon regions with many streams are pruned of gone streams when their count doubles.
    var pruneWatermarks: [Int: Int] = [:]
    /// Beacon regions with more than ``exitCacheThreshold`` streams (a UUID-wide region tracking
    /// many beacons): the stream with the latest gone-deadline, kept up to date by sightings so
    /// the region's exit deadline costs O(1) instead of a visit of every stream. Absent = unknown.
    var exitCache: [Int: ExitCacheEntry] = [:]
    static let exitCacheThreshold = 8

    struct ExitCacheEntry: Sendable {
        var time: Timestamp
        var key: MonitoredRegion.StreamKey
        var lastSighting: Timestamp
    }

    /// The queue's minimum may be stale or early: ``settleTimers()`` has work to do.
    var timersDirty = false
    /// Registration sequence number of every monitored region: sorting by it gives `order`.
    var sequence: [String: Int] = [:]
    var nextSequence = 0
    /// Every circular region by centre and radius, so a fix is tested only against regions near
    /// it. Derived from `regions` (rebuilt by `insert`), never persisted.
    var circularIndex = RegionIndex()
    /// Circular regions each fix must evaluate wherever it is: state unknown or inside (an exit
    /// can come from any distance), a crossing pending its dwell, or a restored state to confirm.
    var geoActive: Set<String> = []
    /// Circular regions with a crossing waiting for its dwell time (the only circular timers).
    var geoPending: Set<String> = []
    /// Circular regions the index refused (only possible for a decoded, unvalidated region):
    /// evaluated on every fix, so nothing is ever silently unmonitored.
    var geoUnindexed: Set<String> = []
    var sessions: [RangingSession] = []
    var sources: [RegionKind: AuthorizationStatus]
    var retries: [PendingRetry] = []
    /// Regions whose retries ran out while their source was unavailable (retry helper on): they are
    /// registered again as soon as that source is usable, however long the outage lasted.
    var abandoned: [Region] = []
    var failureCounts: [String: Int] = [:]
    var wakeRequestAt: Timestamp?
    var nearest: [BeaconIdentity: NearestScannerState] = [:]

    /// A beacon-index key: `major`/`minor` are −1 for "any".
    struct BeaconMatchKey: Hashable, Sendable {
        var uuid: UUID
        var major: Int32
        var minor: Int32

        init(_ constraint: BeaconIdentityConstraint) {
            uuid = constraint.uuid
            major = constraint.major.map(Int32.init) ?? -1
            minor = constraint.minor.map(Int32.init) ?? -1
        }

        init(uuid: UUID, major: Int32, minor: Int32) {
            self.uuid = uuid
            self.major = major
            self.minor = minor
        }

        func hash(into hasher: inout Hasher) {
            let words = withUnsafeBytes(of: uuid.uuid) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
            hasher.combine(words.0)
            hasher.combine(words.1 ^ (UInt64(UInt32(bitPattern: major)) << 32 | UInt64(UInt32(bitPattern: minor))) &* 0x9E37_79B9_7F4A_7C15)
        }
    }

    /// A region identifier with its registration sequence number.
    struct RegisteredID: Sendable {
        var sequence: Int
        var id: String
    }

    struct PendingRetry: Sendable {
        var region: Region
        var due: Timestamp
    }

    /// - Parameters:
    ///   - sources: the status of the input source for each region kind; a kind without an entry
    ///     has no source configured and its regions fail with `sourceUnavailable`.
    public init(profile: MonitoringProfile = .responsive, automation: Automation = Automation(),
                sources: [RegionKind: AuthorizationStatus] = [:], start: Timestamp = .zero) {
        self.profile = profile
        self.automation = automation
        self.sources = sources
        self.now = start
    }

    // MARK: - Queries

    /// Monitored regions in registration order.
    public var monitoredRegions: [Region] { order.compactMap { regions[$0]?.region } }

    /// The engine's state record of a monitored region.
    public func monitoredRegion(_ identifier: String) -> MonitoredRegion? { regions[identifier] }

    /// The current state of a monitored region, `nil` when it is not monitored.
    public func state(of identifier: String) -> RegionState? { regions[identifier]?.state }

    /// Constraints being ranged, in the order ranging started.
    public var rangedConstraints: [BeaconIdentityConstraint] { sessions.map(\.constraint) }

    /// The ranging sessions (constraint, label, tracked beacons).
    public var rangingSessions: [RangingSession] { sessions }

    /// Whether a source is configured for `kind` regions (usable or not).
    public func hasSource(for kind: RegionKind) -> Bool { sources[kind] != nil }

    /// The status of the source feeding `kind` regions.
    public func sourceStatus(for kind: RegionKind) -> AuthorizationStatus {
        sources[kind] ?? .restricted(reason: "no \(kind == .beacon ? "Bluetooth scanner" : "location source") is configured")
    }

    /// The scanner `identity` is nearest to now, when the profile tracks it (``NearestScannerPolicy``).
    public func nearestScanner(for identity: BeaconIdentity) -> String? { nearest[identity]?.current }

    /// When the engine next needs ``advance(to:)`` to be called, if ever.
    public var nextDeadline: Timestamp? { nextDue()?.time }

    // MARK: - Commands

    /// Registers `region` (replacing one with the same identifier): `didStartMonitoring`, or
    /// `monitoringDidFail` when the limit is reached, the radius is too large or the source is off.
    public mutating func startMonitoring(_ region: Region, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        events += register(region)
        return events
    }

    /// Re-registers a region whose state was stored before a restart, without `didStartMonitoring`
    /// (it never stopped being monitored, as after an iOS relaunch). The stored state is kept but
    /// marked stale until fresh evidence reconciles it: a sighting (or fix) confirming it gives no
    /// event, so there is no spurious enter; a beacon region stored inside and not heard again
    /// exits once, with the reason, after the profile's silence threshold; a circular region whose
    /// first fix is clearly on the other side crosses at once.
    public mutating func restore(_ region: Region, state: RegionState, since: Timestamp?, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        if let failure = validate(region) { return events + fail(region, failure) }
        events += remove(region.identifier)
        insert(region)
        regions[region.identifier]?.state = state
        regions[region.identifier]?.stateSince = since
        regions[region.identifier]?.restoredAt = state == .unknown ? nil : now
        trackGeo(region.identifier)
        reschedule(region.identifier)
        if state == .inside, automation.rangeWhileInside, case .beacon(let beacon) = region {
            events += beginRanging(beacon.constraint, label: region.identifier, automatic: true)
        }
        return events
    }

    /// Stops monitoring the region with `identifier` (no event, as in Core Location).
    public mutating func stopMonitoring(identifier: String, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        retries.removeAll { $0.region.identifier == identifier }
        abandoned.removeAll { $0.identifier == identifier }
        failureCounts[identifier] = nil
        events += remove(identifier)
        return events
    }

    /// Asks for `didDetermineState`: at once when the state is known, else when it is determined.
    public mutating func requestState(for region: Region, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        events += requestState(region)
        return events
    }

    /// Starts `didRangeBeacons` deliveries every ranging interval for beacons satisfying `constraint`.
    /// - Parameter label: the region identifier to report deliveries under (default: the constraint).
    public mutating func startRanging(_ constraint: BeaconIdentityConstraint, label: String? = nil, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        events += beginRanging(constraint, label: label ?? constraint.description, automatic: false)
        return events
    }

    /// Stops ranging `constraint`.
    public mutating func stopRanging(_ constraint: BeaconIdentityConstraint, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        let events = advance(to: time)
        sessions.removeAll { $0.constraint == constraint }
        return events
    }

    /// The device "woke" (display on / app activated): regions with `notifyEntryStateOnDisplay`
    /// get their state at once, and with `automation.wakeRequestDelay` every region's state is
    /// requested after that delay (spec §5, "infinite ranging" fix).
    public mutating func wake(at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        for id in order {
            guard let monitored = regions[id], monitored.region.beaconRegion?.notifyEntryStateOnDisplay == true else { continue }
            events += requestState(monitored.region)
        }
        if let delay = automation.wakeRequestDelay {
            wakeRequestAt = now + delay
        }
        return events
    }

    /// The source for `kind` changed status. When it stops being usable every region of that kind
    /// fails with `sourceUnavailable` (and is retried with `automation.retry`), and ranging fails.
    public mutating func setSourceStatus(_ status: AuthorizationStatus, for kind: RegionKind, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        guard sources[kind] != status else { return events }
        sources[kind] = status
        events.append(LocationEvent(timestamp: now, kind: .didChangeAuthorization(kind, status)))
        if status.isAuthorized {
            let resuming = abandoned.filter { $0.kind == kind }
            abandoned.removeAll { $0.kind == kind }
            for region in resuming {
                failureCounts[region.identifier] = nil
                events += register(region)
            }
            return events
        }
        let error = RegionKitError(.sourceUnavailable, "the \(kind == .beacon ? "Bluetooth scanner" : "location source") is unavailable: \(status)")
        for id in order {
            guard let monitored = regions[id], monitored.region.kind == kind else { continue }
            events += remove(id)
            events += fail(monitored.region, error)
        }
        if kind == .beacon {
            for session in sessions {
                let rangingError = RegionKitError(.rangingUnavailable, "ranging \(session.label) stopped: \(error.message)")
                events.append(LocationEvent(timestamp: now, kind: .didFailRanging(session.constraint, label: session.label, rangingError)))
            }
            sessions.removeAll()
        }
        return events
    }

    // MARK: - Time

    /// Fires every timer due at or before `time`, in time order, and moves the engine's clock there.
    /// Times earlier than ``now`` are treated as ``now``.
    public mutating func advance(to time: Timestamp) -> [LocationEvent] {
        var events: [LocationEvent] = []
        settleTimers()
        while let dueTime = nextDueTime(), dueTime <= time, let due = nextDue() {
            now = max(now, due.time)
            events += fire(due.item)
            settleTimers()
        }
        now = max(now, time)
        return events
    }

    // MARK: - Internals

    enum DueItem: Sendable {
        case initialWindow(String)
        case exit(String)
        case geoDwell(String)
        case ranging(Int)
        case retry(Int)
        case wake
    }

    /// The time of ``nextDue()``, cheaply: with the timer queue settled its minimum is exact,
    /// so no region record is read (the common case on every sighting: nothing is due).
    func nextDueTime() -> Timestamp? {
        guard usesSpatialIndex else { return nextDue()?.time }
        var best = timers.min?.time
        func consider(_ time: Timestamp) {
            if best == nil || time < best! { best = time }
        }
        for session in sessions { consider(session.nextDelivery) }
        for retry in retries { consider(retry.due) }
        if let wakeRequestAt { consider(wakeRequestAt) }
        return best
    }

    func nextDue() -> (time: Timestamp, item: DueItem)? {
        var best: (time: Timestamp, item: DueItem)?
        func consider(_ time: Timestamp, _ item: DueItem) {
            if best == nil || time < best!.time { best = (time, item) }
        }
        if usesSpatialIndex {
            // The earliest region timer, ties going to the earliest registered region: exactly
            // what the scan of `order` below picks, without visiting idle circular regions.
            // (The queue's minimum is exact: every mutation ends with settleTimers().)
            if let first = timers.min, let id = idBySequence[first.sequence], let monitored = regions[id],
               let due = dueItem(of: monitored, id: id) {
                best = due
            }
        } else {
            for id in order {
                guard let monitored = regions[id], let due = dueItem(of: monitored, id: id) else { continue }
                consider(due.time, due.item)
            }
        }
        for (index, session) in sessions.enumerated() { consider(session.nextDelivery, .ranging(index)) }
        for (index, retry) in retries.enumerated() { consider(retry.due, .retry(index)) }
        if let wakeRequestAt { consider(wakeRequestAt, .wake) }
        return best
    }

    /// The timer a monitored region is waiting for, if any.
    func dueItem(of monitored: MonitoredRegion, id: String) -> (time: Timestamp, item: DueItem)? {
        switch monitored.region {
        case .beacon:
            if monitored.state == .unknown && monitored.streams.isEmpty {
                return (monitored.registeredAt + profile.initialDeterminationWindow, .initialWindow(id))
            } else if monitored.state == .inside, let deadline = exitDeadline(of: monitored, id: id)?.time ?? restoredExitDeadline(of: monitored) {
                return (deadline, .exit(id))
            }
        case .circular:
            if let candidate = monitored.candidate, candidate != monitored.state, let since = monitored.candidateSince {
                return (since + profile.geoHysteresis.dwell, .geoDwell(id))
            }
        }
        return nil
    }

    /// A restored "inside" beacon region not heard since the restart exits as if last seen then.
    func restoredExitDeadline(of monitored: MonitoredRegion) -> Timestamp? {
        guard let restoredAt = monitored.restoredAt, monitored.streams.isEmpty else { return nil }
        let stream = ReceptionEstimator(firstSighting: restoredAt, priorInterval: profile.exitDetector.priorInterval)
        return profile.exitDetector.goneDeadline(for: stream, gridOrigin: monitored.registeredAt)
    }

    /// When the last present stream of a beacon region counts as gone, with that stream. Ties
    /// (common on Core Location's 10 s grid) go to the stream heard last, then to the smallest
    /// stream key, so the evidence does not depend on dictionary iteration order.
    func exitDeadline(of monitored: MonitoredRegion, id: String) -> (time: Timestamp, stream: ReceptionEstimator)? {
        if usesSpatialIndex, monitored.streams.count > Self.exitCacheThreshold, let number = sequence[id], let cached = exitCache[number],
           let stream = monitored.streams[cached.key] {
            return (cached.time, stream)
        }
        return Self.scanExitDeadline(of: monitored, detector: profile.exitDetector).map { ($0.time, $0.stream) }
    }

    /// ``exitDeadline(of:id:)`` by visiting every stream, with the winning stream's key.
    static func scanExitDeadline(of monitored: MonitoredRegion, detector: ExitDetector)
        -> (time: Timestamp, key: MonitoredRegion.StreamKey, stream: ReceptionEstimator)? {
        var latest: (time: Timestamp, key: MonitoredRegion.StreamKey, stream: ReceptionEstimator)?
        for (key, stream) in monitored.streams {
            let deadline = detector.goneDeadline(for: stream, gridOrigin: monitored.registeredAt)
            if let current = latest {
                guard deadline > current.time || (deadline == current.time && (stream.lastSighting > current.stream.lastSighting
                    || (stream.lastSighting == current.stream.lastSighting && key < current.key))) else { continue }
            }
            latest = (deadline, key, stream)
        }
        return latest
    }

    mutating func fire(_ item: DueItem) -> [LocationEvent] {
        switch item {
        case .initialWindow(let id):
            return setState(id, .outside, crossing: false,
                            evidence: EventEvidence(reason: "no sighting within \(profile.initialDeterminationWindow) s of registration"))
        case .exit(let id):
            guard let monitored = regions[id] else { return [] }
            if let restoredAt = monitored.restoredAt, monitored.streams.isEmpty {
                regions[id]?.restoredAt = nil
                return setState(id, .outside, crossing: true, evidence: EventEvidence(
                    lastSightingAge: now - restoredAt, exitThreshold: now - restoredAt,
                    reason: "not seen since the restart \(Self.format(now - restoredAt)) s ago (stored state was inside)"))
            }
            guard let (_, stream) = exitDeadline(of: monitored, id: id) else { return [] }
            let lastSighting = monitored.streams.values.map(\.lastSighting).max() ?? stream.lastSighting
            regions[id]?.departedStreams = monitored.streams
            regions[id]?.streams = [:]
            if let number = sequence[id] { exitCache[number] = nil }
            return setState(id, .outside, crossing: true, evidence: EventEvidence(
                rssi: stream.lastRSSI, lastSightingAge: now - lastSighting,
                exitThreshold: profile.exitDetector.silenceThreshold(for: stream),
                reason: "no sighting for \(Self.format(now - lastSighting)) s"))
        case .geoDwell(let id):
            guard let monitored = regions[id], let candidate = monitored.candidate, let since = monitored.candidateSince else { return [] }
            regions[id]?.candidate = nil
            regions[id]?.candidateSince = nil
            trackGeo(id)
            return setState(id, candidate, crossing: true, evidence: EventEvidence(
                distance: monitored.lastDistance, horizontalAccuracy: lastFix?.horizontalAccuracy, dwell: now - since,
                reason: "held \(candidate == .inside ? "inside" : "outside") the boundary buffer for \(Self.format(now - since)) s"))
        case .ranging(let index):
            let beacons = sessions[index].deliver(at: now, profile: profile)
            let session = sessions[index]
            return [LocationEvent(timestamp: now, kind: .didRangeBeacons(beacons, session.constraint, label: session.label))]
        case .retry(let index):
            let retry = retries.remove(at: index)
            return register(retry.region)
        case .wake:
            wakeRequestAt = nil
            var events: [LocationEvent] = []
            for id in order {
                if let region = regions[id]?.region { events += requestState(region) }
            }
            return events
        }
    }

    /// Why `region` cannot be registered now, if it cannot.
    func validate(_ region: Region) -> RegionKitError? {
        let status = sourceStatus(for: region.kind)
        guard status.isAuthorized else {
            return RegionKitError(.sourceUnavailable,
                "region '\(region.identifier)': no usable \(region.kind == .beacon ? "Bluetooth scanner" : "location source"): \(status)")
        }
        if case .circular(let circle) = region, circle.radius > profile.maximumRegionMonitoringDistance {
            return RegionKitError(.radiusTooLarge,
                "region '\(region.identifier)': radius \(circle.radius) m exceeds maximumRegionMonitoringDistance \(profile.maximumRegionMonitoringDistance) m")
        }
        if let limit = profile.regionLimit, regions[region.identifier] == nil, regions.count >= limit {
            return RegionKitError(.regionMonitoringFailure,
                "region '\(region.identifier)': the limit of \(limit) monitored regions is reached (profile \(profile.name))")
        }
        return nil
    }

    /// Adds a fresh record for `region` (any previous one must have been removed).
    mutating func insert(_ region: Region) {
        regions[region.identifier] = MonitoredRegion(region: region, registeredAt: now)
        order.append(region.identifier)
        let registered = RegisteredID(sequence: nextSequence, id: region.identifier)
        sequence[region.identifier] = registered.sequence
        idBySequence[registered.sequence] = region.identifier
        nextSequence += 1
        switch region {
        case .beacon(let beacon):
            beaconIndex[BeaconMatchKey(beacon.constraint), default: []].append(registered)
            reschedule(region.identifier)
        case .circular(let circle):
            do {
                try circularIndex.insert(IndexedRegion(id: circle.identifier, latitude: circle.latitude, longitude: circle.longitude, radius: circle.radius))
            } catch {
                geoUnindexed.insert(circle.identifier)
            }
            trackGeo(region.identifier)
        }
        failureCounts[region.identifier] = nil
    }

    mutating func register(_ region: Region) -> [LocationEvent] {
        if let failure = validate(region) { return fail(region, failure) }
        var events = remove(region.identifier)
        insert(region)
        events.append(LocationEvent(timestamp: now, kind: .didStartMonitoring(region)))
        if case .circular = region, let lastFix {
            events += evaluate(lastFix, regionID: region.identifier)
        }
        if automation.requestStateOnStart {
            events += requestState(region)
        }
        return events
    }

    mutating func remove(_ identifier: String) -> [LocationEvent] {
        guard let monitored = regions.removeValue(forKey: identifier) else { return [] }
        order.removeAll { $0 == identifier }
        if let number = sequence.removeValue(forKey: identifier) {
            idBySequence[number] = nil
            pruneWatermarks[number] = nil
            exitCache[number] = nil
            if scheduled.removeValue(forKey: number) != nil { timersDirty = true }   // its entry is dropped lazily
        }
        switch monitored.region {
        case .beacon(let beacon):
            let key = BeaconMatchKey(beacon.constraint)
            beaconIndex[key]?.removeAll { $0.id == identifier }
            if beaconIndex[key]?.isEmpty == true { beaconIndex[key] = nil }
        case .circular:
            circularIndex.remove(id: identifier)
            geoActive.remove(identifier)
            geoPending.remove(identifier)
            geoUnindexed.remove(identifier)
        }
        sessions.removeAll { $0.automatic && $0.label == identifier }
        return []
    }

    mutating func fail(_ region: Region, _ error: RegionKitError) -> [LocationEvent] {
        var events = [LocationEvent(timestamp: now, kind: .monitoringDidFail(region, error))]
        if error.code == .sourceUnavailable, let retry = automation.retry {
            let count = failureCounts[region.identifier, default: 0] + 1
            failureCounts[region.identifier] = count
            if count <= retry.maximumAttempts {
                retries.removeAll { $0.region.identifier == region.identifier }
                retries.append(PendingRetry(region: region, due: now + retry.delay))
            } else {
                events[0].evidence = EventEvidence(reason: "retries exhausted after \(count) failures (limit \(retry.maximumAttempts)); registering again when the source is back")
                abandoned.removeAll { $0.identifier == region.identifier }
                abandoned.append(region)
            }
        }
        return events
    }

    mutating func requestState(_ region: Region) -> [LocationEvent] {
        guard let monitored = regions[region.identifier] else {
            return [LocationEvent(timestamp: now, kind: .monitoringDidFail(region,
                RegionKitError(.regionNotMonitored, "requestState: region '\(region.identifier)' is not monitored")))]
        }
        if monitored.state == .unknown {
            regions[region.identifier]?.stateRequested = true
            return []
        }
        return [LocationEvent(timestamp: now, kind: .didDetermineState(monitored.state, monitored.region),
                              evidence: EventEvidence(reason: "requested"))]
    }

    /// Changes a region's state. A crossing (inside ↔ outside) gives didEnter/didExit (per the
    /// notify flags) and didDetermineState; a first determination only answers a pending request.
    mutating func setState(_ id: String, _ state: RegionState, crossing: Bool, evidence: EventEvidence?) -> [LocationEvent] {
        guard var monitored = regions[id] else { return [] }
        let region = monitored.region
        var events: [LocationEvent] = []
        let crossed = crossing && monitored.state != .unknown && monitored.state != state
        if crossed {
            if state == .inside && region.notifyOnEntry {
                events.append(LocationEvent(timestamp: now, kind: .didEnterRegion(region), evidence: evidence))
            }
            if state == .outside && region.notifyOnExit {
                events.append(LocationEvent(timestamp: now, kind: .didExitRegion(region), evidence: evidence))
            }
        }
        if crossed || monitored.stateRequested {
            events.append(LocationEvent(timestamp: now, kind: .didDetermineState(state, region), evidence: evidence))
            monitored.stateRequested = false
        }
        if monitored.state != state {
            monitored.state = state
            monitored.stateSince = now
        }
        regions[id] = monitored
        switch region {
        case .circular: trackGeo(id)
        case .beacon: reschedule(id)
        }
        if automation.rangeWhileInside, case .beacon(let beacon) = region {
            if state == .inside {
                events += beginRanging(beacon.constraint, label: id, automatic: true)
            } else {
                sessions.removeAll { $0.automatic && $0.label == id }
            }
        }
        return events
    }

    mutating func beginRanging(_ constraint: BeaconIdentityConstraint, label: String, automatic: Bool) -> [LocationEvent] {
        let status = sourceStatus(for: .beacon)
        guard status.isAuthorized else {
            return [LocationEvent(timestamp: now, kind: .didFailRanging(constraint, label: label,
                RegionKitError(.rangingUnavailable, "cannot range \(label): no usable Bluetooth scanner: \(status)")))]
        }
        if let index = sessions.firstIndex(where: { $0.constraint == constraint }) {
            if !automatic { sessions[index].automatic = false }
            return []
        }
        sessions.append(RangingSession(constraint: constraint, label: label, startedAt: now, interval: profile.rangingInterval, automatic: automatic))
        return []
    }

    /// Files a circular region under `geoActive` / `geoPending` according to its current record.
    mutating func trackGeo(_ id: String) {
        guard let monitored = regions[id], case .circular = monitored.region else {
            geoActive.remove(id)
            geoPending.remove(id)
            return
        }
        if monitored.state != .outside || monitored.candidate != nil || monitored.restoredAt != nil {
            geoActive.insert(id)
        } else {
            geoActive.remove(id)
        }
        if monitored.candidate != nil && monitored.candidate != monitored.state && monitored.candidateSince != nil {
            geoPending.insert(id)
        } else {
            geoPending.remove(id)
        }
        reschedule(id)
    }

    // MARK: - Timer queue

    /// Brings region `id`'s timer entry in line with its record after a change: pushes the exact
    /// deadline when it is earlier than the scheduled one; a later or vanished deadline is left
    /// to ``settleTimers()`` (lazy), so moving a deadline later costs no heap operation.
    mutating func reschedule(_ id: String) {
        guard let number = sequence[id], let monitored = regions[id] else { return }
        let current = scheduled[number]
        guard let due = dueItem(of: monitored, id: id)?.time else {
            if current != nil { timersDirty = true }
            return
        }
        if let current, current <= due {
            if current < due { timersDirty = true }
            return
        }
        lowerTimer(number, to: due)
    }

    /// Records that region `number` may be due as early as `time` (a lower bound is enough).
    mutating func lowerTimer(_ number: Int, to time: Timestamp) {
        scheduled[number] = time
        timers.push(.init(time: time, sequence: number))
        timersDirty = true
    }

    /// Makes the queue's minimum exact: drops stale entries and moves early ones to their
    /// region's real deadline, until the minimum is a live, exact entry.
    mutating func settleTimers() {
        guard timersDirty else { return }
        timersDirty = false
        while let first = timers.min {
            guard scheduled[first.sequence] == first.time, let id = idBySequence[first.sequence], let monitored = regions[id] else {
                timers.popMin()
                continue
            }
            guard let due = dueItem(of: monitored, id: id)?.time else {
                timers.popMin()
                scheduled[first.sequence] = nil
                continue
            }
            if due == first.time { break }
            timers.popMin()
            scheduled[first.sequence] = due
            timers.push(.init(time: due, sequence: first.sequence))
        }
        if timers.count > 1_024 && timers.count > 4 * scheduled.count {
            timers.rebuild(scheduled.map { .init(time: $0.value, sequence: $0.key) })
        }
    }

    /// Recomputes every region's timer (after a profile change).
    mutating func rebuildTimers() {
        scheduled = [:]
        exitCache = [:]
        for (id, monitored) in regions {
            guard let number = sequence[id], let due = dueItem(of: monitored, id: id) else { continue }
            scheduled[number] = due.time
        }
        timers.rebuild(scheduled.map { .init(time: $0.value, sequence: $0.key) })
        timersDirty = false
    }

    static func format(_ seconds: Double) -> String {
        String(format: "%.1f", seconds)
    }
}
