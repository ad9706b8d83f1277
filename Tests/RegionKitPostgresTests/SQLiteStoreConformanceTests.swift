import Foundation
import GRDB
import RegionKitTestSupport
import Testing
import RegionKitStore

/// The store conformance checks against the single-machine SQLite store, in process.
@Suite("RegionStoring conformance: SQLite")
struct SQLiteStoreConformanceTests {
    @Test("SQLite passes", arguments: StoreConformance.allCases)
    func check(_ check: StoreConformance) async throws {
        let directory = TestScratch.directory.appendingPathComponent("rk-conformance-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try RegionStore(path: directory.appendingPathComponent("regionkit.sqlite").path)
        try await check.run(on: store)
    }

    @Test("a batch the database refuses part of writes none of it")
    func batchIsAllOrNothing() async throws {
        let directory = TestScratch.directory.appendingPathComponent("rk-conformance-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("regionkit.sqlite").path
        let store = try RegionStore(path: path)
        try await StoreConformance.batchIsAllOrNothing(store) { type in
            // A second connection adds the trigger (the store's own schema has none).
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "CREATE TRIGGER refuse_by_the_test BEFORE INSERT ON event_log WHEN NEW.type = '\(type)' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
            }
            try queue.close()
        }
    }
}
