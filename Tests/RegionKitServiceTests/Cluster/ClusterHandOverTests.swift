import Foundation
import Logging
import Testing
import RegionKit
import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// A member gives up what it can no longer hold in time. Its stop hands its partitions back
/// together: each stops consuming at once and gets the same few seconds for its queued
/// contributions (one after another, a store that does not answer kept the last of N partitions
/// consuming for N × 5 s, long after its lease could be taken). Its outputs stop when their own
/// lease is not renewed, though its partitions are.
@Suite("Cluster member: partitions and outputs given up in time", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct ClusterHandOverTests {
    @Test("Four partitions whose contributions cannot be written: the stop takes one flush timeout, not four", .timeLimit(.minutes(2)))
    func partitionsHandedBackTogether() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let store = UnleasedClusterStore(try RegionStore(path: temporaryStorePath()), grantsPartitions: 4)
        store.contributionsRefused.withLock { $0 = true }
        // A UUID region is decided in every partition: each one's engine determines it (outside,
        // after the initial window) and queues that contribution, which the store keeps refusing
        // (the writer retries it): every partition's hand-over waits its whole flush timeout.
        let engine = ClusterEngine(store: store, configuration: ClusterConfiguration(partitions: 4, member: "engine-a", leaseSeconds: 30),
                                   mqtt: try MQTTClientConfiguration(url: broker.url), profile: .responsive,
                                   regions: [try ClusterModeTests.region("site")], hooks: HookConfiguration(), site: "handover-test",
                                   logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        try await engine.start()
        let running = Task { await engine.run() }
        try await eventually(timeout: .seconds(30), "four partitions taken") { engine.partitionStatuses.count == 4 }
        // Past the initial window (3 s): every partition has its contribution queued, and refused.
        // (Waited for, not a fixed 4 s: on a loaded machine a partition could still be deciding.)
        try await eventually(timeout: .seconds(30), "every partition's contribution refused") { store.refusedPartitions.withLock { $0.count } == 4 }
        let started = ContinuousClock.now
        await engine.stop(reason: "test")
        let took = ContinuousClock.now - started
        running.cancel()
        await running.value
        #expect(took < .seconds(12), "the stop took \(took): the partitions' 5 s flushes one after another")
        #expect(took >= .seconds(4), "the stop took \(took): the refused contributions were not waited for")
    }

    /// The outputs run on a lease of their own. A member whose lease rounds go on (the partitions
    /// renewed) but whose outputs lease is no longer renewed (that query fails) must stop the
    /// outputs before the lease can pass to another member, or two members publish and run hooks.
    @Test("Outputs whose lease is no longer renewed are stopped within the lease, though the partitions are renewed", .timeLimit(.minutes(2)))
    func outputsStopWithoutTheirLease() async throws {
        let store = UnleasedClusterStore(try RegionStore(path: temporaryStorePath()), grantsSingletons: true)
        let engine = ClusterEngine(store: store, configuration: ClusterConfiguration(partitions: 2, member: "engine-a", leaseSeconds: 1),
                                   mqtt: try MQTTClientConfiguration(url: "mqtt://127.0.0.1:1"), profile: .responsive, regions: [],
                                   hooks: HookConfiguration(), site: "outputs-lease-test",
                                   logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        try await engine.start()
        let running = Task { await engine.run() }
        try await eventually(timeout: .seconds(30), "the outputs are taken") { engine.runsOutputs }
        store.singletonRenewals.withLock { $0 = 0 }
        let failedAt = ContinuousClock.now
        try await eventually(timeout: .seconds(30), "the outputs stop") { !engine.runsOutputs }
        #expect(ContinuousClock.now - failedAt < .seconds(5), "the outputs ran \(ContinuousClock.now - failedAt) past their last renewal")
        await engine.stop(reason: "test")
        await running.value
    }
}
