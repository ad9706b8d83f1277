import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import RegionKitStore
import RegionKitTestSupport

/// `regionkit run` as a presence hub on a real Mosquitto broker, checked with Mosquitto's own
/// clients: sightings in with `mosquitto_pub`, what we publish read with `mosquitto_sub`.
@Suite("regionkit run on MQTT: ESPresense in, events, states, rooms and Home Assistant out", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct MQTTDaemonTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let espresenseID = "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2"
    static let beaconKey = "e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2"

    static func sighting(room: String, rssi: Double = -63.5) -> (topic: String, payload: String) {
        ("espresense/devices/\(espresenseID)/\(room)", #"{"id":"\#(espresenseID)","rssi":\#(rssi),"rssi@1m":-59,"int":100}"#)
    }

    static let lobby = "  - {identifier: lobby, uuid: \(uuid)}"
    static let lobbyBeacon = "  - {identifier: lobby, uuid: \(uuid), major: 1, minor: 2}"
    /// The simulated museum's regions (its beacons' UUID).
    static let museum = """
      - {identifier: museum, uuid: 5A4BCFCE-174E-4BAC-A814-092E77F6B7E5}
      - {identifier: exhibit-2, uuid: 5A4BCFCE-174E-4BAC-A814-092E77F6B7E5, major: 2}
    """

    /// The flaky-radio scenario at 10×: the adapter goes off and on every 6 s, a steady flow of
    /// monitoringDidFail, didStartMonitoring and didDetermineState.
    static let flakyRoom = "  - {identifier: room, uuid: 8D4DB809-032F-4771-96F3-99BD5C25F924}"

    static func config(broker: MosquittoBroker, regions: String = lobby, sources: String, extra: String = "") -> String {
        """
        profile: responsive
        regions:
        \(regions)
        sources:
        \(sources)
        mqtt: {url: "\(broker.url)", site: test, keepAlive: 2}
        \(extra)
        """
    }

    static func events(_ messages: [MosquittoBroker.Subscriber.Message]) -> [[String: Any]] {
        messages.filter { $0.topic == "regionkit/test/events" }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.payload.utf8)) as? [String: Any]
        }
    }

    @Test("ESPresense sightings → enter with the room as scanner, retained state and room, HA entities, exit after silence, offline on stop")
    func espresenseRoundTrip() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let all = try await broker.subscribe(topic: "#", count: 100_000, timeout: 90)
        defer { all.terminate() }
        let config = Self.config(broker: broker, sources: "  - mqtt: {format: espresense}", extra: "homeAssistant: {discovery: true}")
        let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: DaemonTests.temporaryStore())
        try await eventually(timeout: .seconds(20), "the daemon is online") {
            all.messages.contains { $0.topic == "regionkit/test/status" && $0.payload == "online" }
        }
        // 10 Hz for 12 s from the kitchen node (past the detector's cautious first seconds), then silence.
        let sighting = Self.sighting(room: "kitchen")
        for _ in 0..<120 {
            try broker.publish(topic: sighting.topic, message: sighting.payload)
            try await Task.sleep(for: .milliseconds(100))
        }
        try await eventually(timeout: .seconds(40), "didExitRegion on the events topic") {
            Self.events(all.messages).contains { $0["type"] as? String == "didExitRegion" }
        }
        let events = Self.events(all.messages)
        let inside = try #require(events.first { $0["type"] as? String == "didDetermineState" && $0["state"] as? String == "inside" })
        #expect(inside["region"] as? String == "lobby")
        #expect((inside["evidence"] as? [String: Any])?["scanner"] as? String == "kitchen")
        #expect(inside["id"] is NSNumber, "each event carries its log id")
        // Ids strictly increase on the topic (published in log order, none twice).
        let ids = events.compactMap { ($0["id"] as? NSNumber)?.int64Value }
        #expect(ids == ids.sorted() && Set(ids).count == ids.count, "\(ids)")

        // The state goes out in the same group as the exit event; the subscriber may read it a moment later.
        try? await eventually(timeout: .seconds(5), "the retained state follows the exit") {
            all.messages.last { $0.topic == "regionkit/test/regions/lobby/state" }?.payload == "outside"
        }
        let messages = all.messages
        let states = messages.filter { $0.topic == "regionkit/test/regions/lobby/state" }.map(\.payload)
        // The state at the connection first (unknown: nothing heard yet), then the changes (an
        // `outside` before the first sighting when the machine is slow to start publishing them).
        #expect(states.contains("inside") && states.last == "outside" && Set(states).isSubset(of: ["unknown", "outside", "inside"]), "\(states)")
        #expect(messages.contains { $0.topic == "regionkit/test/beacons/\(Self.beaconKey)/room" && $0.payload == "kitchen" })
        // Heard by no scanner any more, the beacon leaves the kitchen: its room (and so its Home
        // Assistant device tracker) goes to not_home, retained, instead of staying in the kitchen.
        try await eventually(timeout: .seconds(10), "the room goes to not_home") {
            all.messages.last { $0.topic == "regionkit/test/beacons/\(Self.beaconKey)/room" }?.payload == "not_home"
        }
        #expect(messages.contains { $0.topic == "homeassistant/binary_sensor/regionkit_test/lobby/config" && $0.payload.contains(#""device_class":"presence""#) })
        #expect(messages.contains { $0.topic == "homeassistant/device_tracker/regionkit_test/ibeacon_\(Self.beaconKey)/config" })
        #expect(messages.contains { $0.topic == "regionkit/test/beacons/\(Self.beaconKey)/distance" })

        // Home Assistant restarts: discovery is sent again.
        let before = all.messages.filter { $0.topic.hasSuffix("/config") }.count
        try broker.publish(topic: "homeassistant/status", message: "online")
        try await eventually(timeout: .seconds(10), "discovery re-sent") { all.messages.filter { $0.topic.hasSuffix("/config") }.count >= before + 3 }
        // A flood of "online" (200 in a burst) is answered by one or two rounds of the 3 configurations, not 200.
        try await Task.sleep(for: .seconds(1.5))
        let settled = all.messages.filter { $0.topic.hasSuffix("/config") }.count
        try broker.publishLines(topic: "homeassistant/status", lines: Array(repeating: Array("online".utf8), count: 200))
        try await eventually(timeout: .seconds(10), "discovery re-sent after the flood") { all.messages.filter { $0.topic.hasSuffix("/config") }.count >= settled + 3 }
        try await Task.sleep(for: .seconds(2))
        let flood = all.messages.filter { $0.topic.hasSuffix("/config") }.count - settled
        #expect(flood >= 3 && flood <= 9, "\(flood) configurations for 200 onlines")
        // A steady flood (an online every 250 ms for 6 s): rounds at least 5 s apart, not one per second.
        let steadyStart = all.messages.filter { $0.topic.hasSuffix("/config") }.count
        for _ in 0..<24 {
            try broker.publish(topic: "homeassistant/status", message: "online")
            try await Task.sleep(for: .milliseconds(250))
        }
        try await Task.sleep(for: .seconds(1.5))
        let steady = all.messages.filter { $0.topic.hasSuffix("/config") }.count - steadyStart
        #expect(steady >= 3 && steady <= 6, "\(steady) configurations for an online every 250 ms during 6 s")

        #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
        try await eventually(timeout: .seconds(5), "offline") { all.messages.last { $0.topic == "regionkit/test/status" }?.payload == "offline" }
        #expect(Self.events(all.messages).last?["type"] as? String == "processStopped", "events up to the stop are published before offline")
        // The retained state survives for late subscribers.
        let late = try await broker.subscribe(topic: "regionkit/test/regions/+/state", count: 1, timeout: 5)
        #expect(await late.waitForMessages(1, timeout: 5).first?.payload == "outside")
    }

    @Test("A phone an ESPresense node resolved by its IRK: its device region enters and exits, it gets a room and a Home Assistant tracker named by its id; a phone no region names gets nothing")
    func espresenseDeviceByIRK() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let all = try await broker.subscribe(topic: "#", count: 100_000, timeout: 90)
        defer { all.terminate() }
        let irk = "irk:0123456789abcdef0123456789abcdef"
        let key = "device-0123456789abcdef0123456789abcdefffffffff"   // its 16 key bytes and the IRK marker
        let stranger = "device-" + "apple:1005:9-26".utf8.map { String(format: "%02x", $0) }.joined()
        let config = Self.config(broker: broker, regions: "  - {identifier: alice, device: \"IRK:0123456789ABCDEF0123456789ABCDEF\"}",
                                 sources: "  - mqtt: {format: espresense}", extra: "homeAssistant: {discovery: true}")
        let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: DaemonTests.temporaryStore())
        try await eventually(timeout: .seconds(20), "the daemon is online") {
            all.messages.contains { $0.topic == "regionkit/test/status" && $0.payload == "online" }
        }
        // 5 Hz for 6 s from the kitchen node, the phone and a stranger's phone, then silence.
        for _ in 0..<30 {
            try broker.publish(topic: "espresense/devices/\(irk)/kitchen", message: #"{"id":"\#(irk)","name":"Alice's iPhone","rssi":-61.2,"rssi@1m":-65,"distance":1.1}"#)
            try broker.publish(topic: "espresense/devices/apple:1005:9-26/kitchen", message: #"{"id":"apple:1005:9-26","rssi":-70,"rssi@1m":-65}"#)
            try await Task.sleep(for: .milliseconds(200))
        }
        try await eventually(timeout: .seconds(40), "didExitRegion on the events topic") {
            Self.events(all.messages).contains { $0["type"] as? String == "didExitRegion" }
        }
        let events = Self.events(all.messages)
        let inside = try #require(events.first { $0["type"] as? String == "didDetermineState" && $0["state"] as? String == "inside" })
        #expect(inside["region"] as? String == "alice")
        #expect((inside["evidence"] as? [String: Any])?["scanner"] as? String == "kitchen")
        try await eventually(timeout: .seconds(10), "the phone's room goes to not_home") {
            all.messages.last { $0.topic == "regionkit/test/beacons/\(key)/room" }?.payload == "not_home"
        }
        let messages = all.messages
        let exitEvent = Self.events(messages).first { $0["type"] as? String == "didExitRegion" }
        let roomEvent = Self.events(messages).last { $0["type"] as? String == "didChangeNearestScanner" }
        // Home Assistant sees the tracker leave with the presence sensor, not before it.
        #expect(exitEvent?["t"] as? Double != nil && exitEvent?["t"] as? Double == roomEvent?["t"] as? Double,
                "exit \(exitEvent ?? [:]), room \(roomEvent ?? [:])")
        #expect(messages.contains { $0.topic == "regionkit/test/beacons/\(key)/room" && $0.payload == "kitchen" })
        let tracker = try #require(messages.first { $0.topic == "homeassistant/device_tracker/regionkit_test/ibeacon_\(key)/config" && !$0.payload.isEmpty })
        #expect(tracker.payload.contains(#""name":"\#(irk)""#), "\(tracker.payload)")
        let attributes = try #require(messages.last { $0.topic == "regionkit/test/beacons/\(key)/attributes" && $0.payload.contains("rssi") })
        #expect(attributes.payload.contains(#""device":"\#(irk)""#) && attributes.payload.contains(#""format":"device""#), "\(attributes.payload)")
        #expect(!messages.contains { $0.topic.contains(stranger) }, "a device no region names: no room, no entity")
        #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
    }

    @Test("A phone's device region deleted through the API while the phone is still heard: its room goes to not_home at once, with the reason, and stays so (it stayed in the kitchen until an absence timer said it was heard by no scanner)")
    func deletedDeviceRegionLeavesTheRoom() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let all = try await broker.subscribe(topic: "regionkit/test/#", count: 100_000, timeout: 120)
        defer { all.terminate() }
        let irk = "irk:0123456789abcdef0123456789abcdef"
        let roomTopic = "regionkit/test/beacons/device-0123456789abcdef0123456789abcdefffffffff/room"
        let httpPort = try Loopback.freePort()
        let token = UUID().uuidString
        let tokenFile = TestScratch.directory.appendingPathComponent("rk-token-\(token)")
        try Data(token.utf8).write(to: tokenFile)
        defer { try? FileManager.default.removeItem(at: tokenFile) }
        let config = Self.config(broker: broker, regions: "  - {identifier: alice, device: \"\(irk)\"}", sources: "  - mqtt: {format: espresense}",
                                 extra: "homeAssistant: {discovery: true}\nhttp: {listen: \"127.0.0.1:\(httpPort)\", tokenFile: \"\(tokenFile.path)\"}")
        let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: DaemonTests.temporaryStore())
        try await eventually(timeout: .seconds(20), "the daemon is online") {
            all.messages.contains { $0.topic == "regionkit/test/status" && $0.payload == "online" }
        }
        // The kitchen node hears the phone at 5 Hz for the whole test.
        let publishing = Task {
            while !Task.isCancelled {
                try? broker.publish(topic: "espresense/devices/\(irk)/kitchen", message: #"{"id":"\#(irk)","rssi":-61.2,"rssi@1m":-65}"#)
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        defer { publishing.cancel() }
        try await eventually(timeout: .seconds(20), "the phone placed in the kitchen") {
            all.messages.last { $0.topic == roomTopic }?.payload == "kitchen"
        }
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(httpPort)/v1/regions/alice")!)
        request.httpMethod = "DELETE"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 204, "\(response)")
        let deleted = ContinuousClock.now
        try await eventually(timeout: .seconds(10), "the room goes to not_home") {
            all.messages.last { $0.topic == roomTopic }?.payload == "not_home"
        }
        #expect(ContinuousClock.now - deleted < .seconds(5), "at once, not after an absence timer")
        let departure = try #require(Self.events(all.messages).last { $0["type"] as? String == "didChangeNearestScanner" })
        #expect((departure["evidence"] as? [String: Any])?["reason"] as? String == "no region names it any more", "\(departure)")
        // Still heard, named by no region: it stays out of every room.
        let count = all.messages.count
        try await Task.sleep(for: .seconds(3))
        let after = all.messages.dropFirst(count).filter { $0.topic == roomTopic }.map(\.payload)
        #expect(after.allSatisfy { $0 == "not_home" }, "\(after)")
        publishing.cancel()
        #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
    }

    @Test("10,000 malformed payloads among good sightings: no crash, each kind logged once with its topic, the good ones still enter")
    func hostilePayloads() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let regions = Self.lobbyBeacon + "\n  - {identifier: marker, uuid: \(Self.uuid), major: 9, minor: 9}"
        let httpPort = try Loopback.freePort()
        let config = Self.config(broker: broker, regions: regions, sources: "  - mqtt: {format: espresense}\n  - mqtt: {format: theengs}",
                                 extra: "http: {listen: \"127.0.0.1:\(httpPort)\", public: true}")
        // A retained message over the client's 2 MiB packet limit, delivered at every subscription
        // (it used to close the connection, again at each reconnection): skipped, counted as ignored.
        try broker.publish(topic: "espresense/devices/y/attic", payload: Array(repeating: UInt8(ascii: "c"), count: 3 << 20), retain: true)
        let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: DaemonTests.temporaryStore())
        let events = try await broker.subscribe(topic: "regionkit/test/events", count: 100_000, timeout: 120)
        defer { events.terminate() }
        // The region starts once the broker connection makes the beacon source available.
        try await eventually(timeout: .seconds(20), "lobby and marker monitored") {
            Set(Self.events(events.messages).filter { $0["type"] as? String == "didStartMonitoring" }.compactMap { $0["region"] as? String }) == ["lobby", "marker"]
        }

        let good = Self.sighting(room: "hall").payload
        let shapes: [String] = [
            #"{"id":"\#(Self.espresenseID)","rssi":"loud"}"#,                   // wrong type
            #"{"id":"\#(Self.espresenseID)","rssi":-60"#,                       // truncated
            #"{"id":"\#(Self.espresenseID)","rssi":1e308}"#,                    // huge number
            #"{"id":"iBeacon:zz-1-2","rssi":-60}"#,                              // malformed id
            #"{"rssi":-60}"#,                                                    // no id
            #"[1,2,3]"#,                                                         // not an object
            #"{"id":"an id of more than twenty bytes","rssi":-60}"#,             // no beacon, no device id: ignored, not an error
            "{\"id\":\"\u{FF}\"}",                                               // replaced below by invalid UTF-8
        ]
        var lines: [[UInt8]] = []
        for index in 0..<10_000 {
            var bytes = Array(shapes[index % shapes.count].utf8)
            if index % shapes.count == shapes.count - 1 { bytes = [0x7B, 0x22, 0xC3, 0x28, 0xFF, 0xFE, 0x7D] }   // invalid UTF-8
            lines.append(bytes)
            if index % 100 == 0 { lines.append(Array(good.utf8)) }
        }
        try broker.publishLines(topic: "espresense/devices/x/hall", lines: lines)
        // One message of 1 MB on each source's topics.
        try broker.publish(topic: "espresense/devices/x/hall", payload: Array(repeating: UInt8(ascii: "a"), count: 1 << 20))
        try broker.publish(topic: "home/gw/BTtoMQTT/AABBCC", payload: Array(repeating: UInt8(ascii: "{"), count: 1 << 20))
        // Over the MQTT client's 2 MiB packet limit: skipped as it arrives, counted, and the connection stays up.
        try broker.publish(topic: "espresense/devices/x/hall", payload: Array(repeating: UInt8(ascii: "b"), count: 3 << 20), qos: 1)
        try await eventually(timeout: .seconds(30), "the good sightings entered lobby; events: \(Self.events(events.messages).map { "\($0["type"] ?? "")/\($0["region"] ?? "")" }); stderr: \(daemon.stderr.suffix(1500))") {
            Self.events(events.messages).contains { $0["type"] as? String == "didDetermineState" && $0["region"] as? String == "lobby" && $0["state"] as? String == "inside" }
        }
        // A last good sighting, of another beacon, through the Theengs source: once its region is
        // entered, everything published before it has been handled.
        try broker.publish(topic: "home/gw/BTtoMQTT/C00000000009",
                           message: #"{"id":"C0:00:00:00:00:09","rssi":-60,"manufacturerdata":"4c000215e2c56db5dffb48d2b060d0f5a71096e000090009c5"}"#)
        try await eventually(timeout: .seconds(30), "the marker beacon entered its region") {
            Self.events(events.messages).contains { $0["type"] as? String == "didDetermineState" && $0["region"] as? String == "marker" && $0["state"] as? String == "inside" }
        }
        #expect(daemon.process.isRunning, "stderr: \(daemon.stderr)")
        // The HTTP API reports the MQTT sources with the same counts.
        let (body, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(httpPort)/v1/sources")!)
        let sources = try #require((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["sources"] as? [[String: Any]])
        let mqtt = try #require(sources.first { $0["kind"] as? String == "mqtt" }, "\(String(decoding: body, as: UTF8.self))")
        #expect(mqtt["state"] as? String == "up")
        #expect(mqtt["sightings"] as? Int == 101)
        let decodeErrors = try #require(mqtt["decodeErrors"] as? [String: Int])
        #expect(decodeErrors.values.reduce(0, +) == 8753 && decodeErrors["tooLarge"] == 3, "\(decodeErrors)")
        // And the hub as an output on /metrics: connected, the events it published (the marker's
        // entry among them, on the events topic above), how far behind the log it is.
        let (metricsBody, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(httpPort)/metrics")!)
        let metrics = String(decoding: metricsBody, as: UTF8.self)
        let series = { (name: String) -> Double? in
            metrics.split(separator: "\n").first { $0.hasPrefix(name + #"{output="mqtt:test",kind="mqtt"} "#) }.flatMap { Double($0.split(separator: " ").last!) }
        }
        #expect(series("regionkit_output_connected") == 1, "\(metrics)")
        #expect((series("regionkit_output_events_published_total") ?? 0) >= 3, "\(metrics)")
        #expect(series("regionkit_output_events_behind") != nil, "\(metrics)")
        #expect(series("regionkit_homeassistant_beacons_announced") == nil, "no discovery here")
        #expect(!daemon.stderr.contains("MQTT disconnected"), "\(daemon.stderr.suffix(3000))")
        #expect(daemon.stderr.contains("skipped a message larger than the maximum incoming packet size"))
        #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
        let rejections = daemon.stderr.split(separator: "\n").filter { $0.contains("rejected an MQTT sighting message") }
        let kinds = rejections.compactMap { line in line.split(separator: " ").first { $0.hasPrefix("kind=") } }
        #expect(Set(kinds) == ["kind=wrongType", "kind=invalidJSON", "kind=outOfRange", "kind=malformedField", "kind=missingField", "kind=invalidUTF8", "kind=tooLarge"],
                "\(rejections.joined(separator: "\n"))")
        let distinctKinds: Int = Set(kinds).count
        #expect(kinds.count == distinctKinds + 1, "once per kind and source (tooLarge once on each): \(kinds)")
        #expect(rejections.allSatisfy { $0.contains("topic=") })
        // The summary at the stop counts every message.
        let summary = try #require(daemon.stderr.split(separator: "\n").first { $0.contains("MQTT sources") }, "\(daemon.stderr)")
        #expect(summary.contains("rejected=8753"), "7 of every 8 malformed shapes + 2 oversized + 1 over the packet limit: \(summary)")
        #expect(summary.contains("sightings=101"), "100 good ESPresense sightings + the marker: \(summary)")
        #expect(summary.contains("ignored=1251"), "ids no beacon or device can have (1,250) and the retained message over the packet limit are ignored, not rejected: \(summary)")
    }

    /// A persistent observer: the broker keeps its session (and queues its QoS 1 messages) across
    /// a broker restart and while it is away; ids of the events it received, in order.
    static func observedIDs(_ subscribers: [MosquittoBroker.Subscriber]) -> [Int64] {
        subscribers.flatMap { events($0.messages) }.compactMap { ($0["id"] as? NSNumber)?.int64Value }
    }

    @Test("A broker restarted without its retained messages (no persistence) gets the beacon's room and distance again once the daemon reconnects")
    func roomsAfterBrokerRestart() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let config = Self.config(broker: broker, regions: Self.lobbyBeacon, sources: "  - mqtt: {format: espresense}", extra: "homeAssistant: {discovery: true}")
        let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: DaemonTests.temporaryStore())
        let room = "regionkit/test/beacons/\(Self.beaconKey)/room", distance = "regionkit/test/beacons/\(Self.beaconKey)/distance"
        let hall = Self.sighting(room: "hall")
        // Heard in the hall at 5 Hz throughout (the restart included).
        let heard = Task {
            while !Task.isCancelled {
                try? broker.publish(topic: hall.topic, message: hall.payload)
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        defer { heard.cancel() }
        let first = try await broker.subscribe(topic: "regionkit/test/beacons/#", count: 100_000, timeout: 60)
        try await eventually(timeout: .seconds(30), "the room and distance are published") {
            first.messages.contains { $0.topic == room && $0.payload == "hall" } && first.messages.contains { $0.topic == distance }
        }
        first.terminate()
        broker.kill()
        try broker.restart()    // no persistence: every retained message is gone
        let status = try await broker.subscribe(topic: "regionkit/test/status", count: 10, timeout: 60)
        defer { status.terminate() }
        try await eventually(timeout: .seconds(30), "the daemon is back online") { status.messages.contains { $0.payload == "online" } }
        // A new subscriber gets the retained room (and distance) without the beacon changing rooms.
        let after = try await broker.subscribe(topic: "regionkit/test/beacons/#", count: 100_000, timeout: 60)
        defer { after.terminate() }
        try await eventually(timeout: .seconds(20), "the room and distance retained again: \(after.messages.map(\.topic))") {
            after.messages.contains { $0.topic == room && $0.payload == "hall" } && after.messages.contains { $0.topic == distance }
        }
        #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
    }

    @Test("Broker killed (SIGKILL) and restarted mid-run: the daemon reconnects and every event of the outage arrives once, in order")
    func brokerOutage() async throws {
        let broker = try MosquittoBroker()
        try broker.start(.init(persistence: true))
        defer { broker.stop() }
        let observer = try await broker.subscribe(topic: "regionkit/test/events", count: 1_000_000, timeout: 120, clientID: "rk-observer", persistentSession: true)
        // A simulation with a steady flow of events as the source; MQTT only as output.
        let config = Self.config(broker: broker, regions: Self.flakyRoom, sources: "  - simulator: {scenario: flaky-radio, speed: 10, repeat: true}")
        let store = DaemonTests.temporaryStore()
        let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: store)
        try await eventually(timeout: .seconds(30), "events flowing") { Self.events(observer.messages).count >= 5 }
        try await Task.sleep(for: .milliseconds(1500))             // the broker autosaves the observer's session
        let killedAt = Date().timeIntervalSince1970
        broker.kill()
        observer.terminate()
        try await Task.sleep(for: .seconds(6))                      // events keep being logged, not published
        try broker.restart()
        let restartedAt = Date().timeIntervalSince1970
        let after = try await broker.subscribe(topic: "regionkit/test/events", count: 1_000_000, timeout: 120, clientID: "rk-observer", persistentSession: true)
        defer { after.terminate() }
        let logged = try RegionStore(path: store)
        let outage = try logged.events().filter { $0.time > killedAt + 0.2 && $0.time < restartedAt }.map(\.id)
        #expect(outage.count >= 3, "the museum logs events during a 6 s outage")
        try await eventually(timeout: .seconds(30), "the outage's events after the restart") {
            Set(Self.observedIDs([after])).isSuperset(of: outage)
        }
        #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
        try await eventually(timeout: .seconds(10), "processStopped") { Self.events(after.messages).last?["type"] as? String == "processStopped" }
        let seen = Self.observedIDs([observer, after])
        for id in outage { #expect(seen.filter { $0 == id }.count == 1, "outage event \(id) delivered exactly once") }
        let afterIDs = Self.observedIDs([after])
        #expect(afterIDs == afterIDs.sorted(), "in order after the restart")
        // Everything logged after the kill reached the observer; before it, at most the one event in flight may repeat.
        let stored = try logged.events()
        for event in stored where event.time > killedAt + 0.2 { #expect(seen.contains(event.id), "event \(event.id) (\(event.type)) missing") }
        #expect(seen.count - Set(seen).count <= 1, "duplicates beyond the in-flight one: \(seen.count - Set(seen).count)")
    }

    @Test("The daemon killed (-9) mid-run and restarted: no event lost; repeats only of the event in flight, each with its id")
    func daemonCrash() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let observer = try await broker.subscribe(topic: "regionkit/test/events", count: 1_000_000, timeout: 120)
        defer { observer.terminate() }
        let config = try DaemonTests.writeConfig(Self.config(broker: broker, regions: Self.flakyRoom, sources: "  - simulator: {scenario: flaky-radio, speed: 10, repeat: true}"))
        let store = DaemonTests.temporaryStore()
        var kills = 0
        for round in 0..<3 {
            let daemon = try Daemon(config: config, store: store)
            try await eventually(timeout: .seconds(30), "round \(round) publishing") { daemon.acknowledged.count >= 4 }
            try await Task.sleep(for: .milliseconds(Int.random(in: 200...1200)))
            if round < 2 {
                _ = await daemon.signal(SIGKILL)
                kills += 1
            } else {
                #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
            }
        }
        try await eventually(timeout: .seconds(10), "processStopped") { Self.events(observer.messages).last?["type"] as? String == "processStopped" }
        let seen = Self.observedIDs([observer])
        let stored = try RegionStore(path: store).events().map(\.id)
        // The first run's cursor starts at the (empty) log's end: every stored event is expected.
        #expect(Set(seen) == Set(stored), "missing: \(Set(stored).subtracting(seen).sorted())")
        #expect(seen.count - Set(seen).count <= kills, "QoS 1 repeats at most the one event in flight per crash")
    }
}
