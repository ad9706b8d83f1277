import ArgumentParser
import Foundation
import Logging
import RegionKit
import RegionKitHTTP
import RegionKitService
import RegionKitStore
import Synchronization

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run RegionKit as a service until SIGTERM/SIGINT: sources → monitoring → store, event log and hooks.",
        discussion: """
            See contrib/regionkit.service for a systemd unit. Structured logs go to stderr. With an `http:` block the \
            daemon also serves its HTTP API, live dashboard and Prometheus metrics (see README).
            """
    )

    @Option(help: "Configuration file (YAML or JSON).")
    var config: String

    @Option(help: "The store (overrides the configuration; default $REGIONKIT_STORE, else $XDG_DATA_HOME/regionkit/regionkit.sqlite).")
    var store: String?

    @Flag(help: "Print each event as a JSON line once it is durably stored (with its log id).")
    var json = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func run() async throws {
        try await Console.reportingErrors {
            guard let level = Logger.Level(rawValue: logLevel) else {
                throw RegionKitError(.invalidArgument, "--log-level '\(logLevel)' is not one of trace, debug, info, notice, warning, error, critical")
            }
            let configuration = try ServiceConfiguration.load(config)
            let logger = {
                var logger = Logger(label: "regionkit") { StreamLogHandler.standardError(label: $0) }
                logger.logLevel = level
                return logger
            }()
            let path = store ?? configuration.store ?? RegionStore.defaultPath()
            let database = try RegionStore(path: path)
            let profile = try configuration.monitoringProfile(config)
            let hooks = configuration.hooks ?? HookConfiguration()
            let printJSON = json
            // Read the HTTP block before anything runs: a bad token file stops the start.
            let http = try configuration.http.map { try HTTPConfiguration(settings: $0) }
            let broadcaster = EventBroadcaster()
            // The hub needs the service and the service's log callback wakes the hub.
            let hubBox = Mutex<PresenceHub?>(nil)
            let service = MonitoringService(
                store: database, profile: profile, automation: configuration.automation ?? .all,
                // A Bluetooth controller, gpsd and a broker report their own availability once connected.
                sources: configuration.initialSourceStatuses,
                hooks: hooks, logger: logger,
                onLogged: { event in
                    broadcaster.publish(event)
                    if printJSON { Console.line(event.jsonLine) }
                    hubBox.withLock { $0 }?.eventLogged()
                })
            let hub = try configuration.mqtt.map { mqtt in
                try PresenceHub(configuration: mqtt, homeAssistant: configuration.homeAssistant, sources: configuration.mqttSources,
                                service: service, logger: logger)
            }
            hubBox.withLock { $0 = hub }
            try hub?.prepare()
            let hubTask = hub.map { hub in Task { await hub.run() } }
            try service.start(regions: try configuration.monitoredRegions())
            logger.info("started", metadata: ["store": "\(path)", "profile": "\(profile.name)", "regions": "\(service.manager.monitoredRegions.count)"])

            let stop = SignalWatcher(signals: [SIGTERM, SIGINT])
            let runners = configuration.sources.filter { $0.kind != .mqtt }
                .map { SourceRunner(source: $0, configuration: configuration, service: service, logger: logger) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for runner in runners {
                    group.addTask { try await runner.run() }
                }
                if let http {
                    // The MQTT sources report through the hub that runs them.
                    let activities = runners.map(\.activity) + (hub.map { [$0.activity] } ?? [])
                    let server = RegionKitServer(service: service, configuration: http, events: broadcaster,
                                                 sources: { activities.map(\.status) }, logger: logger)
                    group.addTask {
                        try await server.run { port in
                            // The token is never logged; only whether one is set.
                            logger.info("http listening", metadata: ["address": "\(http.host):\(port)", "public": "\(http.isPublic)",
                                                                     "token": "\(http.token == nil ? "none (API refused)" : "set")"])
                        }
                    }
                }
                if !hooks.isEmpty {
                    let runner = HookRunner(store: database, configuration: hooks, logger: logger)
                    group.addTask { await runner.run() }
                }
                group.addTask {
                    let signal = await stop.next()
                    logger.info("stopping", metadata: ["signal": "\(signal)"])
                }
                // The first task to finish is the signal (sources and hooks run until cancelled,
                // except a gateway file, which ends; then we keep running until a signal).
                while let _ = try await group.next() {
                    if stop.received { break }
                }
                group.cancelAll()
            }
            try service.stop(reason: "signal \(stop.lastSignal ?? 0)")
            if let hub, let hubTask {
                await hub.shutdown()          // publishes what was logged up to "process stopped", then offline
                hubTask.cancel()
                await hubTask.value
            }
            logger.info("stopped", metadata: ["store": "\(path)", "persistence-failures": "\(service.persistenceFailures)"])
        }
    }
}
