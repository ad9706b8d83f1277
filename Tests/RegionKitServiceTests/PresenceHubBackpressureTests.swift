import Foundation
import Logging
import RegionKit
import RegionKitCore
import RegionKitGateway
import RegionKitMQTT
import RegionKitConcurrency
import RegionKitStore
import RegionKitTestSupport
import Testing
@testable import RegionKitService

/// The hub holds back its reads of sightings from the broker while the engine's events are queued
/// behind the event log (a flood of new beacons faster than the log can take their events): they
/// wait at the broker instead of in the daemon's memory, and are all ingested once the log has
/// caught up.
@Suite("Presence hub: backpressure on the sightings", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct PresenceHubBackpressureTests {
    @Test("The event log held back: reads from the broker are held over maximumBacklog; caught up: all 1,000 messages ingested, one connection",
          .timeLimit(.minutes(2)))
    func pausesWhileTheEngineIsBehind() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        // 200 regions whose didStartMonitoring queue behind a delivery held at the gate.
        let (service, gate, _) = try await StopDrainTests.heldService(count: 200)
        #expect(service.manager.undeliveredCount == 200)
        let configuration = try ServiceConfiguration.decode("""
        sources:
          - mqtt: {format: espresense}
        mqtt: {url: "\(broker.url)", site: backpressure-test, maximumBacklog: 300}
        """, path: "/tmp/regionkit-test.yaml")
        let hub = try PresenceHub(configuration: try #require(configuration.mqtt), homeAssistant: nil,
                                  sources: configuration.mqttSources, service: service,
                                  logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, environment: [:])
        let ingest = try #require(hub.ingest)
        let running = Task { await hub.run() }
        // Subscribed: a probe message reaches the ingest (200 queued < 300: reading is on).
        let publisher = MQTTClient(configuration: try MQTTClientConfiguration(url: broker.url), onMessage: { _ in })
        let publishing = Task { await publisher.run() }
        try await publisher.waitUntilConnected()
        func sighting(major: Int) -> MQTTMessage {
            let id = ESPresenseMessage.id(for: BeaconIdentity(uuid: StopDrainTests.uuid, major: UInt16(major), minor: 1))
            return MQTTMessage(topic: "espresense/devices/\(id)/kitchen", payload: Array(#"{"id":"\#(id)","rssi":-60,"rssi@1m":-59}"#.utf8), qos: .atMostOnce)
        }
        let subscribed = ContinuousClock.now + .seconds(20)
        while ingest.statistics.messages == 0 {
            guard ContinuousClock.now < subscribed else { throw TestFailure("the hub never subscribed") }
            try await publisher.publish(sighting(major: 1_000))   // a beacon of no region but the held one's
            try await Task.sleep(for: .milliseconds(100))
        }
        let before = ingest.statistics.messages

        // 200 more regions started: their events queue too (400 > 300), so the next read is held.
        // (Sightings would not do it here: the engine's state changes need time, and the clock is virtual.)
        for index in 0..<200 {
            service.startMonitoring(.beacon(try BeaconRegion(identifier: "more-\(index)", uuid: StopDrainTests.uuid, major: UInt16(200 + index))))
        }
        #expect(service.backlog == 400)
        // 1,000 sightings (few enough for the broker's QoS 0 queue and the socket buffers).
        for _ in 0..<5 {
            for major in 0..<200 { try await publisher.publish(sighting(major: major)) }
        }
        try await eventually(timeout: .seconds(20), "reads held (\(ingest.statistics), \(service.backlog) behind)") {
            hub.client.readPause?.isPaused == true
        }
        let held = hub.activity.status
        #expect(held.readPaused == true && (held.readPauses ?? 0) >= 1, "\(held)")

        // The log catches up: reads go on and every message is ingested.
        gate.open()
        try await eventually(timeout: .seconds(30), "every message ingested") { ingest.statistics.messages - before == 1_000 }
        #expect(ingest.statistics.sightings - before == 1_000)
        try await eventually(timeout: .seconds(10), "reads no longer held") { hub.client.readPause?.isPaused == false }
        #expect(hub.counts.connections == 1, "the connection stayed up")
        let status = hub.activity.status
        #expect(status.readPaused == false && (status.readPausedSeconds ?? 0) > 0)

        await hub.shutdown(drainTimeout: .seconds(2))
        running.cancel()
        await publisher.shutdown()
        _ = await (running.value, publishing.value)
        try await service.stop(reason: "test")
    }
}
