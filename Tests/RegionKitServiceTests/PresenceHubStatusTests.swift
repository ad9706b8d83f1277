import Foundation
import Logging
import RegionKit
import RegionKitConcurrency
import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
import Testing
@testable import RegionKitService

/// The daemon's availability (`regionkit/<site>/status`, retained) through a real broker: a stopped
/// daemon is shown `offline`, even when a connection is made while it stops.
@Suite("Presence hub: the site's status through a real broker", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct PresenceHubStatusTests {
    /// A hub for `site` on `broker` (an MQTT source; Home Assistant discovery when asked) over
    /// `store`, its service on `clock` with `profile` (its regions are the caller's to start).
    static func hub(site: String, broker: MosquittoBroker, store: RegionStore, profile: MonitoringProfile = .responsive,
                    clock: VirtualClock = VirtualClock(), homeAssistant: Bool = false, prefix: String? = nil,
                    leftoverGrace: Duration = .seconds(30), beaconSource: Bool = true, deadPrimary: UInt16? = nil) throws -> PresenceHub {
        // With `deadPrimary`: `urls`, a broker refusing connections first, the test's broker as its standby.
        let servers = deadPrimary.map { #"urls: ["mqtt://127.0.0.1:\#($0)", "\#(broker.url)"]"# } ?? #"url: "\#(broker.url)""#
        let configuration = try ServiceConfiguration.decode("""
        sources:
          - mqtt: {format: espresense}
        mqtt: {\(servers), site: \(site)}
        \(homeAssistant ? "homeAssistant: {discovery: true\(prefix.map { ", prefix: \($0)" } ?? "")}" : "")
        """, path: "/tmp/regionkit-test.yaml")
        // Without a beacon source: a GPS-only daemon's hub (its events and regions only).
        let service = MonitoringService(store: store, profile: profile, clock: clock, sources: beaconSource ? [.beacon: .authorized] : [.circular: .authorized])
        return try PresenceHub(configuration: try #require(configuration.mqtt), homeAssistant: configuration.homeAssistant,
                               sources: beaconSource ? configuration.mqttSources : [],
                               service: service, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, environment: [:],
                               leftoverGrace: leftoverGrace)
    }

    /// The retained message the broker keeps on `topic`, as a subscriber arriving now (Home
    /// Assistant restarting) reads it: `[]` when it keeps none. (A marker published on a topic of
    /// its own after the subscription arrives after any retained message of the subscription: one
    /// connection keeps the broker's order. A live message published meanwhile is not counted.)
    static func retained(_ topic: String, on broker: MosquittoBroker) async throws -> [String] {
        let heard = LockedBox<[String]>([])
        let marker = "regionkit-test/marker/\(UUID().uuidString)"
        let marked = LockedBox(false)
        let client = MQTTClient(configuration: try MQTTClientConfiguration(url: broker.url), onMessage: { message in
            if message.topic == topic, message.retain { heard.withLock { $0.append(String(decoding: message.payload, as: UTF8.self)) } }
            if message.topic == marker { marked.withLock { $0 = true } }
        })
        let task = Task { await client.run() }
        try await client.waitUntilConnected()
        try await client.subscribe(marker, qos: .atLeastOnce)
        try await client.subscribe(topic, qos: .atLeastOnce)
        try await client.publish(MQTTMessage(topic: marker, payload: Array("marker".utf8), qos: .atLeastOnce))
        try await eventually(timeout: .seconds(20), "the marker after retained \(topic)") { marked.withLock { $0 } }
        await client.shutdown()
        await task.value
        return heard.withLock { $0 }
    }

    /// The `.connected` event's `online` goes out in a task of its own; a connection made as the
    /// hub stops (a reconnection racing the stop) must not publish it after the stop's `offline`,
    /// or the broker keeps `online` for a daemon that is gone. Here the status lock is held until
    /// both publications wait for it (the `online` queued first); released, the `online` sees the
    /// stop and is not sent.
    @Test("A connection event while the hub stops publishes no online after the offline; the broker keeps offline",
          .timeLimit(.minutes(2)))
    func noOnlineAfterOffline() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let hub = try Self.hub(site: "status-test", broker: broker, store: try RegionStore(path: temporaryStorePath()))
        let topic = "regionkit/status-test/status"
        let listener = try await StatusListener(topic: topic, broker: broker)
        let heard = listener.heard

        let running = Task { await hub.run() }
        try await eventually(timeout: .seconds(20), "online: \(heard.withLock { $0 })") { heard.withLock { $0 }.last == "online" }
        let onlineBefore = heard.withLock { $0 }.filter { $0 == "online" }.count

        await hub.statusLock.acquire()
        hub.connectionChanged(.connected(sessionPresent: false))   // its `online` waits for the lock
        let stopping = Task { await hub.shutdown(drainTimeout: .seconds(30)) }
        // Both wait for the lock: the `online` first (it asked first), then the stop's `offline`
        // (after its drain). Released, the `online` must see the stop.
        var queued = 0
        for _ in 0..<2_000 where queued < 2 {
            queued = await hub.statusLock.waiting
            if queued < 2 { try? await Task.sleep(for: .milliseconds(10)) }
        }
        await hub.statusLock.release()
        #expect(queued == 2, "waiting for the status lock: \(queued)")
        #expect(hub.stopping.withLock { $0 })
        await stopping.value
        running.cancel()
        await running.value

        try await eventually(timeout: .seconds(20), "offline: \(heard.withLock { $0 })") { heard.withLock { $0 }.last == "offline" }
        #expect(try await Self.retained(topic, on: broker) == ["offline"])
        #expect(heard.withLock { $0 }.filter { $0 == "online" }.count == onlineBefore, "an online after the stop began: \(heard.withLock { $0 })")
        await listener.stop()
    }

    /// The daemon restarted before the broker noticed its old connection dead: the old will
    /// (`offline`, retained) is published up to 1.5 keepalives after the new connection's
    /// `online`, and every Home Assistant entity of the site (all share this availability topic)
    /// stayed unavailable until the next reconnection. The hub answers it with `online`.
    @Test("A late will (offline while connected) is answered with online, so the broker keeps online; a retained offline found at the connection and the stop's own offline are not answered",
          .timeLimit(.minutes(2)))
    func lateWillAnswered() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let topic = "regionkit/late-will-test/status"
        try broker.publish(topic: topic, message: "offline", qos: 1, retain: true)   // the last run's will
        let hub = try Self.hub(site: "late-will-test", broker: broker, store: try RegionStore(path: temporaryStorePath()))
        let listener = try await StatusListener(topic: topic, broker: broker)
        let heard = listener.heard
        let running = Task { await hub.run() }
        try await eventually(timeout: .seconds(20), "online: \(heard.withLock { $0 })") { heard.withLock { $0 }.last == "online" }
        try await Task.sleep(for: .milliseconds(500))
        #expect(heard.withLock { $0 } == ["offline", "online"] && hub.counts.lateWillsAnswered == 0, "\(heard.withLock { $0 })")

        // The old connection's will, late (retained, as a will is; its copy to us is live).
        try broker.publish(topic: topic, message: "offline", qos: 1, retain: true)
        try await eventually(timeout: .seconds(20), "answered: \(heard.withLock { $0 })") { heard.withLock { $0 } == ["offline", "online", "offline", "online"] }
        #expect(try await Self.retained(topic, on: broker) == ["online"])
        #expect(hub.counts.lateWillsAnswered == 1 && hub.status.lateWillsAnswered == 1, "the count reaches /metrics")

        await hub.shutdown(drainTimeout: .seconds(5))
        running.cancel()
        await running.value
        try await Task.sleep(for: .milliseconds(500))
        #expect(heard.withLock { $0 }.last == "offline" && hub.counts.lateWillsAnswered == 1, "\(heard.withLock { $0 })")
        #expect(try await Self.retained(topic, on: broker) == ["offline"])
        await listener.stop()
    }

    /// `mqtt: {urls: [down, up]}`: the first broker's refusal reported the beacon source
    /// unavailable before the standby answered, so every start with the primary down logged a
    /// `monitoringDidFail` for each beacon region (and registered them again a second later).
    @Test("A primary broker refusing at the start, the standby answering: no source outage, no region fails; a lost connection still reports one at once",
          .timeLimit(.minutes(2)))
    func standbyBrokerAtTheStart() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        try await Loopback.withRefusingPort { dead in
            let store = try RegionStore(path: temporaryStorePath())
            let hub = try Self.hub(site: "standby-test", broker: broker, store: store, deadPrimary: dead)
            let service = hub.service
            let lobby = try BeaconRegion(identifier: "lobby", uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!)
            service.startMonitoring(.beacon(lobby))
            let running = Task { await hub.run() }
            try await eventually(timeout: .seconds(20), "connected to the standby") { hub.client.currentServer?.url == broker.url }
            let monitored = { service.manager.monitoredRegions.contains { $0.identifier == "lobby" } }
            #expect(monitored(), "the region failed at the primary's refusal")
            // Connected (the standby), then the hub's online; the event log has whatever the refusal caused by then.
            try await eventually(timeout: .seconds(20), "online") { (try? await Self.retained("regionkit/standby-test/status", on: broker)) == ["online"] }
            #expect(try store.events(since: nil, region: nil, type: "monitoringDidFail", afterID: nil, limit: nil).isEmpty)
            #expect(try store.events(since: nil, region: nil, type: "didChangeAuthorization", afterID: nil, limit: nil)
                .allSatisfy { !$0.json.contains("restricted") })

            // The standby's connection lost: its sightings stopped, unavailable at once (before any other attempt).
            hub.connectionChanged(.disconnected(.notConnected))
            #expect(!monitored(), "a lost connection is an outage")
            await hub.shutdown(drainTimeout: .seconds(10))
            running.cancel()
            await running.value
        }
    }

    /// `shutdown` called twice (a second stop path racing the first): one drain, one `offline`.
    /// The status lock is held so the first stop's `offline` waits; a second, independent stop
    /// would queue its own behind it.
    @Test("Two shutdowns at once stop the hub once: one offline", .timeLimit(.minutes(2)))
    func shutdownTwiceStopsOnce() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let hub = try Self.hub(site: "twice-test", broker: broker, store: try RegionStore(path: temporaryStorePath()))
        let listener = try await StatusListener(topic: "regionkit/twice-test/status", broker: broker)
        let heard = listener.heard
        let running = Task { await hub.run() }
        try await eventually(timeout: .seconds(20), "online: \(heard.withLock { $0 })") { heard.withLock { $0 }.last == "online" }

        await hub.statusLock.acquire()
        let first = Task { await hub.shutdown(drainTimeout: .seconds(30)) }
        let second = Task { await hub.shutdown(drainTimeout: .seconds(30)) }
        // The first stop's offline waits for the lock; then a second stop has time to queue one too.
        var queued = 0
        for _ in 0..<6_000 where queued < 1 {
            queued = await hub.statusLock.waiting
            if queued < 1 { try? await Task.sleep(for: .milliseconds(10)) }
        }
        for _ in 0..<100 where queued < 2 {
            try? await Task.sleep(for: .milliseconds(10))
            queued = await hub.statusLock.waiting
        }
        await hub.statusLock.release()
        await first.value
        await second.value
        running.cancel()
        await running.value
        #expect(queued == 1, "offline publications waiting for the status lock: \(queued)")
        try await eventually(timeout: .seconds(20), "offline: \(heard.withLock { $0 })") { heard.withLock { $0 }.last == "offline" }
        await listener.stop()
        #expect(heard.withLock { $0 }.filter { $0 == "offline" }.count == 1, "\(heard.withLock { $0 })")
    }

    /// A stop while the event publisher works through a backlog (after an outage): it ends after
    /// the event it is publishing, the drain goes on for at most `drainTimeout`, and `offline` is
    /// still said. Before, the stop waited for the publisher to publish the whole log (each event
    /// a broker round trip and a durable cursor write), however long that took.
    @Test("A stop during a backlog of 5,000 events: the publisher stops after its event, the drain is bounded, the rest waits for the next start, offline is kept",
          .timeLimit(.minutes(2)))
    func stopDuringBacklog() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let store = try RegionStore(path: temporaryStorePath())
        // The hub's cursor first (it starts at the log's end when created), then the backlog.
        _ = try store.outputCursor("mqtt:backlog-test", createAtEnd: true)
        var last: Int64 = 0
        for index in 0..<5_000 {
            let line = #"{"t":\#(index),"type":"didDetermineState","region":"lobby","state":"inside"}"#
            last = try store.append(time: Double(index), type: "didDetermineState", region: "lobby", state: "inside", reason: nil, json: line)
        }
        let hub = try Self.hub(site: "backlog-test", broker: broker, store: store)
        let running = Task { await hub.run() }
        try await eventually(timeout: .seconds(30), "publishing began") { hub.counts.eventsPublished > 0 }
        await hub.shutdown(drainTimeout: .milliseconds(50))
        running.cancel()
        await running.value
        let published = hub.counts.eventsPublished
        let cursor = try store.outputCursor("mqtt:backlog-test")
        #expect(published < 5_000, "the stop waited for the whole backlog")
        #expect(cursor < last && cursor > 0, "cursor \(cursor) of \(last)")

        #expect(try await Self.retained("regionkit/backlog-test/status", on: broker) == ["offline"])
    }

    /// A beacon heard by no scanner any more while the hub was disconnected kept its retained
    /// distance and attributes (its last room) for ever: they are cleared at the next connection,
    /// unless the beacon was heard again meanwhile. No Home Assistant entity reads them here, so
    /// the broker keeps nothing of them (`None` and `not_home` go to the subscribers, then the
    /// topics are removed).
    /// With Home Assistant discovery on, the departed beacon's entities are still to be announced
    /// (its placement event not published yet: the ranging path runs ahead of the log), so its
    /// distance sensor will read these topics: kept retained.
    @Test("Departures noted while disconnected are cleared at the connection: distance None, attributes not_home, then the topics removed (kept retained with Home Assistant discovery); a beacon placed again is left alone",
          .timeLimit(.minutes(2)), arguments: [false, true])
    func departuresAtTheConnection(homeAssistant: Bool) async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        let clock = VirtualClock()
        let hub = try Self.hub(site: "departures", broker: broker, store: try RegionStore(path: temporaryStorePath()), profile: profile, clock: clock,
                               homeAssistant: homeAssistant)
        let service = hub.service
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        let (gone, back) = (BeaconIdentity(uuid: uuid, major: 1, minor: 1), BeaconIdentity(uuid: uuid, major: 1, minor: 2))
        let topics = PresenceTopics(site: "departures")
        // Both had a distance published (retained, as before the connection was lost).
        for identity in [gone, back] {
            try broker.publish(topic: topics.beaconDistance(identity), message: "1.5", qos: 1, retain: true)
            try broker.publish(topic: topics.beaconAttributes(identity), message: #"{"room":"kitchen"}"#, qos: 1, retain: true)
        }
        // Both left while disconnected; `back` is heard again (placed in the hall) before the connection.
        hub.departedWhileDisconnected.withLock { $0 = [gone, back] }
        service.manager.ingest(BeaconObservation(identity: back, rssi: -60, timestamp: clock.now, scannerID: "hall"))
        #expect(service.manager.nearestScanner(for: back) == "hall")
        let listener = try await StatusListener(topic: topics.beaconAttributes(gone), broker: broker)
        let heard = listener.heard
        let running = Task { await hub.run() }
        // The attributes go out after the distance, in one pipelined publish: not_home, then the topic's removal.
        if homeAssistant {
            try await eventually(timeout: .seconds(20), "not_home: \(heard.withLock { $0 })") { heard.withLock { $0 }.last == #"{"room":"not_home"}"# }
        } else {
            try await eventually(timeout: .seconds(20), "not_home: \(heard.withLock { $0 })") { heard.withLock { $0 }.suffix(2) == [#"{"room":"not_home"}"#, ""] }
        }
        await listener.stop()
        #expect(try await Self.retained(topics.beaconDistance(gone), on: broker) == (homeAssistant ? ["None"] : []))
        #expect(try await Self.retained(topics.beaconAttributes(gone), on: broker) == (homeAssistant ? [#"{"room":"not_home"}"#] : []))
        #expect(try await Self.retained(topics.beaconDistance(back), on: broker) == ["1.5"], "a beacon placed again keeps its distance until its next one")
        await hub.shutdown(drainTimeout: .seconds(10))
        running.cancel()
        await running.value
    }
}

/// An MQTT client subscribed (QoS 1) to one topic, keeping its payloads in order: what a site's
/// status topic said, as a dashboard or Home Assistant hears it.
final class StatusListener: Sendable {
    let heard = LockedBox<[String]>([])
    private let client: MQTTClient
    private let running: Task<Void, Never>

    /// Returns once subscribed.
    init(topic: String, broker: MosquittoBroker) async throws {
        var configuration = try MQTTClientConfiguration(url: broker.url)
        configuration.reconnectMinimumDelay = .milliseconds(20)
        let heard = heard
        let client = MQTTClient(configuration: configuration, onMessage: { message in
            if message.topic == topic { heard.withLock { $0.append(String(decoding: message.payload, as: UTF8.self)) } }
        })
        self.client = client
        running = Task { await client.run() }
        try await client.waitUntilConnected()
        try await client.subscribe(topic, qos: .atLeastOnce)
    }

    func stop() async {
        await client.shutdown()
        await running.value
    }
}
