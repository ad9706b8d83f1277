import Foundation
import Logging
import Testing
import RegionKit
import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

@Suite("Cluster member stop: ordering against a lease expiry", .serialized, .tags(.realTime))
struct ClusterStopTests {
    /// The lease watch stops the partitions and the outputs when the store stops answering; a
    /// stop arriving meanwhile used to find nothing left to stop and log "process stopped" at
    /// once, while the expiry was still stopping the outputs (their hooks, their `offline`). Here
    /// the outputs' hook runner is held in a store query, so the expiry cannot finish until the
    /// test lets it — after the stop was called: "process stopped" must come after "outputs stopped".
    @Test("A stop during a lease expiry waits for it: process stopped is the member's last word", .timeLimit(.minutes(1)))
    func stopWaitsForExpiry() async throws {
        let lines = InMemoryLogHandler.Store()
        let store = UnleasedClusterStore(try RegionStore(path: temporaryStorePath()), grantsSingletons: true, appended: lines)
        store.deliveriesHeld.withLock { $0 = true }
        let engine = ClusterEngine(store: store, configuration: ClusterConfiguration(partitions: 2, member: "engine-a", leaseSeconds: 1),
                                   mqtt: try MQTTClientConfiguration(url: "mqtt://127.0.0.1:1"), profile: .responsive, regions: [],
                                   hooks: HookConfiguration(onEnter: ["true"]), site: "stop-test",
                                   logger: Logger(label: "test") { _ in InMemoryLogHandler(store: lines) })
        try await engine.start()
        let running = Task { await engine.run() }
        // The outputs' hook runner waits in its query; from now on every lease round fails.
        try await eventually(timeout: .seconds(20), "the outputs' hook runner queries the store") { store.deliveryQueries.withLock { $0 } > 0 }
        store.renewals.withLock { $0 = 0 }
        try await eventually(timeout: .seconds(20), "the lease watch expires the leases") {
            lines.all.contains { $0.contains("leases ran out") }
        }
        let stopping = Task { await engine.stop(reason: "test") }
        // Time for a stop that does not wait to log "process stopped" (the old one did at once).
        try? await eventually(timeout: .seconds(1), "a premature process stopped") { lines.all.contains("append processStopped") }
        #expect(!lines.all.contains { $0.contains("outputs stopped") }, "the held hook runner holds the expiry")
        store.deliveriesHeld.withLock { $0 = false }
        await stopping.value
        await running.value
        let all = lines.all
        let outputsStopped = try #require(all.firstIndex { $0.contains("outputs stopped") }, "\(lines.text)")
        let processStopped = try #require(all.firstIndex { $0 == "append processStopped" }, "\(lines.text)")
        #expect(outputsStopped < processStopped, "process stopped was logged while the expiry still stopped the outputs:\n\(lines.text)")
        #expect(all.filter { $0.contains("outputs stopped") }.count == 1, "\(lines.text)")
    }
}
