import Foundation
import Logging
import RegionKit
import RegionKitMQTT
import RegionKitConcurrency
import RegionKitStore
import RegionKitTestSupport
import Testing
@testable import RegionKitService

/// The events publisher sends a backlog in rounds (every event's messages pipelined, one
/// acknowledgement wait and one cursor save a round): what each event publishes must still be
/// decided as if the events before it were acknowledged.
@Suite("Presence hub: a backlog published in rounds", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct PresenceHubRoundTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test("Six new beacons placed in one round with maximumBeacons 2: two get Home Assistant entities, the others their room only, the cursor at the end",
          .timeLimit(.minutes(2)))
    func announcementLimitHoldsWithinARound() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let store = try RegionStore(path: temporaryStorePath())
        _ = try store.outputCursor("mqtt:round-test", createAtEnd: true)
        let beacons = (1...6).map { BeaconIdentity(uuid: Self.uuid, major: 1, minor: UInt16($0)) }
        var last: Int64 = 0
        for (index, beacon) in beacons.enumerated() {
            let line = #"{"t":\#(index),"type":"didChangeNearestScanner","beacon":"\#(beacon.description)","scanner":"kitchen"}"#
            last = try store.append(time: Double(index), type: "didChangeNearestScanner", region: nil, state: nil, reason: nil, json: line)
        }
        // Every config topic the hub publishes, then a marker of our own: the hub's messages were
        // acknowledged before its cursor moved, so the broker routes them to us before the marker.
        let configs = LockedBox<Set<String>>([])
        let marked = LockedBox(false)
        let observer = MQTTClient(configuration: try MQTTClientConfiguration(url: broker.url), onMessage: { message in
            if message.topic == "test/marker" { marked.withLock { $0 = true } }
            if message.topic.hasPrefix("homeassistant/device_tracker/"), !message.payload.isEmpty { _ = configs.withLock { $0.insert(message.topic) } }
        })
        let observing = Task { await observer.run() }
        try await observer.waitUntilConnected()
        try await observer.subscribe("homeassistant/#", qos: .atLeastOnce)
        try await observer.subscribe("test/marker", qos: .atLeastOnce)

        let configuration = try ServiceConfiguration.decode("""
        sources:
          - mqtt: {format: espresense}
        mqtt: {url: "\(broker.url)", site: round-test}
        homeAssistant: {discovery: true, maximumBeacons: 2}
        """, path: "/tmp/regionkit-test.yaml")
        let service = MonitoringService(store: store, clock: VirtualClock(), sources: [.beacon: .authorized])
        let hub = try PresenceHub(configuration: try #require(configuration.mqtt), homeAssistant: configuration.homeAssistant,
                                  sources: configuration.mqttSources, service: service,
                                  logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, environment: [:], eventsPerRound: 64)
        let running = Task { await hub.run() }
        let reached: Void? = try? await eventually(timeout: .seconds(20), "the cursor reaches the last event") {
            (try? store.outputCursor("mqtt:round-test")) == last
        }
        try await observer.publish(MQTTMessage(topic: "test/marker", payload: Array("x".utf8), qos: .atLeastOnce))
        try await eventually(timeout: .seconds(20), "the marker") { marked.withLock { $0 } }
        await hub.shutdown(drainTimeout: .seconds(2))
        running.cancel()
        await observer.shutdown()
        _ = await (running.value, observing.value)

        #expect(reached != nil)
        #expect(hub.counts.eventsPublished == 6, "\(hub.counts)")
        // The first two placed get entities; the limit held inside the round (an announcement
        // decided from the outputs as they were before the round gave all six).
        #expect(hub.outputs.withLock { $0.announcedBeacons } == Set(beacons.prefix(2)))
        #expect(configs.withLock { $0 }.count == 2, "\(configs.withLock { $0 }.sorted())")
        #expect(hub.counts.unannouncedBeacons == 4)
        // A beacon beyond the limit still gets its room. (An announced one's room is re-sent from
        // the engine's state at the connection, which this log of made-up events does not match.)
        let room = try await PresenceHubStatusTests.retained(PresenceTopics(site: "round-test").beaconRoom(beacons[5]), on: broker)
        #expect(room == ["kitchen"])

        // The announced beacons are recorded, and a restarted hub reads them back: the limit
        // holds across the restart (it granted another two before), their departures stay retained.
        #expect(try store.announcedBeacons("mqtt:round-test") == beacons.prefix(2).map(\.description).sorted())
        let restarted = try PresenceHub(configuration: try #require(configuration.mqtt), homeAssistant: configuration.homeAssistant,
                                        sources: configuration.mqttSources, service: MonitoringService(store: store, clock: VirtualClock(), sources: [.beacon: .authorized]),
                                        logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, environment: [:])
        #expect(restarted.outputs.withLock { $0.announcedBeacons }.isEmpty)
        try await restarted.prepare()
        #expect(restarted.outputs.withLock { $0.announcedBeacons } == Set(beacons.prefix(2)))
        let newcomer = BeaconIdentity(uuid: Self.uuid, major: 2, minor: 1)
        #expect(restarted.outputs.withLock { $0.announces(newcomer, regions: { [] }) } == false, "the limit of 2 is reached already")
        let departure = StoredEvent(id: last + 1, time: 9, type: "didChangeNearestScanner", region: nil, state: nil, reason: nil,
                                    json: #"{"type":"didChangeNearestScanner","beacon":"\#(beacons[0].description)","previous":"kitchen"}"#)
        let retainedRoom = restarted.outputs.withLock { $0.messages(for: departure) { _ in nil } }.filter { $0.topic.hasSuffix("/room") }
        #expect(retainedRoom.map { [$0.text, "\($0.retain)"] } == [["not_home", "true"]], "its device tracker reads it: kept")
    }

    @Test("A region stopped during a discovery round: its entity's removal goes out after the round, so the round's config of it (read before the stop) does not bring the entity back for good",
          .timeLimit(.minutes(2)))
    func removalWaitsForTheDiscoveryRound() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let hub = try PresenceHubStatusTests.hub(site: "removal-test", broker: broker, store: try RegionStore(path: temporaryStorePath()), homeAssistant: true)
        let service = hub.service
        let lobby = Region.beacon(try BeaconRegion(identifier: "lobby", uuid: Self.uuid, major: 1))
        try await service.start(regions: [lobby])
        let discovery = try #require(hub.outputs.withLock { $0.discovery })
        let configTopic = discovery.regionTopic("lobby")
        let running = Task { await hub.run() }
        let listener = try await StatusListener(topic: configTopic, broker: broker)
        let heard = listener.heard
        try await eventually(timeout: .seconds(20), "the lobby's entity announced") { heard.withLock { $0 }.last?.isEmpty == false }
        // A discovery round under way, which read the lobby as monitored: held here.
        await hub.discoveryLock.acquire()
        try await service.stopMonitoring(lobby, reason: "deleted through the HTTP API")
        var waiting = 0
        for _ in 0..<300 where waiting < 1 {   // the removal waits for the round (before: published at once)
            waiting = await hub.discoveryLock.waiting
            if waiting < 1 { try? await Task.sleep(for: .milliseconds(10)) }
        }
        // The round publishes the config it built, then ends.
        try broker.publish(topic: configTopic, message: discovery.regionConfig(lobby).text, qos: 1, retain: true)
        await hub.discoveryLock.release()
        try await eventually(timeout: .seconds(20), "the removal last: \(heard.withLock { $0 }.map(\.count))") { heard.withLock { $0 }.last == "" }
        #expect(waiting == 1, "the removal did not wait for the round")
        await listener.stop()
        await hub.shutdown(drainTimeout: .seconds(5))
        running.cancel()
        await running.value
    }
}
