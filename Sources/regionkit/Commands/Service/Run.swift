import ArgumentParser
import Foundation
import Logging
import RegionKit
import RegionKitHTTP
import RegionKitPostgres
import RegionKitService
import RegionKitStore
import RegionKitConcurrency

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run RegionKit as a service until SIGTERM/SIGINT: sources → monitoring → store, event log and hooks.",
        // `--config` is required, but declared optional (checked in `run()`): a required one
        // is reported missing before an unknown option, so `--confg` said only "Missing expected
        // argument '--config <config>'" instead of "Unknown option '--confg'. Did you mean '--config'?".
        usage: "regionkit run --config <config> [--store <store>] [--json] [--log-level <log-level>]",
        discussion: """
            See contrib/regionkit.service for a systemd unit. Structured logs go to stderr. With an `http:` block the \
            daemon also serves its HTTP API, live dashboard and Prometheus metrics (see README). Sources are judged one by one: \
            the daemon keeps running while any source works or can still come back (devices are retried); it exits 1, naming \
            each, when every source has stopped and one failed, and when the store can no longer be written. One daemon per store.
            """
    )

    @Option(help: "Configuration file (YAML or JSON); required.")
    var config: String?

    @Option(help: """
        The store (overrides the configuration): a SQLite path, or postgres://user@host:port/database with the password in $REGIONKIT_STORE_PASSWORD or in the file $REGIONKIT_STORE_PASSWORD_FILE names (never in the URL). Default $REGIONKIT_STORE, else $XDG_DATA_HOME/regionkit/regionkit.sqlite.
        """)
    var store: String?

    @Flag(help: "Print each event as a JSON line once it is durably stored (with its log id).")
    var json = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func run() async throws {
        // (Checked here, not in `validate()`, which runs before unknown options are reported.
        // Said as a parse error says it, with the command's usage; exit status 64 as one.)
        guard let config else {
            Console.status("Error: Missing expected argument '--config <config>'\nUsage: \(Self.configuration.usage ?? "")\n"
                           + "  See 'regionkit run --help' for more information.\n")
            throw ExitCode.validationFailure
        }
        try await Console.reportingErrors {
            guard let level = Logger.Level(rawValue: logLevel) else {
                throw RegionKitError(.invalidArgument, "--log-level '\(logLevel)' is not one of trace, debug, info, notice, warning, error, critical")
            }
            let configuration = try ServiceConfiguration.load(config)
            let logger = Console.logger(label: "regionkit", level: level)
            if let cluster = configuration.cluster {
                try await runCluster(configuration, cluster, config: config, logger: logger)
                return
            }
            let stopRequest = StopRequest()
            // One daemon per store (SQLite: a lock file; PostgreSQL: an advisory lock naming its holder).
            let opened = try await DaemonStore.open(store ?? configuration.store ?? RegionStore.defaultPath(), logger: logger) { reason in
                stopRequest.request("the store can no longer be written: its daemon lock was lost (\(reason))", failed: true)
            }
            let path = opened.name
            let database = opened.store
            let profile = try configuration.monitoringProfile(config)
            let hooks = configuration.hooks ?? HookConfiguration()
            let printJSON = json
            // Read the HTTP block before anything runs: a bad token file stops the start.
            let http = try configuration.http.map { try HTTPConfiguration(settings: $0) }
            let broadcaster = EventBroadcaster()
            // The hub needs the service and the service's log callback wakes the hub.
            let hubBox = LockedBox<PresenceHub?>(nil)
            let service = MonitoringService(
                store: database, profile: profile, automation: configuration.automation ?? .all,
                // A Bluetooth controller, gpsd and a broker report their own availability once connected.
                sources: configuration.initialSourceStatuses,
                hooks: hooks, logger: logger,
                onLogged: { event in
                    broadcaster.publish(event)
                    if printJSON { Console.line(event.jsonLine) }
                    hubBox.withLock { $0 }?.eventLogged()
                },
                // An event that cannot be written is not acknowledged; going on would lose more.
                onStoreFailure: { error in
                    let detail = (error as? RegionKitError)?.detailedMessage ?? "\(error)"
                    stopRequest.request("the store can no longer be written: \(detail)", failed: true)
                })
            let hub = try configuration.mqtt.map { mqtt in
                try PresenceHub(configuration: mqtt, homeAssistant: configuration.homeAssistant, sources: configuration.mqttSources,
                                service: service, logger: logger)
            }
            hubBox.withLock { $0 = hub }
            try await hub?.prepare()

            // Each source is judged on its own (SourceAvailability): a region kind is available
            // while any source feeding it works.
            let names = configuration.uniqueSourceNames
            let local = configuration.sources.indices.filter { configuration.sources[$0].kind != .mqtt }
            let mqttHub = hub.flatMap { $0.ingest == nil ? nil : $0 }
            var entries = local.map { (name: names[$0], statuses: configuration.sources[$0].initialStatuses) }
            if let mqttHub { entries.append((name: mqttHub.activity.name, statuses: [.beacon: .notDetermined])) }
            let availability = SourceAvailability(manager: service.manager, sources: entries)
            mqttHub?.reportAvailability(to: availability)
            let runners = local.map { index in
                let source = configuration.sources[index]
                return SourceRunner(source: source, configuration: configuration, service: service, logger: logger,
                                    activity: SourceActivity(name: names[index], kind: source.kind.rawValue), availability: availability)
            }
            // The MQTT sources report through the hub that runs them.
            let activities = runners.map(\.activity) + (hub.map { [$0.activity] } ?? [])
            for activity in activities {
                // Once stopping, sources going down is the shutdown itself, not news (and nothing
                // may be logged after "process stopped").
                activity.observe { status in
                    if stopRequest.reason == nil { Self.report(status, logger: logger, service: service) }
                }
            }

            // Watched before "process started" is logged: a signal from then on ends in "process stopped".
            let (signals, signalTask) = stopRequest.stopOnSignals(logger: logger)
            defer { signalTask.cancel(); withExtendedLifetime(signals) {} }
            try await service.logProcessStarted()
            // The beacons' rooms before any sighting (the regions wait for their sources below).
            await service.restoreRooms()
            let hubTask = hub.map { hub in Task { await hub.run() } }

            // A failure to bring the regions back stops the daemon through the same path as any
            // other stop ("process stopped" logged, the hub and the store closed), then is thrown.
            var restoreFailure: (any Error)?
            try await withThrowingTaskGroup(of: Outcome.self) { group in
                func start(_ index: Int) {
                    let runner = runners[index]
                    group.addTask {
                        do {
                            try await runner.run()
                            return .sourceEnded(index, failure: nil)
                        } catch is CancellationError {
                            return .other
                        } catch {
                            return .sourceEnded(index, failure: (error as? RegionKitError)?.message ?? "\(error)")
                        }
                    }
                }
                // Devices (which report their own availability) connect first; files and
                // simulations start once the regions are back, so none of their sightings is lost.
                let isDevice = runners.map { $0.source.initialStatuses.values.contains(.notDetermined) }
                for index in runners.indices where isDevice[index] { start(index) }
                if let http {
                    // Region writes through the API wait for the restore below (a PUT made before
                    // it would be restored over; a DELETE would miss a region about to come back).
                    await service.holdRegionWritesUntilRestore()
                    let server = RegionKitServer(service: service, configuration: http, events: broadcaster,
                                                 sources: { activities.map(\.status) }, outputs: { hub.map { [$0.status] } ?? [] }, logger: logger)
                    group.addTask {
                        await Self.serve(server, http, logger: logger, stopRequest: stopRequest)
                        return .other
                    }
                }
                let runner = HookRunner(store: database, configuration: hooks, logger: logger)
                group.addTask {
                    // What an earlier configuration left pending for hooks this one has not is
                    // given up first (with no hooks now, not kept for ever).
                    do { try await runner.abandonUnconfigured() } catch {
                        logger.warning("could not give up the deliveries to hooks no longer configured", metadata: ["error": "\(error)"])
                    }
                    if !hooks.isEmpty { await runner.run() }
                    return .other
                }
                if let retention = configuration.retention {
                    let clock = service.manager.clock
                    group.addTask {
                        await Self.pruneEvents(retention, store: database, now: { clock.now.seconds }, logger: logger)
                        return .other
                    }
                }
                group.addTask { await stopRequest.wait().map { .stop($0.text, failed: $0.failed) } ?? .other }

                // Devices still connecting get a moment to report before the regions come back, so
                // that a controller or broker answering within it does not fail every region first.
                await availability.waitUntilDetermined(timeout: .seconds(5))
                if stopRequest.reason == nil {
                    do {
                        let configured = try configuration.monitoredRegions()
                        try await service.restoreRegions(configured)
                        // "monitored" counts the regions whose source works now (the configured
                        // ones and those added through the API); the others are retried and come
                        // back with their source (a controller or broker still connecting).
                        logger.info("started", metadata: ["store": "\(path)", "profile": "\(profile.name)", "configured": "\(configured.count)",
                                                          "monitored": "\(service.manager.monitoredRegions.count)",
                                                          "sources": "\(activities.map(\.name).joined(separator: ", "))"])
                        // Only MQTT sources name devices (ESPresense, Theengs): said once, not waited on silently.
                        let devices = configured.filter { if case .beacon(let beacon) = $0 { beacon.constraint.format == .device } else { false } }
                        if let first = devices.first, !configuration.sources.contains(where: { if case .mqtt = $0 { true } else { false } }) {
                            logger.warning("device regions need an MQTT source (ESPresense, Theengs): no other source names a device",
                                           metadata: ["regions": "\(devices.count)", "first": "\(first.identifier)"])
                        }
                    } catch {
                        restoreFailure = error
                        let detail = (error as? RegionKitError)?.message ?? "\(error)"
                        logger.error("cannot restore the monitored regions", metadata: ["error": "\(detail)"])
                        stopRequest.request("cannot restore the monitored regions: \(detail)", failed: true)
                    }
                }
                // Stopped before the restore: writes waiting for it are refused (503), as every later one.
                await service.releaseRegionWriteHold()
                if stopRequest.reason == nil {
                    for index in runners.indices where !isDevice[index] { start(index) }
                }

                // Until a stop is requested (signal, store failure) or no source can deliver any more.
                var ended: [Int: String?] = [:]
                while let outcome = try await group.next() {
                    switch outcome {
                    case .stop: break
                    case .other: continue
                    case .sourceEnded(let index, let failure):
                        ended[index] = failure
                        guard ended.count == runners.count, mqttHub == nil else { continue }
                        let failures = ended.sorted { $0.key < $1.key }.compactMap { index, failure in failure.map { "\(runners[index].activity.name): \($0)" } }
                        if failures.isEmpty {
                            logger.notice("every source has finished; running until SIGTERM (regions keep being decided, the API stays up)")
                            continue
                        }
                        stopRequest.request("every source has stopped and \(failures.count) failed: \(failures.joined(separator: "; "))", failed: true)
                    }
                    break
                }
                group.cancelAll()
            }
            let reason = stopRequest.reason ?? ("stopped", false)
            // The MQTT sightings stop before the engine's queue is waited for (the hub's outputs
            // go on: they publish up to "process stopped" below).
            hub?.stopIngest()
            do {
                try await service.stop(reason: reason.text)
            } catch {
                logger.error("cannot log the stop", metadata: ["error": "\((error as? RegionKitError)?.message ?? "\(error)")"])
            }
            if let hub, let hubTask {
                await hub.shutdown()          // publishes what was logged up to "process stopped", then offline
                hubTask.cancel()
                await hubTask.value
            }
            await opened.close()
            // A failed restore is thrown even when a signal asked for the stop first: the start did not succeed.
            if reason.failed || restoreFailure != nil {
                logger.error("stopped", metadata: ["store": "\(path)", "reason": "\(reason.text)", "persistence-failures": "\(service.persistenceFailures)"])
                if let restoreFailure { throw restoreFailure }
                throw RegionKitError(reason.text.hasPrefix("the store") ? .storeFailed : .sourceUnavailable, "stopped: \(reason.text)")
            }
            logger.info("stopped", metadata: ["store": "\(path)", "persistence-failures": "\(service.persistenceFailures)"])
        }
    }

    /// Prunes the event log as `retention` says, at once and every ``EventRetention/interval``,
    /// until cancelled. A failure is logged and tried again at the next round: the log only grows
    /// meanwhile, nothing else depends on it.
    static func pruneEvents(_ retention: EventRetention, store: any RegionStoring, now: @Sendable () -> Double, logger: Logger) async {
        while !Task.isCancelled {
            do {
                let pruned = try await retention.prune(store, now: now())
                if pruned > 0 {
                    logger.info("event log pruned", metadata: ["events": "\(pruned)", "maxAgeDays": "\(retention.maxAgeDays.map { "\($0)" } ?? "-")",
                                                              "maxEvents": "\(retention.maxEvents.map { "\($0)" } ?? "-")"])
                }
            } catch {
                logger.warning("cannot prune the event log; tried again later", metadata: ["error": "\((error as? RegionKitError)?.message ?? "\(error)")"])
            }
            do { try await Task.sleep(for: EventRetention.interval) } catch { return }
        }
    }

    /// What ended in the daemon's task group.
    enum Outcome: Sendable {
        /// A source's runner returned (a file replayed to its end: `failure` nil) or failed for good.
        case sourceEnded(Int, failure: String?)
        /// A stop was requested (signal, store failure, HTTP server failure).
        case stop(String, failed: Bool)
        /// Anything else (cancelled, hooks).
        case other
    }

    /// A source changed state: one log line (at a level an operator sees without --json) and one
    /// `sourceStatusChanged` event in the log, the event stream and `--json`.
    static func report(_ status: SourceStatus, logger: Logger, service: MonitoringService) {
        var metadata: Logger.Metadata = ["source": "\(status.name)", "kind": "\(status.kind)"]
        if let detail = status.detail { metadata["detail"] = "\(detail)" }
        switch status.state {
        case .up: logger.info("source up", metadata: metadata)
        case .connecting: logger.warning("source unavailable, retrying", metadata: metadata)
        case .finished: logger.info("source finished", metadata: metadata)
        case .down: logger.error("source failed", metadata: metadata)
        }
        do {
            try service.logSourceStatus(status)
        } catch {
            logger.error("cannot log the source status", metadata: ["source": "\(status.name)", "error": "\(error)"])
        }
    }
}
