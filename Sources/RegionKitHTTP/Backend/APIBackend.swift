import RegionKitCore
import RegionKitStore

/// What ``RegionKitServer`` reads and changes: the seam between the HTTP API and the daemon it
/// serves. One daemon is a ``SingleDaemonBackend`` (its `MonitoringService`: its engine, its store,
/// its live events); a member of a cluster is a ``ClusterMemberBackend`` (the shared store's merged
/// states and event log, the configured regions and this member's partition engines), so that any
/// member answers for the whole cluster.
///
/// ```swift
/// let server = RegionKitServer(backend: SingleDaemonBackend(service: service), configuration: http, events: events)
/// let member = RegionKitServer(backend: ClusterMemberBackend(engine: clusterEngine), configuration: http, events: EventBroadcaster())
/// ```
public protocol APIBackend: Sendable {
    /// The event log, states, hook deliveries and the writability probe.
    var store: any RegionStoring { get }
    /// The largest radius (metres) of a circular region the daemon accepts (`PUT`, the OpenAPI document).
    var maximumRegionRadius: Double { get }
    /// Why `PUT` and `DELETE /v1/regions/{id}` are refused (answered 405 with this text), or nil
    /// when the API may change the monitored regions.
    var regionChangesRefusal: String? { get }

    /// The monitored regions in order, then those waiting for their source (or only `identifier`,
    /// if monitored or waiting), with their states.
    func regionReports(only identifier: String?) async throws -> [RegionReport]
    /// One page of the regions (monitored or waiting for their source) in identifier order,
    /// with their states (`GET /v1/regions?limit=`): only the page's rows are read from the store.
    func regionPage(_ query: RegionPage.Query) async throws -> RegionPage
    /// Saves and monitors `region`; whether a region of that identifier existed before.
    func putRegion(_ region: Region) async throws -> Bool
    /// Stops monitoring and forgets the region (one waiting for its source too); false when there
    /// is no such region.
    func removeRegion(_ identifier: String) async throws -> Bool
    /// `POST /v1/regions/{id}/request-state`.
    func requestState(_ identifier: String) async throws -> StateRequestOutcome
    /// The `limit` beacons heard most recently (`GET /v1/beacons`), with ``BeaconSnapshot/total``.
    func beacons(limit: Int) -> BeaconSnapshot
    /// The `limit` scanners heard most recently (`GET /v1/scanners`), with ``ScannerSnapshot/total``.
    func scanners(limit: Int) -> ScannerSnapshot
    /// The scanners that said they are offline and have not come back, sorted
    /// (``BeaconSnapshot/offlineScanners``, `regionkit_scanners_offline`).
    var offlineScanners: [String] { get }
    /// Monitored regions by state (`inside`, `outside`, `unknown`) for `/metrics`.
    func regionCountsByState() async throws -> [String: Int]
    /// Events that could not be written to the store (nil: not counted by this daemon).
    var persistenceFailures: Int? { get }
    /// Gauges about this daemon's place in a cluster for `/metrics` (none for one daemon).
    func memberGauges() async throws -> [MemberGauge]
    /// `GET /v1/cluster`: the cluster's members and leases (nil for one daemon: answered 404).
    func clusterReport() async throws -> ClusterReport?
    /// Feeds `events` (the SSE streams' live notifications) with the events logged from now on,
    /// until the task is cancelled; returns at once when something else feeds it (one daemon's
    /// `onLogged`).
    func followLog(into events: EventBroadcaster) async
}

extension APIBackend {
    public func memberGauges() async throws -> [MemberGauge] { [] }
    public func clusterReport() async throws -> ClusterReport? { nil }
}
