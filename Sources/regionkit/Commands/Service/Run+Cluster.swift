import Foundation
import Logging
import RegionKit
import RegionKitHTTP
import RegionKitPostgres
import RegionKitService
import RegionKitStore

extension Run {
    /// Cluster mode (`cluster:` in the configuration): one engine of several sharing a PostgreSQL
    /// store, taking partitions through leases (``ClusterEngine``), until SIGTERM/SIGINT, which hands
    /// its partitions back.
    func runCluster(_ configuration: ServiceConfiguration, _ cluster: ClusterConfiguration, config: String, logger: Logger) async throws {
        let location = store ?? configuration.store ?? RegionStore.defaultPath()
        guard let url = try PostgresStoreURL(parsing: location) else {
            throw RegionKitError(.invalidArgument, """
                cluster mode needs the shared PostgreSQL store (--store or store: postgres://user@host:port/database), \
                not the SQLite file '\(location)'
                """)
        }
        guard let mqtt = configuration.mqtt else {
            throw RegionKitError(.invalidArgument, "\(config): cluster needs the broker (mqtt: {urls: [...]})")
        }
        let profile = try configuration.monitoringProfile(config)
        let regions = try configuration.monitoredRegions()
        let clientConfiguration = try mqtt.clientConfiguration()
        // Read the HTTP block before anything runs: a bad token file stops the start.
        let http = try configuration.http.map { try HTTPConfiguration(settings: $0) }
        // A member frozen mid-transaction must not hold the lease rows (and every member's lease
        // round behind them) past half a lease: its session is ended by the server then.
        let postgres = try await PostgresRegionStore(host: url.host, port: url.port, username: url.user, password: url.password(),
                                                     database: url.database, tls: url.tls(), idleInTransactionTimeout: .seconds(cluster.leaseDuration / 2),
                                                     threads: 1, logger: logger)
        let stopRequest = StopRequest()
        let printJSON = json
        let engine = ClusterEngine(store: postgres, configuration: cluster, mqtt: clientConfiguration, profile: profile, regions: regions,
                                   hooks: configuration.hooks ?? HookConfiguration(), site: mqtt.siteName,
                                   publishEvents: mqtt.publishEvents != false, homeAssistant: configuration.homeAssistant,
                                   retainAllDepartures: mqtt.retainsAllDepartures, maximumBacklog: mqtt.maximumBacklog ?? PresenceHub.defaultMaximumBacklog, logger: logger,
                                   onEvents: { events in
                                       if printJSON { for event in events { Console.line(event.jsonLine) } }
                                   },
                                   onFatal: { reason in stopRequest.request(reason, failed: true) })
        // Watched before the start logs "process started": a signal from then on ends in "process stopped".
        let (signals, signalTask) = stopRequest.stopOnSignals(logger: logger)
        defer { signalTask.cancel(); withExtendedLifetime(signals) {} }
        // A signal during the start (which can wait a lease for the member name) ends it.
        let starting = Task { try await engine.start() }
        let interrupting = Task {
            if await stopRequest.wait() != nil { starting.cancel() }
        }
        do {
            try await starting.value
            interrupting.cancel()
        } catch {
            interrupting.cancel()
            await postgres.shutdown()
            if starting.isCancelled, let reason = await stopRequest.wait() {
                // (The start's own error, if it failed for another reason at that moment, is said too.)
                logger.info("stopped while starting", metadata: ["member": "\(engine.member)", "reason": "\(reason.text)",
                                                                 "error": "\((error as? RegionKitError)?.message ?? "\(error)")"])
                return
            }
            throw error
        }
        logger.info("cluster member started", metadata: ["store": "\(url.description)", "member": "\(engine.member)", "profile": "\(profile.name)",
                                                         "regions": "\(regions.count)", "partitions": "\(cluster.partitionCount)",
                                                         "lease": "\(cluster.leaseDuration) s"])
        let running = Task { await engine.run() }
        // The HTTP API answers for the whole cluster from the shared store (ClusterMemberBackend).
        let serving = http.map { http in
            let server = RegionKitServer(backend: ClusterMemberBackend(engine: engine, logger: logger), configuration: http,
                                         events: EventBroadcaster(), sources: { engine.partitionStatuses },
                                         outputs: { engine.outputStatuses }, logger: logger)
            return Task { await Self.serve(server, http, logger: logger, stopRequest: stopRequest) }
        }
        // Every member prunes the shared log (a chunk another member deleted first is found empty).
        let pruning = configuration.retention.map { retention in
            Task { await Self.pruneEvents(retention, store: postgres, now: { Date().timeIntervalSince1970 }, logger: logger) }
        }
        let reason = await stopRequest.wait() ?? ("stopped", false)
        pruning?.cancel()
        await pruning?.value
        await engine.stop(reason: reason.text)
        running.cancel()
        await running.value
        if let serving {
            serving.cancel()
            await serving.value
        }
        await postgres.shutdown()
        if reason.failed {
            logger.error("stopped", metadata: ["member": "\(engine.member)", "reason": "\(reason.text)"])
            throw RegionKitError(.storeFailed, "stopped: \(reason.text)")
        }
        logger.info("stopped", metadata: ["member": "\(engine.member)"])
    }
}
