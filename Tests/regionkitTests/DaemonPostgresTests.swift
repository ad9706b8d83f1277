import Foundation
import Testing
import RegionKitCore
import RegionKitPostgres
import RegionKitStore
import RegionKitTestSupport

/// `regionkit run --store postgres://…`: the real binary against a private PostgreSQL on a loopback
/// port (started and stopped by the test), compared with the same input on SQLite.
@Suite("regionkit run on PostgreSQL", .serialized, .tags(.endToEnd), .enabled(if: PostgresServer.isAvailable, PostgresServer.skipReason))
struct DaemonPostgresTests {
    /// The museum visit at 10×, once: the visitor walks in, past four exhibits, and out (24 s).
    static let museumOnce = """
    profile: responsive
    regions:
      - {identifier: museum, uuid: 5A4BCFCE-174E-4BAC-A814-092E77F6B7E5}
      - {identifier: exhibit-1, uuid: 5A4BCFCE-174E-4BAC-A814-092E77F6B7E5, major: 1}
      - {identifier: exhibit-3, uuid: 5A4BCFCE-174E-4BAC-A814-092E77F6B7E5, major: 3}
    sources:
      - simulator: {scenario: museum, speed: 10}
    """

    static func url(_ server: PostgresServer, _ database: String) -> String {
        "postgres://\(server.user)@127.0.0.1:\(server.port)/\(database)"
    }

    static func store(_ server: PostgresServer, _ database: String) async throws -> PostgresRegionStore {
        try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: database)
    }

    /// The region decisions of a run: (type, region, state) with the time since the run's processStarted.
    static func decisions(_ events: [StoredEvent]) -> [(key: String, time: Double)] {
        // From the first region's registration, not the process's start: the PostgreSQL daemon
        // connects and prepares its schema before its regions and simulator start.
        guard let start = (events.first { $0.type == "didStartMonitoring" } ?? events.first { $0.type == "processStarted" })?.time else { return [] }
        return events.filter { ["didStartMonitoring", "didEnterRegion", "didExitRegion", "didDetermineState"].contains($0.type) }
            .map { (key: "\($0.type) \($0.region ?? "-") \($0.state ?? "")", time: $0.time - start) }
    }

    static func waitFor(_ daemon: Daemon, timeout: Double, _ condition: ([[String: Any]]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(daemon.objects) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    static func exited(_ region: String) -> ([[String: Any]]) -> Bool {
        { objects in objects.contains { $0["type"] as? String == "didExitRegion" && $0["region"] as? String == region } }
    }

    @Test("The same input on SQLite and on PostgreSQL, side by side: the same decisions (region, kind, time within 2 s); every acknowledged id stored; the password never shown",
          .timeLimit(.minutes(4)))
    func sameDecisionsAsSQLite() async throws {
        let server = try await PostgresServer.started(database: "same_run")
        defer { server.stop() }
        let config = try DaemonTests.writeConfig(Self.museumOnce)
        let sqlitePath = DaemonTests.temporaryStore()
        let secret = "pw-\(UUID().uuidString)"
        // Trust authentication ignores the password; what matters is that it is never printed.
        let onSQLite = try Daemon(config: config, store: sqlitePath, logLevel: "info")
        let onPostgres = try Daemon(config: config, store: Self.url(server, "same_run"), logLevel: "info",
                                    environment: [PostgresStoreURL.passwordVariable: secret])
        // The visitor leaves the museum at the end of the walk; both daemons decide it.
        #expect(await Self.waitFor(onSQLite, timeout: 90, Self.exited("museum")), "SQLite daemon: \(onSQLite.stderr)")
        #expect(await Self.waitFor(onPostgres, timeout: 90, Self.exited("museum")), "PostgreSQL daemon: \(onPostgres.stderr)")
        #expect(await onSQLite.signal(SIGTERM) == 0, "\(onSQLite.stderr)")
        #expect(await onPostgres.signal(SIGTERM) == 0, "\(onPostgres.stderr)")
        #expect(!onPostgres.stderr.contains(secret), "the password is never logged")
        #expect(onPostgres.stderr.contains("postgres://\(server.user)@127.0.0.1:\(server.port)/same_run"), "the log names the store")

        let sqliteEvents = try RegionStore(path: sqlitePath).events()
        let store = try await Self.store(server, "same_run")
        let postgresEvents = try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil)
        await store.shutdown()

        let acknowledged = Set(onPostgres.acknowledged)
        let stored = Set(postgresEvents.map(\.id))
        #expect(!acknowledged.isEmpty && acknowledged.isSubset(of: stored), "acknowledged but not stored: \(acknowledged.subtracting(stored).sorted())")
        #expect(postgresEvents.first?.type == "processStarted" && postgresEvents.last?.type == "processStopped")
        #expect(Set(postgresEvents.map(\.id)).count == postgresEvents.count, "ids are unique")

        let fromSQLite = Self.decisions(sqliteEvents), fromPostgres = Self.decisions(postgresEvents)
        #expect(fromSQLite.map(\.key) == fromPostgres.map(\.key), """
            SQLite: \(fromSQLite.map(\.key))
            PostgreSQL: \(fromPostgres.map(\.key))
            """)
        // The walk starts inside (determined inside, no enter: Core Location's rule) and ends outside.
        #expect(fromSQLite.contains { $0.key == "didDetermineState museum inside" } && fromSQLite.contains { $0.key == "didExitRegion museum outside" },
                "\(fromSQLite.map(\.key))")
        // Both daemons run on the wall clock: the same decision may come a scheduling jitter apart.
        let apart: Double = zip(fromSQLite, fromPostgres).filter { pair in pair.0.key == pair.1.key }.map { pair -> Double in abs(pair.0.time - pair.1.time) }.max() ?? 0
        print("[daemon on SQLite and on PostgreSQL] \(fromSQLite.count) decisions, at most \(String(format: "%.2f", apart)) s apart")
        for (a, b) in zip(fromSQLite, fromPostgres) where a.key == b.key {
            #expect(abs(a.time - b.time) <= 2, "\(a.key): \(a.time) s on SQLite, \(b.time) s on PostgreSQL")
        }
    }

    @Test("SIGTERM mid-run, three times on one database: exit 0, every acknowledged event stored, the stop logged last; a restart restores the stored states",
          .timeLimit(.minutes(4)))
    func sigtermAndRestart() async throws {
        let server = try await PostgresServer.started(database: "sigterm")
        defer { server.stop() }
        let url = Self.url(server, "sigterm")
        let config = try DaemonTests.writeConfig(DaemonTests.busyConfig)
        var acknowledged: Set<Int64> = []
        var random = SystemRandomNumberGenerator()
        for round in 0..<3 {
            let daemon = try Daemon(config: config, store: url, logLevel: round == 0 ? "warning" : "info")
            // A restarted daemon finds the regions inside already: only a few events in its first seconds.
            #expect(await daemon.waitForAcknowledgements(3, timeout: 60), "round \(round): \(daemon.stderr)")
            if round == 0 {
                // Three acknowledgements can all come before the museum's state is known (processStarted and
                // two didStartMonitoring): then there is no state to store yet. Wait for the determination.
                #expect(await daemon.waitForObject(timeout: 60) { $0["type"] as? String == "didDetermineState" && $0["region"] as? String == "museum" },
                        "round 0: \(daemon.stderr)")
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 100...1_200, using: &random)))
            #expect(await daemon.signal(SIGTERM) == 0, "round \(round): \(daemon.stderr)")
            acknowledged.formUnion(daemon.acknowledged)
            let store = try await Self.store(server, "sigterm")
            let events = try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil)
            let states = try await store.states()
            await store.shutdown()
            let missing = acknowledged.subtracting(events.map(\.id))
            #expect(missing.isEmpty, "round \(round): acknowledged but missing \(missing.sorted().prefix(10))")
            #expect(events.last?.type == "processStopped", "round \(round)")
            if round > 0 {
                // The states the previous run stored came back (the log line of each restored region).
                #expect(daemon.stderr.contains("restoring region"), "round \(round): \(daemon.stderr)")
            }
            #expect(states["museum"] != nil, "round \(round): the museum's state is stored")
        }
        let store = try await Self.store(server, "sigterm")
        let events = try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil)
        #expect(events.filter { $0.type == "processStarted" }.count == 3)
        #expect(try await store.storedRegions().map(\.region.identifier) == ["museum", "exhibit-2"], "restarts reuse the stored regions")
        await store.shutdown()
    }

    @Test("A second daemon on the same PostgreSQL database exits 1 naming the first (its pid); the first goes on; after it stops the lock is free",
          .timeLimit(.minutes(3)))
    func secondDaemonRefused() async throws {
        let server = try await PostgresServer.started(database: "one_daemon")
        defer { server.stop() }
        let url = Self.url(server, "one_daemon")
        let config = try DaemonTests.writeConfig(DaemonTests.busyConfig)
        let first = try Daemon(config: config, store: url)
        #expect(await first.waitForAcknowledgements(3, timeout: 60), "\(first.stderr)")
        let second = try Daemon(config: config, store: url)
        let status = await second.waitForExit(timeout: 30)
        #expect(status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("in use by another regionkit daemon") && second.stderr.contains("pid \(first.process.processIdentifier)"),
                "\(second.stderr)")
        #expect(second.acknowledged.isEmpty, "the refused daemon acknowledged nothing")
        let before = first.acknowledged.count
        #expect(await first.waitForAcknowledgements(before + 2, timeout: 30), "the first daemon goes on: \(first.stderr)")
        #expect(await first.signal(SIGTERM) == 0, "\(first.stderr)")
        let third = try Daemon(config: config, store: url)
        #expect(await third.waitForAcknowledgements(3, timeout: 60), "the lock was released: \(third.stderr)")
        #expect(await third.signal(SIGTERM) == 0, "\(third.stderr)")
    }

    @Test("A daemon and a cluster never share a PostgreSQL store: a daemon on a cluster's store exits 1 naming the members, and a member cannot join while a daemon holds it (the daemon turned a region the members held inside outside, for good)",
          .timeLimit(.minutes(3)))
    func daemonAndClusterApart() async throws {
        let server = try PostgresServer()
        try await server.start()
        defer { server.stop() }
        let config = try DaemonTests.writeConfig(DaemonTests.busyConfig)
        // A member has joined (its partition count recorded, its heartbeat live).
        try await server.createDatabase("clustered")
        let clustered = try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: "clustered")
        _ = try await clustered.join(member: "engine-0", instance: "gw-1 pid 1", regions: nil, ttl: 60, preparing: 4, deciding: { _ in [] })
        let onCluster = try Daemon(config: config, store: Self.url(server, "clustered"))
        #expect(await onCluster.waitForExit(timeout: 30) == 1, "\(onCluster.stderr)")
        #expect(onCluster.stderr.contains("is a RegionKit cluster's (4 partitions; live members engine-0)"), "\(onCluster.stderr)")
        #expect(onCluster.acknowledged.isEmpty)
        // Gone, the member leaves its cluster's store a cluster's.
        _ = try await clustered.leave(member: "engine-0", instance: "gw-1 pid 1", partitions: [], singletons: [])
        let afterLeave = try Daemon(config: config, store: Self.url(server, "clustered"))
        #expect(await afterLeave.waitForExit(timeout: 30) == 1, "\(afterLeave.stderr)")
        #expect(afterLeave.stderr.contains("(4 partitions; no member live now)"), "\(afterLeave.stderr)")
        await clustered.shutdown()

        // A daemon holds a store: a member's join is refused, naming it; the daemon goes on.
        try await server.createDatabase("daemon")
        let daemon = try Daemon(config: config, store: Self.url(server, "daemon"))
        #expect(await daemon.waitForAcknowledgements(3, timeout: 60), "\(daemon.stderr)")
        let store = try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: "daemon")
        do {
            _ = try await store.join(member: "engine-0", instance: "gw-1 pid 1", regions: nil, ttl: 60, preparing: 4, deciding: { _ in [] })
            Issue.record("a member joined a daemon's store")
        } catch let error as RegionKitError {
            #expect(error.code == .clusterConflict && error.message.contains("in use by a regionkit daemon (regionkit pid \(daemon.process.processIdentifier)"),
                    "\(error.message)")
        }
        #expect(try await store.clusterStatus().members.isEmpty, "a refused join leaves no member behind")
        await store.shutdown()
        let before = daemon.acknowledged.count
        #expect(await daemon.waitForAcknowledgements(before + 2, timeout: 30), "the daemon goes on: \(daemon.stderr)")
        #expect(await daemon.signal(SIGTERM) == 0, "\(daemon.stderr)")
    }

    @Test("A PostgreSQL URL with a password, or malformed, is refused before anything starts, without repeating the password")
    func badURLs() async throws {
        let config = try DaemonTests.writeConfig(DaemonTests.busyConfig)
        let withPassword = try await CLI.run(["run", "--config", config, "--store", "postgres://rk:hunter2secret@127.0.0.1:5432/db"])
        #expect(withPassword.status == 1 && withPassword.stderr.contains("REGIONKIT_STORE_PASSWORD"), "\(withPassword.stderr)")
        #expect(!withPassword.stderr.contains("hunter2secret"))
        let noUser = try await CLI.run(["run", "--config", config, "--store", "postgres://127.0.0.1:5432/db"])
        #expect(noUser.status == 1 && noUser.stderr.contains("names no user"), "\(noUser.stderr)")
        let badPort = try await CLI.run(["run", "--config", config, "--store", "postgres://rk@127.0.0.1:99999/db"])
        #expect(badPort.status == 1 && badPort.stderr.contains("store URL"), "\(badPort.stderr)")
    }

    @Test("sslmode in the store URL: TLS asked of a server without it is refused at once, saying so (the pool retried until the 10 s timeout and said only that); an unknown database is named; the log shows the URL's TLS",
          .timeLimit(.minutes(2)))
    func storeTLS() async throws {
        let server = try PostgresServer()
        try await server.start()
        defer { server.stop() }
        let started = ContinuousClock.now
        let refused = try await CLI.run(["events", "--store", Self.url(server, "postgres") + "?sslmode=require"])
        #expect(refused.status == 1 && refused.stderr.contains("cannot connect: the server does not offer TLS"), "\(refused.stderr)")
        #expect(ContinuousClock.now - started < .seconds(9), "said at once, not after the 10 s operation timeout")
        let missing = try await CLI.run(["events", "--store", Self.url(server, "nosuchdb")])
        #expect(missing.status == 1 && missing.stderr.contains("\"nosuchdb\" does not exist"), "\(missing.stderr)")
        let plain = try await CLI.run(["events", "--store", Self.url(server, "postgres") + "?sslmode=prefer"])
        #expect(plain.status == 0, "prefer falls back to an unencrypted session: \(plain.stderr)")
    }
}
