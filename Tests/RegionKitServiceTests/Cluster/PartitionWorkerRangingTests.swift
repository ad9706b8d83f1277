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

    /// A partition's beacon whose ranging ended while its room held it: attributes with the room,
    /// which follow the room's later changes and say `not_home` when the room lets it go (they
    /// named the kitchen for good before).
    @Test("A region's exit while a room holds its beacon: attributes with that room, then the new room when it moves, then not_home when the room lets it go",
          .timeLimit(.minutes(2)))
    func attributesFollowTheRoomAfterRanging() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let topics = PresenceTopics(site: "room-test")
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        let hall = try ClusterModeTests.region("hall", major: 1)
        let worker = PartitionWorker(lease: PartitionLease(partition: 0, epoch: 1), member: "engine-a",
                                     regions: [hall], profile: profile, store: UnleasedClusterStore(try RegionStore(path: temporaryStorePath())),
                                     mqtt: try MQTTClientConfiguration(url: "mqtt://127.0.0.1:\(broker.port)"), clientIDPrefix: "rk-room-part-",
                                     topicFilter: "espresense/devices/+/+", hooks: HookConfiguration(),
                                     ranging: PresenceRangingTracker(topics: topics, mqttRoom: false),
                                     logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, onEvents: { _ in }, onFenced: { _ in })
        try await worker.start()
        try await eventually(timeout: .seconds(20), "the partition connects") { worker.status.state == .up }
        // Of no monitored region (the hall is major 1): the engine never ranges it on its own, so
        // only the deliveries fed below publish its attributes.
        let beacon = BeaconIdentity(uuid: Self.identity.uuid, major: 2, minor: 1)
        let subscriber = try await broker.subscribe(topic: topics.beaconAttributes(beacon), count: 4, qos: 0, timeout: 60)
        let manager = worker.current.withLock { $0.manager }
        // The kitchen hears it: its room.
        manager.ingest(BeaconObservation(identity: beacon, rssi: -60, timestamp: manager.clock.now, scannerID: "kitchen"))
        try await eventually(timeout: .seconds(20), "placed in the kitchen") { manager.nearestScanner(for: beacon) == "kitchen" }
        let any = try BeaconIdentityConstraint(uuid: beacon.uuid)
        let ranged = Beacon(identity: beacon, proximity: .near, accuracy: 1.5, rssi: -60, timestamp: manager.clock.now)
        worker.locationManager(manager, didReceive: LocationEvent(timestamp: manager.clock.now, kind: .didRangeBeacons([ranged], any, label: "hall")))
        worker.locationManager(manager, didReceive: LocationEvent(timestamp: manager.clock.now, kind: .didExitRegion(hall)))
        worker.locationManager(manager, didReceive: LocationEvent(timestamp: manager.clock.now,
                                                                  kind: .didChangeNearestScanner(beacon, scannerID: "hall", previous: "kitchen")))
        worker.locationManager(manager, didReceive: LocationEvent(timestamp: manager.clock.now,
                                                                  kind: .didChangeNearestScanner(beacon, scannerID: nil, previous: "hall")))
        let received = await subscriber.waitForMessages(4, timeout: 60).map(\.payload)
        #expect(received.count == 4 && received.first?.contains(#""room":"kitchen""#) == true, "\(received)")
        #expect(Array(received.dropFirst()) == [#"{"room":"kitchen"}"#, #"{"room":"hall"}"#, #"{"room":"not_home"}"#], "\(received)")
        #expect(try await PresenceHubStatusTests.retained(topics.beaconAttributes(beacon), on: broker) == [#"{"room":"not_home"}"#])
        await worker.stop(handOver: false)
    }

    /// A worker for partition 0 of `partitions` (no rooms: `.responsive`), ranging published on
    /// `topics`, with a grace period of 6 s.
    static func worker(_ broker: MosquittoBroker, topics: PresenceTopics, partitions: Int, prefix: String) throws -> PartitionWorker {
        // Long enough for the hall to go inside and be ranged on a loaded machine.
        let grace = Duration.seconds(6)
        return PartitionWorker(lease: PartitionLease(partition: 0, epoch: 1), member: "engine-a",
                               regions: [try ClusterModeTests.region("hall", major: 1)], profile: .responsive,
                               store: UnleasedClusterStore(try RegionStore(path: temporaryStorePath())),
                               mqtt: try MQTTClientConfiguration(url: "mqtt://127.0.0.1:\(broker.port)"), clientIDPrefix: prefix,
                               topicFilter: "espresense/devices/+/+", hooks: HookConfiguration(),
                               ranging: PresenceRangingTracker(topics: topics, mqttRoom: false), partitionCount: partitions,
                               leftoverGrace: grace, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                               onEvents: { _ in }, onFenced: { _ in })
    }

    /// Beacons of the hall (major 1) whose sightings go to partition `partition` of `count`.
    static func beacons(in partition: Int, of count: Int, _ wanted: Int) -> [BeaconIdentity] {
        (2...UInt16(200)).lazy.map { BeaconIdentity(uuid: identity.uuid, major: 1, minor: $0) }
            .filter { NATSPartition.partition(of: PartitionWorker.partitionToken(of: $0), count: count) == partition }
            .prefix(wanted).map { $0 }
    }

    /// Has the worker's current engine hear `beacons` every 250 ms until cancelled: the hall
    /// goes inside and is ranged (the partition's automation), so its deliveries list them.
    static func hearing(_ beacons: [BeaconIdentity], on worker: PartitionWorker) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                let manager = worker.current.withLock { $0.manager }
                for beacon in beacons { manager.ingest(BeaconObservation(identity: beacon, rssi: -70, timestamp: manager.clock.now)) }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// Has the worker hear `back` until `gone`'s distance is cleared (`None`), then stops the
    /// worker and both listeners: what `back`'s listener heard.
    static func hearing(_ back: BeaconIdentity, on worker: PartitionWorker, until gone: StatusListener,
                        besides backListener: StatusListener) async throws -> [String] {
        let hearing = Self.hearing([back], on: worker)
        defer { hearing.cancel() }
        try await eventually(timeout: .seconds(30), "gone cleared: \(gone.heard.withLock { $0 })") { gone.heard.withLock { $0 }.last == "None" }
        hearing.cancel()
        await worker.stop(handOver: false)
        await gone.stop()
        await backListener.stop()
        return backListener.heard.withLock { $0 }
    }

    /// The hub's scan at the partition's start: the distances an earlier holder left retained for
    /// this partition's beacons are cleared when not ranged again within the grace period; a
    /// beacon ranged again keeps its distance; another partition's beacon is that partition's.
    @Test("An earlier holder's retained distance of the partition's beacon is cleared after the grace period; a beacon ranged again and another partition's beacon are left alone",
          .timeLimit(.minutes(2)))
    func earlierHoldersDistancesAreCleared() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let topics = PresenceTopics(site: "holder-test")
        let mine = Self.beacons(in: 0, of: 2, 2), theirs = try #require(Self.beacons(in: 1, of: 2, 1).first)
        let (gone, back) = (mine[0], mine[1])
        // What the earlier holders left: two of this partition's distances, one of the other's.
        try broker.publish(topic: topics.beaconDistance(gone), message: "2.5", qos: 1, retain: true)
        try broker.publish(topic: topics.beaconDistance(back), message: "7.5", qos: 1, retain: true)
        try broker.publish(topic: topics.beaconDistance(theirs), message: "3", qos: 1, retain: true)
        let goneDistance = try await StatusListener(topic: topics.beaconDistance(gone), broker: broker)
        let backDistance = try await StatusListener(topic: topics.beaconDistance(back), broker: broker)
        let worker = try Self.worker(broker, topics: topics, partitions: 2, prefix: "rk-holder-part-")
        try await worker.start()
        try await eventually(timeout: .seconds(20), "the partition connects") { worker.status.state == .up }
        // Never cleared, not even for a moment: the retained 7.5, then its new distances.
        let heardBack = try await Self.hearing(back, on: worker, until: goneDistance, besides: backDistance)
        #expect(heardBack.first == "7.5" && heardBack.count >= 2 && heardBack.allSatisfy { Double($0) != nil }, "\(heardBack)")
        #expect(try await PresenceHubStatusTests.retained(topics.beaconDistance(gone), on: broker) == ["None"])
        #expect(try await PresenceHubStatusTests.retained(topics.beaconDistance(theirs), on: broker) == ["3"])
    }

    /// A broker outage sets the partition's engine aside: no beacon left. Nothing is cleared
    /// while it lasts (longer than the grace period); after it, a beacon ranged again keeps its
    /// distance, and one not ranged again is cleared once the grace period has passed.
    @Test("A broker outage clears no distance; after it, a beacon ranged again keeps its distance and one that left meanwhile is cleared after the grace period",
          .timeLimit(.minutes(2)))
    func outageClearsAfterGrace() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let topics = PresenceTopics(site: "partition-outage")
        let worker = try Self.worker(broker, topics: topics, partitions: 1, prefix: "rk-outage-part-")
        try await worker.start()
        try await eventually(timeout: .seconds(20), "the partition connects") { worker.status.state == .up }
        let (stays, leaves) = (BeaconIdentity(uuid: Self.identity.uuid, major: 1, minor: 2), BeaconIdentity(uuid: Self.identity.uuid, major: 1, minor: 3))
        let staying = try await StatusListener(topic: topics.beaconDistance(stays), broker: broker)
        let leaving = try await StatusListener(topic: topics.beaconDistance(leaves), broker: broker)
        let before = Self.hearing([stays, leaves], on: worker)
        for listener in [staying, leaving] {
            try await eventually(timeout: .seconds(20), "distance published") { !listener.heard.withLock { $0 }.isEmpty }
        }
        // Unheard from now on: a delivery would drop `leaves` after the ranging retention (5 s);
        // the outage comes first.
        before.cancel()
        await before.value
        // The connection's loss as the client reports it (the client itself stays connected:
        // nothing else changes), for longer than the grace period.
        worker.connectionChanged(.disconnected(nil))
        try await Task.sleep(for: .seconds(8))
        let (stayingBefore, leavingBefore) = (staying.heard.withLock { $0 }, leaving.heard.withLock { $0 })
        for heard in [stayingBefore, leavingBefore] {
            #expect(!heard.isEmpty && heard.allSatisfy { Double($0) != nil }, "cleared during the outage: \(heard)")
        }
        // Back: a new engine; `stays` is ranged again, `leaves` left meanwhile.
        worker.connectionChanged(.connected(sessionPresent: true))
        let after = Self.hearing([stays], on: worker)
        defer { after.cancel() }
        try await eventually(timeout: .seconds(20), "leaves cleared: \(leaving.heard.withLock { $0 })") {
            leaving.heard.withLock { $0 }.last == "None"
        }
        after.cancel()
        await worker.stop(handOver: false)
        await staying.stop()
        await leaving.stop()
        // Published again by the new engine's first delivery (an earlier engine's), never cleared.
        let heardStays = staying.heard.withLock { $0 }
        #expect(heardStays.count > stayingBefore.count && heardStays.allSatisfy { Double($0) != nil }, "stays: \(heardStays)")
        #expect(try await PresenceHubStatusTests.retained(topics.beaconDistance(stays), on: broker).first.flatMap(Double.init) != nil)
        #expect(leaving.heard.withLock { $0 }.filter { Double($0) == nil } == ["None"])
    }

    /// The grace period of an earlier holder's distances counts from the broker's return: one
    /// that runs out during an outage leaves a beacon heard again after it to be ranged first.
    @Test("The grace period passes during a broker outage: nothing is cleared then; after it, an earlier holder's beacon heard again keeps its distance, one not heard is cleared",
          .timeLimit(.minutes(2)))
    func graceCountsFromTheReturn() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let topics = PresenceTopics(site: "partition-return")
        let (back, gone) = (BeaconIdentity(uuid: Self.identity.uuid, major: 1, minor: 4), BeaconIdentity(uuid: Self.identity.uuid, major: 1, minor: 5))
        try broker.publish(topic: topics.beaconDistance(back), message: "7.5", qos: 1, retain: true)
        try broker.publish(topic: topics.beaconDistance(gone), message: "2.5", qos: 1, retain: true)
        let backDistance = try await StatusListener(topic: topics.beaconDistance(back), broker: broker)
        let goneDistance = try await StatusListener(topic: topics.beaconDistance(gone), broker: broker)
        let worker = try Self.worker(broker, topics: topics, partitions: 1, prefix: "rk-return-part-")
        try await worker.start()
        try await eventually(timeout: .seconds(20), "the scan found both") { worker.leftovers.withLock { $0.beacons } == [back, gone] }
        // The connection is lost before the grace period ends, and stays lost past it.
        worker.connectionChanged(.disconnected(nil))
        try await Task.sleep(for: .seconds(8))
        #expect(backDistance.heard.withLock { $0 } == ["7.5"] && goneDistance.heard.withLock { $0 } == ["2.5"], "cleared during the outage")
        worker.connectionChanged(.connected(sessionPresent: true))
        let heardBack = try await Self.hearing(back, on: worker, until: goneDistance, besides: backDistance)
        #expect(heardBack.first == "7.5" && heardBack.count >= 2 && heardBack.allSatisfy { Double($0) != nil }, "back: \(heardBack)")
    }

    /// A partition's departures are handed to the connection without waiting (QoS 0
    /// semantics): one handed as the connection drops is lost, and the tracker has forgotten the
    /// beacon. The scan at each resumption finds the distance the broker still keeps (here
    /// retained behind the partition's back, as such a loss leaves it) and clears it.
    @Test("After a lost connection the partition scans again: a distance the broker keeps for a beacon it does not range is cleared after the grace period",
          .timeLimit(.minutes(2)))
    func resumptionScansAgain() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let topics = PresenceTopics(site: "partition-rescan")
        let lost = BeaconIdentity(uuid: Self.identity.uuid, major: 1, minor: 6)
        let worker = try Self.worker(broker, topics: topics, partitions: 1, prefix: "rk-rescan-part-")
        try await worker.start()
        try await eventually(timeout: .seconds(20), "the first scan done") { worker.scansCompleted.withLock { $0 } == 1 }
        try broker.publish(topic: topics.beaconDistance(lost), message: "2.5", qos: 1, retain: true)
        let lostDistance = try await StatusListener(topic: topics.beaconDistance(lost), broker: broker)
        worker.connectionChanged(.disconnected(nil))
        worker.connectionChanged(.connected(sessionPresent: true))
        try await eventually(timeout: .seconds(30), "lost cleared: \(lostDistance.heard.withLock { $0 })") {
            lostDistance.heard.withLock { $0 }.last == "None"
        }
        #expect(worker.scansCompleted.withLock { $0 } == 2)
        await worker.stop(handOver: false)
        await lostDistance.stop()
        #expect(lostDistance.heard.withLock { $0 } == ["2.5", "None"])
    }
}
