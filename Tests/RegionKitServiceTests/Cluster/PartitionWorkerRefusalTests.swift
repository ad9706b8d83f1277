import Foundation
import Logging
import Testing
import RegionKit
import RegionKitMQTT
import RegionKitStore
@testable import RegionKitService

/// A cluster partition whose subscription the broker refuses hears nothing, which is not every
/// beacon leaving: its engine is set aside until the subscription is granted (the client asks
/// again) or messages arrive on its session anyway. Driven through the worker's connection events,
/// without a broker or PostgreSQL (``UnleasedClusterStore``).
@Suite("Cluster partition: an engine set aside (a refused subscription, a broker outage)")
struct PartitionWorkerRefusalTests {
    static let beacon = "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1"

    static func worker(profile: MonitoringProfile = .responsive, store base: RegionStore? = nil, partitionCount: Int? = nil,
                       statusFilter: String? = nil) throws -> PartitionWorker {
        let store = UnleasedClusterStore(try base ?? RegionStore(path: temporaryStorePath()))
        return PartitionWorker(lease: PartitionLease(partition: 3, epoch: 1), member: "engine-a",
                               regions: [try ClusterModeTests.region("hall", major: 1)], profile: profile, store: store,
                               mqtt: try MQTTClientConfiguration(url: "mqtt://127.0.0.1:1"), clientIDPrefix: "rk-test-part-",
                               topicFilter: "espresense/devices/+/+", statusFilter: statusFilter, hooks: HookConfiguration(), partitionCount: partitionCount,
                               logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, onEvents: { _ in }, onFenced: { _ in })
    }

    static func sighting() -> MQTTMessage {
        MQTTMessage(topic: "espresense/devices/\(beacon)/hall", payload: Array(#"{"id":"\#(beacon)","rssi":-60,"distance":1.2}"#.utf8))
    }

    @Test("Refused: set aside and reported down; a message arriving anyway resumes it with that message; refused again, a grant resumes it, but not while disconnected")
    func refusedSubscription() throws {
        let worker = try Self.worker()
        func suspended() -> Bool { worker.current.withLock { $0.suspended } }
        worker.connectionChanged(.connected(sessionPresent: true))
        #expect(worker.status.state == .up && !suspended())
        worker.connectionChanged(.subscriptionRefused(filter: "other/#"))
        #expect(worker.status.state == .up && !suspended(), "another filter's refusal changes nothing")

        worker.connectionChanged(.subscriptionRefused(filter: worker.topicFilter))
        #expect(suspended() && worker.status.state == .down && worker.status.detail?.contains("refuses") == true, "\(worker.status)")
        let setAside = worker.current.withLock { $0.manager }
        // The persistent session's earlier subscription still delivers: held, then the partition resumes with it.
        #expect(PartitionWorker.deliver(Self.sighting(), via: worker.route))
        worker.deliveredWhileRefused()
        #expect(!suspended() && worker.status.state == .up)
        #expect(worker.current.withLock { $0.manager } !== setAside, "a new engine, started from the last states")
        #expect(worker.sightings == 1, "the held message reached the new engine")
        #expect(!PartitionWorker.deliver(Self.sighting(), via: worker.route) && worker.sightings == 2)

        worker.connectionChanged(.subscriptionRefused(filter: worker.topicFilter))
        #expect(suspended())
        worker.connectionChanged(.subscriptionRestored(filter: worker.topicFilter))
        #expect(!suspended() && worker.status.state == .up, "granted when asked again")

        worker.connectionChanged(.subscriptionRefused(filter: worker.topicFilter))
        worker.connectionChanged(.disconnected(.notConnected))
        worker.connectionChanged(.subscriptionRestored(filter: worker.topicFilter))
        #expect(suspended() && worker.status.state == .connecting, "no engine without a connection")
        worker.connectionChanged(.connected(sessionPresent: true))
        #expect(!suspended() && worker.status.state == .up)
    }

    @Test("The nodes' status reaches the partition's engine; a node still offline stays so in the next engine; a status held while the sighting filter is refused does not resume it, a sighting does")
    func nodeStatus() throws {
        let worker = try Self.worker(statusFilter: "espresense/rooms/+/status")
        func engine() -> LocationManager { worker.current.withLock { $0.manager } }
        func status(_ room: String, _ text: String) -> MQTTMessage {
            MQTTMessage(topic: "espresense/rooms/\(room)/status", payload: Array(text.utf8), qos: .atLeastOnce, retain: true)
        }
        worker.route.withLock { $0 = PartitionWorker.Routing(ingest: worker.current.withLock { $0.ingest }) }
        worker.connectionChanged(.connected(sessionPresent: true))
        #expect(!PartitionWorker.deliver(status("hall", "offline"), via: worker.route, statusFilter: worker.statusFilter))
        #expect(engine().offlineScanners == ["hall"])
        worker.connectionChanged(.disconnected(.notConnected))
        worker.connectionChanged(.connected(sessionPresent: true))
        #expect(engine().offlineScanners == ["hall"], "carried to the new engine")

        worker.connectionChanged(.subscriptionRefused(filter: worker.statusFilter ?? ""))
        #expect(!worker.current.withLock { $0.suspended }, "the status refused: no outage")
        worker.connectionChanged(.subscriptionRefused(filter: worker.topicFilter))
        #expect(worker.current.withLock { $0.suspended })
        #expect(!PartitionWorker.deliver(status("porch", "offline"), via: worker.route, statusFilter: worker.statusFilter),
                "a status says nothing of the refused sighting subscription")
        #expect(!PartitionWorker.deliver(status("hall", "online"), via: worker.route, statusFilter: worker.statusFilter))
        #expect(!PartitionWorker.deliver(status("porch", "online"), via: worker.route, statusFilter: worker.statusFilter))
        #expect(!PartitionWorker.deliver(status("porch", "offline"), via: worker.route, statusFilter: worker.statusFilter))
        #expect(worker.route.withLock { routing in routing.held.filter { !$0.topic.isEmpty }.count } == 2, "one status kept per topic, the last")
        // (A sighting from another room: one from the hall would bring the hall back by itself.)
        let kitchen = MQTTMessage(topic: "espresense/devices/\(Self.beacon)/kitchen", payload: Array(#"{"id":"\#(Self.beacon)","rssi":-60}"#.utf8))
        #expect(PartitionWorker.deliver(kitchen, via: worker.route, statusFilter: worker.statusFilter))
        worker.deliveredWhileRefused()
        #expect(!worker.current.withLock { $0.suspended })
        #expect(engine().offlineScanners == ["porch"], "the held statuses reached the new engine, the last of each: \(engine().offlineScanners)")
        #expect(worker.sightings == 1)
        // Held statuses are bounded: beyond the capacity, new topics are dropped.
        worker.connectionChanged(.subscriptionRefused(filter: worker.topicFilter))
        for index in 0..<(PartitionWorker.heldStatusCapacity + 10) {
            _ = PartitionWorker.deliver(status("invented-\(index)", "offline"), via: worker.route, statusFilter: worker.statusFilter)
        }
        #expect(worker.route.withLock { $0.held.count } == PartitionWorker.heldStatusCapacity)
    }

    @Test("A broker outage carries the beacons' rooms to the next engine, twice over (that a carried beacon not heard leaves its room once is NearestScannerRestoreTests')")
    func roomsCarriedOver() throws {
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        let worker = try Self.worker(profile: profile)
        let identity = try #require(BeaconIdentity(description: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1"))
        // (Without start(): the sighting reaches an engine through the refusal's path.)
        worker.connectionChanged(.connected(sessionPresent: true))
        worker.connectionChanged(.subscriptionRefused(filter: worker.topicFilter))
        #expect(PartitionWorker.deliver(Self.sighting(), via: worker.route))
        worker.deliveredWhileRefused()
        let first = worker.current.withLock { $0.manager }
        #expect(worker.sightings == 1 && first.nearestScanner(for: identity) == "hall")

        worker.connectionChanged(.disconnected(.notConnected))
        worker.connectionChanged(.connected(sessionPresent: true))
        let second = worker.current.withLock { $0.manager }
        #expect(second !== first, "a new engine after the outage")
        #expect(second.nearestScanner(for: identity) == "hall", "placed where the engine set aside had it (a fresh engine knew nothing of it)")

        // A second outage before it is heard again: carried on once more.
        worker.connectionChanged(.disconnected(.notConnected))
        worker.connectionChanged(.connected(sessionPresent: true))
        #expect(worker.current.withLock { $0.manager }.nearestScanner(for: identity) == "hall")
    }

    @Test("A takeover starts from the rooms the store keeps for the beacons of its partition (written with each room event), in every format: not the other partitions' beacons")
    func roomsAtTakeover() async throws {
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        let count = 4
        // The partition of each beacon from the ESPresense id its sightings are published under,
        // written out here (not computed by the code under test).
        func partition(_ espresenseID: String) -> Int { NATSPartition.partition(of: espresenseID, count: count) }
        let ibeacons = (1...64).map { (BeaconIdentity(uuid: uuid, major: 1, minor: UInt16($0)), "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-\($0)") }
        let altbeacons = (1...64).map { (BeaconIdentity(uuid: uuid, major: 2, minor: UInt16($0), format: .altBeacon), "altBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-2-\($0)") }
        let mine = try #require(ibeacons.first { partition($0.1) == 3 }).0
        let mineAlt = try #require(altbeacons.first { partition($0.1) == 3 }).0
        let other = try #require(ibeacons.first { partition($0.1) != 3 }).0
        let otherAlt = try #require(altbeacons.first { partition($0.1) != 3 }).0
        let base = try RegionStore(path: temporaryStorePath())
        try base.saveRoom(mine.description, scanner: "kitchen", at: 1)
        try base.saveRoom(mineAlt.description, scanner: "office", at: 1)
        try base.saveRoom(other.description, scanner: "hall", at: 1)
        try base.saveRoom(otherAlt.description, scanner: "hall", at: 1)
        try base.saveRoom("not a beacon", scanner: "hall", at: 1)

        let worker = try Self.worker(profile: profile, store: base, partitionCount: count)
        try await worker.start()
        #expect(worker.current.withLock { $0.manager }.nearestScanners == [mine: "kitchen", mineAlt: "office"])
        await worker.stop(handOver: false)
        let without = try Self.worker(profile: profile, store: base)
        try await without.start()
        #expect(without.current.withLock { $0.manager }.nearestScanners.isEmpty, "no partition count: no rooms")
        await without.stop(handOver: false)
    }
}
