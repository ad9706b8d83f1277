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

/// The hub stops reading sightings from the broker while the engine's events are queued behind
/// the event log (a flood of new beacons faster than the log can take their events): they wait
/// at the broker instead of in the daemon's memory, and are all ingested once the log has caught up.
@Suite("Presence hub: backpressure on the sightings", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct PresenceHubBackpressureTests {
    @Test("The delivery held: reading pauses near maximumBacklog and the rest waits at the broker; released: all 6,000 messages ingested, one connection",
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

        // 200 more regions started: their events queue too (400 > 300), so the next read waits.
        // (Sightings would not do it here: the engine's state changes need time, and the clock is virtual.)
        for index in 0..<200 {
            service.startMonitoring(.beacon(try BeaconRegion(identifier: "more-\(index)", uuid: StopDrainTests.uuid, major: UInt16(200 + index))))
        }
        #expect(service.manager.undeliveredCount == 400)
        // 6,000 sightings: what the read already asked for brings some, the rest stays at the broker.
        for _ in 0..<30 {
            for major in 0..<200 { try await publisher.publish(sighting(major: major)) }
        }
        try await eventually(timeout: .seconds(20), "reading paused (\(ingest.statistics), \(service.manager.undeliveredCount) undelivered)") {
            hub.client.readPause?.pauses == 1
        }
        try await Task.sleep(for: .seconds(1))
        let held = ingest.statistics.messages - before
        try await Task.sleep(for: .seconds(1))
        #expect(ingest.statistics.messages - before == held, "nothing read while paused")
        #expect(held < 6_000, "the rest waits at the broker (\(held) read)")
        #expect(service.manager.undeliveredCount == 400)

        // The log catches up: reading resumes at 150 and every message is ingested.
        gate.open()
        try await eventually(timeout: .seconds(30), "every message ingested") { ingest.statistics.messages - before == 6_000 }
        #expect(ingest.statistics.sightings - before == 6_000)
        #expect(hub.counts.connections == 1, "the connection stayed up")
        let status = hub.activity.status
        #expect(status.readPauses == 1)
        #expect((status.readPausedSeconds ?? 0) >= 2)

        await hub.shutdown(drainTimeout: .seconds(2))
        running.cancel()
        await publisher.shutdown()
        _ = await (running.value, publishing.value)
        try await service.stop(reason: "test")
    }
}
