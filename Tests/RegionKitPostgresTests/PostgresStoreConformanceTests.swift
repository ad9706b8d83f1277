import Foundation
import RegionKitCore
import Testing
import RegionKitPostgres
import RegionKitStore
import RegionKitTestSupport

/// The same conformance checks against `PostgresRegionStore` on a real PostgreSQL: one private
/// server for the suite's test, a fresh database per check.
@Suite("RegionStoring conformance: PostgreSQL", .serialized, .tags(.endToEnd), .enabled(if: PostgresServer.isAvailable, PostgresServer.skipReason))
struct PostgresStoreConformanceTests {
    @Test("PostgreSQL passes every check, each in a fresh database", .timeLimit(.minutes(5)))
    func everyCheck() async throws {
        let server = try PostgresServer()
        try await server.start()
        defer { server.stop() }
        for check in StoreConformance.allCases {
            let database = "conformance_\(check.rawValue.lowercased())"
            try await server.createDatabase(database)
            let store = try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: database)
            do {
                try await check.run(on: store)
            } catch {
                Issue.record("check \(check.rawValue) threw: \(error)")
            }
            await store.shutdown()
        }
    }

    @Test("a store of schema 6 (before beacon rooms, announcements, dismissals and write identities) with data migrates to 9 when opened: its data kept, the new tables usable", .timeLimit(.minutes(3)))
    func migratesFromSchema6() async throws {
        let server = try await PostgresServer.started(database: "upgrade")
        defer { server.stop() }
        let first = try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: "upgrade")
        let lobby = Region.beacon(try BeaconRegion(identifier: "lobby", uuid: StoreConformance.uuid))
        try await first.saveRegion(lobby, at: 1, origin: .api)
        let id = try await first.append(time: 2, type: "processStarted", region: nil, state: nil, reason: nil, json: "{}", hooks: [])
        await first.shutdown()
        // Back to schema 6, as a store written before this version is.
        _ = try await server.psql("DROP TABLE beacon_room; DROP TABLE announced_beacon; DROP TABLE dismissed_beacon; DROP TABLE regionkit_partition_write; DELETE FROM regionkit_schema WHERE version >= 7;", database: "upgrade")
        let upgraded = try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: "upgrade")
        do {
            #expect(try await upgraded.storedRegions().map(\.region) == [lobby])
            #expect(try await upgraded.lastEventID() == id)
            _ = try await upgraded.apply([.room("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1", scanner: "kitchen", at: 3)])
            #expect(try await upgraded.beaconRooms() == ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1": "kitchen"])
            try await upgraded.addAnnouncedBeacons(["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1"], output: "mqtt:home")
            #expect(try await upgraded.announcedBeacons("mqtt:home") == ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1"])
            try await upgraded.dismissAnnouncedBeacons(["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1"], output: "mqtt:home")
            #expect(try await upgraded.dismissedBeacons("mqtt:home") == ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1"])
            let lease = try #require(try await upgraded.balanceLeases(member: "a", partitions: 1, ttl: 30).held.first)
            let row = ClusterEventRow(time: 4, type: "didChangeNearestScanner", region: nil, state: nil, reason: nil, json: "{}", hooks: [])
            let write = ClusterWriteID(writer: "w", sequence: 1)
            let appended = try await upgraded.appendEvents([row], lease: lease, member: "a", write: write)
            #expect(try await upgraded.appendEvents([row], lease: lease, member: "a", write: write) == appended, "committed once")
            let versions = try await server.psql("SELECT MAX(version) FROM regionkit_schema", database: "upgrade")
            #expect(versions.trimmingCharacters(in: .whitespacesAndNewlines) == "\(PostgresRegionStore.schemaVersion)" && PostgresRegionStore.schemaVersion == 9, "\(versions)")
        } catch {
            Issue.record("threw: \(error)")
        }
        await upgraded.shutdown()
    }

    @Test("a batch the database refuses part of writes none of it", .timeLimit(.minutes(3)))
    func batchIsAllOrNothing() async throws {
        let server = try await PostgresServer.started(database: "atomic")
        defer { server.stop() }
        let store = try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: "atomic")
        do {
            try await StoreConformance.batchIsAllOrNothing(store) { type in
                _ = try await server.psql("""
                    CREATE FUNCTION refuse_by_the_test() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
                    CREATE TRIGGER refuse_by_the_test BEFORE INSERT ON event_log FOR EACH ROW
                    WHEN (NEW.type = '\(type)') EXECUTE FUNCTION refuse_by_the_test();
                    """, database: "atomic")
            }
        } catch {
            Issue.record("threw: \(error)")
        }
        await store.shutdown()
    }

    @Test("a batch longer than the operation timeout whose writes each answer in time is written; a write that does not answer still times out",
          .timeLimit(.minutes(3)))
    func batchTimeoutIsPerWrite() async throws {
        let server = try await PostgresServer.started(database: "slow")
        defer { server.stop() }
        let store = try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: "slow",
                                                  operationTimeout: .seconds(1))
        // Every event insert takes 0.25 s: a batch of 8 takes ≈ 2 s, twice the timeout.
        func slowInserts(by seconds: Double) async throws {
            _ = try await server.psql("""
                CREATE OR REPLACE FUNCTION slow_by_the_test() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_sleep(\(seconds)); RETURN NEW; END $$;
                CREATE OR REPLACE TRIGGER slow_by_the_test BEFORE INSERT ON event_log FOR EACH ROW EXECUTE FUNCTION slow_by_the_test();
                """, database: "slow")
        }
        do {
            try await slowInserts(by: 0.25)
            let writes = (0..<8).map { index in
                StoreWrite.event(time: Double(index), type: "e\(index)", region: nil, state: nil, reason: nil, json: "{}", hooks: [])
            }
            let started = ContinuousClock.now
            let stored = try await store.apply(writes)
            #expect(stored.map(\.type) == (0..<8).map { "e\($0)" })
            #expect(ContinuousClock.now - started > .seconds(1), "the batch took longer than the timeout, as meant")
            try await slowInserts(by: 5)
            let error = await #expect(throws: RegionKitError.self) {
                try await store.apply([.event(time: 9, type: "stuck", region: nil, state: nil, reason: nil, json: "{}", hooks: [])])
            }
            #expect(error?.message.contains("no answer within") == true, "\(String(describing: error))")
        } catch {
            Issue.record("threw: \(error)")
        }
        await store.shutdown()
    }

    @Test("the schema is created once: a second store on the same database and concurrent opens agree", .timeLimit(.minutes(3)))
    func schemaIsSharedAndMigratedOnce() async throws {
        let server = try await PostgresServer.started(database: "shared")
        defer { server.stop() }
        let stores = try await withThrowingTaskGroup(of: PostgresRegionStore.self) { group in
            for _ in 0..<3 {
                group.addTask { try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: "shared") }
            }
            var stores: [PostgresRegionStore] = []
            for try await store in group { stores.append(store) }
            return stores
        }
        let id = try await stores[0].append(time: 1, type: "didEnterRegion", region: "lobby", state: "inside", reason: nil, json: "{}", hooks: [])
        #expect(try await stores[1].events(since: nil, region: nil, type: nil, afterID: nil, limit: nil).map(\.id) == [id])
        #expect(try await stores[2].lastEventID() == id, "every engine sees one log")
        for store in stores { await store.shutdown() }
    }

    @Test("a server that is not there is a typed storeFailed error naming the store and the refusal, at once (not after the operation timeout)",
          .timeLimit(.minutes(2)))
    func unreachableServerIsATypedError() async throws {
        let port = Int(try Loopback.freePort())
        let started = ContinuousClock.now
        do {
            let store = try await PostgresRegionStore(host: "127.0.0.1", port: port, username: "regionkit", database: "postgres",
                                                      operationTimeout: .seconds(20))
            await store.shutdown()
            Issue.record("opened a store on a closed port")
        } catch let error as RegionKitError {
            #expect(error.code == .storeFailed)
            #expect("\(error)".contains("store postgres://regionkit@127.0.0.1:\(port)/postgres: cannot connect"), "\(error)")
            #expect("\(error)".contains("refused"), "\(error)")
            // The pool retried the refused connection until the 20 s timeout; a refusal is final.
            #expect(ContinuousClock.now - started < .seconds(10), "not the operation timeout's wait")
        }
    }
}
