import Foundation
import Logging
import RegionKit
import RegionKitCore
import RegionKitService
import RegionKitStore

/// A cluster member behind the HTTP API (`regionkit run` with `cluster:` and `http:`): every
/// member answers for the whole cluster from the shared store, except `GET /v1/beacons`.
///
/// - Regions and states: the configured regions (every member is configured alike) with the
///   store's *merged* states (the union of the partitions' contributions), so every member gives
///   the same answer. There is no per-region evidence (a merged state has none) and nothing is
///   `stale` (a merged state is the partitions' latest word).
/// - Events: the shared log; the SSE streams are fed by polling the log (``followLog(into:)``),
///   so they show the events every member caused, not only this one's.
/// - Region changes are refused (``regionChangesRefusal``): regions are configuration in cluster
///   mode. `request-state` answers the stored merged state (200, no event).
/// - Beacons: this member's partitions only (the ranging happens in the partition engines, spread
///   over the members); the body names the member and its partitions.
/// - Cluster (`GET /v1/cluster`): the members, their processes and partitions, and the holder of
///   every partition and of the outputs, from the shared store.
///
/// ```swift
/// let engine = ClusterEngine(store: postgres, configuration: cluster, mqtt: mqtt, profile: .responsive, regions: regions, logger: logger)
/// let server = RegionKitServer(backend: ClusterMemberBackend(engine: engine), configuration: http, events: EventBroadcaster(),
///                              sources: { engine.partitionStatuses })
/// ```
public final class ClusterMemberBackend: APIBackend {
    public let engine: ClusterEngine
    public let store: any RegionStoring
    let regions: [Region]
    /// `regions` by identifier (a page's reports are built from its identifiers).
    let regionsByIdentifier: [String: Region]
    let pollInterval: Duration
    let logger: Logger

    /// - Parameter pollInterval: how often the shared log is read for the SSE streams while any is
    ///   open (the latency an event caused on another member adds before it is streamed here).
    public init(engine: ClusterEngine, pollInterval: Duration = .milliseconds(200), logger: Logger = Logger(label: "regionkit.http")) {
        self.engine = engine
        store = engine.sharedStore
        regions = engine.configuredRegions
        regionsByIdentifier = Dictionary(regions.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        self.pollInterval = pollInterval
        self.logger = logger
    }

    /// The detail of the 405 that `PUT` and `DELETE /v1/regions/{id}` get in cluster mode (and
    /// `GET /v1/regions`'s `changesRefused`).
    public static let refusal = """
        regions are configuration in cluster mode: every member monitors the regions of its configuration file, \
        and a change made through one member would not reach the partitions the other members run; \
        change the regions in every member's configuration and restart the members one at a time (docs/cluster.md)
        """

    public var maximumRegionRadius: Double { engine.profile.maximumRegionMonitoringDistance }
    public var regionChangesRefusal: String? { Self.refusal }
    /// Not counted in cluster mode: a contribution that cannot be written is retried until it is,
    /// or until the partition's lease moves on (its next holder restores the partition).
    public var persistenceFailures: Int? { nil }

    public func regionReports(only identifier: String?) async throws -> [RegionReport] {
        let chosen = identifier.map { id in regionsByIdentifier[id].map { [$0] } ?? [] } ?? regions
        guard !chosen.isEmpty else { return [] }
        let (origins, states) = (try await store.regionOrigins(), try await store.states())
        return chosen.map { RegionReport(region: $0, origin: origins[$0.identifier], merged: states[$0.identifier]) }
    }

    public func regionPage(_ query: RegionPage.Query) async throws -> RegionPage {
        var selection = RegionPage.Selection(query)
        for region in regions { selection.offer(region.identifier) }
        let (identifiers, more) = selection.page
        let (origins, states) = (try await store.regionOrigins(of: identifiers), try await store.states(of: identifiers))
        let reports = identifiers.compactMap { id in
            regionsByIdentifier[id].map { RegionReport(region: $0, origin: origins[id], merged: states[id]) }
        }
        return RegionPage(reports: reports, total: selection.total, preceding: selection.preceding, nextCursor: more ? identifiers.last : nil)
    }

    public func putRegion(_ region: Region) async throws -> Bool {
        throw Problem(.methodNotAllowed, Self.refusal, field: "id", headers: [.allow: "GET"])
    }

    public func removeRegion(_ identifier: String) async throws -> Bool {
        throw Problem(.methodNotAllowed, Self.refusal, field: "id", headers: [.allow: "GET"])
    }

    public func requestState(_ identifier: String) async throws -> StateRequestOutcome {
        regions.contains { $0.identifier == identifier } ? .stored : .notMonitored
    }

    public func beacons(limit: Int) -> BeaconSnapshot {
        let engines = engine.partitionEngines
        // Each partition's first `limit` (a beacon is in one partition only), merged, then cut.
        let (beacons, total) = BeaconReport.merged(engines.map { BeaconReport.mostRecent(limit, from: $0.engine) }, limit: limit)
        var snapshot = BeaconSnapshot(time: Date().timeIntervalSince1970, beacons: beacons, member: engine.member,
                                      partitions: engines.map(\.lease.partition), partitionCount: engine.configuration.partitionCount)
        snapshot.total = total
        snapshot.offlineScanners = Self.offlineScanners(of: engines.map(\.engine))
        return snapshot
    }

    public func scanners(limit: Int) -> ScannerSnapshot {
        // Every partition at one time, the latest of the wall clock and their engines' (each
        // stands still while its partition hears nothing).
        let engines = engine.partitionEngines.map(\.engine)
        let now = engines.map(\.now).reduce(Timestamp(seconds: Date().timeIntervalSince1970), max)
        let scanners = ScannerReport.merged(engines.map { ScannerReport.all(from: $0, at: now) })
        return ScannerSnapshot(time: now.seconds, scanners: Array(scanners.prefix(max(0, limit))), total: scanners.count, member: engine.member)
    }

    public var offlineScanners: [String] { Self.offlineScanners(of: engine.partitionEngines.map(\.engine)) }

    /// The scanners any of `engines` (this member's partitions) knows offline, sorted.
    static func offlineScanners(of engines: [MonitoringEngine]) -> [String] {
        Array(Set(engines.flatMap(\.offlineScanners))).sorted()
    }

    public func regionCountsByState() async throws -> [String: Int] {
        let states = try await store.states()
        var byState: [String: Int] = ["inside": 0, "outside": 0, "unknown": 0]
        for region in regions { byState[(states[region.identifier]?.state ?? .unknown).rawValue, default: 0] += 1 }
        return byState
    }

    public func memberGauges() async throws -> [MemberGauge] {
        // The cluster's health from the shared store, alike on every member (alert on unheld partitions).
        let report = try await clusterReport()
        return [
            MemberGauge(name: "regionkit_cluster_members_live", help: "Cluster members whose heartbeat is live (from the shared store)",
                        value: Double(report?.members.filter(\.live).count ?? 0)),
            MemberGauge(name: "regionkit_cluster_partitions_unheld", help: "Partitions no member holds now: their sightings wait on the broker (from the shared store)",
                        value: Double(report?.partitions.filter { !$0.live }.count ?? 0)),
            MemberGauge(name: "regionkit_cluster_region_definitions",
                        help: "Different region definitions the live members run (above 1: a rolling restart under way, or a member left on another configuration)",
                        value: Double(report?.regionDefinitionsInUse ?? 0)),
            MemberGauge(name: "regionkit_cluster_partitions_held", help: "Partitions this cluster member runs now", value: Double(engine.partitions.count)),
            MemberGauge(name: "regionkit_cluster_runs_outputs", help: "1 while this cluster member runs the outputs (hooks, MQTT events)",
                        value: engine.runsOutputs ? 1 : 0),
            MemberGauge(name: "regionkit_cluster_sightings", help: "Sightings this cluster member's partitions ingested since it started",
                        value: Double(engine.sightings)),
        ]
    }

    public func clusterReport() async throws -> ClusterReport? {
        ClusterReport(member: engine.member, instance: engine.instance, partitionCount: engine.configuration.partitionCount,
                      status: try await engine.sharedStore.clusterStatus())
    }

    /// Reads the shared log from where it last was, every `pollInterval`, and hands each new event
    /// to `events` in id order (the store makes ids visible in increasing order, so a cursor skips
    /// none). While no stream is open it only moves its cursor to the log's end.
    public func followLog(into events: EventBroadcaster) async {
        var cursor: Int64?
        var failing = false
        while !Task.isCancelled {
            var full = false
            do {
                // The end is read before the subscribers are counted: a stream opening in between
                // reads everything up to it from the store itself (its catch-up), and is fed the rest.
                let end = try await store.lastEventID()
                if events.subscriberCount == 0 || cursor == nil {
                    cursor = end
                } else if let after = cursor {
                    let batch = try await store.events(since: nil, region: nil, type: nil, afterID: after, limit: EventStream.page)
                    for event in batch { events.publish(event) }
                    cursor = batch.last?.id ?? after
                    full = batch.count == EventStream.page
                }
                if failing { logger.notice("event streams: the shared log is readable again") }
                failing = false
            } catch {
                if !failing {
                    logger.warning("event streams: cannot read the shared log (retrying)", metadata: ["error": "\((error as? RegionKitError)?.message ?? "\(error)")"])
                }
                failing = true
            }
            if !full { try? await Task.sleep(for: pollInterval) }
        }
    }
}
