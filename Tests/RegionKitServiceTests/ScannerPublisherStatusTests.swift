import Foundation
import Logging
import RegionKit
import RegionKitConcurrency
import RegionKitCore
import RegionKitGateway
@testable import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
import Testing
@testable import RegionKitService

/// `regionkit scan --publish`'s status (``ScannerPublisher/statusTopic``) through a real broker to
/// a hub reading `format: regionkit`: retained `online` while connected, the will `offline` when
/// the connection is lost, `offline` at the stop; the hub knows the scanner by the name its batches
/// carry, whatever the topic level.
@Suite("Scanner publisher: its status through a real broker", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct ScannerPublisherStatusTests {
    static let identity = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)
    static let silent = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// Every message on `topic` from now on, in order (the retained one first).
    final class Watcher: Sendable {
        let heard = LockedBox<[String]>([])
        let client: MQTTClient
        let task: Task<Void, Never>

        init(_ topic: String, on broker: MosquittoBroker) async throws {
            let heard = heard
            client = MQTTClient(configuration: try MQTTClientConfiguration(url: broker.url), onMessage: { message in
                if message.topic == topic { heard.withLock { $0.append(String(decoding: message.payload, as: UTF8.self)) } }
            })
            let client = client
            task = Task { await client.run() }
            try await client.waitUntilConnected()
            try await client.subscribe(topic, qos: .atLeastOnce)
        }

        var messages: [String] { heard.withLock { $0 } }

        func stop() async {
            await client.shutdown()
            await task.value
        }
    }

    @Test("'Living Room' says online; its lost connection's will is published and read by the hub, then online again; a late will is answered with online; the stop says offline, read by the hub under the batches' name",
          .timeLimit(.minutes(2)))
    func lifecycle() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let name = "Living Room"
        let statusTopic = ScannerBatch.statusTopic(scanner: name)
        #expect(statusTopic == "regionkit/scanners/Living%20Room/status")
        let configuration = try ServiceConfiguration.decode("""
        sources:
          - mqtt: {format: regionkit}
        mqtt: {url: "\(broker.url)", site: scanner-publisher-test}
        """, path: "/tmp/regionkit-test.yaml")
        let store = try RegionStore(path: temporaryStorePath())
        let service = MonitoringService(store: store, profile: .responsive, clock: VirtualClock(), sources: [.beacon: .authorized])
        let hub = try PresenceHub(configuration: try #require(configuration.mqtt), homeAssistant: nil, sources: configuration.mqttSources,
                                  service: service, logger: Self.silent, environment: [:])
        try await hub.prepare()
        let ingest = try #require(hub.ingest)
        #expect(ingest.statusFilters == ["regionkit/scanners/+/status"])
        let running = Task { await hub.run() }
        let watcher = try await Watcher(statusTopic, on: broker)

        let publisher = try ScannerPublisher(url: broker.url, scanner: name, logger: Self.silent, environment: [:])
        #expect(publisher.statusTopic == statusTopic && publisher.topic == "regionkit/scanners/Living%20Room")
        let publishing = Task { await publisher.run() }
        try await eventually(timeout: .seconds(20), "online said") { watcher.messages == ["online"] }
        try await eventually(timeout: .seconds(20), "online read by the hub") { ingest.statistics.statuses >= 1 }
        #expect(service.manager.offlineScanners.isEmpty)
        publisher.add(Self.identity, rssi: -60, measuredPower: -59, at: Date().timeIntervalSince1970)
        await publisher.flush()
        try await eventually(timeout: .seconds(20), "the batch read") { ingest.statistics.sightings == 1 }
        #expect(service.manager.engineSnapshot.channel(of: name) != nil, "heard under the name the batch carries")

        // The connection lost without DISCONNECT (a crash, a network failure): the broker publishes
        // the will; the publisher reconnects and says online again, once (the will it reads back,
        // retained, at its new subscription is not answered: its own online replaces it).
        publisher.client.dropConnectionWithoutDisconnect()
        try await eventually(timeout: .seconds(20), "the will, then online again") { watcher.messages == ["online", "offline", "online"] }
        try await eventually(timeout: .seconds(20), "both read by the hub") { ingest.statistics.statuses == 3 && service.manager.offlineScanners.isEmpty }

        // An earlier connection's will published late (the broker noticed it dead only now): the
        // publisher, connected, answers with online, so the retained status is true again.
        try broker.publish(topic: statusTopic, message: "offline", qos: 1, retain: true)
        try await eventually(timeout: .seconds(20), "the late will answered") { watcher.messages == ["online", "offline", "online", "offline", "online"] }
        #expect(try await PresenceHubStatusTests.retained(statusTopic, on: broker) == ["online"])
        try await eventually(timeout: .seconds(20), "the hub online again") { ingest.statistics.statuses == 5 && service.manager.offlineScanners.isEmpty }

        // The stop: offline, retained (the clean disconnection discards the will), read by the hub
        // under the batches' name.
        await publisher.shutdown()
        publishing.cancel()
        await publishing.value
        #expect(try await PresenceHubStatusTests.retained(statusTopic, on: broker) == ["offline"])
        try await eventually(timeout: .seconds(20), "offline read by the hub") { service.manager.offlineScanners == [name] }
        #expect(ingest.statistics.rejectedTotal == 0, "\(ingest.statistics)")

        await watcher.stop()
        await hub.shutdown(drainTimeout: .seconds(5))
        running.cancel()
        _ = await running.value
        try await service.stop(reason: "test")
    }

    @Test("A source subscribed with regionkit/# gets the hub's own output back (MQTT 3.1.1 has no \"no local\"): skipped, not counted as rejected batches; a scanner's batch on the same filter is still read",
          .timeLimit(.minutes(2)))
    func ownOutputSkipped() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let configuration = try ServiceConfiguration.decode("""
        sources:
          - mqtt: {format: regionkit, topic: "regionkit/#"}
        mqtt: {url: "\(broker.url)", site: own-output-test}
        """, path: "/tmp/regionkit-test.yaml")
        let store = try RegionStore(path: temporaryStorePath())
        let clock = VirtualClock()
        let service = MonitoringService(store: store, profile: .responsive, automation: Automation(rangeWhileInside: true), clock: clock,
                                        sources: [.beacon: .authorized])
        let hub = try PresenceHub(configuration: try #require(configuration.mqtt), homeAssistant: nil, sources: configuration.mqttSources,
                                  service: service, logger: Self.silent, environment: [:])
        try await hub.prepare()
        let ingest = try #require(hub.ingest)
        let running = Task { await hub.run() }
        try await eventually(timeout: .seconds(20), "connected") { hub.isConnected }
        try await service.start(regions: [.beacon(try BeaconRegion(identifier: "lobby", uuid: Self.identity.uuid))])
        hub.eventLogged()
        try await eventually(timeout: .seconds(20), "events published") { hub.counts.eventsPublished >= 2 }
        // A scanner's batch on the same filter: read.
        let publisher = try ScannerPublisher(url: broker.url, scanner: "hall", logger: Self.silent, environment: [:])
        let publishing = Task { await publisher.run() }
        try await eventually(timeout: .seconds(20), "the publisher connected") { publisher.client.isConnected }
        publisher.add(Self.identity, rssi: -60, measuredPower: -59, at: Date().timeIntervalSince1970)
        await publisher.flush()
        try await eventually(timeout: .seconds(20), "the batch read: \(ingest.statistics)") { ingest.statistics.sightings >= 1 }
        try await Task.sleep(for: .milliseconds(500))
        #expect(ingest.statistics.rejectedTotal == 0, "\(ingest.statistics)")
        await publisher.shutdown()
        publishing.cancel()
        await publishing.value
        await hub.shutdown(drainTimeout: .seconds(5))
        running.cancel()
        _ = await running.value
        try await service.stop(reason: "test")
    }

    @Test("A flood of offline on its own status topic: answered by a few online (one queued answer covers the offlines read before it is published), a log line each, and the retained status ends online",
          .timeLimit(.minutes(1)))
    func offlineFlood() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let statusTopic = ScannerBatch.statusTopic(scanner: "hall")
        let watcher = try await Watcher(statusTopic, on: broker)
        let lines = InMemoryLogHandler.Store()
        let publisher = try ScannerPublisher(url: broker.url, scanner: "hall", logger: Logger(label: "test") { _ in InMemoryLogHandler(store: lines) },
                                             environment: [:])
        let publishing = Task { await publisher.run() }
        try await eventually(timeout: .seconds(20), "online said") { watcher.messages == ["online"] }
        // 300 offlines in one burst, as a flood would come (retained, like a will).
        let flooder = MQTTClient(configuration: try MQTTClientConfiguration(url: broker.url), onMessage: { _ in })
        let flooding = Task { await flooder.run() }
        try await flooder.waitUntilConnected()
        let flood = 300
        try await flooder.publish(Array(repeating: PresenceHub.status("offline", on: statusTopic), count: flood))
        try await eventually(timeout: .seconds(20), "every offline read and the last one answered") {
            watcher.messages.filter { $0 == "offline" }.count == flood && watcher.messages.last == "online"
        }
        try await Task.sleep(for: .milliseconds(300))   // an answer still on its way would show here
        #expect(watcher.messages.last == "online")
        #expect(try await PresenceHubStatusTests.retained(statusTopic, on: broker) == ["online"])
        let answers = watcher.messages.dropFirst().filter { $0 == "online" }.count
        // One answer each before: 300. A few now (how many depends on how the burst arrives).
        #expect(answers >= 1 && answers <= flood / 3, "\(answers) answers to \(flood) offlines")
        let logged = lines.all.filter { $0.contains("saying online again") }
        #expect(logged.count == answers, "a log line per answer: \(logged.count) for \(answers)")
        await flooder.shutdown()
        await flooding.value
        await publisher.shutdown()
        publishing.cancel()
        await publishing.value
        await watcher.stop()
    }

    @Test("With status: false (--no-status) it keeps no status: no online, no will on a lost connection, nothing at the stop",
          .timeLimit(.minutes(1)))
    func noStatus() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let statusTopic = ScannerBatch.statusTopic(scanner: "garage")
        let watcher = try await Watcher(statusTopic, on: broker)
        let publisher = try ScannerPublisher(url: broker.url, scanner: "garage", status: false, logger: Self.silent, environment: [:])
        #expect(publisher.statusTopic == nil && publisher.client.configuration.will == nil)
        let publishing = Task { await publisher.run() }
        try await publisher.client.waitUntilConnected()
        publisher.add(Self.identity, rssi: -60, measuredPower: nil, at: Date().timeIntervalSince1970)
        await publisher.flush()
        #expect(publisher.counts.published == 1)
        publisher.client.dropConnectionWithoutDisconnect()
        try await eventually(timeout: .seconds(20), "reconnected") { publisher.state.withLock { $0.connections } == 2 }
        await publisher.shutdown()
        publishing.cancel()
        await publishing.value
        #expect(try await PresenceHubStatusTests.retained(statusTopic, on: broker) == [])
        #expect(watcher.heard.withLock { $0 } == [])
        await watcher.stop()
    }
}
