import Foundation
import RegionKitTestSupport
import RegionKitConcurrency
import Testing
import RegionKit
@testable import RegionKitStore
import GRDB

func temporaryStorePath() -> String {
    TestScratch.directory.appendingPathComponent("rk-store-\(UUID().uuidString)/regionkit.sqlite").path
}

@Suite("RegionStore (SQLite via GRDB)")
struct RegionStoreTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    /// A committed event survives a power loss: the writer syncs the WAL at every commit
    /// (GRDB's WAL default, NORMAL, does not; audit finding).
    @Test func commitsAreSynced() throws {
        let store = try RegionStore(path: temporaryStorePath())
        #expect(try store.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2, "FULL")
        #expect(try store.write { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
    }

    @Test("A new store and its WAL are readable by their owner only (they hold webhook URLs and every event; they were 0644); an existing file keeps its mode")
    func newStoreIsPrivate() throws {
        let path = temporaryStorePath()
        let store = try RegionStore(path: path)
        try store.saveRegion(.circular(try CircularRegion(identifier: "park", latitude: 1, longitude: 2, radius: 30)), at: 1)
        func mode(_ path: String) throws -> Int { try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) }
        #expect(try mode(path) == 0o600)
        #expect(try mode(path + "-wal") == 0o600)
        // A store the operator made group-readable on purpose stays so.
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        _ = try RegionStore(path: path)
        #expect(try mode(path) == 0o640)
    }

    @Test("states() decodes a stored evidence again only when its text changed, and never answers a stale one: a new evidence, one that does not decode (left out), one mended, a region removed")
    func statesKeepDecodedEvidence() throws {
        let path = temporaryStorePath()
        let store = try RegionStore(path: path)
        let beacon = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2)
        try store.saveState("lobby", state: .inside, since: 1, evidence: EventEvidence(rssi: -60, beacon: beacon, reason: "sighting"), at: 1)
        try store.saveState("hall", state: .outside, since: 1, evidence: EventEvidence(reason: "no sighting for 3.0 s"), at: 1)
        #expect(try store.states()["lobby"]?.evidence == EventEvidence(rssi: -60, beacon: beacon, reason: "sighting"))
        #expect(try store.states()["lobby"]?.evidence?.rssi == -60, "read again, from what the first read kept")
        try store.saveState("lobby", state: .outside, since: 9, evidence: EventEvidence(lastSightingAge: 8.5, reason: "no sighting for 8.5 s"), at: 9)
        var states = try store.states()
        #expect(states["lobby"]?.state == .outside && states["lobby"]?.evidence?.reason == "no sighting for 8.5 s")
        #expect(states["hall"]?.evidence?.reason == "no sighting for 3.0 s")
        // A text that does not decode (a damaged row) is left out; mended, it is read again.
        try DatabaseQueue(path: path).write { db in try db.execute(sql: "UPDATE region_state SET evidence = '{\"rssi\": \"loud\"}' WHERE identifier = 'hall'") }
        states = try store.states()
        #expect(states["hall"]?.state == .outside && states["hall"]?.evidence == nil)
        try DatabaseQueue(path: path).write { db in try db.execute(sql: "UPDATE region_state SET evidence = '{\"rssi\": -70}' WHERE identifier = 'hall'") }
        #expect(try store.states()["hall"]?.evidence == EventEvidence(rssi: -70))
        #expect(try store.state(of: "hall")?.evidence == EventEvidence(rssi: -70), "one region's read agrees")
        try store.removeRegion("lobby")
        #expect(try store.states().keys.sorted() == ["hall"])
    }

    @Test func createsTheSchemaInWALModeAndReopens() throws {
        let path = temporaryStorePath()
        let store = try RegionStore(path: path)
        #expect(try store.journalMode() == "wal")
        #expect(try store.integrityCheck() == "ok")
        var lobby = try BeaconRegion(identifier: "lobby", uuid: Self.uuid, major: 3)
        lobby.notifyEntryStateOnDisplay = true
        lobby.notifyOnExit = false
        try store.saveRegion(.beacon(lobby), at: 10)
        try store.saveRegion(.circular(try CircularRegion(identifier: "park", latitude: 1, longitude: 2, radius: 30)), at: 11)
        try store.saveState("lobby", state: .inside, since: 12, evidence: EventEvidence(rssi: -60, reason: "first sighting"), at: 12)
        let reopened = try RegionStore(path: path)
        #expect(try reopened.regions().map(\.identifier) == ["lobby", "park"])
        #expect(try reopened.regions().first == .beacon(lobby), "flags survive")
        let state = try #require(try reopened.states()["lobby"])
        #expect(state.state == .inside && state.since == 12 && state.evidence?.rssi == -60)
    }

    /// Several openers of one store at the same instant (a daemon starting while `regionkit events`
    /// or a test polls its store): GRDB's migrator reads the applied migrations outside each
    /// migration's transaction, so without ``RegionStore/migrate(_:attempts:)`` two of them ran
    /// one migration twice and the second failed ("table … already exists", "duplicate column
    /// name: origin"). A DaemonFaultTests run saw the daemon stop at start that way. Both a new
    /// store and one from before the last migration, opened by 3 at once, 30 rounds each. (A new
    /// store also met `PRAGMA journal_mode = WAL` failing with SQLITE_BUSY: ``RegionStore/openPool(path:configuration:patience:)``.)
    @Test func concurrentOpenersOfANewOrOlderStoreAllSucceed() throws {
        let migrations = RegionStore.migrator.migrations
        let failures = LockedBox<[String]>([])
        for round in 0..<60 {
            let path = temporaryStorePath()
            if round % 2 == 1 {
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                let pool = try DatabasePool(path: path)
                try RegionStore.migrator.migrate(pool, upTo: migrations[migrations.count - 2])
                try pool.close()
            }
            DispatchQueue.concurrentPerform(iterations: 3) { _ in
                do { _ = try RegionStore(path: path) } catch { failures.withLock { $0.append("round \(round): \(error)") } }
            }
            #expect(try RegionStore(path: path).integrityCheck() == "ok")
        }
        let found = failures.withLock { $0 }
        #expect(found.isEmpty, "\(found.count) failed openers, first: \(found.first ?? "")")
    }

    @Test func replacingARegionKeepsItsPlaceAndForgetsItsState() throws {
        let store = try RegionStore(path: temporaryStorePath())
        try store.saveRegion(.beacon(try BeaconRegion(identifier: "a", uuid: Self.uuid)), at: 1)
        try store.saveRegion(.beacon(try BeaconRegion(identifier: "b", uuid: Self.uuid)), at: 1)
        try store.saveState("a", state: .inside, since: 1, evidence: nil, at: 1)
        try store.saveRegion(.beacon(try BeaconRegion(identifier: "a", uuid: Self.uuid, major: 9)), at: 2)
        #expect(try store.regions().map(\.identifier) == ["a", "b"])
        #expect(try store.regions()[0].beaconRegion?.major == 9)
        #expect(try store.states()["a"] == nil)
        try store.removeRegion("b")
        #expect(try store.regions().map(\.identifier) == ["a"])
    }

    @Test func appendsEventsWithTheirDeliveriesAndFilters() throws {
        let store = try RegionStore(path: temporaryStorePath())
        let first = try store.append(time: 100, type: "didEnterRegion", region: "lobby", state: "inside", reason: "sighting", json: "{}", hooks: ["command:a", "webhook:b"])
        let second = try store.append(time: 200, type: "didExitRegion", region: "park", state: "outside", reason: "silence", json: "{}")
        #expect(second == first + 1)
        #expect(try store.events().map(\.id) == [first, second])
        #expect(try store.events(since: 150).map(\.id) == [second])
        #expect(try store.events(region: "lobby").map(\.type) == ["didEnterRegion"])
        #expect(try store.events(afterID: first).map(\.id) == [second])
        let due = try store.dueDeliveries(now: 100, limit: 10)
        #expect(due.map(\.hook) == ["command:a", "webhook:b"])
        try store.markDelivered(due[0].id, at: 101)
        try store.markAttemptFailed(due[1].id, error: "refused", retryAt: 130)
        #expect(try store.dueDeliveries(now: 120, limit: 10).isEmpty)
        #expect(try store.dueDeliveries(now: 130, limit: 10).map(\.attempts) == [1])
        try store.markAttemptFailed(due[1].id, error: "refused", retryAt: nil)
        #expect(try store.deliveries(status: .failed).count == 1)
        #expect(try store.deliveries(status: .delivered).first?.deliveredAt == 101)
        #expect(try store.nextDeliveryTime() == nil)
    }

    @Test func theQueueIsBounded() throws {
        let store = try RegionStore(path: temporaryStorePath())
        for index in 0..<25 { try store.append(time: Double(index), type: "didEnterRegion", region: "r", state: nil, reason: nil, json: "{}", hooks: ["webhook:x"]) }
        #expect(try store.trimPendingDeliveries(toAtMost: 10) == 15)
        let pending = try store.deliveries(status: .pending)
        #expect(pending.count == 10)
        #expect(pending.first?.eventID == 16, "the newest are kept")
        #expect(try store.deliveries(status: .dropped).count == 15)
    }

    @Test func defaultPathFollowsTheEnvironment() {
        #expect(RegionStore.defaultPath(environment: ["REGIONKIT_STORE": "/tmp/x.sqlite"]) == "/tmp/x.sqlite")
        #expect(RegionStore.defaultPath(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]) == "/data/regionkit/regionkit.sqlite")
        #expect(RegionStore.defaultPath(environment: ["HOME": "/home/u"]) == "/home/u/.local/share/regionkit/regionkit.sqlite")
    }

    @Test func aFileThatIsNotADatabaseGivesAClearError() throws {
        let path = temporaryStorePath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data("this is not sqlite, just text that is long enough to be read as a header".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try RegionStore(path: path)
        } throws: { error in
            // A store failure has its own code (not malformedInput) and keeps SQLite's error as its cause.
            guard let error = error as? RegionKitError else { return false }
            return error.code == .storeFailed && error.message.contains("cannot open the database") && error.cause != nil
        }
    }
}

/// The store refuses what is not its own, names what is wrong in a row, holds one writer at a
/// time, and notices its file deleted or replaced.
@Suite("RegionStore: foreign files, bad rows, one writer, a vanished file")
struct RegionStoreSafetyTests {
    static func directory() throws -> String {
        let path = temporaryStorePath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        return path
    }

    @Test("Someone else's SQLite database is refused and left byte for byte as it was")
    func foreignDatabase() throws {
        let path = try Self.directory()
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "PRAGMA application_id = 1234")
                try db.execute(sql: "CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
                try db.execute(sql: "INSERT INTO invoices (amount) VALUES (12.5)")
            }
            try queue.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = #expect(throws: RegionKitError.self) { try RegionStore(path: path) }
        #expect(error?.code == .storeFailed)
        #expect(error?.message.contains("not a RegionKit store (application_id 0x000004D2; tables: invoices)") == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "not even switched to WAL")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))

        // No application_id but tables that are not ours: refused too.
        let other = try Self.directory()
        let queue = try DatabaseQueue(path: other)
        try queue.write { db in try db.execute(sql: "CREATE TABLE notes (body TEXT)") }
        try queue.close()
        let second = #expect(throws: RegionKitError.self) { try RegionStore(path: other) }
        #expect(second?.message.contains("no application_id; tables: notes") == true, "\(String(describing: second))")

        // Nothing but GRDB's bookkeeping table: a RegionKit store another process is creating
        // this instant (its migrator commits the table before the first migration): accepted.
        let creating = try Self.directory()
        let third = try DatabaseQueue(path: creating)
        try third.write { db in try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)") }
        try third.close()
        let store = try RegionStore(path: creating)
        #expect(try store.events().isEmpty)
        // With anything else beside it, still refused.
        let used = try Self.directory()
        let fourth = try DatabaseQueue(path: used)
        try fourth.write { db in
            try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            try db.execute(sql: "CREATE TABLE recipes (name TEXT)")
        }
        try fourth.close()
        #expect(throws: RegionKitError.self) { try RegionStore(path: used) }
    }

    @Test("An empty file and an SQLite file without tables become stores; a store is marked with RegionKit's application_id")
    func emptyFilesAndMarker() throws {
        let empty = try Self.directory()
        _ = FileManager.default.createFile(atPath: empty, contents: nil)
        _ = try RegionStore(path: empty)
        let blank = try Self.directory()
        try DatabaseQueue(path: blank).close()
        let store = try RegionStore(path: blank)
        try store.append(time: 1, type: "processStarted", region: nil, state: nil, reason: nil, json: "{}")
        let id = try DatabaseQueue(path: blank).read { db in try Int32.fetchOne(db, sql: "PRAGMA application_id") }
        #expect(id == RegionStore.applicationID)
        // Reopened: recognised as ours.
        #expect(try RegionStore(path: blank).events().count == 1)
    }

    @Test("Opening waits for another process's lock on the file (a store being created or migrated) instead of failing on SQLITE_BUSY")
    func openWaitsForALockHolder() async throws {
        // A database without tables (so not foreign) in rollback-journal mode, held under an
        // exclusive lock for 400 ms, as a second process creating the store holds it.
        let path = try Self.directory()
        let holder = try DatabaseQueue(path: path)
        try await holder.write { db in try db.execute(sql: "PRAGMA user_version = 1") }
        let phase = LockedBox<(locked: Bool, done: Bool, error: String?)>((false, false, nil))
        Thread.detachNewThread {
            do {
                try holder.inDatabase { db in
                    try db.execute(sql: "BEGIN EXCLUSIVE")
                    phase.withLock { $0.locked = true }
                    Thread.sleep(forTimeInterval: 0.4)
                    try db.execute(sql: "COMMIT")
                }
            } catch {
                phase.withLock { $0.error = "\(error)" }
            }
            phase.withLock { $0.done = true }
        }
        while !phase.withLock({ $0.locked || $0.done }) { try await Task.sleep(for: .milliseconds(5)) }
        let store = try RegionStore(path: path)
        while !phase.withLock({ $0.done }) { try await Task.sleep(for: .milliseconds(5)) }
        #expect(phase.withLock { $0.error } == nil)
        try store.append(time: 1, type: "processStarted", region: nil, state: nil, reason: nil, json: "{}")
        #expect(try store.events().count == 1)
    }

    @Test("A store from before the marker (RegionKit's tables, application_id 0) is still opened, and marked")
    func unmarkedStore() throws {
        let path = try Self.directory()
        _ = try RegionStore(path: path)
        try DatabaseQueue(path: path).write { db in try db.execute(sql: "PRAGMA application_id = 0") }
        _ = try RegionStore(path: path)
        #expect(try DatabaseQueue(path: path).read { db in try Int32.fetchOne(db, sql: "PRAGMA application_id") } == RegionStore.applicationID)
    }

    @Test("A column holding the wrong type is a typed error naming table, row and column (GRDB's subscript would trap)", arguments: [
        ("UPDATE event_log SET time = 'noon' WHERE id = 2", "table event_log row id=2 column time: expected Double, found"),
        ("UPDATE event_log SET type = x'00ff' WHERE id = 1", "table event_log row id=1 column type: expected String"),
        ("UPDATE event_log SET json = NULL, reason = 7 WHERE id = 2", "table event_log row id=2 column json: expected String, found NULL"),
    ])
    func wrongColumnType(sql: String, expected: String) throws {
        let path = try Self.directory()
        let store = try RegionStore(path: path)
        try store.append(time: 1, type: "didEnterRegion", region: "a", state: "inside", reason: nil, json: "{}")
        try store.append(time: 2, type: "didExitRegion", region: "a", state: "outside", reason: nil, json: "{}")
        // A table rebuilt without NOT NULL so that a NULL can be put where the schema forbids it.
        try DatabaseQueue(path: path).write { db in
            if sql.contains("NULL") {
                try db.execute(sql: "CREATE TABLE event_log_loose AS SELECT * FROM event_log")
                try db.execute(sql: "DROP TABLE event_log")
                try db.execute(sql: "ALTER TABLE event_log_loose RENAME TO event_log")
            }
            try db.execute(sql: sql)
        }
        let error = #expect(throws: RegionKitError.self) { try store.events() }
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
        #expect(error?.message.contains(path) == true)
    }

    @Test("Wrong types in the region, state and delivery tables are named too")
    func wrongTypesElsewhere() throws {
        let path = try Self.directory()
        let store = try RegionStore(path: path)
        try store.saveRegion(.beacon(try BeaconRegion(identifier: "lobby", uuid: RegionStoreTests.uuid)), at: 1)
        try store.saveState("lobby", state: .inside, since: 1, evidence: nil, at: 1)
        try store.append(time: 1, type: "didEnterRegion", region: "lobby", state: nil, reason: nil, json: "{}", hooks: ["webhook:x"])
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE monitored_region SET registered_at = 'yesterday'")
            try db.execute(sql: "UPDATE region_state SET updated_at = x'01'")
            try db.execute(sql: "UPDATE hook_delivery SET attempts = 'many'")
        }
        let region = #expect(throws: RegionKitError.self) { try store.storedRegions() }
        #expect(region?.message.contains("table monitored_region row identifier=\"lobby\" column registered_at: expected Double") == true, "\(String(describing: region))")
        let state = #expect(throws: RegionKitError.self) { try store.states() }
        #expect(state?.message.contains("table region_state row identifier=\"lobby\" column updated_at") == true, "\(String(describing: state))")
        let delivery = #expect(throws: RegionKitError.self) { try store.deliveries() }
        #expect(delivery?.message.contains("table hook_delivery row id=1 column attempts: expected Int, found \"many\"") == true, "\(String(describing: delivery))")
    }

    @Test("One writer per store: a second lock names the store and the holder's PID; released when the holder goes")
    func exclusiveLock() throws {
        let path = temporaryStorePath()
        var first: RegionStoreLock? = try RegionStoreLock(storePath: path)
        let error = #expect(throws: RegionKitError.self) { try RegionStoreLock(storePath: path) }
        #expect(error?.code == .storeFailed)
        #expect(error?.message.contains("store \(path) is in use by another regionkit process (pid \(getpid());") == true, "\(String(describing: error))")
        withExtendedLifetime(first) {}
        first = nil
        _ = try RegionStoreLock(storePath: path)
    }

    @Test("The store deleted or replaced under a writer: the next write throws instead of being acknowledged", arguments: ["deleted", "replaced"])
    func vanishedFile(how: String) throws {
        let path = try Self.directory()
        let store = try RegionStore(path: path)
        try store.append(time: 1, type: "processStarted", region: nil, state: nil, reason: nil, json: "{}")
        if how == "deleted" {
            try FileManager.default.removeItem(atPath: path)
        } else {
            let copy = path + ".copy"
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            _ = rename(copy, path)
        }
        let error = #expect(throws: RegionKitError.self) {
            try store.append(time: 2, type: "didEnterRegion", region: "a", state: nil, reason: nil, json: "{}")
        }
        #expect(error?.code == .storeFailed)
        #expect(error?.message == "store \(path): the database file was \(how) \(how == "deleted" ? "while in use" : "by another file while in use")")
        #expect(throws: RegionKitError.self) { try store.checkWritable() }
    }
}
