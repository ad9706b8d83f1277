import ArgumentParser
import Foundation
import RegionKit
import RegionKitStore

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Benchmarks that print figures (run a release build: swift run -c release regionkit bench ...).",
        subcommands: [Ingest.self, Memory.self, Latency.self, BenchParse.self, BenchGeofence.self, StoreWrites.self, BenchMQTT.self]
    )

    struct StoreWrites: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "store",
            abstract: "Event-log write throughput: each event is one durable SQLite transaction (WAL), as the service writes them."
        )

        @Option(help: "Events to append.")
        var events: Int = 20_000

        @Option(help: "Hook deliveries created with each event (0 = no hooks configured).")
        var hooks: Int = 1

        @Option(help: """
            Where to create the scratch database (to measure another disk): a path that does not exist yet; \
            it is removed afterwards. An existing store is refused: the benchmark writes fake events. \
            Default: a temporary file.
            """)
        var store: String?

        func run() throws {
            guard events > 0, hooks >= 0 else { throw ValidationError("--events must be > 0 and --hooks >= 0") }
            if let store, FileManager.default.fileExists(atPath: store) {
                throw ValidationError("""
                    --store \(store) already exists: the benchmark appends \(events) fake events and removes its database \
                    afterwards, so it only runs on a new path (e.g. \(store).bench)
                    """)
            }
            let path = store ?? FileManager.default.temporaryDirectory.appendingPathComponent("rk-bench-\(UUID().uuidString).sqlite").path
            defer { for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            let lock = try RegionStoreLock(storePath: path)
            let database = try RegionStore(path: path)
            defer { withExtendedLifetime(lock) {} }
            let hookNames = (0..<hooks).map { "webhook:http://127.0.0.1:9/\($0)" }
            let line = #"{"t":12.5,"type":"didEnterRegion","region":"lobby","evidence":{"reason":"sighting","rssi":-61,"scanner":"Room201"}}"#
            let started = ContinuousClock.now
            for index in 0..<events {
                try database.append(time: Double(index), type: index % 2 == 0 ? "didEnterRegion" : "didExitRegion", region: "region-\(index % 50)",
                                    state: index % 2 == 0 ? "inside" : "outside", reason: "sighting", json: line, hooks: hookNames)
            }
            let elapsed = started.duration(to: .now)
            let seconds = elapsed.inSeconds
            Console.line("store write throughput: \(events) events (\(hooks) hook deliveries each), one transaction per event, WAL")
            Console.line(String(format: "  %.0f events/s   %.1f µs/event   journal=%@   integrity=%@",
                                Double(events) / seconds, seconds / Double(events) * 1e6, try database.journalMode(), try database.integrityCheck()))
        }
    }
}
