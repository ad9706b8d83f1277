import Foundation
import Logging
import RegionKitConcurrency
import Synchronization
import RegionKit
import RegionKitStore

/// RegionKit as a long-running service: a `LocationManager` whose monitored regions and states
/// survive restarts, every event logged with its reasons, and hooks fired once per event.
///
/// On ``start(regions:)`` the stored regions come back with their stored states marked stale;
/// fresh observations reconcile them without a spurious enter, and with one exit (logged with
/// the reason) for a region left while the service was down.
///
/// ```swift
/// let service = try MonitoringService(store: RegionStore(path: path), profile: .responsive, sources: [.beacon: .authorized])
/// try await service.start(regions: configuredRegions)
/// service.manager.ingest(observation)
/// try await service.stop()
/// ```
public final class MonitoringService: Sendable {
    public let manager: LocationManager
    /// Where regions, states and the event log are kept: the SQLite `RegionStore` (one machine)
    /// or a networked store such as `PostgresRegionStore`.
    public let store: any RegionStoring
    public let hooks: HookConfiguration
    private let logger: Logger
    let recorder: Recorder
    private let onLogged: (@Sendable (StoredEvent) -> Void)?
    /// Region changes on request (``putRegion(_:)``, ``removeRegion(_:reason:)``), one at a time:
    /// each is several steps over the store and the engine with suspension points between them,
    /// and two interleaved (a PUT and a DELETE of one id) left the store and the engine disagreeing.
    private let regionWrites = AsyncSemaphore()
    /// Whether ``restoreRooms()`` ran (it runs once).
    private let roomsRestored = LockedBox(false)
    /// What ``restoreRooms()`` restored.
    private let restored = LockedBox<[BeaconIdentity: String]>([:])
    /// Whether ``holdRegionWritesUntilRestore()`` holds `regionWrites`' permit for the restore.
    private let restoreHold = LockedBox(false)
    /// Set when the hold was let go without a restore (the daemon stopping): region writes are
    /// refused from then on, as the regions they would change were never brought back.
    private let restoreAbandoned = LockedBox(false)

    /// Persists every event the manager delivers: on the SQLite store on the delivering thread,
    /// the writes of a delivered run committed together at its end (group commit), on a networked
    /// store through a ``StoreWriter`` in the engine's order; an event is acknowledged
    /// (`onLogged`) after its commit.
    final class Recorder: LocationManagerDelegate {
        let store: any RegionStoring
        /// The SQLite store, written inline.
        let inline: RegionStore?
        /// Any other store, written in order off the engine's thread.
        let writer: StoreWriter?
        let hooks: HookConfiguration
        let logger: Logger
        let onLogged: (@Sendable (StoredEvent) -> Void)?
        let onStoreFailure: (@Sendable (any Error) -> Void)?
        let rangedCounts = LockedBox<[String: Int]>([:])
        /// Events (and states) that could not be written.
        let failures: FailureCount
        /// What the lock guards: whether "process stopped" was submitted (nothing is written after
        /// it) and, on SQLite, the writes of the run of events being delivered, committed together.
        /// The lock also orders a source's status change (from its own thread) against the stop and
        /// against the delivered events: a write from outside the delivery commits the buffered ones
        /// before it, so the log keeps the order in which writes were made.
        struct Log {
            var closed = false
            var buffered: [StoreWrite] = []
        }
        let log = LockedBox(Log())
        /// The most writes of delivered events committed in one SQLite transaction (1: one
        /// transaction, one sync of the log, per write).
        let groupCommitLimit: Int
        /// The first SQLite write that failed: every later write is refused.
        let inlineFailure = LockedBox<(any Error)?>(nil)

        init(store: any RegionStoring, hooks: HookConfiguration, logger: Logger, onLogged: (@Sendable (StoredEvent) -> Void)?,
             onStoreFailure: (@Sendable (any Error) -> Void)?, groupCommitLimit: Int = 512) {
            self.store = store
            self.hooks = hooks
            self.logger = logger
            self.onLogged = onLogged
            self.onStoreFailure = onStoreFailure
            self.groupCommitLimit = max(1, groupCommitLimit)
            let failures = FailureCount()
            self.failures = failures
            if let sqlite = store as? RegionStore {
                inline = sqlite
                writer = nil
            } else {
                inline = nil
                writer = StoreWriter(store: store, logger: logger, acknowledge: { event in onLogged?(event) }, failed: { _, error in
                    failures.add()
                    onStoreFailure?(error)
                })
            }
        }

        func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {
            do {
                try persist(event, from: manager)
            } catch {
                // (onStoreFailure was called where the write failed.)
                logger.error("cannot persist event", metadata: ["type": "\(event.typeName)", "error": "\(error)"])
            }
        }

        /// The end of a delivered run: its buffered writes are committed in one transaction.
        func locationManagerDidFinishDelivering(_ manager: LocationManager) {
            do {
                try commitBuffered()
            } catch {
                logger.error("cannot persist events", metadata: ["error": "\(error)"])
            }
        }

        /// Writes (SQLite) or queues (a networked store) `write`; an event is acknowledged once written.
        /// `closing`: the last write ("process stopped"); later ones are dropped (debug log).
        /// `delivered`: a write for an event being delivered, which on SQLite waits in a buffer for
        /// the end of the delivered run (``locationManagerDidFinishDelivering(_:)``) or for
        /// ``groupCommitLimit`` writes, and is committed with the others in one transaction (group
        /// commit: a backlog of events was one synced transaction each, about 1,400 a second). Any
        /// other write commits the buffered ones with it, in order.
        /// After a failed SQLite write every later one is refused, as ``StoreWriter`` refuses
        /// after its first failure: an enter whose event failed must not be followed by the state
        /// row that would keep it from being decided again after the restart.
        func submit(_ write: StoreWrite, closing: Bool = false, delivered: Bool = false) throws {
            try submit([write], closing: closing, delivered: delivered)
        }

        /// ``submit(_:closing:delivered:)`` for writes that must be committed in one transaction
        /// (an event and the state or room it changes: a crash between two commits left the store
        /// saying one thing and the log another).
        func submit(_ writes: [StoreWrite], closing: Bool = false, delivered: Bool = false) throws {
            guard let first = writes.first else { return }
            let written = try reportingFailure { try log.withLock { log throws -> [StoredEvent] in
                guard !log.closed else {
                    logger.debug("not written: the process has stopped", metadata: ["write": "\(first.typeName)"])
                    return []
                }
                if closing { log.closed = true }
                guard inline != nil else {
                    writer?.submit(writes)
                    return []
                }
                // The group whole, then the limit: a commit never splits it.
                log.buffered += writes
                if delivered && log.buffered.count < groupCommitLimit { return [] }
                return try commit(&log)
            } }
            for event in written { onLogged?(event) }
        }

        /// Commits the buffered writes of delivered events (SQLite), and acknowledges their events.
        func commitBuffered() throws {
            let written = try reportingFailure { try log.withLock { log in try commit(&log) } }
            for event in written { onLogged?(event) }
        }

        /// Runs `body` (a commit, outside the lock when this returns); a failure is handed to
        /// `onStoreFailure` (the daemon stops on it) whoever committed: a group of delivered events
        /// can be committed by another writer (a source's status, a region put through the API)
        /// whose caller only logs or answers the error.
        private func reportingFailure<T>(_ body: () throws -> T) throws -> T {
            do {
                return try body()
            } catch {
                onStoreFailure?(error)
                throw error
            }
        }

        /// Commits `log.buffered` in one transaction (under the lock); counts and throws a failure.
        private func commit(_ log: inout Log) throws -> [StoredEvent] {
            guard let inline, !log.buffered.isEmpty else { return [] }
            let writes = log.buffered
            log.buffered.removeAll(keepingCapacity: writes.count <= 4 * groupCommitLimit)
            do {
                if let earlier = inlineFailure.withLock({ $0 }) {
                    let what = writes.count == 1 ? writes[0].typeName : "\(writes.count) writes, from \(writes[0].typeName)"
                    throw RegionKitError(.storeFailed, "not written (\(what)): an earlier write failed", cause: earlier)
                }
                do {
                    return try inline.apply(writes)
                } catch {
                    inlineFailure.withLock { $0 = $0 ?? error }
                    throw error
                }
            } catch {
                failures.add(writes.count)
                throw error
            }
        }

        /// Returns once everything submitted is written (at once on SQLite); throws a write's failure.
        func flush() async throws {
            try commitBuffered()
            try await writer?.flush()
        }

        func persist(_ event: LocationEvent, from manager: LocationManager) throws {
            let time = event.timestamp.seconds
            // What the event changes in the store, committed with the event itself.
            var changes: [StoreWrite] = []
            switch event.kind {
            case .didStartMonitoring(let region):
                // A new registration ranges afresh: its first count is logged even when it equals
                // the last one of the region it replaced (a PUT while inside, a parked region of the
                // other kind), which ended without an exit and left its count here.
                rangedCounts.withLock { _ = $0.removeValue(forKey: region.identifier) }
                changes.append(.region(region, at: time, origin: nil))
                // Registered again after its source came back, with the state it had (stale until
                // a sighting or fix): kept in the store too, which saving the region cleared.
                if let monitored = manager.monitoredRegion(region.identifier), monitored.isStale {
                    changes.append(.state(region.identifier, monitored.state, since: monitored.stateSince?.seconds ?? time, evidence: nil, at: time))
                }
            case .didEnterRegion:
                break // the state row is written by the didDetermineState that accompanies every crossing
            case .didExitRegion(let region):
                // Its automatic ranging ends here: a re-entry's first count is logged even when it
                // equals the last one before the exit.
                rangedCounts.withLock { _ = $0.removeValue(forKey: region.identifier) }
            case .didDetermineState(let state, let region):
                let since = manager.monitoredRegion(region.identifier)?.stateSince?.seconds
                changes.append(.state(region.identifier, state, since: since ?? time, evidence: event.evidence, at: time))
            case .didRangeBeacons(let beacons, _, let label):
                // Log count changes only (the field app's "ranged beacon count changed").
                let changed = rangedCounts.withLock { counts -> Bool in
                    defer { counts[label] = beacons.count }
                    return counts[label] != beacons.count
                }
                guard changed else { return }
                var line = JSONLine()
                line.add("t", time)
                line.add("type", "rangedBeaconCountChanged")
                line.add("region", label)
                line.add("count", beacons.count)
                try log(time: time, type: "rangedBeaconCountChanged", region: label, state: nil, reason: beacons.count == 1 ? "1 beacon ranged" : "\(beacons.count) beacons ranged", json: line.text,
                        delivered: true)
                return
            case .monitoringDidFail(let region, _):
                // Its automatic ranging ended with it (as the timelines count it).
                rangedCounts.withLock { _ = $0.removeValue(forKey: region.identifier) }
            case .didFailRanging(_, let label, _):
                rangedCounts.withLock { _ = $0.removeValue(forKey: label) }
            case .didChangeNearestScanner(let beacon, let scanner, _):
                // Where it is placed now, for the next start (the store keeps only placed beacons).
                changes.append(.room(beacon.description, scanner: scanner, at: time))
            default:
                break
            }
            try log(time: time, type: event.typeName, region: event.regionIdentifier, state: Self.state(of: event),
                    reason: event.evidence?.reason ?? Self.errorMessage(of: event), json: event.jsonLine(origin: .zero), delivered: true,
                    after: changes)
        }

        /// Logs an event; `after`: the writes it makes, committed first in the same transaction.
        func log(time: Double, type: String, region: String?, state: String?, reason: String?, json: String, closing: Bool = false,
                 delivered: Bool = false, after changes: [StoreWrite] = []) throws {
            try submit(changes + [.event(time: time, type: type, region: region, state: state, reason: reason, json: json, hooks: hooks.hooks(for: type))],
                       closing: closing, delivered: delivered)
        }

        static func state(of event: LocationEvent) -> String? {
            switch event.kind {
            case .didDetermineState(let state, _): state.rawValue
            case .didEnterRegion: RegionState.inside.rawValue
            case .didExitRegion: RegionState.outside.rawValue
            default: nil
            }
        }

        static func errorMessage(of event: LocationEvent) -> String? {
            switch event.kind {
            case .monitoringDidFail(_, let error), .didFailRanging(_, _, let error): error.message
            default: nil
            }
        }
    }

    /// - Parameters:
    ///   - onLogged: called after each event is durably written (its acknowledgement).
    ///   - onStoreFailure: called when an event the engine delivered could not be written (a full
    ///     disk, the store deleted or replaced): that event is not acknowledged. The daemon stops on it.
    ///   - groupCommitLimit: on SQLite, the most writes of delivered events committed in one
    ///     transaction (one sync of the log): the events the engine delivers together (one call's,
    ///     or a backlog) are written together, acknowledged when their transaction commits. 1
    ///     commits every write alone (what `bench eventlog` compares against).
    public init(store: any RegionStoring, profile: MonitoringProfile = .responsive, automation: Automation = .all,
                clock: any MonitoringClock = SystemClock(), sources: [RegionKind: AuthorizationStatus],
                hooks: HookConfiguration = HookConfiguration(), logger: Logger = Logger(label: "regionkit.service"),
                onLogged: (@Sendable (StoredEvent) -> Void)? = nil, onStoreFailure: (@Sendable (any Error) -> Void)? = nil,
                groupCommitLimit: Int = 512) {
        self.store = store
        self.hooks = hooks
        self.logger = logger
        self.onLogged = onLogged
        manager = LocationManager(profile: profile, automation: automation, clock: clock, sources: sources)
        recorder = Recorder(store: store, hooks: hooks, logger: logger, onLogged: onLogged, onStoreFailure: onStoreFailure,
                            groupCommitLimit: groupCommitLimit)
        manager.delegate = recorder
    }

    /// Events that could not be written (each was logged as an error).
    public var persistenceFailures: Int { recorder.failures.value }

    /// How far the event log is behind the engine: the events the manager has not delivered yet,
    /// plus, on a networked store, the writes submitted and not yet committed. The presence hub
    /// stops reading sightings while it is over `mqtt.maximumBacklog`.
    public var backlog: Int { manager.undeliveredCount + (recorder.writer?.pending ?? 0) }

    /// Logs "process started" and brings the regions back.
    /// - Parameter configured: the configured regions, the daemon's initial set; `nil` restores every
    ///   stored region. Stored configured regions that are no longer configured are stopped; changed
    ///   ones start afresh. Regions created or replaced through ``putRegion(_:)`` (origin
    ///   ``RegionOrigin/api``) are restored as stored, even when the configuration names the same
    ///   identifier with another definition.
    public func start(regions configured: [Region]? = nil) async throws {
        try await logProcessStarted()
        try await restoreRegions(configured)
    }

    /// Logs "process started" (the first half of ``start(regions:)``: the daemon logs it, lets its
    /// sources report whether they work, then restores the regions).
    public func logProcessStarted() async throws {
        let now = manager.clock.now.seconds
        try recorder.log(time: now, type: "processStarted", region: nil, state: nil, reason: "pid \(ProcessInfo.processInfo.processIdentifier)",
                         json: Self.line(now, "processStarted"))
        try await recorder.flush()
    }

    /// Brings the regions back (the second half of ``start(regions:)``; see there). Region writes
    /// (``putRegion(_:)``, ``removeRegion(_:reason:)``: the HTTP API, which serves while devices
    /// connect) wait for it: one made in the middle was overwritten by the definition read before it.
    public func restoreRegions(_ configured: [Region]?) async throws {
        guard restoreHold.withLock({ held in defer { held = false }; return held }) else {
            return try await regionWrites.withPermit { try await self.restoreRegionsNow(configured) }
        }
        // The permit taken by holdRegionWritesUntilRestore(): given back however the restore ends.
        do {
            try await restoreRegionsNow(configured)
            await regionWrites.release()
        } catch {
            await regionWrites.release()
            throw error
        }
    }

    /// Makes region writes (``putRegion(_:)``, ``removeRegion(_:reason:)``) wait from now until
    /// ``restoreRegions(_:)`` has run. The daemon calls it before its HTTP API serves: the API
    /// serves while devices connect (up to 5 s) before the regions come back, and a DELETE there
    /// answered 404 for a region the restore then brought back, a PUT was restored over.
    /// Without a restore to come (a stop first), ``releaseRegionWriteHold()`` refuses them. Call
    /// it from the task that restores, before the restore (a second call changes nothing).
    ///
    /// ```swift
    /// await service.holdRegionWritesUntilRestore()
    /// startHTTPAPI()                                    // a PUT now waits
    /// try await service.restoreRegions(configured)      // ... and is applied after this
    /// ```
    public func holdRegionWritesUntilRestore() async {
        // A second hold would wait for its own permit for ever: it changes nothing instead.
        guard restoreHold.withLock({ held in defer { held = true }; return !held }) else { return }
        await regionWrites.acquire()
    }

    /// Lets the writes held by ``holdRegionWritesUntilRestore()`` go without restoring (the daemon
    /// stopping before its regions came back): they, and every later one, fail with
    /// `RegionKitError.Code.stopping` (the API's 503) — against regions never
    /// restored, a DELETE would find nothing and a PUT would replace what it cannot see. Does
    /// nothing when no hold is in place.
    public func releaseRegionWriteHold() async {
        guard restoreHold.withLock({ held in defer { held = false }; return held }) else { return }
        restoreAbandoned.withLock { $0 = true }
        await regionWrites.release()
    }

    /// Throws ``RegionKitError/Code-swift.struct/stopping`` once the restore was abandoned.
    private func refuseWritesWithoutRestore(_ identifier: String) throws {
        if restoreAbandoned.withLock({ $0 }) {
            throw RegionKitError(.stopping, "the daemon is stopping before its regions were restored: region '\(identifier)' was not changed")
        }
    }

    /// How many region writes wait for their turn (tests).
    var regionWritesWaiting: Int {
        get async { await regionWrites.waiting }
    }

    /// Places the beacons in the rooms the store says they were in before this start
    /// (`RegionStoring.beaconRooms()`), when the profile tracks nearest scanners: one heard
    /// again stays (no room event), one not heard leaves its room (`didChangeNearestScanner` to
    /// none) when a beacon heard once now would be called gone. Before, a beacon that left while
    /// the daemon was down kept its last room (its retained room topic, its Home Assistant device
    /// tracker) until it was heard again, perhaps never. A store that cannot be read costs the
    /// rooms (a warning, and the start goes on); a row that names no beacon or no room is removed.
    ///
    /// Once per service: the daemon calls it before its sources and the MQTT hub start (a beacon
    /// heard before its room was restored was placed afresh, perhaps in the neighbouring room that
    /// heard it first); ``restoreRegions(_:)`` calls it too, which then does nothing.
    public func restoreRooms() async {
        guard roomsRestored.withLock({ done in defer { done = true }; return !done }) else { return }
        guard manager.engineSnapshot.profile.nearestScanner != nil else { return }
        let stored: [String: String]
        do { stored = try await store.beaconRooms() } catch {
            logger.warning("beacons' rooms not restored: they are decided afresh from the next sightings", metadata: ["error": "\(error)"])
            return
        }
        var rooms: [BeaconIdentity: String] = [:]
        var unreadable: [String] = []
        for (beacon, scanner) in stored {
            if let identity = BeaconIdentity(description: beacon), !scanner.isEmpty { rooms[identity] = scanner } else { unreadable.append(beacon) }
        }
        if !unreadable.isEmpty {
            // Removed: nothing would ever place or remove them again.
            unreadable.sort()
            logger.warning("stored beacon rooms name no beacon or no room: removed", metadata: ["count": "\(unreadable.count)", "first": "\(unreadable[0].prefix(120))"])
            let now = manager.clock.now.seconds
            do { _ = try await store.apply(unreadable.map { .room($0, scanner: nil, at: now) }) } catch {
                logger.warning("cannot remove the unusable beacon rooms", metadata: ["error": "\(error)"])
            }
        }
        guard !rooms.isEmpty else { return }
        manager.restoreNearestScanners(rooms)
        restored.withLock { $0 = rooms }
        logger.info("beacons' rooms restored", metadata: ["beacons": "\(rooms.count)"])
    }

    /// The rooms ``restoreRooms()`` put the beacons back in: an earlier run may have left their
    /// distances and attributes retained (the MQTT hub clears them at their departure).
    public var restoredRooms: [BeaconIdentity: String] { restored.withLock { $0 } }

    private func restoreRegionsNow(_ configured: [Region]?) async throws {
        let stored = try await store.storedRegions()
        let states = try await store.states()
        let storedByID = Dictionary(stored.map { ($0.region.identifier, $0) }, uniquingKeysWith: { $1 })
        var wanted: [Region]
        if let configured {
            let configuredIDs = Set(configured.map(\.identifier))
            wanted = configured.map { region in
                if let saved = storedByID[region.identifier], saved.origin == .api { return saved.region }
                return region
            }
            wanted += stored.filter { $0.origin == .api && !configuredIDs.contains($0.region.identifier) }.map(\.region)
        } else {
            wanted = stored.map(\.region)
        }
        // In the configured order; each run of fresh regions is registered in one step (the
        // engine's tables grow once: a configuration may hold a fleet of beacons).
        var fresh: [Region] = []
        for region in wanted {
            if storedByID[region.identifier]?.region == region, let saved = states[region.identifier] {
                if !fresh.isEmpty { manager.startMonitoring(for: fresh); fresh.removeAll() }
                logger.info("restoring region", metadata: ["region": "\(region.identifier)", "state": "\(saved.state.rawValue)"])
                manager.restoreMonitoring(for: region, state: saved.state, since: saved.since.map { Timestamp(seconds: $0) })
            } else {
                fresh.append(region)
            }
        }
        if !fresh.isEmpty { manager.startMonitoring(for: fresh) }
        await restoreRooms()
        if let configured {
            let keep = Set(configured.map(\.identifier))
            for saved in stored where saved.origin == .configuration && !keep.contains(saved.region.identifier) {
                try await stopMonitoring(saved.region, reason: "no longer in the configuration")
            }
        }
        try await recorder.flush()
    }

    /// Creates or replaces a region on request (the HTTP API): saved with origin
    /// `RegionOrigin.api` before monitoring (re)starts, so it is durable when this returns and
    /// survives restarts. Replacing restarts monitoring (a fresh `didStartMonitoring`).
    ///
    /// During an outage of its kind's source (the broker restarting, gpsd reconnecting, the
    /// adapter unplugged) the region is saved and waits for the source, as a stored region does
    /// over a restart during an outage: listed with `waitingForSource`, registered when the source
    /// works (it was refused, and a geofence put while gpsd reconnected was lost). When the engine
    /// refuses it (no source feeds its kind, or its use is denied; its radius; the region limit,
    /// counted with the regions waiting for their source; an outage without the retry helper to
    /// wait with), nothing is written, or the store is put back as it was (a replaced region
    /// keeps being monitored), and the error, with the logged reason, is thrown. A source that
    /// failed for good (a damaged file) counts as an outage: the region waits, and the answer's
    /// `waitingForSource` says why.
    ///
    /// ```swift
    /// try await service.putRegion(.beacon(shop))   // false: new; monitored, or waiting for the scanner
    /// ```
    /// - Returns: whether a region with this identifier existed (monitored, stored, or waiting for its source).
    @discardableResult
    public func putRegion(_ region: Region) async throws -> Bool {
        try await regionWrites.withPermit {
            try self.refuseWritesWithoutRestore(region.identifier)
            return try await self.putRegionNow(region)
        }
    }

    private func putRegionNow(_ region: Region) async throws -> Bool {
        // What the engine would refuse is refused before anything is written (saving and then
        // restoring a replaced region's row would lose its stored state), but for an outage: a
        // source of the region's kind that is configured and may come back, with the retry helper
        // to wait with and nothing else against the region (its radius, the limit counted with
        // the regions waiting too). Then the region is saved, and the engine files it for a retry
        // or parks it until the source is back.
        // (The snapshot ends here: one kept across the awaits below made the engine copy every
        // table ingest touched meanwhile.)
        let refusal: RegionKitError? = {
            let engine = manager.engineSnapshot
            // (waitsForSource is true only when permanentRefusal is nil: each is computed once.)
            return engine.waitsForSource(region) ? nil : engine.permanentRefusal(for: region) ?? engine.refusal(for: region)
        }()
        if let refusal {
            throw RegionKitError(.regionMonitoringFailure, "monitoring '\(region.identifier)' failed: \(refusal.message)", cause: refusal)
        }
        // Earlier writes first: a queued state of the region must not land after its replacement.
        try await recorder.flush()
        let previous = try await store.storedRegion(region.identifier)
        // Saving the region forgets its stored state: kept here to be put back if the engine refuses.
        let previousState = previous == nil ? nil : try await store.state(of: region.identifier)
        // A stored region waiting for its source is replaced too (and not registered again later:
        // the engine drops what waits under the identifier at the new registration).
        let existed = previous != nil || manager.monitoredOrWaitingRegion(region.identifier) != nil
        let now = manager.clock.now.seconds
        let logEnd = try await store.lastEventID()
        try await store.saveRegion(region, at: now, origin: .api)
        manager.startMonitoring(for: region)
        try await recorder.flush()
        // Monitored, or waiting for its source (an outage now, or one that began since the check):
        // both read in one snapshot (read one after the other, a retry registering it in between
        // looked like a refusal, and undid a PUT that had succeeded).
        let accepted = { () -> Bool in
            let engine = manager.engineSnapshot
            return engine.monitoredRegion(region.identifier)?.region == region || engine.waitingRegion(region.identifier) == region
        }()
        guard accepted else {
            // The engine refused it and keeps nothing to retry: its source went away since the
            // check and the automation has no retry helper. The store is put back as it was; a
            // replaced region still monitored stays as it is, one the engine dropped goes back.
            if let previous, manager.monitoredRegion(region.identifier)?.region == previous.region {
                manager.cancelRetry(for: region.identifier)
            } else {
                manager.stopMonitoring(for: region)
                if let previous {
                    if let previousState {
                        manager.restoreMonitoring(for: previous.region, state: previousState.state, since: previousState.since.map(Timestamp.init(seconds:)))
                    } else {
                        manager.startMonitoring(for: previous.region)
                    }
                }
            }
            try await restore(previous, state: previousState, of: region.identifier)
            // The first failure after the write is the refused region's (putting back the one it
            // replaced may log its own).
            let reason = try await store.events(since: nil, region: region.identifier, type: "monitoringDidFail", afterID: logEnd, limit: nil).first?.reason
            throw RegionKitError(.regionMonitoringFailure, "monitoring '\(region.identifier)' failed: \(reason ?? "refused by the engine")")
        }
        return existed
    }

    /// Puts region `identifier`'s row back as ``putRegionNow(_:)`` found it: `previous` with its
    /// state, or no row when there was none. The replaced region kept being monitored: a state it
    /// logged meanwhile is newer than `state`, and is the one kept.
    private func restore(_ previous: StoredRegion?, state: RegionStore.StoredState?, of identifier: String) async throws {
        guard let previous else { return try await store.removeRegion(identifier) }
        try await recorder.flush()
        let kept = try await store.state(of: identifier) ?? state
        try await store.saveRegion(previous.region, at: previous.registeredAt, origin: previous.origin)
        if let kept, try await store.state(of: identifier) == nil {
            try await store.saveState(identifier, state: kept.state, since: kept.since, evidence: kept.evidence, at: kept.updatedAt)
        }
    }

    /// Stops monitoring the region `identifier` and forgets it, on request (the HTTP API's DELETE),
    /// in turn with ``putRegion(_:)``. A region that waits for its source (an outage: filed for a
    /// retry, or parked until the source returns) is removed too, stored or not, and is not
    /// registered again. False when no such region is monitored, waiting or stored.
    ///
    /// ```swift
    /// try await service.removeRegion("lobby", reason: "deleted through the HTTP API")   // true
    /// ```
    public func removeRegion(_ identifier: String, reason: String) async throws -> Bool {
        try await regionWrites.withPermit {
            try self.refuseWritesWithoutRestore(identifier)
            // Monitored, or in no engine table during an outage (stored, or a configured one
            // refused before it ever was): the latter answered "not monitored" (the API's 404),
            // and the retry or the source's return brought the region back.
            if let region = self.manager.monitoredOrWaitingRegion(identifier) {
                try await self.stopMonitoring(region, reason: reason)
                return true
            }
            guard let stored = try await self.store.storedRegion(identifier) else { return false }
            try await self.stopMonitoring(stored.region, reason: reason)
            return true
        }
    }

    public func startMonitoring(_ region: Region) {
        manager.startMonitoring(for: region)
    }

    /// Stops monitoring and forgets the region (its log stays).
    ///
    /// The store forgets it first, as ``putRegion(_:)`` saves first: a removal the store refuses
    /// throws with the region still monitored (and stored), so the request can be repeated; the
    /// engine used to let it go first, and the repeated request found nothing to remove while the
    /// stored region came back at the next start.
    public func stopMonitoring(_ region: Region, reason: String = "requested") async throws {
        // Earlier writes first (a queued state of the region must not land after its removal).
        try await recorder.flush()
        try await store.removeRegion(region.identifier)
        manager.stopMonitoring(for: region)
        recorder.rangedCounts.withLock { _ = $0.removeValue(forKey: region.identifier) }   // its automatic ranging ends with it
        let now = manager.clock.now.seconds
        var line = JSONLine()
        line.add("t", now)
        line.add("type", "monitoringStopped")
        line.add("region", region.identifier)
        try recorder.log(time: now, type: "monitoringStopped", region: region.identifier, state: nil, reason: reason, json: line.text)
        try await recorder.flush()
        // A state the engine decided between the removal and its stop was written after the
        // removal: removed again (the region is gone from both now; best effort, it is only a
        // leftover row that a later put of the region would clear).
        try? await store.removeRegion(region.identifier)
    }

    /// Logs a `sourceStatusChanged` event: a source came up, is reconnecting, finished or failed.
    /// Its JSON line is `{"t", "type": "sourceStatusChanged", "source", "kind", "state", "detail"?}`
    /// (`state` one of ``SourceStatus/State``); the stored row has the state and the detail as reason.
    ///
    /// ```swift
    /// activity.observe { status in try? service.logSourceStatus(status) }
    /// ```
    ///
    /// Synchronous (sources report from their own callbacks): on SQLite the event is written when
    /// this returns; on a networked store it is queued behind the engine's writes, and a failure
    /// to write it stops the daemon through `onStoreFailure` like any event's.
    public func logSourceStatus(_ status: SourceStatus) throws {
        let now = manager.clock.now.seconds
        var line = JSONLine()
        line.add("t", now)
        line.add("type", "sourceStatusChanged")
        line.add("source", status.name)
        line.add("kind", status.kind)
        line.add("state", status.state.rawValue)
        if let detail = status.detail { line.add("detail", detail) }
        try recorder.log(time: now, type: "sourceStatusChanged", region: nil, state: status.state.rawValue,
                         reason: status.detail.map { "\(status.name): \($0)" } ?? status.name, json: line.text)
    }

    /// Logs "process stopped" and returns once every event before it is written (SQLite: with the
    /// buffered writes of a delivered run; a networked store: its queued writes are committed).
    /// It is the last event: anything delivered later (a source reporting its end from its own
    /// thread, a timer) is not written.
    ///
    /// Events the engine produced before the call but has not delivered yet (a backlog behind a
    /// flood of new beacons, delivered on a source's thread) are waited for first, up to
    /// `drainTimeout`: those still queued then are not logged, and "process stopped" says about
    /// how many (engine events, some of which log nothing, such as an unchanged ranging count).
    /// Stop the sources first: events they add meanwhile are not waited for.
    ///
    /// ```swift
    /// try await service.stop(reason: "SIGTERM")   // after the sources have stopped
    /// ```
    public func stop(reason: String = "stopped", drainTimeout: Duration = .seconds(10)) async throws {
        let left = await manager.waitUntilDelivered(timeout: drainTimeout)
        var reason = reason
        if left > 0 {
            logger.warning("stopping with events not logged: the engine's queue was not delivered in time",
                           metadata: ["events": "\(left)", "waited": "\(drainTimeout)"])
            reason += left == 1 ? " (1 queued event not logged)" : " (\(left) queued events not logged)"
        }
        let now = manager.clock.now.seconds
        try recorder.log(time: now, type: "processStopped", region: nil, state: nil, reason: reason, json: Self.line(now, "processStopped"),
                         closing: true)
        try await recorder.flush()
    }

    /// Returns once every event and state the engine delivered so far is written; throws the
    /// store's failure if a write failed. (On SQLite: commits a delivered run's buffered writes.)
    public func flush() async throws {
        try await recorder.flush()
    }

    /// A count shared between the recorder and its writer's task.
    final class FailureCount: Sendable {
        private let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        func add(_ n: Int = 1) { count.add(n, ordering: .relaxed) }
    }

    static func line(_ time: Double, _ type: String) -> String {
        var line = JSONLine()
        line.add("t", time)
        line.add("type", type)
        return line.text
    }
}
