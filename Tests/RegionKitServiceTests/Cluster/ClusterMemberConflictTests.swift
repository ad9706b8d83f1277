import Foundation
import Logging
import RegionKitConcurrency
import Testing
import RegionKit
import RegionKitMQTT
@testable import RegionKitPostgres
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// Two processes configured with one member name renew each other's leases under one epoch, so
/// fencing cannot tell their writes apart, and both consume each partition's persistent MQTT
/// session. The store holds which process (instance) has each name: a second one is refused at
/// its start, and a member whose name passed to another process (its heartbeat expired while it
/// was frozen) stops at its next round, without releasing what is now the other's.
@Suite("Cluster member conflicts: one member name, one process", .serialized, .tags(.endToEnd),
       .enabled(if: PostgresServer.isAvailable, PostgresServer.skipReason))
struct ClusterMemberConflictTests {
    /// A private PostgreSQL server with database `name`, and a store on it (stop and shut down both).
    static func privateStore(_ name: String) async throws -> (PostgresServer, PostgresRegionStore) {
        let server = try PostgresServer()
        try await server.start()
        do {
            try await server.createDatabase(name)
            return (server, try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: name))
        } catch {
            server.stop()
            throw error
        }
    }

    /// A member (engine-a unless `named`) with no broker (its partitions' MQTT sessions keep
    /// connecting, which these tests do not need), logging into `lines` when given.
    static func member(_ store: PostgresRegionStore, named name: String = "engine-a", partitions: Int, lease: Double, regions: [Region] = [],
                       lines: InMemoryLogHandler.Store? = nil, onFatal: @escaping @Sendable (String) -> Void = { _ in }) throws -> ClusterEngine {
        ClusterEngine(store: store, configuration: ClusterConfiguration(partitions: partitions, member: name, leaseSeconds: lease),
                      mqtt: try MQTTClientConfiguration(url: "mqtt://127.0.0.1:1"), profile: .responsive, regions: regions, site: "conflict-test",
                      logger: Logger(label: "test") { _ in lines.map { InMemoryLogHandler(store: $0) as LogHandler } ?? SwiftLogNoOpLogHandler() },
                      onFatal: onFatal)
    }

    @Test("A second process with a running member's name is refused at its start; a member whose name another process took over stops, calls onFatal and releases nothing",
          .timeLimit(.minutes(2)))
    func oneProcessPerName() async throws {
        let (server, store) = try await Self.privateStore("conflict")
        defer { server.stop() }
        defer { Task { await store.shutdown() } }
        let lines = InMemoryLogHandler.Store()
        let fatal = LockedBox<String?>(nil)
        func member() throws -> ClusterEngine {
            try Self.member(store, partitions: 2, lease: 6, lines: lines, onFatal: { message in fatal.withLock { $0 = message } })
        }
        let first = try member()
        try await first.start()
        // The second start waits a lease (and a second) for the name, as after a crash; the first
        // member's rounds keep its heartbeat live meanwhile.
        let running = Task { await first.run() }
        let second = try member()
        let asked = ContinuousClock.now
        do {
            try await second.start()
            Issue.record("a second process named engine-a started")
        } catch let error as RegionKitError {
            #expect(error.code == .clusterConflict && error.message.contains("(\(first.instance))"), "\(error)")
        }
        #expect(ContinuousClock.now - asked >= .seconds(6), "refused before a lease passed")
        // A start waiting for the name ends when its task is cancelled (a signal meanwhile).
        let third = try member()
        let waiting = Task { try await third.start() }
        try await Task.sleep(for: .seconds(1))
        let cancelledAt = ContinuousClock.now
        waiting.cancel()
        await #expect(throws: (any Error).self) { try await waiting.value }
        #expect(ContinuousClock.now - cancelledAt < .seconds(3), "the wait went on after the cancellation")
        try await eventually(timeout: .seconds(20), "the first member takes both partitions and the outputs") {
            first.partitions.count == 2 && first.runsOutputs
        }

        // The first member's heartbeat expired (frozen, say) and another process took the name.
        try await store.execute("hand the name over", """
            UPDATE regionkit_cluster_member SET instance = 'gw-9 pid 99', expires_at = expires_at + 600 WHERE member = 'engine-a'
            """)
        try await eventually(timeout: .seconds(15), "the first member sees the conflict") { fatal.withLock { $0 } != nil }
        #expect(fatal.withLock { $0 }?.contains("in use by another process (gw-9 pid 99)") == true, "\(fatal.withLock { $0 } ?? "")")
        #expect(first.partitions.isEmpty && !first.runsOutputs, "the partitions and outputs stopped")
        await running.value
        await first.stop(reason: "test")
        // Nothing released under the name: the leases and heartbeat are the other process's now.
        let leases = try await store.leases()
        #expect(leases.count == 2 && leases.allSatisfy { $0.owner == "engine-a" && $0.expiresIn > 0 }, "\(leases)")
        #expect(try await store.members().map(\.member) == ["engine-a"], "the other process's heartbeat was removed")
        #expect(lines.all.contains { $0.contains("leases left to expire") }, "\(lines.text)")
    }

    @Test("A member restarted after a crash (its heartbeat still live) waits at most a lease for its name; its first round only reclaims its own partitions",
          .timeLimit(.minutes(2)))
    func restartAfterCrash() async throws {
        let (server, store) = try await Self.privateStore("restart")
        defer { server.stop() }
        defer { Task { await store.shutdown() } }
        func member() throws -> ClusterEngine { try Self.member(store, partitions: 4, lease: 6) }
        // The crashed process: one round (every partition taken), then nothing more, not even a stop.
        let crashed = try member()
        try await crashed.start()
        try await crashed.round()
        #expect(crashed.partitions.map(\.partition) == [0, 1, 2, 3])
        await crashed.expireLeases(reason: "the crash")   // its workers' connection attempts end here
        // Partition 3 was another member's last (it took it and gave it back); that member is live.
        try await store.releaseLeases(member: "engine-a", partitions: [3])
        _ = try await store.balanceLeases(member: "z", partitions: 4, ttl: 60)
        try await store.releaseLeases(member: "z", partitions: [0, 1, 2, 3])
        #expect(try await store.leases().map { $0.owner ?? "-" } == ["engine-a", "engine-a", "engine-a", "z"])

        let restarted = try member()
        let started = ContinuousClock.now
        try await restarted.start()
        let waited = ContinuousClock.now - started
        // At most the crashed heartbeat's lease (6 s) plus a poll (1 s) plus scheduling: < 11 s.
        // A second lease waited would end after ≈ 12 s (the bound was 10 s, 3 s above the nominal).
        #expect(waited < .seconds(11), "waited \(waited) for the name, far more than a lease")
        // Its first round only reclaims (an ordinary one would take its fair share, 2 with z live: 0 and 1).
        let running = Task { await restarted.run() }
        // (A round starts its partitions one after another: wait for the third; an ordinary round stops at two.)
        try await eventually(timeout: .seconds(10), "the restarted member reclaims its 3 partitions: \(restarted.partitions)") {
            restarted.partitions.count == 3
        }
        #expect(restarted.partitions.map(\.partition) == [0, 1, 2] && restarted.partitions.allSatisfy { $0.epoch == 2 },
                "the restarted process reclaims its own partitions with a new epoch: \(restarted.partitions)")
        await restarted.stop(reason: "test")
        await running.value
    }

    @Test("A member frozen past its heartbeat and replaced, stopped before any round of its own noticed: its stop releases nothing of the new process's",
          .timeLimit(.minutes(2)))
    func stopAfterReplacement() async throws {
        let (server, store) = try await Self.privateStore("replaced")
        defer { server.stop() }
        defer { Task { await store.shutdown() } }
        let lines = InMemoryLogHandler.Store()
        let engine = try Self.member(store, partitions: 2, lease: 30, lines: lines)
        try await engine.start()
        try await engine.round()
        #expect(engine.partitions.count == 2 && engine.runsOutputs)
        // Meanwhile (the member frozen) another process claimed the name and took the partitions
        // back under it; then the frozen one gets SIGTERM.
        try await store.execute("hand the name over", "UPDATE regionkit_cluster_member SET instance = 'gw-9 pid 99' WHERE member = 'engine-a'")
        await engine.stop(reason: "signal 15")
        let leases = try await store.leases()
        #expect(leases.count == 2 && leases.allSatisfy { $0.owner == "engine-a" && $0.expiresIn > 20 }, "released: \(leases)")
        #expect(try await store.holdSingleton("outputs", member: "engine-b", ttl: 30) == nil, "the outputs lease was released")
        #expect(try await store.members().map(\.member) == ["engine-a"], "the other process's heartbeat was removed")
        #expect(lines.all.contains { $0.contains("another process holds this member's name now") }, "\(lines.text)")
    }

    @Test("A member whose start fails after it joined (the store refuses to register its regions) leaves at once: no live heartbeat shrinks the others' fair share",
          .timeLimit(.minutes(2)))
    func failedStartLeaves() async throws {
        let (server, store) = try await Self.privateStore("failed")
        defer { server.stop() }
        defer { Task { await store.shutdown() } }
        let site = Region.beacon(try BeaconRegion(identifier: "site", uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        try await store.ensureRegions([site], at: 1)
        // A stored definition that no longer decodes is replaced by the configured one: the store
        // refuses that write (a trigger), so the start fails after the join.
        try await store.execute("break the stored region", "UPDATE monitored_region SET definition = '{\"nope\": 1}' WHERE identifier = 'site'")
        try await store.execute("a refusing function", "CREATE FUNCTION refuse_region() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql")
        try await store.execute("a refusing trigger", "CREATE TRIGGER refuse_region BEFORE INSERT OR UPDATE ON monitored_region FOR EACH ROW EXECUTE FUNCTION refuse_region()")
        let engine = try Self.member(store, partitions: 2, lease: 30, regions: [site])
        await #expect(throws: RegionKitError.self) { try await engine.start() }
        #expect(try await store.members().isEmpty, "the member that did not start is still live")
    }
}
