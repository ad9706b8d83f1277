import Foundation
import RegionKitTestSupport
import Testing
import RegionKit
import RegionKitStore
@testable import RegionKitService

/// The event log's retention (`retention:`): the daemon's pruning, chunk by chunk. The store's
/// rules (what is kept whatever the limits) are in the store conformance suite, for both stores.
@Suite("Event log retention")
struct EventRetentionTests {
    /// `count` events at times 0, 1, 2, … in batches of 1,000.
    static func store(events count: Int) throws -> RegionStore {
        let store = try RegionStore(path: temporaryStorePath())
        for start in stride(from: 0, to: count, by: 1_000) {
            _ = try store.apply((start..<min(start + 1_000, count)).map {
                .event(time: Double($0), type: "didEnterRegion", region: "lobby", state: "inside", reason: nil, json: "{}", hooks: [])
            })
        }
        return store
    }

    @Test("By count, over several chunks: the newest maxEvents stay")
    func byCountOverChunks() async throws {
        let total = 2 * EventRetention.chunk + 1_500
        let store = try Self.store(events: total)
        let pruned = try await EventRetention(maxEvents: 1_000).prune(store, now: 1e9)
        #expect(pruned == total - 1_000)
        let left = try store.events()
        #expect(left.count == 1_000)
        #expect(left.first?.time == Double(total - 1_000))
        #expect(try await EventRetention(maxEvents: 1_000).prune(store, now: 1e9) == 0, "nothing more")
    }

    @Test("By age against the given clock, and by either limit when both are set")
    func byAgeOrCount() async throws {
        let store = try Self.store(events: 3_000)
        // A day is 86,400 s: at now = 1 day + 2,500 s, events before t = 2,500 are older than a day.
        let day = EventRetention(maxAgeDays: 1)
        #expect(try await day.prune(store, now: 86_400 + 2_500) == 2_500)
        #expect(try store.events().first?.time == 2_500)
        // Both: the count bites first here.
        #expect(try await EventRetention(maxAgeDays: 1, maxEvents: 100).prune(store, now: 86_400 + 2_500) == 400)
        #expect(try store.events().map(\.time) == (2_900..<3_000).map(Double.init))
    }

    @Test("The configuration block decodes, and a daemon without one keeps everything")
    func configuration() throws {
        let configuration = try ServiceConfiguration.decode("sources:\n  - gpsd: {}\nretention: {maxAgeDays: 90, maxEvents: 5000000}\n", path: "/etc/regionkit/test.yaml")
        #expect(configuration.retention == EventRetention(maxAgeDays: 90, maxEvents: 5_000_000))
        #expect(try ServiceConfiguration.decode("sources:\n  - gpsd: {}\n", path: "/etc/regionkit/test.yaml").retention == nil)
    }
}
