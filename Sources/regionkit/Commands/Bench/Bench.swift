import ArgumentParser
import Foundation
import Logging
import RegionKit
import RegionKitConcurrency
import RegionKitPostgres
import RegionKitStore

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Benchmarks that print figures (run a release build: swift run -c release regionkit bench ...).",
        subcommands: [Ingest.self, Memory.self, Beacons.self, Scanners.self, Latency.self, BenchParse.self, BenchGeofence.self, StoreWrites.self, EventLog.self, BenchMQTT.self, BenchCluster.self]
    )

    struct StoreWrites: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "store",
            abstract: "Event-log write throughput: events committed one per transaction (or --batch per transaction, as the daemon's writer commits a backlog), SQLite WAL or PostgreSQL with --postgres."
        )

        @Option(help: "Events to append.")
        var events: Int = 20_000

        @Option(help: "Hook deliveries created with each event (0 = no hooks configured).")
        var hooks: Int = 1

        @Option(help: "Events per transaction (RegionStoring.apply): 1 as a store that keeps up is written, up to 256 as the daemon's writer commits a backlog.")
        var batch: Int = 1

        @Option(help: """
            Where to create the scratch database (to measure another disk): a path that does not exist yet; \
            it is removed afterwards. An existing store is refused: the benchmark writes fake events. \
            Default: a temporary file.
            """)
        var store: String?

        @Option(help: """
            Measure a PostgreSQL store instead: postgres://user@host:port/database (password in $REGIONKIT_STORE_PASSWORD or the file $REGIONKIT_STORE_PASSWORD_FILE names). \
            The database must hold no events (a scratch database: the fake events stay; drop it afterwards).
            """)
        var postgres: String?

        func run() async throws {
            guard events > 0, hooks >= 0 else { throw ValidationError("--events must be > 0 and --hooks >= 0") }
            guard batch >= 1 else { throw ValidationError("--batch must be >= 1") }
            if let postgres {
                try await runPostgres(postgres)
                return
            }
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
            let batches = writeBatches()
            let started = ContinuousClock.now
            for writes in batches { _ = try database.apply(writes) }
            let elapsed = started.duration(to: .now)
            let seconds = elapsed.inSeconds
            Console.line("store write throughput: \(events) events (\(hooks) hook deliveries each), \(perTransaction), WAL")
            Console.line(String(format: "  %.0f events/s   %.1f µs/event   journal=%@   integrity=%@",
                                Double(events) / seconds, seconds / Double(events) * 1e6, try database.journalMode(), try database.integrityCheck()))
        }

        /// The events, `batch` to a transaction.
        func writeBatches() -> [[StoreWrite]] {
            let hookNames = (0..<hooks).map { "webhook:http://127.0.0.1:9/\($0)" }
            let line = #"{"t":12.5,"type":"didEnterRegion","region":"lobby","evidence":{"reason":"sighting","rssi":-61,"scanner":"Room201"}}"#
            var writes: [StoreWrite] = []
            writes.reserveCapacity(events)
            for index in 0..<events {
                let entered = index % 2 == 0
                let type = entered ? "didEnterRegion" : "didExitRegion"
                let state = entered ? "inside" : "outside"
                writes.append(.event(time: Double(index), type: type, region: "region-\(index % 50)", state: state,
                                     reason: "sighting", json: line, hooks: hookNames))
            }
            return stride(from: 0, to: writes.count, by: batch).map { Array(writes[$0..<min($0 + batch, writes.count)]) }
        }

        var perTransaction: String { batch == 1 ? "one transaction per event" : "\(batch) events per transaction" }

        /// The same writes through ``RegionStoring`` on PostgreSQL, one transaction after another
        /// as the daemon's ordered writer commits them.
        func runPostgres(_ location: String) async throws {
            guard let url = try PostgresStoreURL(parsing: location) else {
                throw ValidationError("--postgres \(location) is not a postgres://user@host:port/database URL")
            }
            let logger = Console.logger(label: "regionkit.postgres")
            let database = try await PostgresRegionStore(host: url.host, port: url.port, username: url.user, password: url.password(),
                                                         database: url.database, tls: url.tls(), logger: logger)
            do {
                guard try await database.lastEventID() == 0 else {
                    throw ValidationError("--postgres \(url) already holds events: the benchmark appends \(events) fake events, so it only runs on an empty scratch database")
                }
                let batches = writeBatches()
                let started = ContinuousClock.now
                for writes in batches { _ = try await database.apply(writes) }
                let seconds = started.duration(to: .now).inSeconds
                Console.line("store write throughput: \(events) events (\(hooks) hook deliveries each), \(perTransaction), PostgreSQL \(url)")
                Console.line(String(format: "  %.0f events/s   %.1f µs/event", Double(events) / seconds, seconds / Double(events) * 1e6))
            } catch {
                await database.shutdown()
                throw error
            }
            await database.shutdown()
        }
    }
}
