import Foundation
import Logging
import Testing
import RegionKit
import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// A partition delivered sightings that hash to another partition (the broker's mapping counts
/// another number of partitions than `cluster.partitions`) says so: counted in its status, logged
/// at the 1st, 10th, 100th. Before, they were decided by the wrong partition without a word.
@Suite("Cluster partition: sightings of other partitions")
struct PartitionRouteCheckTests {
    static let filter = "regionkit/part/3/espresense/devices/+/+"

    /// ESPresense ids of iBeacons with minors from 1 that hash to `partition` of `count` (or not).
    static func ids(hashingTo partition: Int, of count: Int, _ wanted: Bool, first: Int) -> [String] {
        (1...500).map { "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-\($0)" }
            .filter { (NATSPartition.partition(of: $0, count: count) == partition) == wanted }.prefix(first).map { $0 }
    }

    @Test("The hashed level is the filter's first +; a topic the filter does not match, one partition, or a filter without + is not checked")
    func check() throws {
        let check = try #require(PartitionRouteCheck(filter: Self.filter, count: 4))
        let mine = try #require(Self.ids(hashingTo: 3, of: 4, true, first: 1).first)
        let other = try #require(Self.ids(hashingTo: 3, of: 4, false, first: 1).first)
        #expect(check.partition(of: "regionkit/part/3/espresense/devices/\(mine)/hall") == 3)
        #expect(check.partition(of: "regionkit/part/3/espresense/devices/\(other)/hall") == NATSPartition.partition(of: other, count: 4))
        #expect(check.partition(of: "espresense/rooms/hall/status") == nil)
        #expect(check.partition(of: "regionkit/part/3/espresense/devices//hall") == NATSPartition.partition(of: "/", count: 4), "an empty level is NATS's token /")
        #expect(PartitionRouteCheck(filter: Self.filter, count: 1) == nil)
        #expect(PartitionRouteCheck(filter: "regionkit/part/3/#", count: 4) == nil)
    }

    @Test("A worker counts the sightings of other partitions in its status and logs them at the 1st and 10th; its own and a node's status are not counted")
    func workerCounts() throws {
        let logs = InMemoryLogHandler.Store()
        let worker = PartitionWorker(lease: PartitionLease(partition: 3, epoch: 1), member: "engine-a",
                                     regions: [try ClusterModeTests.region("hall", major: 1)], profile: .responsive,
                                     store: UnleasedClusterStore(try RegionStore(path: temporaryStorePath())),
                                     mqtt: try MQTTClientConfiguration(url: "mqtt://127.0.0.1:1"), clientIDPrefix: "rk-route-part-",
                                     topicFilter: Self.filter, statusFilter: "espresense/rooms/+/status", hooks: HookConfiguration(), partitionCount: 4,
                                     logger: Logger(label: "test") { _ in InMemoryLogHandler(store: logs) }, onEvents: { _ in }, onFenced: { _ in })
        for id in Self.ids(hashingTo: 3, of: 4, true, first: 20) { worker.checkRoute(of: "regionkit/part/3/espresense/devices/\(id)/hall") }
        worker.checkRoute(of: "espresense/rooms/hall/status")
        #expect(worker.misroutedSightings.withLock { $0 } == 0)
        #expect(worker.status.detail?.contains("other partitions") == false)
        for id in Self.ids(hashingTo: 3, of: 4, false, first: 12) { worker.checkRoute(of: "regionkit/part/3/espresense/devices/\(id)/hall") }
        #expect(worker.misroutedSightings.withLock { $0 } == 12)
        #expect(worker.status.detail?.contains("12 sightings of other partitions") == true, "\(worker.status.detail ?? "")")
        let warnings = logs.all.filter { $0.contains("a sighting of another partition") }
        #expect(warnings.count == 2 && warnings.allSatisfy { $0.contains("4 partitions (cluster.partitions)") }, "\(warnings)")
        #expect(warnings.last?.contains("misrouted=10") == true, "\(warnings)")
    }
}
