import Foundation
import Logging
import RegionKitConcurrency
import Testing
import RegionKit
import RegionKitCore
import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// The cluster's MQTT outputs (``ClusterEventsPublisher``) against a real broker, reading a real
/// store: the site's availability, Home Assistant discovery of the regions, and the events with
/// their retained states. (The store is SQLite here: the publisher reads through `RegionStoring`;
/// ClusterDaemonTests runs it on PostgreSQL with the engines.)
@Suite("Cluster outputs: status, Home Assistant discovery and events through a real broker", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct ClusterOutputsTests {
    /// Every message a client subscribed to `filters` received, in order.
    final class Listener: Sendable {
        let client: MQTTClient
        let heard = LockedBox<[(topic: String, text: String, retained: Bool)]>([])
        let task: Task<Void, Never>

        init(url: String, filters: [String]) async throws {
            var configuration = try MQTTClientConfiguration(url: url)
            configuration.reconnectMinimumDelay = .milliseconds(20)
            let heard = heard
            client = MQTTClient(configuration: configuration, onMessage: { message in
                heard.withLock { $0.append((message.topic, String(decoding: message.payload, as: UTF8.self), message.retain)) }
            })
            let client = client
            task = Task { await client.run() }
            try await client.waitUntilConnected()
            for filter in filters { try await client.subscribe(filter, qos: .atLeastOnce) }
        }

        func messages(_ topic: String) -> [String] { heard.withLock { $0 }.filter { $0.topic == topic }.map(\.text) }

        func stop() async {
            await client.shutdown()
            await task.value
        }
    }

    /// Runs `body` with a private broker and a scratch SQLite store, both removed afterwards.
    static func withBrokerAndStore(_ body: (MosquittoBroker, RegionStore) async throws -> Void) async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let path = TestScratch.directory.appendingPathComponent("rk-cluster-outputs-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        try await body(broker, try RegionStore(path: path))
    }

    /// The outputs holder of `site` with Home Assistant discovery, on `broker` (reconnecting
    /// after 20 ms), the status every second.
    static func discoveryPublisher(site: String, broker: MosquittoBroker, store: RegionStore,
                                   discovery: HomeAssistantDiscovery) throws -> ClusterEventsPublisher {
        var mqtt = try MQTTClientConfiguration(url: broker.url)
        mqtt.reconnectMinimumDelay = .milliseconds(20)
        return ClusterEventsPublisher(store: store, mqtt: mqtt, site: site, regions: try regions(),
                                      discovery: discovery, statusInterval: .seconds(1), logger: Logger(label: "test"))
    }

    static func regions() throws -> [Region] {
        try ["lobby", "keys"].enumerated().map { index, identifier in
            .beacon(try BeaconRegion(identifier: identifier, uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 1, minor: UInt16(index + 1)))
        }
    }

    @Test("online on connection and again after a stray offline (a late will), region configurations on connection and when Home Assistant comes online, events with retained states, offline at shutdown",
          .timeLimit(.minutes(2)))
    func statusDiscoveryAndEvents() async throws {
        try await Self.withBrokerAndStore { broker, store in
            let listener = try await Listener(url: broker.url, filters: ["regionkit/site-a/#", "homeassistant/#"])
            defer { Task { await listener.stop() } }

            let topics = PresenceTopics(site: "site-a")
            let discovery = HomeAssistantDiscovery(topics: topics)
            var mqtt = try MQTTClientConfiguration(url: broker.url)
            mqtt.reconnectMinimumDelay = .milliseconds(20)
            let publisher = ClusterEventsPublisher(store: store, mqtt: mqtt, site: "site-a", regions: try Self.regions(), discovery: discovery,
                                                   statusInterval: .seconds(1), logger: Logger(label: "test"))
            let running = Task { await publisher.run(interval: .milliseconds(50)) }

            // On connection: online, then one binary_sensor per region on the retained state topic.
            let lobbyConfig = "homeassistant/binary_sensor/regionkit_site-a/lobby/config"
            let keysConfig = "homeassistant/binary_sensor/regionkit_site-a/keys/config"
            try await eventually(timeout: .seconds(20), "online and both configurations: \(listener.heard.withLock { $0.map(\.topic) })") {
                listener.messages(topics.status).last == "online" && listener.messages(lobbyConfig).count == 1 && listener.messages(keysConfig).count == 1
            }
            let config = try #require(try JSONSerialization.jsonObject(with: Data(listener.messages(lobbyConfig)[0].utf8)) as? [String: Any])
            #expect(config["state_topic"] as? String == "regionkit/site-a/regions/lobby/state")
            #expect(config["availability_topic"] as? String == "regionkit/site-a/status")
            #expect(config["device_class"] as? String == "presence")

            // Home Assistant restarts: its `online` asks for the configurations again.
            let homeAssistant = try await Listener(url: broker.url, filters: [])
            defer { Task { await homeAssistant.stop() } }
            try await homeAssistant.client.publish(MQTTMessage(topic: discovery.statusTopics[0], payload: Array("online".utf8), qos: .atLeastOnce))
            try await eventually(timeout: .seconds(20), "configurations sent again") {
                listener.messages(lobbyConfig).count == 2 && listener.messages(keysConfig).count == 2
            }

            // A stray `offline` (an earlier holder's will, delivered late) is corrected within the status interval.
            let onlineBefore = listener.messages(topics.status).filter { $0 == "online" }.count
            try await homeAssistant.client.publish(MQTTMessage(topic: topics.status, payload: Array("offline".utf8), qos: .atLeastOnce, retain: true))
            try await eventually(timeout: .seconds(20), "online again after the stray offline: \(listener.messages(topics.status))") {
                listener.messages(topics.status).last == "online" && listener.messages(topics.status).filter { $0 == "online" }.count > onlineBefore
            }

            // An event logged by any member: on the events topic, and the region's retained state.
            let line = #"{"t":12.5,"type":"didDetermineState","region":"lobby","state":"inside"}"#
            let id = try store.append(time: 12.5, type: "didDetermineState", region: "lobby", state: "inside", reason: nil, json: line)
            try await eventually(timeout: .seconds(20), "event \(id) published") {
                listener.messages(topics.events).contains { $0.contains(#""id":\#(id)"#) } && listener.messages(topics.regionState("lobby")) == ["inside"]
            }
            // The cursor moves once the broker acknowledged the event (the listener may see it first).
            try await eventually(timeout: .seconds(20), "the cursor at \(id)") {
                (try? store.outputCursor(ClusterEventsPublisher.outputName(site: "site-a"))) == id
            }

            // Shutdown: offline, retained (a new subscriber reads it), the configurations stay retained.
            await publisher.shutdown()
            running.cancel()
            await running.value
            let late = try await Listener(url: broker.url, filters: [topics.status, lobbyConfig, topics.regionState("lobby")])
            defer { Task { await late.stop() } }
            try await eventually(timeout: .seconds(20), "retained: \(late.heard.withLock { $0.map { "\($0.topic)=\($0.text)" } })") {
                late.messages(topics.status) == ["offline"] && late.messages(lobbyConfig).count == 1 && late.messages(topics.regionState("lobby")) == ["inside"]
            }
            #expect(publisher.discoveryRounds.withLock { $0 } >= 2)
        }
    }

    /// A new outputs holder (a takeover, or a broker restarted without its retained messages)
    /// re-sends what the store knows of the beacons: each placed beacon's room, `not_home` for a
    /// beacon with entities in no room, and the entities of the beacons announced before (read
    /// back from the store: a holder used to start with none, and announced up to the limit anew).
    @Test("On connection: the stored rooms retained, not_home for an announced beacon placed nowhere, and the announced beacons' entities",
          .timeLimit(.minutes(2)))
    func roomsAndAnnouncementsOnConnection() async throws {
        try await Self.withBrokerAndStore { broker, store in
            let topics = PresenceTopics(site: "site-c")
            let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
            let (placed, away) = (BeaconIdentity(uuid: uuid, major: 1, minor: 1), BeaconIdentity(uuid: uuid, major: 7, minor: 7))
            try store.saveRoom(placed.description, scanner: "kitchen", at: 1)
            try store.addAnnouncedBeacons([away.description], output: ClusterEventsPublisher.outputName(site: "site-c"))
            let listener = try await Listener(url: broker.url, filters: ["regionkit/site-c/#", "homeassistant/#"])
            defer { Task { await listener.stop() } }
            var mqtt = try MQTTClientConfiguration(url: broker.url)
            mqtt.reconnectMinimumDelay = .milliseconds(20)
            let publisher = ClusterEventsPublisher(store: store, mqtt: mqtt, site: "site-c", regions: try Self.regions(),
                                                   discovery: HomeAssistantDiscovery(topics: topics), statusInterval: .seconds(1), logger: Logger(label: "test"))
            let running = Task { await publisher.run(interval: .milliseconds(50)) }
            let tracker = "homeassistant/device_tracker/regionkit_site-c/ibeacon_\(PresenceTopics.beaconKey(away))/config"
            try await eventually(timeout: .seconds(20), "rooms and the announced beacon's entity: \(listener.heard.withLock { $0.map(\.topic) })") {
                listener.messages(topics.beaconRoom(placed)) == ["kitchen"] && listener.messages(topics.beaconRoom(away)) == ["not_home"]
                    && listener.messages(tracker).count == 1
            }
            await publisher.shutdown()
            running.cancel()
            await running.value
            #expect(try await PresenceHubStatusTests.retained(topics.beaconRoom(placed), on: broker) == ["kitchen"])
            #expect(try await PresenceHubStatusTests.retained(topics.beaconRoom(away), on: broker) == ["not_home"])
        }
    }

    @Test("A retained online on Home Assistant's status topic (a birth message set to retain) is not a restart: the connection's announcement is the only round; a live online asks for another",
          .timeLimit(.minutes(2)))
    func retainedOnlineIsNotARestart() async throws {
        try await Self.withBrokerAndStore { broker, store in
            try broker.publish(topic: "homeassistant/status", message: "online", qos: 1, retain: true)
            let discovery = HomeAssistantDiscovery(topics: PresenceTopics(site: "site-r"))
            let publisher = try Self.discoveryPublisher(site: "site-r", broker: broker, store: store, discovery: discovery)
            let running = Task { await publisher.run(interval: .milliseconds(50)) }
            try await eventually(timeout: .seconds(20), "the connection's round") { publisher.discoveryRounds.withLock { $0 } >= 1 }
            try await Task.sleep(for: .seconds(2))
            #expect(publisher.discoveryRounds.withLock { $0 } == 1, "rounds for one connection")
            try broker.publish(topic: "homeassistant/status", message: "online")
            try await eventually(timeout: .seconds(20), "the round a live online asks for") { publisher.discoveryRounds.withLock { $0 } == 2 }
            await publisher.shutdown()
            running.cancel()
            await running.value
        }
    }

    /// A beacon device deleted in Home Assistant (its configuration topics emptied) is forgotten by
    /// the outputs holder as by one daemon's hub: out of the store's announced beacons, its topics
    /// removed (its room only when the partitions placed it nowhere), and not announced again by
    /// the next discovery round.
    @Test("A beacon device deleted in Home Assistant: forgotten by the outputs holder, its entities not re-sent when Home Assistant comes online; a placed beacon keeps its room topic",
          .timeLimit(.minutes(2)))
    func deletedDeviceIsForgotten() async throws {
        try await Self.withBrokerAndStore { broker, store in
            let topics = PresenceTopics(site: "site-d")
            let output = ClusterEventsPublisher.outputName(site: "site-d")
            let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
            let (placed, away, kept) = (BeaconIdentity(uuid: uuid, major: 1, minor: 1), BeaconIdentity(uuid: uuid, major: 7, minor: 7),
                                        BeaconIdentity(uuid: uuid, major: 8, minor: 8))
            try store.saveRoom(placed.description, scanner: "kitchen", at: 1)
            try store.addAnnouncedBeacons([placed, away, kept].map(\.description), output: output)
            let discovery = HomeAssistantDiscovery(topics: topics)
            let tracker = { (beacon: BeaconIdentity) in discovery.trackerConfigTopic(object: discovery.beaconObject(beacon)) }
            let publisher = try Self.discoveryPublisher(site: "site-d", broker: broker, store: store, discovery: discovery)
            let running = Task { await publisher.run(interval: .milliseconds(50)) }
            try await eventually(timeout: .seconds(20), "the first discovery round") { publisher.discoveryRounds.withLock { $0 } >= 1 }
            try await eventually(timeout: .seconds(20), "the trackers retained") {
                (try? await PresenceHubStatusTests.retained(tracker(away), on: broker))?.count == 1
            }

            // Home Assistant deletes two devices.
            let homeAssistant = try await Listener(url: broker.url, filters: [])
            for beacon in [placed, away] {
                try await homeAssistant.client.publish(MQTTMessage(topic: tracker(beacon), payload: [], qos: .atLeastOnce, retain: true))
            }
            try await eventually(timeout: .seconds(20), "both forgotten") { publisher.trackerWatch?.forgotten == 2 }
            #expect(try store.announcedBeacons(output) == [kept.description])
            #expect(try store.dismissedBeacons(output) == [placed, away].map(\.description).sorted())
            try await eventually(timeout: .seconds(20), "the room of the one placed nowhere removed") {
                (try? await PresenceHubStatusTests.retained(topics.beaconRoom(away), on: broker)) == []
            }
            #expect(try await PresenceHubStatusTests.retained(topics.beaconRoom(placed), on: broker) == ["kitchen"], "placed: its room stays")

            // Home Assistant restarts: only the remaining beacon's entities come back.
            let rounds = publisher.discoveryRounds.withLock { $0 }
            try await homeAssistant.client.publish(MQTTMessage(topic: discovery.statusTopics[0], payload: Array("online".utf8), qos: .atLeastOnce))
            try await eventually(timeout: .seconds(20), "the round asked for by online") { publisher.discoveryRounds.withLock { $0 } > rounds }
            for beacon in [placed, away] {
                #expect(try await PresenceHubStatusTests.retained(tracker(beacon), on: broker) == [], "\(beacon) came back")
            }
            #expect(try await PresenceHubStatusTests.retained(tracker(kept), on: broker).count == 1)
            #expect(publisher.trackerWatch?.forgotten == 2)
            await homeAssistant.stop()
            await publisher.shutdown()
            running.cancel()
            await running.value
        }
    }

    /// The member stopping (or losing the outputs lease) says `offline` as its last status: a
    /// periodic `online` still being published when the stop begins lands before it, never after
    /// (a late `online` would leave the site shown available with nobody serving it). Before the
    /// fix the stop published `offline` beside the loop, which could publish `online` after it.
    @Test("shutdown while online is republished continuously: offline is the last status the broker keeps, every time",
          .timeLimit(.minutes(2)))
    func offlineIsTheLastStatus() async throws {
        try await Self.withBrokerAndStore { broker, store in
            let topics = PresenceTopics(site: "site-b")
            let listener = try await Listener(url: broker.url, filters: [topics.status])
            defer { Task { await listener.stop() } }
            var mqtt = try MQTTClientConfiguration(url: broker.url)
            mqtt.reconnectMinimumDelay = .milliseconds(20)
            for round in 1...8 {
                // `online` on every turn of the loop (status interval zero, no idle wait to speak of).
                let publisher = ClusterEventsPublisher(store: store, mqtt: mqtt, site: "site-b", regions: try Self.regions(),
                                                       statusInterval: .zero, stopTimeout: .seconds(30), logger: Logger(label: "test"))
                let running = Task { await publisher.run(interval: .milliseconds(1)) }
                let onlineBefore = listener.messages(topics.status).filter { $0 == "online" }.count
                try await eventually(timeout: .seconds(20), "round \(round): online published repeatedly") {
                    listener.messages(topics.status).filter { $0 == "online" }.count >= onlineBefore + 5
                }
                await publisher.shutdown()
                await running.value
                // What the broker retains is what a late subscriber (Home Assistant restarting) reads.
                let late = try await Listener(url: broker.url, filters: [topics.status])
                try await eventually(timeout: .seconds(20), "round \(round): retained \(late.messages(topics.status))") {
                    !late.messages(topics.status).isEmpty
                }
                #expect(late.messages(topics.status) == ["offline"], "round \(round)")
                await late.stop()
                try await eventually(timeout: .seconds(20), "round \(round): the listener heard the offline") {
                    listener.messages(topics.status).last == "offline"
                }
                // Nothing after it: give a late `online` time to arrive before looking again.
                try await Task.sleep(for: .milliseconds(100))
                #expect(listener.messages(topics.status).last == "offline", "round \(round): \(listener.messages(topics.status).suffix(3))")
            }
        }
    }
}
