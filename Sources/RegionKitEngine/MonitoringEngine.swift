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
        didSet {
            if !heldAbsences.isEmpty { heldAbsencesStale = true }
            // The resting regions' budgets assumed the old hysteresis: each is active again, with
            // the distance to the last fix its evaluation would have stored.
            var resting = RestingRegions()
            swap(&resting, &geoResting)
            var woken: [Int32] = []
            resting.wakeAll { woken.append($0) }
            for indexSlot in woken.map(Int.init) {
                geoActive.insert(indexSlot)
                guard indexSlot < geoRegionSlots.count, geoRegionSlots[indexSlot] >= 0, let fix = lastFix else { continue }
                let slot = Int(geoRegionSlots[indexSlot])
                guard case .circular(let circle)? = regions.region(slot: slot) else { continue }
                let distance = evaluatedDistance(circle, indexSlot: indexSlot, to: fix)
                regions.update(slot: slot) { $0.lastDistance = distance }
            }
            // Rooms set aside for an outage are not tracked any more once the policy is off.
            if profile.nearestScanner == nil { suspendedRooms.removeAll() }
            rebuildTimers()
        }
    }
    public var automation: Automation
    /// Whether fixes are tested only against circular regions near them (through a spatial
    /// index) and timers are looked up among pending ones only: the default. `false` evaluates
    /// every circular region on every fix and scans every region for timers, the O(n) reference
    /// behaviour; both give identical events and states, which the property tests check: this
    /// switch exists for them only (`@testable`).
    var usesSpatialIndex = true
    /// The latest time the engine has been advanced to.
    public private(set) var now: Timestamp
    /// The latest usable location fix.
    public internal(set) var lastFix: LocationFix?

    /// Region records by slot (``RegionTable``): the identifier is hashed at registration and by
    /// the commands naming a region, not per sighting or fix.
    var regions = RegionTable()
    /// The identifiers in registration order (``monitoredRegions``, the brute-force paths).
    var order = RegistrationOrder()
    /// Beacon regions by constraint (UUID, UUID+major, UUID+major+minor), each list in
    /// registration order: a sighting looks up at most three keys, whatever the region count.
    /// An open-addressing table with a cheap hash and a cache of identities that match nothing.
    var beaconIndex = BeaconMatchTable()
    /// Region timers (exit, initial determination window, geofence dwell), registration sequence
    /// numbers and the many-stream exit cache. Each region's live timer is never later than its
    /// real deadline (``dueItem(of:streams:id:slot:)``); after ``settleTimers()`` the minimum is
    /// exact.
    var schedule = RegionSchedule()
    /// Every circular region by centre and radius, so a fix is tested only against regions near
    /// it. Derived from `regions` (rebuilt by `insert`), never persisted. Filed by slot alone
    /// (``RegionIndex/insert(slotOnly:tag:)``): the engine's own table knows the identifiers,
    /// and ``geoIndexSlots`` / ``geoRegionSlots`` map between the two, so registering a region
    /// hashes its identifier once less and the index keeps no copy of it.
    var circularIndex = RegionIndex()
    /// Circular regions each fix must evaluate wherever it is: state unknown or inside (an exit
    /// can come from any distance), a crossing pending its dwell, or a restored state to confirm.
    /// By `circularIndex` slot.
    var geoActive = SlotSet()
    /// Inside circular regions the device is deep enough in that no fix can change them until it
    /// has moved some way (``RestingRegions``): out of ``geoActive`` meanwhile, so a fix neither
    /// lists nor evaluates them. By `circularIndex` slot; only with the spatial index.
    var geoResting = RestingRegions()
    /// The device's candidates near its last fix (a moving device usually stays near them).
    var geoCache = RegionIndex.NearbyCache()
    /// The ``regions`` slot of each `circularIndex` slot (−1: none), so a fix reaches its
    /// candidates' records without their identifiers.
    var geoRegionSlots: [Int32] = []
    /// The reverse: the `circularIndex` slot of each ``regions`` slot (−1: none), so a dwell timer
    /// files its region without its identifier.
    var geoIndexSlots: [Int32] = []

    /// The ``circularIndex`` slot of the region whose record is in `record` (`nil`: none).
    @inline(__always)
    func geoIndexSlot(record: Int?) -> Int? {
        Self.geoIndexSlot(record: record, in: geoIndexSlots)
    }

    /// ``geoIndexSlot(record:)`` in `slots` (``geoIndexSlots``): for mutating paths, where the
    /// instance method made the compiler copy the whole engine to call it (see
    /// ``fireGeoDwell(slot:into:)``).
    @inline(__always)
    static func geoIndexSlot(record: Int?, in slots: [Int32]) -> Int? {
        guard let record, record >= 0, record < slots.count, slots[record] >= 0 else { return nil }
        return Int(slots[record])
    }
    /// The last fix's regions to evaluate, kept for the buffer's capacity (no allocation per fix).
    var geoCandidates: [GeoCandidate] = []
    /// Circular regions the index refused (only possible for a decoded, unvalidated region):
    /// evaluated on every fix, so nothing is ever silently unmonitored.
    var geoUnindexed: Set<String> = []
    var sessions = RangingSessionTable()
    var sources: [RegionKind: AuthorizationStatus]
    var retries = PendingRetries()
    /// Regions whose retries ran out while their source was unavailable (retry helper on), and
    /// regions registered before their source reported (``undetermined``): they are registered
    /// again as soon as that source is usable, however long the outage lasted.
    var abandoned = KeyedList<Region>()
    /// The identifiers in ``abandoned`` parked because their source had not reported yet
    /// (`notDetermined`, whatever the automation): they fail when the source reports that it
    /// cannot be used (``setSourceStatus(_:for:at:)``), where those whose retries ran out keep
    /// waiting. An identifier leaving ``abandoned`` may stay here: only the two together count.
    var undetermined: Set<String> = []
    var failureCounts: [String: Int] = [:]
    /// The state each region had when its source went away (``setSourceStatus(_:for:at:)``),
    /// carried over when it is registered again by a retry or the source's return: a broker
    /// restart of a second no longer made every region inside "outside" and then enter again.
    var suspendedStates: [String: (state: RegionState, since: Timestamp?)] = [:]
    var wakeRequestAt: Timestamp?
    var nearest: [BeaconIdentity: NearestScannerState] = [:]
    /// The rooms beacons were placed in when the beacon source went away (``setSourceStatus(_:for:at:)``),
    /// carried over to the source's return (``restoreNearestScanner(_:scanner:at:)`` then): an
    /// outage is not every beacon leaving its room. Before, a broker outage longer than the exit
    /// silence logged "heard by no scanner" for every beacon, and the return placed each anew:
    /// every Home Assistant device tracker went `not_home` and back.
    var suspendedRooms: [BeaconIdentity: String] = [:]
    /// When tracked beacons may be heard by no scanner (``NearestAbsence``: lazy, never late).
    var nearestAbsences = MinHeap<NearestAbsence>()
    /// The beacons whose absence waits for their regions' streams (``absenceDue(_:)``), looked at
    /// again when what holds them may go (``reconsiderHeldAbsences()``).
    var heldAbsences: Set<BeaconIdentity> = []
    /// The profile changed since the held absences were last looked at (its detector sets the
    /// streams' deadlines): ``advance(to:)`` looks at them.
    var heldAbsencesStale = false
    /// Per scanner: what its channel has shown (``ScannerChannel``), for detectors that use it,
    /// by the scanner's number in ``channelNumbers``.
    var channels: [ScannerChannel] = []
    /// Scanner name → its channel's index in ``channels``.
    var channelNumbers = ScannerNumbers()
    /// The channel count at which ``sweepChannels(at:)`` runs next.
    var channelSweepAt = MonitoringEngine.minimumChannelSweep
    /// The scanner looked up last, with its number and its name's hash: consecutive sightings
    /// usually come from one scanner (a gateway's batch, an MQTT message), so most sightings
    /// compare one name instead of hashing it.
    var lastChannel: (name: String, number: Int, nameHash: UInt64)?
    /// The channel of sightings without a scanner (the local adapter).
    var localChannel = ScannerChannel()
    /// Whether a scanner ever said it was offline (``setScannerStatus(_:online:at:)``): until
    /// then, exits of detectors that do not excuse dark gaps are not looked at again when due.
    var offlineScannersSeen = false
    /// Per scanner offline now: the regions and beacons it holds (``releaseOfflineHolds(of:)``).
    var offlineHolds: [String: OfflineHolds] = [:]

    /// A registered region as the beacon match table keeps it: its registration sequence number
    /// and its slot in ``regions`` (no identifier: 16 bytes, and nothing to retain when copied).
    struct RegisteredID: Sendable {
        var sequence: Int
        var slot: Int32
    }

    /// A circular region a fix is evaluated against: its registration number (the order of
    /// evaluation), its slot in ``regions`` (−1: its index slot has no record, so it is skipped),
    /// its ``circularIndex`` slot (−1: none), and the distance from its centre to the fix when
    /// the spatial index computed it (NaN otherwise). 24 bytes.
    struct GeoCandidate: Sendable {
        var rank: Int
        var slot: Int32
        var indexSlot: Int32
        var distance: Double
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
    public var monitoredRegions: [Region] { order.compactMap { entry in regions.region(slot: entry.slot) } }

    /// Calls `body` with the identifier of each monitored region, in registration order, without
    /// building ``monitoredRegions`` (a page of `GET /v1/regions` picks its identifiers out of
    /// every region's).
    ///
    /// ```swift
    /// engine.forEachMonitoredIdentifier { print($0) }   // lobby, park, …
    /// ```
    public func forEachMonitoredIdentifier(_ body: (String) -> Void) {
        for entry in order {
            if let identifier = regions.identifier(slot: entry.slot) { body(identifier) }
        }
    }

    /// Calls `body` with each monitored region, in registration order, and each of its present
    /// sighting streams (``MonitoredRegion/streams``): what ``monitoredRegion(_:)`` gives for
    /// every region, without looking each identifier up or building its record and stream table
    /// (`GET /v1/beacons` walks every stream of every region on each call). `body` only reads:
    /// it is given the engine's storage in place, so it cannot change the engine.
    ///
    /// ```swift
    /// engine.forEachStream { region, key, stream in print(region.identifier, key.identity, stream.lastSighting) }
    /// ```
    public func forEachStream(_ body: (_ region: Region, _ key: MonitoredRegion.StreamKey, _ stream: ReceptionEstimator) -> Void) {
        for entry in order {
            _ = regions.readStreams(slot: entry.slot) { record, streams in
                streams.forEachStream { key, stream, _ in body(record.region, key, stream) }
            }
        }
    }

    /// The engine's state record of a monitored region.
    public func monitoredRegion(_ identifier: String) -> MonitoredRegion? {
        guard let slot = regions.slot(of: identifier), var monitored = regions.monitoredRegion(slot: slot) else { return nil }
        // A resting region was not evaluated against the last fix; its distance to it is the one
        // an evaluation would have recorded (the same computation, to the bit).
        if let indexSlot = geoIndexSlot(record: slot), geoResting.contains(indexSlot), let fix = lastFix,
           case .circular(let circle) = monitored.region {
            monitored.lastDistance = evaluatedDistance(circle, indexSlot: indexSlot, to: fix)
        }
        return monitored
    }

    /// The distance from `circle` (in ``circularIndex`` slot `indexSlot`) to `fix` that evaluating
    /// it against `fix` records: the index's, where that is the region's own to the bit (see
    /// ``distance(_:_:known:)``), as ``ingest(_:)-(LocationFix)`` takes it; for the resting regions,
    /// which a fix does not evaluate.
    func evaluatedDistance(_ circle: CircularRegion, indexSlot: Int, to fix: LocationFix) -> Double {
        let sameLongitude = Geodesy.normalizedLongitude(fix.longitude) == fix.longitude
        let known = sameLongitude ? circularIndex.distance(atSlot: indexSlot, to: RegionIndex.point(latitude: fix.latitude, longitude: fix.longitude)) : .nan
        return Self.distance(circle, fix, known: known)
    }

    /// The current state of a monitored region, `nil` when it is not monitored.
    public func state(of identifier: String) -> RegionState? { regions[identifier]?.state }

    /// Constraints being ranged, in the order ranging started.
    public var rangedConstraints: [BeaconIdentityConstraint] {
        // Once each (a constraint ranged from several scanners is one constraint), in start order.
        var seen = Set<BeaconIdentityConstraint>()
        return sessions.inStartOrder.map(\.constraint).filter { seen.insert($0).inserted }
    }

    /// The ranging sessions (constraint, label, tracked beacons).
    public var rangingSessions: [RangingSession] { sessions.inStartOrder }

    /// The ranging sessions in the order they started, each with the labels its deliveries go
    /// to: the regions and app labels sharing it (same constraint and scanner), its own label first.
    ///
    /// ```swift
    /// for (session, labels) in engine.rangingSessionsWithLabels { print(session.constraint, labels) }   // … ["hall", "lobby"]
    /// ```
    public var rangingSessionsWithLabels: [(session: RangingSession, labels: [String])] {
        sessions.inStartOrderWithOwners.map { ($0.session, $0.owners) }
    }

    /// Whether `constraint` is still ranged under `label`: a ``LocationEvent/Kind/didRangeBeacons(_:_:label:)``
    /// of them comes every ranging interval. False once the app stopped it or the region whose
    /// helper ranged it left, stopped or failed: no delivery will say that its beacons are gone
    /// (the hub then clears the distances it published from those deliveries).
    ///
    /// ```swift
    /// engine.isRanging(region.constraint, label: region.identifier)   // false after its exit
    /// ```
    public func isRanging(_ constraint: BeaconIdentityConstraint, label: String) -> Bool {
        sessions.slot(of: constraint, label: label) != nil
    }

    /// How far `identity` is from `scanner` by that scanner's readings alone, in the ranging of
    /// `constraint` under `label` (a ``LocationEvent/Kind/didRangeBeacons(_:_:label:)``'s;
    /// ``RangingSession/Track/distance(from:at:profile:)``), now; nil when no such session
    /// tracks it or that scanner has no current reading of it. The hub's `mqtt_room` messages
    /// on a room's topic carry this, not the distance from whichever scanner puts the beacon
    /// nearest.
    ///
    /// ```swift
    /// engine.rangedDistance(of: beacon, from: "kitchen", ranging: constraint, label: "lobby")   // 2.4
    /// ```
    public func rangedDistance(of identity: BeaconIdentity, from scanner: String, ranging constraint: BeaconIdentityConstraint, label: String) -> Double? {
        guard let slot = sessions.slot(of: constraint, label: label), let track = sessions[slot: slot]?.tracks[identity] else { return nil }
        return track.distance(from: scanner, at: now, profile: profile)
    }

    /// Whether a source is configured for `kind` regions (usable or not).
    public func hasSource(for kind: RegionKind) -> Bool { sources[kind] != nil }

    /// The status of the source feeding `kind` regions.
    public func sourceStatus(for kind: RegionKind) -> AuthorizationStatus {
        sources[kind] ?? .restricted(reason: "no \(kind == .beacon ? "beacon source" : "location source") is configured")
    }

    /// The scanner `identity` is nearest to now, when the profile tracks it (``NearestScannerPolicy``).
    /// (While the beacon source is away, the room it was in then.)
    public func nearestScanner(for identity: BeaconIdentity) -> String? { nearest[identity]?.current ?? suspendedRooms[identity] }

    /// Every tracked beacon's nearest scanner now (beacons heard by no scanner any more are left
    /// out; while the beacon source is away, the rooms they were in then).
    public var nearestScanners: [BeaconIdentity: String] {
        let tracked = nearest.compactMapValues(\.current)
        return suspendedRooms.isEmpty ? tracked : suspendedRooms.merging(tracked) { $1 }
    }

    /// How many beacons ``nearestScanners`` places in each scanner's room, counted without
    /// building it (a dictionary of every placed beacon: `GET /v1/scanners` and every `/metrics`
    /// scrape ask for the counts only).
    ///
    /// ```swift
    /// engine.beaconsPerRoom["kitchen"]   // 3
    /// ```
    public var beaconsPerRoom: [String: Int] {
        var counts: [String: Int] = [:]
        for state in nearest.values {
            if let room = state.current { counts[room, default: 0] += 1 }
        }
        // A suspended room counts unless a scanner has placed the beacon since (as in nearestScanners).
        for (identity, room) in suspendedRooms where nearest[identity]?.current == nil { counts[room, default: 0] += 1 }
        return counts
    }

    /// Places `identity` in `scanner`'s room as known from before (an engine set aside for a
    /// broker outage, a restart): no event. It stays there while a scanner hears it (another
    /// scanner takes it only after hearing it for the policy's `dwell` before the room's own
    /// scanner does, or once the carried track is gone); heard by none, it leaves (`didChangeNearestScanner` to none) once the profile's exit
    /// detector calls a beacon heard once at `time` gone. Without it a fresh engine never knew
    /// the beacon was anywhere, and a beacon that left meanwhile stayed in its last room (its
    /// retained room, distance and attributes) for good.
    ///
    /// Ignored when the profile tracks no nearest scanners, for a beacon the engine tracks
    /// already (its sightings know better), and for an empty scanner name. A device is placed
    /// whether a region names it yet or not: the daemon restores the rooms before its regions
    /// (they wait for their sources), so naming could not be judged here. One that no region
    /// names once they are registered leaves when its absence runs out, as a silent beacon does.
    ///
    /// ```swift
    /// let rooms = oldEngine.nearestScanners
    /// for (beacon, room) in rooms { _ = engine.restoreNearestScanner(beacon, scanner: room, at: now) }
    /// ```
    public mutating func restoreNearestScanner(_ identity: BeaconIdentity, scanner: String, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        let events = advance(to: time)
        carryRoom(identity, scanner: scanner)
        return events
    }

    /// ``restoreNearestScanner(_:scanner:at:)`` at ``now``. While the beacon source is away (set
    /// and not authorized: a restart during a broker outage) the room is set aside with the others
    /// (``suspendedRooms``) instead: its absence would run during the outage.
    mutating func carryRoom(_ identity: BeaconIdentity, scanner: String) {
        guard profile.nearestScanner != nil, !scanner.isEmpty, nearest[identity] == nil else { return }
        if isBeaconSourceAway {
            if suspendedRooms[identity] == nil { suspendedRooms[identity] = scanner }
            return
        }
        suspendedRooms[identity] = nil
        var state = NearestScannerState(restoring: scanner, at: now)
        if let deadline = state.absentDeadline(detector: profile.exitDetector) {
            state.absentAt = deadline
            nearestAbsences.push(NearestAbsence(time: deadline, identity: identity))
        }
        nearest[identity] = state
    }

    /// When the engine next needs ``advance(to:)`` to be called, if ever.
    public var nextDeadline: Timestamp? { nextDue()?.time }

    // MARK: - Commands

    /// Registers `region` (replacing one with the same identifier): `didStartMonitoring`, or
    /// `monitoringDidFail` when the limit is reached, the radius is too large or the source is off.
    /// Registered before its source reported (`notDetermined`), it waits without an event
    /// (``waitingRegion(_:)``) and starts when the source reports `authorized`, or fails then if
    /// the source reports it cannot be used, as Core Location keeps regions registered before
    /// the authorization prompt is answered.
    /// Refused because its source is off, with the retry helper on, it still replaces the region
    /// of its identifier (it is registered when the source works); refused otherwise, it leaves it.
    /// A device the replaced region named and no region names now leaves its room
    /// (`didChangeNearestScanner` to none, as ``stopMonitoring(identifier:at:)`` says).
    public mutating func startMonitoring(_ region: Region, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        let events = advance(to: time)
        let device = placedDevice(of: region.identifier)
        supersedeWaiting(region)
        suspendedStates[region.identifier] = nil   // a new registration: nothing carried over
        // (Usually nothing was due: the registration's own array is returned, not copied.)
        var registered = events.isEmpty ? register(region) : events + register(region)
        if device != nil { registered += release(device) }
        if !heldAbsences.isEmpty { registered += reconsiderHeldAbsences() }   // a replaced region held one
        return registered
    }

    /// Registers `regions` in order, as many ``startMonitoring(_:at:)`` calls would (the same
    /// events, the same state afterwards), with the engine's tables grown once for all of them:
    /// a daemon's configured regions, a fleet of beacons. A device the replaced regions named
    /// and none names after the batch leaves its room, at the end (one moved from an earlier
    /// region of the batch to a later one keeps it).
    ///
    /// ```swift
    /// let events = engine.startMonitoring(contentsOf: regions, at: now)   // [didStartMonitoring, …]
    /// ```
    public mutating func startMonitoring(contentsOf regions: some Collection<Region>, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        reserveCapacity(for: regions)
        events.growCapacity(toAtLeast: events.count + regions.count * (automation.requestStateOnStart ? 2 : 1))
        // Devices released after the whole batch: one moved from an earlier region of the batch
        // to a later one keeps its room (released in between, it left and came back).
        var devices: [BeaconIdentity] = []
        for region in regions {
            if let device = placedDevice(of: region.identifier) { devices.append(device) }
            supersedeWaiting(region)
            suspendedStates[region.identifier] = nil
            events += register(region)
        }
        for device in devices { events += release(device) }
        events += reconsiderHeldAbsences()   // a replaced region held one (nothing while none is held)
        return events
    }

    /// Grows the tables for `regions` about to be registered (identifiers already monitored
    /// are counted too: the room is a bound, not an exact count).
    mutating func reserveCapacity(for new: some Collection<Region>) {
        var beacons = 0, circles = 0
        for region in new {
            if case .beacon = region { beacons += 1 } else { circles += 1 }
        }
        regions.reserveCapacity(new.count)
        order.reserveCapacity(new.count)
        schedule.reserveCapacity(slots: regions.count + new.count)
        if beacons > 0 { beaconIndex.reserveCapacity(beacons) }
        if circles > 0 { circularIndex.reserveCapacity(circles, keyed: false) }
    }

    /// Re-registers a region whose state was stored before a restart, without `didStartMonitoring`
    /// (it never stopped being monitored, as after an iOS relaunch). The stored state is kept but
    /// marked stale until fresh evidence reconciles it: a sighting (or fix) confirming it gives no
    /// event, so there is no spurious enter; a beacon region stored inside and not heard again
    /// exits once, with the reason, after the profile's silence threshold; a circular region whose
    /// first fix is clearly on the other side crosses at once. A device the replaced region named
    /// and no region names now leaves its room, as with ``startMonitoring(_:at:)``.
    public mutating func restore(_ region: Region, state: RegionState, since: Timestamp?, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = restoring(region, state: state, since: since, at: time)
        events += reconsiderHeldAbsences()   // a replaced region held one (nothing while none is held)
        return events
    }

    /// ``restore(_:state:since:at:)`` but for the held absences.
    private mutating func restoring(_ region: Region, state: RegionState, since: Timestamp?, at time: Timestamp) -> [LocationEvent] {
        let events = advance(to: time)
        let device = placedDevice(of: region.identifier)
        supersedeWaiting(region)
        suspendedStates[region.identifier] = nil
        if let failure = validate(region) {
            // Its source is not back yet (a broker slower to start than the daemon): the stored
            // state is carried over to the registration that a retry or the source's return makes.
            if failure.code == .sourceUnavailable, state != .unknown { suspendedStates[region.identifier] = (state, since) }
            if failure.code == .sourceUnavailable, let parked = parkUndetermined(region) {
                return device == nil ? events + parked : events + parked + release(device)
            }
            if failure.code == .sourceUnavailable, automation.retry != nil { _ = remove(region.identifier) }   // as ``register(_:)``
            let failed = events + fail(region, failure)
            return device == nil ? failed : failed + release(device)
        }
        insert(region)   // replaces a region with this identifier
        let restored = events + carryOver(region, state: state, since: since)
        return device == nil ? restored : restored + release(device)
    }

    /// Gives a region just inserted the state it had (stored before a restart, or kept while its
    /// source was away), marked stale until fresh evidence reconciles it (``restore(_:state:since:at:)``).
    mutating func carryOver(_ region: Region, state: RegionState, since: Timestamp?) -> [LocationEvent] {
        regions[region.identifier]?.state = state
        // An untrusted stored time: non-finite is unknown, a future one is now (engine fuzz finding:
        // a NaN `since` made records unequal to themselves and cannot be encoded as JSON).
        regions[region.identifier]?.stateSince = since.flatMap { $0.seconds.isFinite ? min($0, now) : nil }
        regions[region.identifier]?.restoredAt = state == .unknown ? nil : now
        trackGeo(region.identifier)
        reschedule(region.identifier)
        if state == .inside, automation.rangeWhileInside, case .beacon(let beacon) = region {
            return beginRanging(beacon.constraint, scannerID: nil, label: region.identifier, automatic: true)
        }
        return []
    }

    /// Stops monitoring the region with `identifier` (no event for the region, as in Core
    /// Location). A device it named that no other region names leaves its room at once
    /// (`didChangeNearestScanner` to none, "no region names it any more"): the engine stops
    /// placing it, and its room must not stay the last one it was heard in.
    public mutating func stopMonitoring(identifier: String, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        let device = placedDevice(of: identifier)
        retries.cancel(id: identifier)
        abandoned.removeValue(forKey: identifier)
        undetermined.remove(identifier)
        failureCounts[identifier] = nil
        suspendedStates[identifier] = nil
        events += remove(identifier)
        if device != nil { events += release(device) }
        events += reconsiderHeldAbsences()   // (nothing while no absence is held)
        return events
    }

    /// The device the region of `identifier` names (monitored, or waiting for its source), when
    /// the region is a device region and some beacon or device has a room: what ``release(_:)``
    /// may have to take out of its room once the region is removed or redefined. No lookup while
    /// nothing has a room (a daemon registering its regions at start).
    func placedDevice(of identifier: String) -> BeaconIdentity? {
        guard !nearest.isEmpty || !suspendedRooms.isEmpty else { return nil }
        return (regions[identifier]?.region ?? waitingRegion(identifier))?.beaconRegion?.constraint.device
    }

    /// A device that no region names any more, monitored or waiting for its source, leaves its
    /// room (placed, or set aside for a source outage) at once. A device is placed only while a
    /// region names it (scanners report every phone they hear): unnamed, its room was frozen at
    /// the last one until the absence timer, up to a minute later, said "heard by no scanner" of
    /// a phone still heard. Nothing when another region still names it.
    mutating func release(_ device: BeaconIdentity?) -> [LocationEvent] {
        guard let device, profile.nearestScanner != nil, !isNamed(device) else { return [] }
        let placed = nearest.removeValue(forKey: device)?.current   // its absence entry is dropped lazily
        let setAside = suspendedRooms.removeValue(forKey: device)
        guard let previous = placed ?? setAside else { return [] }
        return [departure(device, from: previous, reason: "no region names it any more")]
    }

    /// Whether a region names `device`: a monitored one (bound to a scanner or not, as its
    /// sightings are matched) or one waiting for its source.
    mutating func isNamed(_ device: BeaconIdentity) -> Bool {
        if let (any, major, exact) = beaconIndex.candidates(for: device, in: regions), !(any.isEmpty && major.isEmpty && exact.isEmpty) { return true }
        return waitingRegions.contains { $0.beaconRegion?.constraint.matches(device) == true }
    }

    /// `identity` leaves `room` for none (`didChangeNearestScanner` to none), for `reason`.
    func departure(_ identity: BeaconIdentity, from room: String, reason: String) -> LocationEvent {
        LocationEvent(timestamp: now, kind: .didChangeNearestScanner(identity, scannerID: nil, previous: room),
                      evidence: EventEvidence(beacon: identity, reason: reason))
    }

    /// The region of `identifier` that waits for its source, not monitored now: refused with
    /// `sourceUnavailable` and filed for a retry, or parked until the source is back (retry
    /// helper on). A caller removing the region on request removes this one too.
    ///
    /// ```swift
    /// engine.waitingRegion("lobby")   // the lobby while the scanner is unplugged, nil once it is back
    /// ```
    public func waitingRegion(_ identifier: String) -> Region? {
        retries.region(id: identifier) ?? abandoned[identifier]
    }

    /// Every region waiting for its source (``waitingRegion(_:)``): those filed for a retry in
    /// the order they were filed, then those parked in the order they were parked.
    public var waitingRegions: [Region] {
        guard !retries.isEmpty || !abandoned.isEmpty else { return [] }
        return retries.regions + abandoned.values
    }

    /// A new registration of `region`'s identifier (``startMonitoring(_:at:)``,
    /// ``restore(_:state:since:at:)``) replaces what waits for its source under that identifier:
    /// the retry or the source's return registered the earlier definition over it (a PUT during an
    /// outage was undone by the retry of the region it replaced). A new registration refused for
    /// want of its source in turn is filed for its own retry (or parked); one refused for another
    /// reason (its radius, the region limit) is never retried, so the waiting one stays, as a
    /// monitored one stays.
    mutating func supersedeWaiting(_ region: Region) {
        guard !retries.isEmpty || !abandoned.isEmpty else { return }
        if let refusal = validate(region), refusal.code != .sourceUnavailable { return }
        // Parked while its source has not reported, it would be refused for the limit
        // (``parkUndetermined(_:)``): the waiting one stays (review finding: both were lost).
        if sources[region.kind] == .notDetermined, permanentRefusal(for: region) != nil { return }
        retries.cancel(id: region.identifier)
        abandoned.removeValue(forKey: region.identifier)
        undetermined.remove(region.identifier)
        // The new definition's failures are its own (it was parked at once as "retries exhausted").
        failureCounts[region.identifier] = nil
    }

    /// The state a region waiting for its source (``waitingRegion(_:)``) carries over to its
    /// registration when the source is back: the state it had when the source went away, or the
    /// stored one it was restored with; `nil` for a new definition (determined afresh).
    ///
    /// ```swift
    /// engine.carriedState(of: "lobby")   // (.inside, since: 12:00) while the scanner is unplugged
    /// ```
    public func carriedState(of identifier: String) -> (state: RegionState, since: Timestamp?)? {
        waitingRegion(identifier) == nil ? nil : suspendedStates[identifier]
    }

    /// Forgets a retry filed for `identifier` and a region of it waiting for its source, without
    /// touching a region of that identifier that is monitored (no event). For a caller that put
    /// back what a refused registration replaced.
    ///
    /// ```swift
    /// engine.cancelRetry(identifier: "lobby")   // the refused replacement is not retried
    /// ```
    public mutating func cancelRetry(identifier: String) {
        retries.cancel(id: identifier)
        abandoned.removeValue(forKey: identifier)
        undetermined.remove(identifier)
        suspendedStates[identifier] = nil   // only a waiting region carries one
        if regions[identifier] == nil { failureCounts[identifier] = nil }
    }

    /// Asks for `didDetermineState`: at once when the state is known, else when it is determined
    /// (a beacon region within its initial determination window). A circular region before the
    /// first location fix is answered `unknown` at once, as Core Location answers a state it
    /// cannot determine (a receiver's first fix can take minutes); the first fix answers again
    /// with the state it determines.
    ///
    /// ```swift
    /// _ = engine.requestState(for: office, at: now)   // didDetermineState(.unknown, office) before any fix
    /// ```
    public mutating func requestState(for region: Region, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        events += requestState(region, answeringUnknown: true)
        return events
    }

    /// Starts `didRangeBeacons` deliveries every ranging interval for beacons satisfying `constraint`.
    /// - Parameters:
    ///   - label: the region identifier to report deliveries under (default: the constraint).
    ///   - scannerID: only this scanner's sightings are ranged (a `BeaconRegion.scannerID`
    ///     room); `nil`: every scanner's. Each (constraint, scanner) is one session.
    ///
    /// ```swift
    /// _ = engine.startRanging(kitchen.constraint, label: "kitchen", scannerID: "kitchen-node", at: now)
    /// ```
    public mutating func startRanging(_ constraint: BeaconIdentityConstraint, label: String? = nil, scannerID: String? = nil,
                                      at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        events += beginRanging(constraint, scannerID: scannerID, label: label ?? constraint.description, automatic: false)
        return events
    }

    /// Stops ranging `constraint`: every session of it, from any scanner (Core Location's stop by
    /// constraint).
    public mutating func stopRanging(_ constraint: BeaconIdentityConstraint, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        let events = advance(to: time)
        while let slot = sessions.slot(ofAnyScanner: constraint) { sessions.remove(slot: slot) }
        return events
    }

    /// Stops the ranging of `constraint` from `scannerID` only (nil: the session of every
    /// scanner's sightings), as ``startRanging(_:label:scannerID:at:)`` started it: under `label`
    /// only, when given (another region of the same constraint the app or the helper ranges goes
    /// on getting its deliveries); for every label when `label` is nil.
    ///
    /// ```swift
    /// _ = engine.stopRanging(kitchen.constraint, scannerID: "kitchen-node", label: "kitchen", at: now)
    /// ```
    public mutating func stopRanging(_ constraint: BeaconIdentityConstraint, scannerID: String?, label: String? = nil,
                                     at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        let events = advance(to: time)
        if let label {
            if let slot = sessions.slot(of: constraint, scannerID: scannerID, label: label) { sessions.removeOwner(label: label, slot: slot) }
        } else if let slot = sessions.slot(of: constraint, scannerID: scannerID) {
            sessions.remove(slot: slot)
        }
        return events
    }

    /// The device "woke" (display on / app activated): regions with `notifyEntryStateOnDisplay`
    /// get their state at once, and with `automation.wakeRequestDelay` every region's state is
    /// requested after that delay (spec §5, "infinite ranging" fix).
    public mutating func wake(at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        for entry in order {
            guard let region = liveRegion(entry), region.beaconRegion?.notifyEntryStateOnDisplay == true else { continue }
            events += requestState(region)
        }
        if let delay = automation.wakeRequestDelay {
            wakeRequestAt = now + (delay.isNaN ? 0 : min(max(delay, 0), 3_600))
        }
        return events
    }

    /// The source for `kind` changed status. When it stops being usable every region of that kind
    /// fails with `sourceUnavailable` (and is retried with `automation.retry`), and ranging fails;
    /// the regions registered before it first reported (``startMonitoring(_:at:)``) start when it
    /// reports `authorized`, and fail as these do when it reports anything else.
    /// A region registered again (a retry once the source works, or the source's return) gets
    /// `didStartMonitoring` and the state it had, stale until a sighting or fix confirms it, as
    /// after a restart (``restore(_:state:since:at:)``): a region inside stays inside without an
    /// event, or exits once after the silence threshold.
    public mutating func setSourceStatus(_ status: AuthorizationStatus, for kind: RegionKind, at time: Timestamp) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: time)
        guard sources[kind] != status else { return events }
        let previous = sources[kind]
        sources[kind] = status
        events.append(LocationEvent(timestamp: now, kind: .didChangeAuthorization(kind, status)))
        if status.isAuthorized {
            let resuming = abandoned.removeAll { $0.kind == kind }
            for region in resuming {
                failureCounts[region.identifier] = nil
                undetermined.remove(region.identifier)
                events += register(region)
            }
            if kind == .beacon { resumeSuspendedRooms() }
            return events
        }
        let error = RegionKitError(.sourceUnavailable, "the \(kind == .beacon ? "beacon source" : "location source") is unavailable: \(status)")
        if previous == .notDetermined, !undetermined.isEmpty { events += failUndetermined(kind, status) }
        for entry in order {
            guard let region = liveRegion(entry), region.kind == kind else { continue }
            if let record = regions[region.identifier], record.state != .unknown {
                suspendedStates[region.identifier] = (record.state, record.stateSince)
            }
            events += remove(region.identifier)
            events += fail(region, error)
        }
        if kind == .beacon {
            // One failure under each owner's label: each got its own deliveries.
            for (session, owners) in sessions.inStartOrderWithOwners {
                for label in owners {
                    let rangingError = RegionKitError(.rangingUnavailable, "ranging \(label) stopped: \(error.message)")
                    events.append(LocationEvent(timestamp: now, kind: .didFailRanging(session.constraint, label: label, rangingError)))
                }
            }
            sessions.removeAll()
            suspendRooms()
        }
        return events
    }

    /// Whether the beacon source is set and not usable now (rooms are set aside meanwhile: ``suspendedRooms``).
    var isBeaconSourceAway: Bool { sources[.beacon].map { !$0.isAuthorized } ?? false }

    /// The beacon source went away: each placed beacon's room is set aside (``suspendedRooms``), no
    /// event; its absence no longer runs. The rest of the tracking state goes (RSSI tracks, a
    /// move under way, beacons not placed yet): after the outage a move waits a full `dwell` again.
    /// One source among several going away does not pass here (the combined status stays
    /// authorized): beacons heard only through it leave their rooms as before.
    mutating func suspendRooms() {
        for (identity, state) in nearest {
            if let room = state.current { suspendedRooms[identity] = room }
        }
        nearest.removeAll()
        nearestAbsences.rebuild([])
        heldAbsences.removeAll()   // their beacons' tracking state went with `nearest`
    }

    /// The beacon source is back: the rooms set aside are carried over as at a restart
    /// (``restoreNearestScanner(_:scanner:at:)``: no event; heard by none, a beacon leaves once a
    /// beacon heard once now would be called gone). A beacon heard meanwhile keeps its track.
    mutating func resumeSuspendedRooms() {
        guard !suspendedRooms.isEmpty else { return }
        let rooms = suspendedRooms
        suspendedRooms.removeAll()
        for (identity, room) in rooms.sorted(by: { $0.key < $1.key }) { carryRoom(identity, scanner: room) }
    }

    // MARK: - Time

    /// The most ranging deliveries one ``advance(to:)`` replays after the clock jumped (a suspended
    /// machine resuming, a replay gap). Over a longer jump the delivery due first still reports
    /// what was heard before it, then the session skips to the last interval before the new time,
    /// as Core Location resumes its once-a-second callbacks instead of replaying the missed ones.
    /// It bounds what a jump of any size costs (a jump of a day made 86,400 empty deliveries).
    public static let maximumRangingCatchUp = 60

    /// Fires every timer due at or before `time`, in time order, and moves the engine's clock there.
    /// Times earlier than ``now``, and non-finite times (an untrusted timestamp), are treated as
    /// ``now``. Ranging deliveries missed over a jump longer than ``maximumRangingCatchUp``
    /// intervals are skipped, not replayed one by one; at magnitudes where adding the ranging
    /// interval no longer changes a `Double` (beyond about 2⁵³ s) a session delivers at most once
    /// per advance instead of staying due for ever.
    public mutating func advance(to time: Timestamp) -> [LocationEvent] {
        // A NaN target compared false both ways and fired timers for ever (engine fuzz finding).
        let time = time.seconds.isFinite ? time : now
        var events: [LocationEvent] = []
        if heldAbsencesStale {   // the profile changed: its detector sets the holds' deadlines
            heldAbsencesStale = false
            events += reconsiderHeldAbsences()
        }
        settleTimers()
        while let dueTime = nextDueTime(), dueTime <= time, let due = nextDue() {
            now = max(now, due.time)
            fire(due.item, into: &events)
            if case .ranging(let slot) = due.item {
                let interval = profile.rangingInterval
                sessions.update(slot: slot) { session in
                    session.skipMissedDeliveries(before: time, interval: interval, keeping: Self.maximumRangingCatchUp)
                    // At 1.8e308 s, t + 1 == t: the delivery would stay due for ever (engine fuzz
                    // finding, out of memory). The next one comes after this advance's time.
                    if session.nextDelivery <= due.time {
                        session.nextDelivery = Timestamp(seconds: time.seconds.nextUp)
                    }
                }
            }
            settleTimers()
        }
        now = max(now, time)
        return events
    }

    // MARK: - Internals

    /// Fires a due timer, its events appended to `events` (no array of its own: ≈ 1,400
    /// instructions a dwell fired went on building one and appending it).
    mutating func fire(_ item: DueItem, into events: inout [LocationEvent]) {
        switch item {
        case .initialWindow(let id):
            events += setState(id, .outside, crossing: false,
                               evidence: EventEvidence(reason: "no sighting within \(profile.initialDeterminationWindow) s of registration"))
        case .exit(let id):
            guard let slot = regions.slot(of: id), let restoredAt = regions.readStreams(slot: slot, { $1.isEmpty ? $0.restoredAt : nil }) else { return }
            if let restoredAt {
                regions.update(slot: slot) { $0.restoredAt = nil }
                events += setState(id, .outside, crossing: true, evidence: EventEvidence(
                    lastSightingAge: now - restoredAt, exitThreshold: now - restoredAt,
                    reason: "not seen since monitoring resumed \(Self.format(now - restoredAt)) s ago (at a restart or its source's return; it was inside)"))
                return
            }
            // A silence the whole scanner shared is its blackout, not a departure: wait.
            if excuseSharedSilence(ofRegion: id) { return }
            let (leader, detector) = (usesSpatialIndex ? schedule.exitLeader(slot: slot) : nil, profile.exitDetector)
            guard let (stream, lastSighting) = regions.readStreams(slot: slot, { monitored, streams -> (ReceptionEstimator, Timestamp)? in
                guard let (_, stream) = Self.exitDeadline(of: monitored, streams: streams, leader: leader, detector: detector) else { return nil }
                var lastSighting = stream.lastSighting
                streams.forEachStream { _, other, _ in lastSighting = max(lastSighting, other.lastSighting) }
                return (stream, lastSighting)
            }) ?? nil else { return }
            regions.depart(slot: slot)
            schedule.setExitLeader(nil, slot: slot)
            setState(slot: slot, .outside, crossing: true, evidence: EventEvidence(
                rssi: stream.lastRSSI, lastSightingAge: now - lastSighting,
                exitThreshold: detector.silenceThreshold(for: stream),
                reason: (now - lastSighting).tenthsText(prefix: "no sighting for ", suffix: " s")), into: &events)
        case .geoDwell(let slot):
            fireGeoDwell(slot: slot, into: &events)
        case .ranging(let slot):
            let (now, profile) = (self.now, self.profile)
            guard let (beacons, constraint, label) = sessions.update(slot: slot, { session in
                (session.deliver(at: now, profile: profile), session.constraint, session.label)
            }) else { return }
            // A helper session shared by several regions inside: each gets its delivery, under its
            // own identifier, as each region ranged on its own would (the first owner is `label`).
            if sessions.ownerCount(slot: slot) > 1 {
                for owner in sessions.owners(slot: slot) {
                    events.append(LocationEvent(timestamp: now, kind: .didRangeBeacons(beacons, constraint, label: owner)))
                }
            } else {
                events.append(LocationEvent(timestamp: now, kind: .didRangeBeacons(beacons, constraint, label: label)))
            }
        case .retry(let id):
            guard let region = retries.take(id: id) else { return }
            events += register(region)
        case .wake:
            wakeRequestAt = nil
            for entry in order {
                if let region = liveRegion(entry) { events += requestState(region) }
            }
        case .nearestAbsent(let identity):
            events += fireNearestAbsence(identity)
        }
    }

    /// A circular region's crossing held for its dwell: the record in place, its index slot from
    /// `geoIndexSlots` (no identifier hashed). Out of ``fire(_:into:)``: inside it the compiler copied
    /// the whole engine for every dwell fired (its 50 references retained and released: ≈ 2,800
    /// instructions a fire, ≈ 1,000 a fix at 1 M regions in `count.sh geofence`).
    @inline(never)
    mutating func fireGeoDwell(slot: Int, into events: inout [LocationEvent]) {
        guard let taken = regions.update(slot: slot, { monitored -> (candidate: RegionState, since: Timestamp, distance: Double?)? in
            guard let candidate = monitored.candidate, let since = monitored.candidateSince else { return nil }
            monitored.candidate = nil
            monitored.candidateSince = nil
            return (candidate, since, monitored.lastDistance)
        }), let (candidate, since, distance) = taken else { return }
        // (`setState` files the region again under its new state and candidate: `trackGeo`.)
        // The reason is a constant, the seconds held are the evidence's `dwell`: a text with the
        // number in it was a string built per crossing (≈ 740 instructions, a heap allocation)
        // to say what `dwell` says, and a constant reason can be counted and grouped by.
        let indexSlot = Self.geoIndexSlot(record: slot, in: geoIndexSlots)
        setState(slot: slot, indexSlot: indexSlot, candidate, crossing: true, evidence: EventEvidence(
            distance: distance, horizontalAccuracy: lastFix?.horizontalAccuracy, dwell: now - since,
            reason: candidate == .inside ? "held inside the boundary buffer" : "held outside the boundary buffer"), into: &events)
    }

    /// The absence entry of `identity` is due (the queue's minimum, live): a beacon heard by no
    /// scanner any more (every track gone under the profile's exit detector) leaves its last
    /// scanner (`didChangeNearestScanner` to none) and its state is dropped — a beacon that left
    /// is not "in the kitchen" for ever, and the engine keeps state only for the beacons heard
    /// lately, however many identities it ever heard. One still heard files its new time.
    mutating func fireNearestAbsence(_ identity: BeaconIdentity) -> [LocationEvent] {
        nearestAbsences.popMin()
        return absenceDue(identity)
    }

    /// ``fireNearestAbsence(_:)`` once its entry is off the queue (or stale, from
    /// ``reconsiderHeldAbsences()``): filed again while a track or a region's stream holds the
    /// beacon, else its departure.
    mutating func absenceDue(_ identity: BeaconIdentity) -> [LocationEvent] {
        heldAbsences.remove(identity)
        guard var state = nearest[identity] else { return [] }
        if profile.nearestScanner != nil, fileNearestAbsence(identity, &state, onlyAfter: now) != nil {
            nearest[identity] = state
            return []
        }
        // No track alive, but a region's stream of it still is (a scanner heard only now and then):
        // the room goes when that region would let the beacon go, not before.
        if profile.nearestScanner != nil, let held = regionStreamsDeadline(of: identity), held > now {
            state.absentAt = held
            nearestAbsences.push(NearestAbsence(time: held, identity: identity))
            nearest[identity] = state
            heldAbsences.insert(identity)
            return []
        }
        nearest[identity] = nil
        guard profile.nearestScanner != nil, let previous = state.current else { return [] }
        // Heard during an outage of the beacon source (another path, a filter the broker still
        // serves), then not: the outage's silence is no departure. Set aside with the others.
        if isBeaconSourceAway {
            suspendedRooms[identity] = previous
            return []
        }
        return [departure(identity, from: previous, reason: "heard by no scanner")]
    }

    /// The beacons whose absence is held for their regions' streams (``absenceDue(_:)``) whose
    /// hold may have gone — a region of theirs removed, no longer inside, the profile changed —
    /// are looked at again: one no region holds as long any more leaves its room now, or at the
    /// earlier time its streams now say (the absence queue is lazy but never late). Nothing while
    /// no absence is held.
    mutating func reconsiderHeldAbsences() -> [LocationEvent] {
        guard !heldAbsences.isEmpty else { return [] }
        var events: [LocationEvent] = []
        // In the identities' order: a set's own order differs between two equal engines.
        for identity in heldAbsences.sorted() {
            guard let state = nearest[identity], let at = state.absentAt, at > now else {
                heldAbsences.remove(identity)   // gone, or due now: the queue takes it
                continue
            }
            if let deadline = state.absentDeadline(detector: profile.exitDetector), !(at > deadline) {
                heldAbsences.remove(identity)   // filed for a track again
                continue
            }
            if let held = regionStreamsDeadline(of: identity), held >= at { continue }
            events += absenceDue(identity)   // its entry in the queue is dropped lazily
        }
        return events
    }

    /// Drops absence entries at the queue's front that their beacon's state no longer names
    /// (filed again earlier, or the state is gone), so the front is live.
    mutating func settleNearestAbsences() {
        while let first = nearestAbsences.min, nearest[first.identity]?.absentAt != first.time {
            nearestAbsences.popMin()
        }
    }

    /// Why ``startMonitoring(_:at:)`` would refuse `region` now (`monitoringDidFail` with this
    /// error: no usable source for its kind, a radius beyond the profile's maximum, the region
    /// limit), or `nil` when it would be monitored. Nothing changes: a caller that must not leave
    /// a refused region behind (a retry filed for it, a region parked until its source returns)
    /// asks first.
    ///
    /// ```swift
    /// if let refusal = engine.refusal(for: region) { throw refusal }   // before saving it anywhere
    /// ```
    public func refusal(for region: Region) -> RegionKitError? {
        validate(region)
    }

    /// Why `region` can never be registered as it is, whatever its source does: its radius, or
    /// the region limit counted with the regions waiting for their source (an outage takes them
    /// out of the engine's tables, not out of the count they come back to).
    ///
    /// ```swift
    /// engine.permanentRefusal(for: hugeCircle)   // radiusTooLarge, also while gpsd is down
    /// ```
    public func permanentRefusal(for region: Region) -> RegionKitError? {
        if let refusal = radiusRefusal(region) { return refusal }
        return limitRefusalCountingWaiting(region)
    }

    /// The region limit refusing `region`, the regions waiting for their source counted with the
    /// monitored ones (not `region`'s own identifier: it takes that place).
    func limitRefusalCountingWaiting(_ region: Region) -> RegionKitError? {
        guard let limit = profile.regionLimit, regions[region.identifier] == nil else { return nil }
        // Below the limit even counting every waiting region: no set to build (review finding: one was built at each registration).
        guard regions.count + retries.count + abandoned.count >= limit else { return nil }
        var others = Set(waitingRegions.lazy.map(\.identifier).filter { self.regions[$0] == nil })
        others.remove(region.identifier)
        guard regions.count + others.count >= limit else { return nil }
        return RegionKitError(.regionMonitoringFailure,
            "region '\(region.identifier)': the limit of \(limit) monitored regions is reached (profile \(profile.name)), counting \(others.count) waiting for their source")
    }

    /// Whether `region`, refused now for want of its source, would wait for it and be registered
    /// when it works: a source of its kind is configured and has not reported yet (whatever the
    /// automation), or may come back (not denied its use) with the retry helper on, and nothing
    /// else refuses it for good (``permanentRefusal(for:)``).
    ///
    /// ```swift
    /// engine.waitsForSource(lobby)   // true while the broker restarts, false with no beacon source at all
    /// ```
    public func waitsForSource(_ region: Region) -> Bool {
        guard let status = sources[region.kind], !status.isAuthorized else { return false }
        if case .denied = status { return false }
        guard automation.retry != nil || status == .notDetermined else { return false }
        return permanentRefusal(for: region) == nil
    }

    func radiusRefusal(_ region: Region) -> RegionKitError? {
        profile.radiusRefusal(for: region)
    }

    /// Why `region` cannot be registered now, if it cannot. Its radius first: a refusal for good
    /// is not filed for a retry while the source is away (it replaced the region of its identifier,
    /// and was refused at the retry).
    func validate(_ region: Region) -> RegionKitError? {
        if let refusal = radiusRefusal(region) { return refusal }
        let status = sourceStatus(for: region.kind)
        guard status.isAuthorized else {
            let source = region.kind == .beacon ? "beacon source" : "location source"
            if status == .notDetermined {   // (the region waits for it: ``parkUndetermined(_:)``)
                return RegionKitError(.sourceUnavailable, "region '\(region.identifier)': waiting for the \(source), which has not reported yet (notDetermined)")
            }
            return RegionKitError(.sourceUnavailable, "region '\(region.identifier)': no usable \(source): \(status)")
        }
        if let limit = profile.regionLimit, regions[region.identifier] == nil, regions.count >= limit {
            return RegionKitError(.regionMonitoringFailure,
                "region '\(region.identifier)': the limit of \(limit) monitored regions is reached (profile \(profile.name))")
        }
        // A new region counts the regions waiting for their source, of any kind (review finding: a
        // circle started while beacons waited at the limit, and one of them failed when the scanner
        // came). A waiting region coming back competes with the monitored ones alone: it holds its
        // place in the count already.
        if !retries.isEmpty || !abandoned.isEmpty, waitingRegion(region.identifier) == nil, let refusal = limitRefusalCountingWaiting(region) { return refusal }
        return nil
    }

    /// Adds a fresh record for `region`; a region with its identifier is replaced (as
    /// ``remove(_:)`` then this would: one lookup of the identifier instead of two).
    mutating func insert(_ region: Region) {
        var replaced: RegionRecord?
        let record = regions.insert(RegionRecord(region: region, registeredAt: now), replaced: &replaced)
        if let replaced { detach(replaced, slot: record) }
        let sequence = schedule.register(slot: record)
        order.append(slot: record, sequence: sequence)
        let registered = RegisteredID(sequence: sequence, slot: Int32(truncatingIfNeeded: record))
        switch region {
        case .beacon(let beacon):
            beaconIndex.append(registered, for: BeaconMatchTable.Key(beacon.constraint), in: regions)
            reschedule(slot: record)
        case .circular(let circle):
            var indexSlot: Int?
            do {
                indexSlot = try circularIndex.insert(slotOnly: IndexedRegion(id: circle.identifier, latitude: circle.latitude,
                                                                             longitude: circle.longitude, radius: circle.radius),
                                                     tag: registered.sequence)
                if let indexSlot {
                    if geoRegionSlots.count <= indexSlot { geoRegionSlots += repeatElement(-1, count: indexSlot + 1 - geoRegionSlots.count) }
                    geoRegionSlots[indexSlot] = registered.slot
                    if geoIndexSlots.count <= record { geoIndexSlots += repeatElement(-1, count: record + 1 - geoIndexSlots.count) }
                    geoIndexSlots[record] = Int32(truncatingIfNeeded: indexSlot)
                }
            } catch {
                geoUnindexed.insert(circle.identifier)
            }
            trackGeo(indexSlot: indexSlot, record: record)
        }
        if !failureCounts.isEmpty { failureCounts[region.identifier] = nil }
    }

    mutating func register(_ region: Region) -> [LocationEvent] {
        if let failure = validate(region) {
            if failure.code == .sourceUnavailable, let parked = parkUndetermined(region) { return parked }
            // Refused for want of its source with the retry helper on, it is filed to be
            // registered later (``fail(_:_:)``): it replaces a region monitored under its
            // identifier now (of the other kind, whose source works), which the retry would
            // replace anyway. A refusal for good leaves that one monitored.
            if failure.code == .sourceUnavailable, automation.retry != nil { _ = remove(region.identifier) }
            return fail(region, failure)
        }
        insert(region)   // replaces a region with this identifier
        var events = [LocationEvent(timestamp: now, kind: .didStartMonitoring(region))]
        // Registered again after its source went away (a retry, the source back): the state it had.
        if !suspendedStates.isEmpty, let kept = suspendedStates.removeValue(forKey: region.identifier) {
            events += carryOver(region, state: kept.state, since: kept.since)
        }
        if case .circular = region, let lastFix {
            events += evaluate(lastFix, regionID: region.identifier)
        }
        if automation.requestStateOnStart {
            events += requestState(region)
        }
        return events
    }

    mutating func remove(_ identifier: String) -> [LocationEvent] {
        guard let slot = regions.slot(of: identifier), let monitored = regions.removeValue(forKey: identifier) else { return [] }
        detach(monitored, slot: slot)
        return []
    }

    /// The region of an entry of ``order`` taken before the walk began, if it is still
    /// registered in that slot (a walk that stops or fails regions changes the order it walks).
    func liveRegion(_ entry: RegistrationOrder.Entry) -> Region? {
        guard schedule.number(slot: entry.slot) == entry.sequence else { return nil }
        return regions.region(slot: entry.slot)
    }

    /// Undoes what registering `monitored` in `slot` filed besides its record: its place in the
    /// order, its timer, its index entries, its automatic ranging.
    mutating func detach(_ monitored: RegionRecord, slot: Int) {
        let identifier = monitored.region.identifier
        if let sequence = schedule.number(slot: slot) { order.remove(sequence: sequence) }
        schedule.unregister(slot: slot)   // its timer entry is dropped lazily
        switch monitored.region {
        case .beacon(let beacon):
            beaconIndex.remove(slot: Int32(truncatingIfNeeded: slot), for: BeaconMatchTable.Key(beacon.constraint))
        case .circular:
            if let indexSlot = geoIndexSlot(record: slot) {
                geoActive.remove(indexSlot)
                geoResting.remove(indexSlot)
                if indexSlot < geoRegionSlots.count { geoRegionSlots[indexSlot] = -1 }
                circularIndex.remove(slot: indexSlot)
            }
            if slot < geoIndexSlots.count { geoIndexSlots[slot] = -1 }
            geoUnindexed.remove(identifier)
        }
        sessions.removeAutomatic(label: identifier)
    }

    mutating func fail(_ region: Region, _ error: RegionKitError) -> [LocationEvent] {
        var events = [LocationEvent(timestamp: now, kind: .monitoringDidFail(region, error))]
        if error.code == .sourceUnavailable, let retry = automation.retry {
            let count = failureCounts[region.identifier, default: 0] + 1
            failureCounts[region.identifier] = count
            if count <= retry.maximumAttempts {
                retries.file(region, due: now + retry.boundedDelay)
            } else {
                events[0].evidence = EventEvidence(reason: "retries exhausted: the registration and \(count - 1) \(count == 2 ? "retry" : "retries") failed (maximumAttempts \(retry.maximumAttempts)); registering again when the source is back")
                abandoned.append(region, for: region.identifier)
                undetermined.remove(region.identifier)
            }
        }
        // A state carried for it (``suspendedStates``) goes unless some definition of it still
        // waits (filed above, or an earlier one a refusal for good left waiting).
        if !suspendedStates.isEmpty, waitingRegion(region.identifier) == nil { suspendedStates[region.identifier] = nil }
        return events
    }

    /// Parks `region`, refused for want of its source, when that source has not reported yet
    /// (`notDetermined`): no event, whatever the automation (`[]`); it is registered when the
    /// source reports `authorized`, and fails (retried with the helper) when it reports it cannot
    /// be used. Core Location keeps the regions an app registers before the user answers the
    /// authorization prompt in the same way. It replaces a region monitored under its identifier
    /// now, as a region filed for a retry does. Refused for good (``permanentRefusal(for:)``: the
    /// limit counted with the waiting regions) it fails at once with that reason. `nil`: the
    /// source has reported, and the registration fails as before.
    mutating func parkUndetermined(_ region: Region) -> [LocationEvent]? {
        guard sources[region.kind] == .notDetermined else { return nil }
        if let refusal = permanentRefusal(for: region) { return fail(region, refusal) }
        _ = remove(region.identifier)
        retries.cancel(id: region.identifier)
        abandoned.append(region, for: region.identifier)
        undetermined.insert(region.identifier)
        return []
    }

    /// The `kind` source reported `status` (not usable) after not having reported: the regions
    /// parked meanwhile (``parkUndetermined(_:)``) fail in the order they were parked, as a
    /// registration would have failed now (filed for a retry with the helper on, dropped
    /// without). Regions whose retries ran out keep waiting for the source.
    mutating func failUndetermined(_ kind: RegionKind, _ status: AuthorizationStatus) -> [LocationEvent] {
        let marked = undetermined
        let parked = abandoned.removeAll { $0.kind == kind && marked.contains($0.identifier) }
        var events: [LocationEvent] = []
        for region in parked {
            undetermined.remove(region.identifier)
            events += fail(region, RegionKitError(.sourceUnavailable,
                "region '\(region.identifier)': no usable \(kind == .beacon ? "beacon source" : "location source"): \(status)"))
        }
        return events
    }

    /// `answeringUnknown`: a circular region not yet determined (no fix since it was registered)
    /// is answered `unknown` now, its request kept for the first fix. Not for the automatic
    /// requests (at registration, on waking): every circle registered before the receiver's
    /// first fix would log an `unknown` at each start.
    mutating func requestState(_ region: Region, answeringUnknown: Bool = false) -> [LocationEvent] {
        guard let monitored = regions[region.identifier] else {
            return [LocationEvent(timestamp: now, kind: .monitoringDidFail(region,
                RegionKitError(.regionNotMonitored, "requestState: region '\(region.identifier)' is not monitored")))]
        }
        if monitored.state == .unknown {
            regions[region.identifier]?.stateRequested = true
            guard answeringUnknown, case .circular = monitored.region else { return [] }
            return [LocationEvent(timestamp: now, kind: .didDetermineState(.unknown, monitored.region),
                                  evidence: EventEvidence(reason: "no location fix yet: the state follows with the first fix"))]
        }
        return [LocationEvent(timestamp: now, kind: .didDetermineState(monitored.state, monitored.region),
                              evidence: EventEvidence(reason: "requested"))]
    }

    /// Changes a region's state. A crossing (inside ↔ outside) gives didEnter/didExit (per the
    /// notify flags) and didDetermineState; a first determination only answers a pending request.
    mutating func setState(_ id: String, _ state: RegionState, crossing: Bool, evidence: EventEvidence?) -> [LocationEvent] {
        guard let slot = regions.slot(of: id) else { return [] }
        return setState(slot: slot, state, crossing: crossing, evidence: evidence)
    }

    /// ``setState(_:_:crossing:evidence:)`` for the region in `slot` of ``regions``, its record
    /// updated in place (no identifier hashed). `indexSlot`: a circular region's
    /// ``circularIndex`` slot when the caller has it (`nil`: looked up by identifier).
    mutating func setState(slot: Int, indexSlot: Int? = nil, _ state: RegionState, crossing: Bool, evidence: EventEvidence?) -> [LocationEvent] {
        var events: [LocationEvent] = []
        setState(slot: slot, indexSlot: indexSlot, state, crossing: crossing, evidence: evidence, into: &events)
        return events
    }

    /// ``setState(slot:indexSlot:_:crossing:evidence:)`` with the events appended to `events`
    /// (a crossing's two events straight into the caller's array, not into one of their own first).
    /// The record is changed in place and the events are built after, outside the closure: built
    /// inside it, each event was made in a temporary, copied into the array and destroyed
    /// (≈ 1,000 instructions a crossing in `count.sh geofence`), and the array grew once per event.
    mutating func setState(slot: Int, indexSlot: Int? = nil, _ state: RegionState, crossing: Bool, evidence: consuming EventEvidence?,
                           into events: inout [LocationEvent]) {
        let now = self.now
        guard let (region, notified, determined) = regions.update(slot: slot, { monitored -> (Region, notified: Bool, determined: Bool) in
            let crossed = crossing && monitored.state != .unknown && monitored.state != state
            let determined = crossed || monitored.stateRequested
            if determined { monitored.stateRequested = false }
            if monitored.state != state {
                monitored.state = state
                monitored.stateSince = now
            }
            let region = monitored.region
            return (region, crossed && (state == .inside ? region.notifyOnEntry : state == .outside && region.notifyOnExit), determined)
        }) else { return }
        // Filed again, and what automatic ranging needs taken, before the events are built: the
        // last event then takes the region and the evidence over instead of copying them (a
        // crossing's two events copied each twice, ≈ 1,500 instructions of `count.sh geofence`'s
        // 3,100 a dwell fired).
        var ranging: (constraint: BeaconIdentityConstraint, label: String)?
        var beaconRegion = false
        switch region {
        case .circular:
            trackGeo(indexSlot: indexSlot ?? Self.geoIndexSlot(record: slot, in: geoIndexSlots), record: slot)
        case .beacon(let beacon):
            beaconRegion = true
            reschedule(slot: slot)
            if automation.rangeWhileInside { ranging = (beacon.constraint, beacon.identifier) }
        }
        let adding = (notified ? 1 : 0) + (determined ? 1 : 0)
        if adding > 0 { events.growCapacity(toAtLeast: events.count + adding) }
        switch (notified, determined) {
        case (true, true):
            events.append(LocationEvent(timestamp: now, kind: state == .inside ? .didEnterRegion(region) : .didExitRegion(region),
                                        evidence: copy evidence))
            events.append(LocationEvent(timestamp: now, kind: .didDetermineState(state, consume region), evidence: consume evidence))
        case (true, false):
            events.append(LocationEvent(timestamp: now, kind: state == .inside ? .didEnterRegion(consume region) : .didExitRegion(consume region),
                                        evidence: consume evidence))
        case (false, true):
            events.append(LocationEvent(timestamp: now, kind: .didDetermineState(state, consume region), evidence: consume evidence))
        case (false, false):
            break
        }
        if let ranging {
            if state == .inside {
                // Every scanner's sightings, also for a region bound to one (see `Automation.rangeWhileInside`).
                events += beginRanging(ranging.constraint, scannerID: nil, label: ranging.label, automatic: true)
            } else {
                sessions.removeAutomatic(label: ranging.label)
            }
        }
        // A beacon region no longer inside holds no room's absence any more.
        if beaconRegion, state != .inside, !heldAbsences.isEmpty { events += reconsiderHeldAbsences() }
    }

    mutating func beginRanging(_ constraint: BeaconIdentityConstraint, scannerID: String?, label: String, automatic: Bool) -> [LocationEvent] {
        let status = sourceStatus(for: .beacon)
        guard status.isAuthorized else {
            return [LocationEvent(timestamp: now, kind: .didFailRanging(constraint, label: label,
                RegionKitError(.rangingUnavailable, "cannot range \(label): no usable beacon source: \(status)")))]
        }
        if let slot = sessions.slot(of: constraint, scannerID: scannerID) {
            // Another label ranges the same constraint and scanner: this one shares its session
            // (delivered under each owner's label; it stops when the last of them gives it up).
            sessions.claim(slot: slot, label: label, byApp: !automatic)
            return []
        }
        sessions.start(RangingSession(constraint: constraint, label: label, scannerID: scannerID, startedAt: now,
                                      interval: profile.rangingInterval, automatic: automatic))
        return []
    }

    /// Files a circular region under `geoActive` according to its current record.
    mutating func trackGeo(_ id: String) {
        let record = regions.slot(of: id)
        trackGeo(indexSlot: geoIndexSlot(record: record), record: record)
    }

    /// ``trackGeo(_:)`` by the region's ``circularIndex`` slot (`nil`: not in the index) and the
    /// slot of its record (`nil`: the region is not monitored): no identifier is hashed.
    mutating func trackGeo(indexSlot slot: Int?, record: Int?) {
        // Whether a circular region's record, read in place, keeps it active.
        var active: Bool?
        if let record {
            active = regions.update(slot: record) { monitored -> Bool? in
                guard case .circular = monitored.region else { return nil }
                return Self.isGeoActive(monitored)
            } ?? nil
        }
        // Whatever changed, the region is evaluated on the next fix (it may rest again after it).
        if let slot { geoResting.remove(slot) }
        guard let active, let record else {
            if let slot { geoActive.remove(slot) }
            return
        }
        if let slot {
            if active { geoActive.insert(slot) } else { geoActive.remove(slot) }
        }
        reschedule(slot: record)
    }

    /// Whether a fix anywhere can change this circular region (``geoActive``'s rule).
    static func isGeoActive(_ monitored: RegionRecord) -> Bool {
        monitored.state != .outside || monitored.candidate != nil || monitored.restoredAt != nil
    }

    static func format(_ seconds: Double) -> String {
        seconds.tenthsText
    }
}
