import Foundation
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
}
