import RegionKit
import RegionKitConcurrency
import RegionKitStore

/// A ``RegionStoring`` that forwards to a SQLite ``RegionStore`` and runs a closure once, the next
/// time ``storedRegions()`` is read: a test puts something in the middle of a service's write
/// (a source lost between a check and the write it guards). Not final: ``UnleasedClusterStore``
/// adds the cluster's requirements. (`@unchecked`: a non-final class; its properties are `let`s of
/// Sendable types.)
class InterposingStore: RegionStoring, @unchecked Sendable {
    let base: RegionStore
    /// Runs once (then cleared) at the start of the next ``storedRegions()``.
    let beforeStoredRegions = LockedBox<(@Sendable () -> Void)?>(nil)

    init(_ base: RegionStore) { self.base = base }

    func storedRegions() async throws -> [StoredRegion] {
        let interposed = beforeStoredRegions.withLock { hook in defer { hook = nil }; return hook }
        interposed?()
        return try base.storedRegions()
    }

    func saveRegion(_ region: Region, at time: Double, origin: RegionOrigin?) async throws { try base.saveRegion(region, at: time, origin: origin) }
    func removeRegion(_ identifier: String) async throws { try base.removeRegion(identifier) }
    func regionOrigins() async throws -> [String: RegionOrigin] { try base.regionOrigins() }
    func saveState(_ identifier: String, state: RegionState, since: Double?, evidence: EventEvidence?, at time: Double) async throws {
        try base.saveState(identifier, state: state, since: since, evidence: evidence, at: time)
    }
    func states() async throws -> [String: RegionStore.StoredState] { try base.states() }
    /// Through ``storedRegions()``, so that the interposed closure runs for it too.
    func storedRegion(_ identifier: String) async throws -> StoredRegion? {
        try await storedRegions().first { $0.region.identifier == identifier }
    }
    func state(of identifier: String) async throws -> RegionStore.StoredState? { try base.state(of: identifier) }
    func regionOrigins(of identifiers: [String]) async throws -> [String: RegionOrigin] { try base.regionOrigins(of: identifiers) }
    func states(of identifiers: [String]) async throws -> [String: RegionStore.StoredState] { try base.states(of: identifiers) }
    func beaconRooms() async throws -> [String: String] { try base.beaconRooms() }
    func announcedBeacons(_ output: String) async throws -> [String] { try base.announcedBeacons(output) }
    func addAnnouncedBeacons(_ beacons: [String], output: String) async throws { try base.addAnnouncedBeacons(beacons, output: output) }
    func dismissedBeacons(_ output: String) async throws -> [String] { try base.dismissedBeacons(output) }
    func dismissAnnouncedBeacons(_ beacons: [String], output: String) async throws { try base.dismissAnnouncedBeacons(beacons, output: output) }
    func append(time: Double, type: String, region: String?, state: String?, reason: String?, json: String, hooks: [String]) async throws -> Int64 {
        try base.append(time: time, type: type, region: region, state: state, reason: reason, json: json, hooks: hooks)
    }
    func events(since: Double?, region: String?, type: String?, afterID: Int64?, limit: Int?) async throws -> [StoredEvent] {
        try base.events(since: since, region: region, type: type, afterID: afterID, limit: limit)
    }
    func apply(_ writes: [StoreWrite]) async throws -> [StoredEvent] { try base.apply(writes) }
    func eventCounts() async throws -> [String: Int] { try base.eventCounts() }
    func lastEventID() async throws -> Int64 { try base.lastEventID() }
    func pruneEvents(olderThan time: Double?, keepingNewest count: Int?, limit: Int) async throws -> Int {
        try base.pruneEvents(olderThan: time, keepingNewest: count, limit: limit)
    }
    func deliveryCounts() async throws -> (byStatus: [String: Int], failedAttempts: Int) { try base.deliveryCounts() }
    func dueDeliveries(now: Double, limit: Int) async throws -> [HookDelivery] { try base.dueDeliveries(now: now, limit: limit) }
    func nextDeliveryTime() async throws -> Double? { try base.nextDeliveryTime() }
    func deliveries(status: HookDelivery.Status?) async throws -> [HookDelivery] { try base.deliveries(status: status) }
    func markDelivered(_ id: Int64, at time: Double) async throws { try base.markDelivered(id, at: time) }
    func markAttemptFailed(_ id: Int64, error: String, retryAt: Double?) async throws { try base.markAttemptFailed(id, error: error, retryAt: retryAt) }
    func trimPendingDeliveries(toAtMost limit: Int) async throws -> Int { try base.trimPendingDeliveries(toAtMost: limit) }
    func outputCursor(_ output: String, createAtEnd: Bool) async throws -> Int64 { try base.outputCursor(output, createAtEnd: createAtEnd) }
    func setOutputCursor(_ output: String, to id: Int64) async throws { try base.setOutputCursor(output, to: id) }
    func checkWritable() async throws { try base.checkWritable() }
}
