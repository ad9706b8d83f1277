import RegionKit
import RegionKitCore
import RegionKitService
import RegionKitStore

/// One daemon behind the HTTP API: its `MonitoringService` (the engine's regions and beacons,
/// its store, region changes through the service). Its events reach the SSE streams through the
/// service's `onLogged` (which feeds the server's ``EventBroadcaster``).
///
/// ```swift
/// let events = EventBroadcaster()
/// let service = MonitoringService(store: store, sources: [.beacon: .authorized], onLogged: events.publish)
/// let server = RegionKitServer(backend: SingleDaemonBackend(service: service), configuration: http, events: events)
/// ```
public struct SingleDaemonBackend: APIBackend {
    public let service: MonitoringService

    public init(service: MonitoringService) {
        self.service = service
    }

    public var store: any RegionStoring { service.store }
    public var maximumRegionRadius: Double { service.manager.maximumRegionMonitoringDistance }
    public var regionChangesRefusal: String? { nil }
    public var persistenceFailures: Int? { service.persistenceFailures }

    /// The monitored regions, then those waiting for their source (an outage: they are not
    /// monitored, and are registered again when the source works; a DELETE removes them too).
    public func regionReports(only identifier: String?) async throws -> [RegionReport] {
        // The store is read first and the engine's snapshot taken after, used without an await:
        // kept across the store's reads, it made the engine copy every table ingest touched meanwhile.
        if let identifier {
            // One region: read by key (every row was read for it before).
            guard service.manager.monitoredOrWaitingRegion(identifier) != nil else { return [] }
            let (stored, state) = (try await service.store.storedRegion(identifier), try await service.store.state(of: identifier))
            let engine = service.manager.engineSnapshot
            return Self.report(identifier, in: engine, origin: stored?.origin, stored: state).map { [$0] } ?? []
        }
        let (origins, states) = (try await service.store.regionOrigins(), try await service.store.states())
        let engine = service.manager.engineSnapshot
        let monitored = engine.monitoredRegions.compactMap { region in
            let id = region.identifier
            return engine.monitoredRegion(id).map { RegionReport(monitored: $0, origin: origins[id], stored: states[id]) }
        }
        let waiting = engine.waitingRegions.filter { engine.monitoredRegion($0.identifier) == nil }.map { region in
            RegionReport(waiting: region, carried: engine.carriedState(of: region.identifier), origin: origins[region.identifier],
                         stored: states[region.identifier], reason: Self.waitingReason(region, engine))
        }
        return monitored + waiting
    }

    /// The page's identifiers are chosen in one snapshot of the engine, their rows read by key,
    /// and the reports built in a second snapshot (none kept across the store's reads): a region
    /// removed meanwhile is left out of its page, and the cursor still follows it.
    public func regionPage(_ query: RegionPage.Query) async throws -> RegionPage {
        let (identifiers, more, total, preceding) = { () -> ([String], Bool, Int, Int) in
            let engine = service.manager.engineSnapshot
            var selection = RegionPage.Selection(query)
            engine.forEachMonitoredIdentifier { selection.offer($0) }
            for region in engine.waitingRegions where engine.monitoredRegion(region.identifier) == nil {
                selection.offer(region.identifier)
            }
            let page = selection.page
            return (page.identifiers, page.more, selection.total, selection.preceding)
        }()
        let (origins, states) = (try await service.store.regionOrigins(of: identifiers), try await service.store.states(of: identifiers))
        let engine = service.manager.engineSnapshot
        let reports = identifiers.compactMap { Self.report($0, in: engine, origin: origins[$0], stored: states[$0]) }
        return RegionPage(reports: reports, total: total, preceding: preceding, nextCursor: more ? identifiers.last : nil)
    }

    /// The report of region `identifier` as `engine` has it, monitored or waiting for its source,
    /// with its stored origin and state; nil when it is neither.
    static func report(_ identifier: String, in engine: MonitoringEngine, origin: RegionOrigin?,
                       stored: RegionStore.StoredState?) -> RegionReport? {
        if let monitored = engine.monitoredRegion(identifier) { return RegionReport(monitored: monitored, origin: origin, stored: stored) }
        return engine.waitingRegion(identifier).map {
            RegionReport(waiting: $0, carried: engine.carriedState(of: identifier), origin: origin, stored: stored,
                         reason: waitingReason($0, engine))
        }
    }

    /// Why `region` waits: the engine's refusal now, or its source is back and its retry due.
    static func waitingReason(_ region: Region, _ engine: MonitoringEngine) -> String {
        engine.refusal(for: region)?.message ?? "its source is back: registering it again (a retry is due)"
    }

    public func putRegion(_ region: Region) async throws -> Bool {
        try await service.putRegion(region)
    }

    public func removeRegion(_ identifier: String) async throws -> Bool {
        try await service.removeRegion(identifier, reason: "deleted through the HTTP API")
    }

    public func requestState(_ identifier: String) async throws -> StateRequestOutcome {
        guard let region = service.manager.monitoredRegion(identifier)?.region else {
            let engine = service.manager.engineSnapshot
            return engine.waitingRegion(identifier).map { .waitingForSource(Self.waitingReason($0, engine)) } ?? .notMonitored
        }
        service.manager.requestState(for: region)
        return .requested
    }

    public func beacons(limit: Int) -> BeaconSnapshot {
        let engine = service.manager.engineSnapshot
        let (beacons, total) = BeaconReport.mostRecent(limit, from: engine)
        // At the daemon's clock: the engine's stands still while nothing comes in (the dashboard
        // kept every beacon of the last moment in its room once everyone had left).
        var snapshot = BeaconSnapshot(time: max(engine.now, service.manager.clock.now).seconds, beacons: beacons)
        snapshot.total = total
        snapshot.offlineScanners = engine.offlineScanners
        return snapshot
    }

    public func scanners(limit: Int) -> ScannerSnapshot {
        let engine = service.manager.engineSnapshot
        // At the daemon's clock: the engine's stands still while nothing comes in.
        let now = max(engine.now, service.manager.clock.now)
        let scanners = ScannerReport.all(from: engine, at: now)
        return ScannerSnapshot(time: now.seconds, scanners: Array(scanners.prefix(max(0, limit))), total: scanners.count)
    }

    public var offlineScanners: [String] { service.manager.offlineScanners }

    public func regionCountsByState() async throws -> [String: Int] {
        let engine = service.manager.engineSnapshot
        var byState: [String: Int] = ["inside": 0, "outside": 0, "unknown": 0]
        for region in engine.monitoredRegions {
            if let state = engine.state(of: region.identifier) { byState[state.rawValue, default: 0] += 1 }
        }
        return byState
    }

    public func followLog(into events: EventBroadcaster) async {}
}
