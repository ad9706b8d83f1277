import Foundation
import GRDB
import Testing
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// Delivery rows are read back from a store that may hold anything (a hand edit, another program,
/// damage): their numbers are checked, never trusted to fit.
@Suite("Hook deliveries read back from a damaged store")
struct HookStoredRowTests {
    @Test("A delivery whose event id is Int64.min is marked failed (its event is missing); one whose attempts are Int.max is given up at its next failure — both trapped the runner on arithmetic overflow (audit finding)")
    func damagedRows() async throws {
        let path = temporaryStorePath()
        let store = try RegionStore(path: path)
        let first = try store.append(time: 1, type: "didEnterRegion", region: "lobby", state: "inside", reason: nil, json: "{}", hooks: ["bogus:target"])
        _ = try store.append(time: 2, type: "didEnterRegion", region: "hall", state: "inside", reason: nil, json: "{}", hooks: ["bogus:target"])
        var unchecked = Configuration()
        unchecked.foreignKeysEnabled = false   // as the sqlite3 shell writes: a row pointing at no event
        let queue = try DatabaseQueue(path: path, configuration: unchecked)
        try await queue.write { db in
            try db.execute(sql: "UPDATE hook_delivery SET event_id = ? WHERE event_id = ?", arguments: [Int64.min, first])
            try db.execute(sql: "UPDATE hook_delivery SET attempts = ? WHERE event_id <> ?", arguments: [Int64.max, Int64.min])
        }
        try queue.close()
        let runner = HookRunner(store: store, configuration: HookConfiguration(maxAttempts: 5), now: { 10 })
        var passes = 0
        while try await runner.deliverDue() > 0, passes < 5 { passes += 1 }
        let deliveries = try store.deliveries()
        #expect(deliveries.count == 2)
        #expect(deliveries.allSatisfy { $0.status == .failed }, "\(deliveries)")
        #expect(deliveries.first { $0.eventID == .min }?.lastError == "event -9223372036854775808 is missing")
        #expect(deliveries.first { $0.eventID != .min }?.lastError == "unknown hook kind 'bogus:target'")
        // /metrics reads the counts: SUM overflowed on the saturated row ("integer overflow").
        let counts = try store.deliveryCounts()
        #expect(counts.byStatus["failed"] == 2 && counts.failedAttempts == Int.max, "\(counts)")
    }
}
