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
    /// the outputs' hook ignores SIGTERM, so the expiry takes its grace (≈ 1 s) to stop it, and
    /// the stop is called as soon as the expiry began: "process stopped" must come after
    /// "outputs stopped".
    @Test("A stop during a lease expiry waits for it: process stopped is the member's last word", .timeLimit(.minutes(1)))
    func stopWaitsForExpiry() async throws {
        let lines = InMemoryLogHandler.Store()
        let base = try RegionStore(path: temporaryStorePath())
        let stubborn = "trap '' TERM; sleep 10"
        // A logged event whose hook the outputs' runner starts at once.
        _ = try base.append(time: Date().timeIntervalSince1970, type: "didEnterRegion", region: "hall", state: "inside", reason: nil,
                            json: #"{"type":"didEnterRegion","region":"hall"}"#, hooks: ["command:" + stubborn])
        // The first lease round succeeds (it takes the outputs), every later one fails.
        let store = UnleasedClusterStore(base, grantsSingletons: true, renewals: 1, appended: lines)
        let engine = ClusterEngine(store: store, configuration: ClusterConfiguration(partitions: 2, member: "engine-a", leaseSeconds: 1),
                                   mqtt: try MQTTClientConfiguration(url: "mqtt://127.0.0.1:1"), profile: .responsive, regions: [],
                                   hooks: HookConfiguration(onEnter: [stubborn], timeout: 30), site: "stop-test",
                                   logger: Logger(label: "test") { _ in InMemoryLogHandler(store: lines) })
        try await engine.start()
        let running = Task { await engine.run() }
        try await eventually(timeout: .seconds(20), "the lease watch expires the leases") {
            lines.all.contains { $0.contains("leases ran out") }
        }
        #expect(!lines.all.contains { $0.contains("outputs stopped") }, "the hook holds the expiry for its grace: \(lines.text)")
        await engine.stop(reason: "test")
        await running.value
        let all = lines.all
        let outputsStopped = try #require(all.firstIndex { $0.contains("outputs stopped") }, "\(lines.text)")
        let processStopped = try #require(all.firstIndex { $0 == "append processStopped" }, "\(lines.text)")
        #expect(outputsStopped < processStopped, "process stopped was logged while the expiry still stopped the outputs:\n\(lines.text)")
        #expect(all.filter { $0.contains("outputs stopped") }.count == 1, "\(lines.text)")
    }
}
