import Foundation
import RegionKit
import RegionKitStore
import RegionKitTestSupport
import Testing
@testable import RegionKitService

/// Home Assistant's birth message (`online` on `homeassistant/status`) set to retain: the broker
/// hands its copy to every new subscription, and the hub took it for Home Assistant restarting,
/// so every connection sent discovery twice (its own round, then the one the copy asked for).
@Suite("Presence hub: a retained Home Assistant birth message", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct PresenceHubRetainedBirthTests {
    @Test("A retained online is not a restart: the connection's discovery round is the only one; a live online still asks for one",
          .timeLimit(.minutes(2)))
    func retainedOnlineIsNotARestart() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        try broker.publish(topic: "homeassistant/status", message: "online", qos: 1, retain: true)
        let store = try RegionStore(path: temporaryStorePath())
        let site = "birth-test"
        // A beacon announced by an earlier run: a round has its configurations to send.
        let beacon = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 1)
        try store.addAnnouncedBeacons([beacon.description], output: "mqtt:\(site)")
        let hub = try PresenceHubStatusTests.hub(site: site, broker: broker, store: store, homeAssistant: true)
        try await hub.prepare()
        let running = Task { await hub.run() }
        try await eventually(timeout: .seconds(20), "the connection's discovery round") { hub.counts.discoveryRounds >= 1 }
        // The round the retained copy asked for came 0.1–1 s after it arrived.
        try await Task.sleep(for: .seconds(2.5))
        #expect(hub.counts.discoveryRounds == 1, "\(hub.counts.discoveryRounds) rounds for one connection")
        // Home Assistant restarts (its birth message live, not retained): a round.
        try broker.publish(topic: "homeassistant/status", message: "online")
        try await eventually(timeout: .seconds(20), "the round a live online asks for") { hub.counts.discoveryRounds == 2 }
        await hub.shutdown(drainTimeout: .seconds(2))
        running.cancel()
        _ = await running.value
    }
}
