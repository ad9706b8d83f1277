import Foundation
import Logging
import Testing
import RegionKit
import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// A cluster partition publishes its beacons' distances (retained, QoS 0) from the engine's
/// ranging callbacks, which are synchronous: they must reach the broker in the order the engine
/// ranged, or the retained distance the broker keeps is an older one.
@Suite("Cluster partition: ranging published in order", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct PartitionWorkerRangingTests {
    static let identity = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 1)

    @Test("400 ranging updates in a row reach a subscriber in the order they were ranged", .timeLimit(.minutes(2)))
    func rangingInOrder() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let topics = PresenceTopics(site: "order-test")
        let store = UnleasedClusterStore(try RegionStore(path: temporaryStorePath()))
        let worker = PartitionWorker(lease: PartitionLease(partition: 0, epoch: 1), member: "engine-a",
                                     regions: [try ClusterModeTests.region("hall", major: 1)], profile: .responsive, store: store,
                                     mqtt: try MQTTClientConfiguration(url: "mqtt://127.0.0.1:\(broker.port)"), clientIDPrefix: "rk-order-part-",
                                     topicFilter: "espresense/devices/+/+", hooks: HookConfiguration(),
                                     ranging: PresenceRangingTracker(topics: topics, mqttRoom: false),
                                     logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, onEvents: { _ in }, onFenced: { _ in })
        try await worker.start()
        try await eventually(timeout: .seconds(20), "the partition connects") { worker.status.state == .up }
        let count = 400
        let subscriber = try await broker.subscribe(topic: topics.beaconDistance(Self.identity), count: count, qos: 0, timeout: 60)
        let manager = worker.current.withLock { $0.manager }
        let constraint = try BeaconIdentityConstraint(uuid: Self.identity.uuid)
        // Each update a distance 0.25 m further (more than the tracker's 0.1 m threshold): every one is published.
        for index in 1...count {
            let time = Timestamp(seconds: Double(index) * 0.01)
            let beacon = Beacon(identity: Self.identity, proximity: .far, accuracy: Double(index) * 0.25, rssi: -70, timestamp: time)
            worker.locationManager(manager, didReceive: LocationEvent(timestamp: time, kind: .didRangeBeacons([beacon], constraint, label: "all")))
        }
        let received = await subscriber.waitForMessages(count, timeout: 60).compactMap { Double($0.payload) }
        await worker.stop(handOver: false)
        #expect(received.count == count, "QoS 0 on loopback: \(received.count) of \(count) arrived")
        let outOfOrder = zip(received, received.dropFirst()).filter { $0.0 >= $0.1 }.count
        #expect(outOfOrder == 0, "\(outOfOrder) distances arrived before an earlier one: \(received.prefix(40))…")
        #expect(received.last == Double(count) * 0.25, "the last distance published is the newest")
    }

    /// The partition clears a distance it published once no ranging lists the beacon: at the
    /// region's exit, the rangings under its identifier that its engine no longer ranges end. A
    /// beacon the region's live ranging (the app's, here) still lists keeps its distance.
    @Test("A region's exit clears the distances its ended ranging published (retained None), in order after them; a live ranging's beacon keeps its distance",
          .timeLimit(.minutes(2)))
    func exitClearsDistances() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let topics = PresenceTopics(site: "exit-test")
        let store = UnleasedClusterStore(try RegionStore(path: temporaryStorePath()))
        let hall = try ClusterModeTests.region("hall", major: 1)
        let worker = PartitionWorker(lease: PartitionLease(partition: 0, epoch: 1), member: "engine-a",
                                     regions: [hall], profile: .responsive, store: store,
                                     mqtt: try MQTTClientConfiguration(url: "mqtt://127.0.0.1:\(broker.port)"), clientIDPrefix: "rk-exit-part-",
                                     topicFilter: "espresense/devices/+/+", hooks: HookConfiguration(),
                                     ranging: PresenceRangingTracker(topics: topics, mqttRoom: false),
                                     logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, onEvents: { _ in }, onFenced: { _ in })
        try await worker.start()
        try await eventually(timeout: .seconds(20), "the partition connects") { worker.status.state == .up }
        let kept = BeaconIdentity(uuid: Self.identity.uuid, major: 1, minor: 9)
        let subscriber = try await broker.subscribe(topic: topics.beaconDistance(Self.identity), count: 2, qos: 0, timeout: 60)
        let keptSubscriber = try await broker.subscribe(topic: topics.beaconDistance(kept), count: 2, qos: 0, timeout: 8)
        let manager = worker.current.withLock { $0.manager }
        // The app ranges the hall's own constraint under its identifier: a live ranging, whose
        // real deliveries (every second) list `kept`, heard now. The UUID's ranging under the same
        // identifier has no session (it ended).
        let hallRegion = try #require(hall.beaconRegion)
        manager.startRangingBeacons(in: hallRegion)
        #expect(manager.isRanging(hallRegion.constraint, label: "hall"))
        // Heard throughout (a beacon unheard for the ranging retention is dropped, and cleared).
        let hearing = Task {
            while !Task.isCancelled {
                manager.ingest(BeaconObservation(identity: kept, rssi: -70, timestamp: manager.clock.now))
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        defer { hearing.cancel() }
        let any = try BeaconIdentityConstraint(uuid: Self.identity.uuid)
        let beacon = Beacon(identity: Self.identity, proximity: .near, accuracy: 1.5, rssi: -70, timestamp: manager.clock.now)
        worker.locationManager(manager, didReceive: LocationEvent(timestamp: manager.clock.now, kind: .didRangeBeacons([beacon], any, label: "hall")))
        worker.locationManager(manager, didReceive: LocationEvent(timestamp: manager.clock.now, kind: .didExitRegion(hall)))
        let received = await subscriber.waitForMessages(2, timeout: 60).map(\.payload)
        #expect(received == ["1.5", "None"])
        #expect(try await PresenceHubStatusTests.retained(topics.beaconDistance(Self.identity), on: broker) == ["None"])
        // The live ranging's beacon: its distance only (the same distance each second: once).
        let keptReceived = await keptSubscriber.waitForMessages(2, timeout: 8).map(\.payload)
        #expect(keptReceived.count == 1 && keptReceived.allSatisfy { Double($0) != nil }, "\(keptReceived)")
        await worker.stop(handOver: false)
    }
}
