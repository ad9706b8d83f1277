import Foundation
import Logging
import RegionKit
import RegionKitConcurrency
import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
import Testing
@testable import RegionKitService

/// A beacon device deleted in Home Assistant stays deleted: Home Assistant empties the device's
/// configuration topics, and the hub forgets the beacon instead of announcing it again at the
/// next discovery round (which every Home Assistant restart asks for).
@Suite("Presence hub: beacon devices deleted in Home Assistant", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct PresenceHubDeviceRemovalTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test("An entity nobody recorded is adopted. Deleted in Home Assistant: dismissed in the store and out of the limit, its topics removed, not re-sent when Home Assistant comes online nor at a room change, announced again when placed anew; the other beacon untouched",
          .timeLimit(.minutes(2)))
    func deletedDeviceStaysDeleted() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let store = try RegionStore(path: temporaryStorePath())
        let site = "removal-test", output = "mqtt:removal-test"
        let (deleted, kept) = (BeaconIdentity(uuid: Self.uuid, major: 1, minor: 1), BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2))
        // Both announced by an earlier run.
        try store.addAnnouncedBeacons([deleted.description, kept.description], output: output)
        // A discovery prefix of its own (`ha2`), while Home Assistant's birth topic stays
        // homeassistant/status (its default: two separate settings).
        let hub = try PresenceHubStatusTests.hub(site: site, broker: broker, store: store, homeAssistant: true, prefix: "ha2")
        // And one announced by a version that did not record its announcements: its configuration
        // is on the broker only.
        let legacy = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 3)
        try await hub.prepare()
        let topics = PresenceTopics(site: site)
        let discovery = try #require(hub.outputs.withLock { $0.discovery })
        let object = { (beacon: BeaconIdentity) in discovery.beaconObject(beacon) }
        let tracker = { (beacon: BeaconIdentity) in discovery.trackerConfigTopic(object: object(beacon)) }
        let distance = { (beacon: BeaconIdentity) in discovery.distanceConfigTopic(object: object(beacon)) }

        try broker.publish(topic: tracker(legacy), message: "{}", qos: 1, retain: true)
        let running = Task { await hub.run() }
        // The connection's discovery round and rooms: both trackers, both not_home.
        try await eventually(timeout: .seconds(20), "the first discovery round") { hub.counts.discoveryRounds >= 1 }
        try await eventually(timeout: .seconds(20), "the deleted beacon's tracker retained") {
            (try? await PresenceHubStatusTests.retained(tracker(deleted), on: broker))?.count == 1
        }
        try await eventually(timeout: .seconds(20), "its room retained not_home") {
            (try? await PresenceHubStatusTests.retained(topics.beaconRoom(deleted), on: broker)) == ["not_home"]
        }
        // The one nobody recorded is adopted: recorded, its departure kept retained for its tracker.
        try await eventually(timeout: .seconds(20), "the unrecorded entity adopted") { hub.counts.adoptedBeacons == 1 }
        #expect(try store.announcedBeacons(output) == [deleted, kept, legacy].map(\.description).sorted())
        #expect(hub.outputs.withLock { $0.keepsDeparture(of: legacy) })

        // Home Assistant deletes the device: an empty retained message on each of its configuration topics.
        // Home Assistant's client; it counts the configurations it receives of the beacon kept.
        let keptConfigs = LockedBox(0)
        let keptTracker = tracker(kept)
        let homeAssistant = MQTTClient(configuration: try MQTTClientConfiguration(url: broker.url), onMessage: { message in
            if message.topic == keptTracker, !message.payload.isEmpty { keptConfigs.withLock { $0 += 1 } }
        })
        let haTask = Task { await homeAssistant.run() }
        try await homeAssistant.waitUntilConnected()
        try await homeAssistant.subscribe(keptTracker, qos: .atLeastOnce)
        try await eventually(timeout: .seconds(20), "the kept beacon's retained configuration") { keptConfigs.withLock { $0 } == 1 }
        for topic in [tracker(deleted), distance(deleted)] {
            try await homeAssistant.publish(MQTTMessage(topic: topic, payload: [], qos: .atLeastOnce, retain: true))
        }
        try await eventually(timeout: .seconds(20), "the beacon forgotten") { hub.counts.forgottenBeacons == 1 }
        #expect(try store.announcedBeacons(output) == [kept, legacy].map(\.description).sorted())
        #expect(try store.dismissedBeacons(output) == [deleted.description])
        #expect(hub.outputs.withLock { $0.announcedBeacons } == [kept, legacy])
        #expect(hub.outputs.withLock { $0.dismissedBeacons } == [deleted])
        // Its room topic (kept retained only for its device tracker) removed; the other's kept.
        try await eventually(timeout: .seconds(20), "the deleted beacon's room topic removed") {
            (try? await PresenceHubStatusTests.retained(topics.beaconRoom(deleted), on: broker)) == []
        }
        #expect(try await PresenceHubStatusTests.retained(topics.beaconRoom(kept), on: broker) == ["not_home"])

        // Home Assistant restarts: the round re-sends the other beacon's entities, not the deleted one's.
        // (Waited for until the round's configuration of the kept beacon arrived: the round then
        // has published everything before it, the deleted beacon's entities in identity order too.)
        #expect(tracker(kept).hasPrefix("ha2/device_tracker/"))
        try await homeAssistant.publish(MQTTMessage(topic: "homeassistant/status", payload: Array("online".utf8), qos: .atLeastOnce))
        try await eventually(timeout: .seconds(20), "the round asked for by online") { keptConfigs.withLock { $0 } >= 2 }
        #expect(try await PresenceHubStatusTests.retained(tracker(deleted), on: broker) == [], "the deleted device came back")
        #expect(try await PresenceHubStatusTests.retained(distance(deleted), on: broker) == [])
        #expect(try await PresenceHubStatusTests.retained(tracker(kept), on: broker).count == 1)
        #expect(hub.counts.forgottenBeacons == 1, "the hub's own removals (their copies on its subscription) forgot nothing more")
        #expect(hub.counts.adoptedBeacons == 1, "its own configurations coming back are not adopted again")

        // A room change while it stays around: still dismissed.
        let moved = #"{"t":4,"type":"didChangeNearestScanner","beacon":"\#(deleted.description)","scanner":"hall","previous":"kitchen"}"#
        let movedID = try store.append(time: 4, type: "didChangeNearestScanner", region: nil, state: nil, reason: nil, json: moved)
        hub.eventLogged()
        try await eventually(timeout: .seconds(20), "the room change published") { (try? store.outputCursor(output)).map { $0 >= movedID } == true }
        #expect(try store.dismissedBeacons(output) == [deleted.description])
        #expect(try await PresenceHubStatusTests.retained(tracker(deleted), on: broker) == [], "a room change brought the deleted device back")

        // Placed anew (from nowhere): announced again (recorded, its entities published).
        let line = #"{"t":5,"type":"didChangeNearestScanner","beacon":"\#(deleted.description)","scanner":"kitchen"}"#
        _ = try store.append(time: 5, type: "didChangeNearestScanner", region: nil, state: nil, reason: nil, json: line)
        hub.eventLogged()
        try await eventually(timeout: .seconds(20), "announced again") { (try? store.announcedBeacons(output)) == [deleted, kept, legacy].map(\.description).sorted() }
        #expect(try store.dismissedBeacons(output).isEmpty)
        try await eventually(timeout: .seconds(20), "its tracker retained again") {
            (try? await PresenceHubStatusTests.retained(tracker(deleted), on: broker))?.count == 1
        }

        await hub.shutdown(drainTimeout: .seconds(2))
        running.cancel()
        await homeAssistant.shutdown()
        _ = await (running.value, haTask.value)
    }
}
