import RegionKitCore
import RegionKitEngine

/// What the service, its outputs and the HTTP API need from durable storage: monitored regions,
/// each region's last state, the append-only event log read with id cursors, hook deliveries and
/// output cursors. ``RegionStore`` (SQLite, one machine, the default) and `PostgresRegionStore`
/// (module `RegionKitPostgres`, the shared store of a cluster) conform; both are checked by one
/// conformance suite.
///
/// Every requirement is `async` so that a networked store can conform; ``RegionStore``'s
/// synchronous methods satisfy them as they are.
///
/// Event ids are the log's cursor: they increase in the order events become visible to readers
/// (committed), so a reader that has handed on every event up to id `n` misses none by asking for
/// `afterID: n` next. In a shared store they are unique across every engine writing to it.
///
/// ```swift
/// func handOn(_ store: some RegionStoring, output: String) async throws {
///     var cursor = try await store.outputCursor(output, createAtEnd: true)
///     for event in try await store.events(since: nil, region: nil, type: nil, afterID: cursor, limit: 100) {
///         print(event.json)
///         cursor = event.id
///     }
///     try await store.setOutputCursor(output, to: cursor)
/// }
/// ```
public protocol RegionStoring: Sendable {
    // MARK: Regions and states

    /// Saves (or replaces) a monitored region and forgets its stored state; `origin` `nil` keeps
    /// the stored origin of a region already saved (``RegionOrigin/configuration`` for a new one).
    func saveRegion(_ region: Region, at time: Double, origin: RegionOrigin?) async throws
    /// Forgets a monitored region and its state (its events stay in the log).
    func removeRegion(_ identifier: String) async throws
    /// Monitored regions in registration order (first saved first; replacing keeps the place).
    /// A row that no longer decodes is reported, not skipped.
    func storedRegions() async throws -> [StoredRegion]
    /// Where each monitored region came from, by identifier.
    func regionOrigins() async throws -> [String: RegionOrigin]
    func saveState(_ identifier: String, state: RegionState, since: Double?, evidence: EventEvidence?, at time: Double) async throws
    /// The last stored state of every region that has one.
    func states() async throws -> [String: RegionStore.StoredState]
    /// One monitored region, read by its identifier (a PUT or a GET of one region read every
    /// row before); nil when none is stored.
    func storedRegion(_ identifier: String) async throws -> StoredRegion?
    /// One region's last stored state, read by its identifier; nil when it has none.
    func state(of identifier: String) async throws -> RegionStore.StoredState?
    /// Where each of `identifiers` came from, read by key (a page of `GET /v1/regions?limit=`
    /// reads its own rows, not every row); an identifier with no stored region is left out.
    func regionOrigins(of identifiers: [String]) async throws -> [String: RegionOrigin]
    /// The last stored state of each of `identifiers` that has one, read by key.
    func states(of identifiers: [String]) async throws -> [String: RegionStore.StoredState]
    /// The room each beacon is placed in, as the last ``StoreWrite/room(_:scanner:at:)`` of it
    /// left it: its identity's `description` → the scanner. A restarted daemon starts its engine
    /// from them (`LocationManager.restoreNearestScanners(_:)`), so a beacon that left while it
    /// was down leaves its room instead of keeping it for good.
    func beaconRooms() async throws -> [String: String]

    // MARK: Event log

    /// Appends an event and one pending delivery per hook in one transaction; returns the event's
    /// id once it is durable.
    @discardableResult
    func append(time: Double, type: String, region: String?, state: String?, reason: String?, json: String, hooks: [String]) async throws -> Int64
    /// Logged events in id order, filtered by time (`>= since`), region, type and id (`> afterID`).
    func events(since: Double?, region: String?, type: String?, afterID: Int64?, limit: Int?) async throws -> [StoredEvent]
    /// Commits `writes` in order in one transaction: all of them or none (a failure rolls back
    /// the whole batch). Returns the stored event of every `.event` write, in order, with ids
    /// increasing as ``append(time:type:region:state:reason:json:hooks:)`` would give them.
    func apply(_ writes: [StoreWrite]) async throws -> [StoredEvent]
    /// How many events of each type were ever logged: those the log holds plus those the
    /// retention pruned (``PrunedTally``), so a total never goes back.
    func eventCounts() async throws -> [String: Int]
    /// The id of the newest logged event (0 when the log is empty).
    func lastEventID() async throws -> Int64
    /// Deletes up to `limit` events that are older than `olderThan` (event time, seconds) or more
    /// than `keepingNewest` ids below the newest (the oldest first; at most `keepingNewest` are
    /// kept, fewer where ids are missing), in one transaction; returns how many.
    /// Kept whatever the limits: the newest event (the log's id cursor never goes back: an empty
    /// log would read as a new one) and every event with a pending hook delivery (its delivery
    /// is still owed). Their finished deliveries go with them. Output cursors are not consulted:
    /// an output further behind than the retention goes on from the next event it finds.
    ///
    /// ```swift
    /// while try await store.pruneEvents(olderThan: now - 30 * 86_400, keepingNewest: nil, limit: 5_000) == 5_000 {}
    /// ```
    @discardableResult
    func pruneEvents(olderThan time: Double?, keepingNewest count: Int?, limit: Int) async throws -> Int

    // MARK: Hook deliveries

    /// Deliveries by status (those the log holds), and the failed attempts ever made (every
    /// attempt but a successful last one; with those of deliveries pruned with their event).
    func deliveryCounts() async throws -> (byStatus: [String: Int], failedAttempts: Int)
    /// Pending deliveries due at `now`, earliest due first (then by id).
    func dueDeliveries(now: Double, limit: Int) async throws -> [HookDelivery]
    /// The earliest time a pending delivery is due, if any.
    func nextDeliveryTime() async throws -> Double?
    /// Deliveries (of one status, or all) in id order.
    func deliveries(status: HookDelivery.Status?) async throws -> [HookDelivery]
    func markDelivered(_ id: Int64, at time: Double) async throws
    /// Records a failed attempt: retried at `retryAt`, or marked failed when `retryAt` is nil.
    func markAttemptFailed(_ id: Int64, error: String, retryAt: Double?) async throws
    /// Keeps at most `limit` pending deliveries (the newest); the older ones are marked dropped. Returns how many.
    @discardableResult
    func trimPendingDeliveries(toAtMost limit: Int) async throws -> Int

    // MARK: Output cursors

    /// The id of the last event `output` has handed on (0: none); with `createAtEnd`, a missing
    /// cursor is created at the log's current end.
    func outputCursor(_ output: String, createAtEnd: Bool) async throws -> Int64
    /// Moves `output`'s cursor forward to `id` (never back: a lower `id` changes nothing).
    func setOutputCursor(_ output: String, to id: Int64) async throws
    /// The beacons (their identities' `description`) whose Home Assistant entities `output` (a
    /// site's hub, `mqtt:<site>`) announced, as ``addAnnouncedBeacons(_:output:)`` recorded them.
    func announcedBeacons(_ output: String) async throws -> [String]
    /// Records that `output` announced `beacons`' entities (those recorded already stay once); a
    /// beacon dismissed before (``dismissAnnouncedBeacons(_:output:)``) is no longer.
    func addAnnouncedBeacons(_ beacons: [String], output: String) async throws
    /// The beacons whose devices were deleted in Home Assistant (their entities no longer
    /// announced by `output`), as ``dismissAnnouncedBeacons(_:output:)`` recorded them.
    func dismissedBeacons(_ output: String) async throws -> [String]
    /// Records, in one transaction, that `beacons`' devices were deleted in Home Assistant: no
    /// longer announced by `output`, and dismissed (not announced again before they are placed
    /// anew). Names never announced are dismissed too.
    func dismissAnnouncedBeacons(_ beacons: [String], output: String) async throws

    // MARK: Health

    /// Whether a write transaction can be committed now (the readiness probe).
    func checkWritable() async throws
}
