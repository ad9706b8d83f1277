import ArgumentParser
import Foundation
import Logging
import RegionKit
import RegionKitBluetooth
import RegionKitGateway
import RegionKitLocation
import RegionKitService
import RegionKitSimulation
import RegionKitStore

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run RegionKit as a service until SIGTERM/SIGINT: sources → monitoring → store, event log and hooks.",
        discussion: "See contrib/regionkit.service for a systemd unit. Structured logs go to stderr."
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
            let configuration = try DaemonConfiguration.load(config)
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
            let service = MonitoringService(
                store: database, profile: profile, automation: configuration.automation ?? .all,
                // A Bluetooth controller and gpsd report their own availability once connected.
                sources: Self.initialSources(configuration),
                hooks: hooks, logger: logger,
                onLogged: { event in if printJSON { Console.line(Events.jsonLine(event)) } })
            try service.start(regions: try (configuration.regions ?? []).map { try $0.region() })
            logger.info("started", metadata: ["store": "\(path)", "profile": "\(profile.name)", "regions": "\(service.manager.monitoredRegions.count)"])

            let stop = SignalWatcher(signals: [SIGTERM, SIGINT])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for source in configuration.sources {
                    group.addTask { try await Self.play(source, into: service, logger: logger) }
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
            logger.info("stopped", metadata: ["store": "\(path)", "persistence-failures": "\(service.persistenceFailures)"])
        }
    }

    static func initialSources(_ configuration: DaemonConfiguration) -> [RegionKind: AuthorizationStatus] {
        var sources: [RegionKind: AuthorizationStatus] = [:]
        let simulatedGeo = configuration.sources.contains { source in
            source.simulator.flatMap { try? Simulate.loadScenario($0.scenario).geo } != nil
        }
        if configuration.sources.contains(where: { $0.hci != nil }) {
            sources[.beacon] = .notDetermined
        } else if configuration.sources.contains(where: { $0.simulator != nil || $0.gateway != nil }) {
            sources[.beacon] = .authorized
        }
        if configuration.sources.contains(where: { $0.gpsd != nil }) {
            sources[.circular] = .notDetermined
        } else if simulatedGeo {
            sources[.circular] = .authorized
        }
        return sources
    }

    /// Feeds one source into the service in real time until cancelled (a file ends by itself).
    static func play(_ source: DaemonConfiguration.Source, into service: MonitoringService, logger: Logger) async throws {
        let manager = service.manager
        if let simulator = source.simulator {
            let scenario = try Simulate.loadScenario(simulator.scenario)
            let runner = try SimulationRunner(scenario: scenario, seed: simulator.seed)
            let items = runner.timeline()
            let speed = simulator.speed ?? 1
            repeat {
                let start = manager.clock.now
                for (time, item) in items {
                    let due = start + time / speed
                    let wait = due - manager.clock.now
                    if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
                    switch item {
                    case .observation(var observation):
                        observation.timestamp = manager.clock.now
                        manager.ingest(observation)
                    case .fix(var fix):
                        fix.timestamp = manager.clock.now
                        manager.ingest(fix)
                    case .action(let action):
                        switch action.action {
                        case .adapterOff: manager.setSourceStatus(.restricted(reason: "simulated adapter off"), for: .beacon)
                        case .adapterOn: manager.setSourceStatus(.authorized, for: .beacon)
                        case .wake: manager.wake()
                        default: break
                        }
                    }
                }
                let remaining = start + scenario.duration / speed - manager.clock.now
                if remaining > 0 { try await Task.sleep(for: .milliseconds(Int(remaining * 1000))) }
            } while simulator.repeat == true && !Task.isCancelled
            try await Task.sleep(for: .seconds(86_400 * 365))
        }
        if let hci = source.hci {
            let specification: HCITransportSpecification
            do {
                specification = try HCITransportSpecification(parsing: hci.device)
            } catch {
                throw RegionKitError(.invalidArgument, "hci source '\(hci.device)': \(error)")
            }
            var configuration = BeaconScanner.Configuration()
            configuration.scannerID = hci.scannerID
            // The scanner reports availability to the manager (monitoringDidFail while the
            // controller is gone) and reconnects by itself.
            let scanner = BeaconScanner(specification: specification, manager: manager, configuration: configuration)
            try await ControllerOptions.bluetooth { () async throws(BluetoothError) in try await scanner.start() }
            logger.info("scanning", metadata: ["device": "\(hci.device)"])
            do {
                try await Task.sleep(for: .seconds(86_400 * 365))
            } catch {
                await scanner.stop()
                throw error
            }
        }
        if let gpsd = source.gpsd {
            let host = gpsd.host ?? "127.0.0.1", port = gpsd.port ?? 2947
            await GPSDFeed.run(host: host, port: port, into: manager)
        }
        if let gateway = source.gateway {
            let speed = gateway.speed ?? 1
            var buffer = ReorderBuffer<GatewaySighting>(window: gateway.reorderWindow ?? 2)
            var batch: [GatewaySighting] = []
            try GatewayFileReader(path: gateway.file).forEach { sighting in
                batch += buffer.insert(sighting, at: Timestamp(seconds: Double(sighting.timeMilliseconds) / 1000))
            }
            batch += buffer.drain()
            guard let first = batch.first else { return }
            let start = manager.clock.now
            for sighting in batch {
                try Task.checkCancellation()
                let offset = Double(sighting.timeMilliseconds - first.timeMilliseconds) / 1000 / speed
                let wait = start + offset - manager.clock.now
                if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
                var observation = sighting.observation(originMilliseconds: sighting.timeMilliseconds)
                observation.timestamp = manager.clock.now
                manager.ingest(observation)
            }
            logger.info("gateway file replayed", metadata: ["file": "\(gateway.file)", "sightings": "\(batch.count)"])
        }
    }
}
