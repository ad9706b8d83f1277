import Foundation
import Logging
import RegionKit
import RegionKitConcurrency
import RegionKitGateway
import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
import Testing
@testable import RegionKitService

/// An ESPresense node that reboots: its will `offline` on `espresense/rooms/<room>/status`
/// (retained), then `online` again. Through a real broker, the beacon only it hears stays inside
/// while it is away; a beacon whose node said nothing leaves as usual.
@Suite("Presence hub: a scanner's status through a real broker", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct PresenceHubScannerStatusTests {
    @Test("The kitchen node offline for 100 s: its beacon stays inside and in its room, then leaves once counted from its return; the hall's beacon, whose node said nothing, leaves in seconds",
          .timeLimit(.minutes(2)))
    func rebootHoldsTheExit() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let store = try RegionStore(path: temporaryStorePath())
        let clock = VirtualClock()
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        let hub = try PresenceHubStatusTests.hub(site: "scanner-status-test", broker: broker, store: store, profile: profile, clock: clock)
        let uuid = PresenceHubDeviceRemovalTests.uuid
        let (keys, wallet) = (BeaconIdentity(uuid: uuid, major: 1, minor: 1), BeaconIdentity(uuid: uuid, major: 1, minor: 2))
        hub.service.startMonitoring(.beacon(try BeaconRegion(identifier: "keys", uuid: uuid, major: 1, minor: 1)))
        hub.service.startMonitoring(.beacon(try BeaconRegion(identifier: "wallet", uuid: uuid, major: 1, minor: 2)))
        let status = "espresense/rooms/kitchen/status"
        // The node's connection, with its will (as ESPresense's: retained `offline`), connected
        // before the hub; then its `online`, retained.
        let nodeConnection = try await broker.subscribe(topic: "regionkit-test/kitchen-node", count: 1, timeout: 120, will: (status, "offline"))
        try broker.publish(topic: status, message: "online", qos: 1, retain: true)
        try await hub.prepare()
        let ingest = try #require(hub.ingest)
        #expect(ingest.statusFilters == ["espresense/rooms/+/status"])
        let running = Task { await hub.run() }
        try await eventually(timeout: .seconds(20), "the retained status read") { ingest.statistics.statuses == 1 }
        #expect(hub.service.manager.offlineScanners.isEmpty)

        let node = MQTTClient(configuration: try MQTTClientConfiguration(url: broker.url), onMessage: { _ in })
        let nodeTask = Task { await node.run() }
        try await node.waitUntilConnected()
        func sighting(_ beacon: BeaconIdentity, room: String) -> MQTTMessage {
            let id = ESPresenseMessage.id(for: beacon)
            return MQTTMessage(topic: "espresense/devices/\(id)/\(room)", payload: Array(#"{"id":"\#(id)","rssi":-60,"rssi@1m":-59}"#.utf8), qos: .atLeastOnce)
        }
        // 20 s of sightings, one a second each (the clock moved between them once each is in).
        for second in 0..<20 {
            try await node.publish(sighting(keys, room: "kitchen"))
            try await node.publish(sighting(wallet, room: "hall"))
            try await eventually(timeout: .seconds(20), "sightings of second \(second)") { ingest.statistics.sightings == 2 * (second + 1) }
            ingest.flush()
            clock.advance(by: 1)
        }
        func exits(_ region: String) throws -> [Double] {
            try store.events(region: region, type: "didExitRegion").map(\.time)
        }
        let keysRegion = Region.beacon(try BeaconRegion(identifier: "keys", uuid: uuid, major: 1, minor: 1))
        #expect(hub.service.manager.state(for: keysRegion) == .inside)
        // The kitchen node goes away (its power cut): the broker publishes its will.
        let offlineAt = clock.now.seconds
        nodeConnection.kill()
        try await eventually(timeout: .seconds(20), "the will read") { hub.service.manager.offlineScanners == ["kitchen"] }
        #expect(try await PresenceHubStatusTests.retained(status, on: broker) == ["offline"])
        for _ in 0..<10 { clock.advance(by: 10) }
        try await eventually(timeout: .seconds(20), "the wallet's exit logged") { (try? exits("wallet").count) == 1 }
        let walletExit = try #require(try exits("wallet").first)
        #expect(walletExit - offlineAt < 20, "the hall said nothing: its beacon left as usual (\(walletExit - offlineAt) s)")
        #expect(try exits("keys").isEmpty, "the kitchen's beacon left while its node was away")
        #expect(hub.service.manager.nearestScanner(for: keys) == "kitchen")
        #expect(hub.service.manager.state(for: keysRegion) == .inside)
        // Back: `online`, retained; not heard again, the keys leave once, as long after the
        // return as the wallet did after its last sighting.
        try await node.publish(MQTTMessage(topic: status, payload: Array("online".utf8), qos: .atLeastOnce, retain: true))
        try await eventually(timeout: .seconds(20), "online read") { hub.service.manager.offlineScanners.isEmpty }
        let onlineAt = clock.now.seconds
        for _ in 0..<20 { clock.advance(by: 10) }
        try await eventually(timeout: .seconds(20), "the keys' exit logged") { (try? exits("keys").count) == 1 }
        let keysExit = try #require(try exits("keys").first)
        #expect(keysExit > onlineAt && keysExit - onlineAt < 20, "\(keysExit - onlineAt) s after the return")
        #expect(ingest.statistics.statuses == 3 && ingest.statistics.rejectedTotal == 0, "\(ingest.statistics)")

        await hub.shutdown(drainTimeout: .seconds(5))
        running.cancel()
        await node.shutdown()
        _ = await (running.value, nodeTask.value)
        try await hub.service.stop(reason: "test")
    }
}
