import RegionKit
import RegionKitConcurrency
import RegionKitStore

/// A ``ClusterStoring`` for a ``PartitionWorker`` tested without PostgreSQL: the region store is
/// a SQLite ``RegionStore`` (through ``InterposingStore``); leases, members and singletons are
/// never granted, no partition has stored contributions, and contributions and events are taken
/// and counted without merging (``ContributionOutcome/unchanged``).
final class UnleasedClusterStore: InterposingStore, ClusterStoring, @unchecked Sendable {
    /// Contributions and event batches written, in order, as "region state" and "events N".
    let writes = LockedBox<[String]>([])

    func heartbeat(member: String, ttl: Double) async throws {}
    func leave(member: String) async throws {}
    func balanceLeases(member: String, partitions: Int, ttl: Double, reclaimOnly: Bool) async throws -> LeaseRound {
        LeaseRound(held: [], taken: [], surplus: 0, liveMembers: 1)
    }
    func releaseLeases(member: String, partitions: [Int]) async throws {}
    func recordSightings(member: String, total: Int64) async throws {}
    func members() async throws -> [(member: String, expiresIn: Double, sightings: Int64)] { [] }
    func holdSingleton(_ name: String, member: String, ttl: Double) async throws -> Int64? { nil }
    func releaseSingleton(_ name: String, member: String) async throws {}
    func leases() async throws -> [(partition: Int, owner: String?, epoch: Int64, expiresIn: Double)] { [] }
    func ensureRegions(_ regions: [Region], at time: Double) async throws {}
    func contributions(partition: Int) async throws -> [String: RegionContribution] { [:] }
    func applyContribution(region: String, lease: PartitionLease, member: String, state: RegionState, since: Double?, time: Double,
                           events: @escaping @Sendable (_ previous: RegionState?, _ merged: RegionState, _ since: Double?) -> [ClusterEventRow])
        async throws -> ContributionOutcome {
        writes.withLock { $0.append("\(region) \(state.rawValue)") }
        return .unchanged
    }
    func appendEvents(_ rows: [ClusterEventRow], lease: PartitionLease, member: String) async throws -> ContributionOutcome {
        writes.withLock { $0.append("events \(rows.count)") }
        return .unchanged
    }
}
