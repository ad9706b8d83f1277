import Foundation
import RegionKit
import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
import Testing
@testable import RegionKitService

/// A logged event one of whose messages MQTT cannot carry must not hold back the events after it.
@Suite("Presence hub: an unpublishable message is left out, later events go on", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct PresenceHubUnpublishableTests {
    /// A region identifier of 70,000 bytes (accepted: identifiers have no length limit) makes a
    /// retained state topic longer than MQTT's 65,535 bytes. The publisher used to retry that
    /// event every second forever, so no later event was ever published.
    @Test("A region state topic over 65,535 bytes: that message is left out, the event and every later one published",
          .timeLimit(.minutes(2)))
    func longTopicIsLeftOut() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let store = try RegionStore(path: temporaryStorePath())
        _ = try store.outputCursor("mqtt:poison-test", createAtEnd: true)
        let long = String(repeating: "x", count: 70_000)
        var last: Int64 = 0
        for (index, region) in [long, "lobby"].enumerated() {
            let line = #"{"t":\#(index),"type":"didDetermineState","region":"\#(region)","state":"inside"}"#
            last = try store.append(time: Double(index), type: "didDetermineState", region: region, state: "inside", reason: nil, json: line)
        }
        let hub = try PresenceHubStatusTests.hub(site: "poison-test", broker: broker, store: store)
        let running = Task { await hub.run() }
        let reached: Void? = try? await eventually(timeout: .seconds(20), "the cursor reaches the last event") {
            (try? store.outputCursor("mqtt:poison-test")) == last
        }
        await hub.shutdown(drainTimeout: .seconds(2))
        running.cancel()
        await running.value
        let cursor = try store.outputCursor("mqtt:poison-test")
        #expect(reached != nil, "cursor \(cursor) of \(last): the first event held back the rest")
        #expect(hub.counts.eventsPublished == 2 && hub.counts.eventsUnpublishable == 1, "\(hub.counts)")
        #expect(try await PresenceHubStatusTests.retained("regionkit/poison-test/regions/lobby/state", on: broker) == ["inside"])
    }
}
