import Foundation
import RegionKitTestSupport
import Testing
import RegionKit
import RegionKitCore
import RegionKitStore
import RegionKitMQTT
import Logging
@testable import RegionKitService

@Suite("Presence hub outputs: events, retained states and rooms, Home Assistant discovery")
struct PresenceOutputsTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let beacon = BeaconIdentity(uuid: uuid, major: 1, minor: 2)
    static let lobby = Region.beacon(try! BeaconRegion(identifier: "lobby/main+1", uuid: uuid))
    static let topics = PresenceTopics(site: "home")

    static func event(_ id: Int64, _ type: String, region: String? = nil, state: String? = nil, json: String) -> StoredEvent {
        StoredEvent(id: id, time: 1_763_877_600, type: type, region: region, state: state, reason: nil, json: json)
    }

    static func object(_ message: PresenceMessage) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
    }

    @Test("Topic levels cannot escape their level, and map identifiers one-to-one: a clean identifier as it is, any other sanitized with its hash")
    func topicLevelsCannotEscapeTheirLevel() {
        #expect(PresenceTopics.level("lobby") == "lobby" && PresenceTopics.level("Wohnzimmer_EG-2") == "Wohnzimmer_EG-2")
        let escaped = PresenceTopics.level("lobby/main+1")
        #expect(escaped.hasPrefix("lobby_main_1_") && escaped.count == "lobby_main_1_".count + 8, "\(escaped)")
        #expect(escaped.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }, "\(escaped)")
        #expect(PresenceTopics.level("#").hasPrefix("__") && PresenceTopics.level("").hasPrefix("__"))
        #expect(PresenceTopics.level("#") != PresenceTopics.level(""))
        // The collisions the sanitized form made (both audits of session 45).
        #expect(PresenceTopics.level("Room 1") != PresenceTopics.level("Room_1") && PresenceTopics.level("Room_1") == "Room_1")
        #expect(PresenceTopics.level("кухня") != PresenceTopics.level("спаль"), "\(PresenceTopics.level("кухня"))")
        #expect(PresenceTopics.level("Wohnzimmer EG") != PresenceTopics.level("Wohnzimmer_EG"))
        #expect(PresenceTopics.level("a b") == PresenceTopics.level("a b"), "deterministic")
        #expect(Self.topics.regionState("a/b") == "regionkit/home/regions/\(PresenceTopics.level("a/b"))/state")
        #expect(Self.topics.beaconRoom(Self.beacon) == "regionkit/home/beacons/e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2/room")
        // The site and scanners keep the sanitized form (one site per daemon; existing topics unchanged).
        #expect(PresenceTopics(site: "my home").base == "regionkit/my_home")
        // The hub's own output, which a broad source filter brings back, and nothing else.
        let own = [Self.topics.events, Self.topics.status, Self.topics.regionState("a/b"), Self.topics.beaconRoom(Self.beacon),
                   Self.topics.beaconDistance(Self.beacon), Self.topics.beaconTracker(Self.beacon), Self.topics.beaconAttributes(Self.beacon),
                   Self.topics.mqttRoom + "/" + PresenceTopics.roomLevel("Küche")]
        #expect(own.allSatisfy(Self.topics.isOwnOutput), "\(own.filter { !Self.topics.isOwnOutput($0) })")
        for other in ["regionkit/home", "regionkit/homes/events", "regionkit/other/events", "regionkit/home/events/x", "regionkit/home/scanners/kitchen",
                      "regionkit/home/regions/a/b/state", "regionkit/home/beacons/x/battery", "regionkit/home/scan/marker", "regionkit/scanners/kitchen",
                      "espresense/devices/x/hall", "regionkit/home/mqtt_room/a/b"] {
            #expect(!Self.topics.isOwnOutput(other), "\(other)")
        }
        // Rooms in mqtt_room topics keep their name (Home Assistant shows the level as the room).
        #expect(PresenceTopics.roomLevel("Küche") == "Küche" && PresenceTopics.roomLevel("キッチン") == "キッチン" && PresenceTopics.roomLevel("hall") == "hall")
        #expect(PresenceTopics.roomLevel("a/b+c#d") == "a_b_c_d" && PresenceTopics.roomLevel("Living room.2") == "Living_room_2")
        #expect(PresenceTopics.roomLevel("a\u{0}b\nc") == "a_b_c" && PresenceTopics.roomLevel("") == "_")
        // Mosquitto disconnects a client whose topic holds a noncharacter (Swift's literals refuse them).
        #expect(PresenceTopics.roomLevel("bad" + String(Unicode.Scalar(0xFDD0)!) + "room" + String(Unicode.Scalar(0x10FFFF)!)) == "bad_room_")
    }

    @Test("The topics regions used under the earlier, sanitized topic level are cleared (state, and the Home Assistant entity), unless another region uses that level now")
    func legacyTopicsRemoved() throws {
        let outputs = PresenceOutputs(topics: Self.topics, discovery: HomeAssistantDiscovery(topics: Self.topics))
        let spaced = Region.beacon(try BeaconRegion(identifier: "Room 1", uuid: Self.uuid))
        let clean = Region.beacon(try BeaconRegion(identifier: "a_b", uuid: Self.uuid))
        let hidden = Region.beacon(try BeaconRegion(identifier: "a b", uuid: Self.uuid))   // its old level is a_b's now
        let removals = outputs.legacyTopicRemovals(regions: [spaced, clean, hidden, .beacon(try BeaconRegion(identifier: "lobby", uuid: Self.uuid))])
        #expect(removals.map(\.topic) == ["regionkit/home/regions/Room_1/state", "homeassistant/binary_sensor/regionkit_home/Room_1/config"])
        #expect(removals.allSatisfy { $0.payload.isEmpty && $0.retain && $0.qos == 1 })
        #expect(PresenceOutputs(topics: Self.topics, discovery: nil).legacyTopicRemovals(regions: [spaced]).map(\.topic) == ["regionkit/home/regions/Room_1/state"])
    }

    @Test func everyEventGoesOutAsItsJSONLineWithItsID() throws {
        let outputs = PresenceOutputs(topics: Self.topics, discovery: nil)
        let enter = Self.event(7, "didEnterRegion", region: "lobby", json: #"{"t":1,"type":"didEnterRegion","region":"lobby"}"#)
        let messages = outputs.messages(for: enter) { _ in nil }
        #expect(messages.count == 1)
        #expect(messages[0].topic == "regionkit/home/events")
        #expect(messages[0].qos == 1 && !messages[0].retain)
        let object = try Self.object(messages[0])
        #expect(object["id"] as? Int == 7)
        #expect(object["type"] as? String == "didEnterRegion")
        #expect(object["time"] as? String == "2025-11-23T06:00:00.000Z")
    }

    @Test func stateAndRoomAreRetained() {
        let outputs = PresenceOutputs(topics: Self.topics, discovery: nil)
        let state = outputs.messages(for: Self.event(1, "didDetermineState", region: "lobby", state: "inside", json: "{}")) { _ in nil }
        #expect(state.dropFirst().map { [$0.topic, $0.text, "\($0.retain)"] } == [["regionkit/home/regions/lobby/state", "inside", "true"]])
        let json = #"{"t":3,"type":"didChangeNearestScanner","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2","scanner":"kitchen"}"#
        let room = outputs.messages(for: Self.event(2, "didChangeNearestScanner", json: json)) { _ in nil }
        #expect(room.dropFirst().map { [$0.topic, $0.text, "\($0.retain)"] } == [[Self.topics.beaconRoom(Self.beacon), "kitchen", "true"]])
        let gone = outputs.messages(for: Self.event(3, "didChangeNearestScanner", json: #"{"beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2","previous":"kitchen"}"#)) { _ in nil }
        // No Home Assistant entity reads it: not_home to the subscribers now, then the topic removed.
        #expect(gone.dropFirst().map { [$0.topic, $0.text, "\($0.retain)"] } == [[Self.topics.beaconRoom(Self.beacon), "not_home", "false"],
                                                                                [Self.topics.beaconRoom(Self.beacon), "", "true"]])
        let stopped = outputs.messages(for: Self.event(4, "monitoringStopped", region: "lobby", json: "{}")) { _ in nil }
        #expect(stopped.dropFirst().map { [$0.topic, $0.text, "\($0.retain)"] } == [["regionkit/home/regions/lobby/state", "", "true"]])
    }

    /// "a b" and "a/b" both published on `regions/a_b/…` before topic levels were one-to-one:
    /// removing one cleared the other's retained state and deleted its Home Assistant entity. Now
    /// they have levels of their own, and each removal clears its own.
    @Test("A removed region clears its own topics, not those of a region whose identifier sanitizes alike")
    func removalKeepsASharedLevel() throws {
        let outputs = PresenceOutputs(topics: Self.topics, discovery: HomeAssistantDiscovery(topics: Self.topics))
        let other = Region.beacon(try BeaconRegion(identifier: "a b", uuid: Self.uuid))
        let removed = outputs.messages(for: Self.event(1, "monitoringStopped", region: "a/b", json: "{}"), region: { _ in nil }, regions: { [other] })
        #expect(removed.map(\.topic).contains(Self.topics.regionState("a/b")) && !removed.map(\.topic).contains(Self.topics.regionState("a b")),
                "\(removed.map(\.topic))")
        #expect(PresenceOutputs.topicCollisions([other, .beacon(try BeaconRegion(identifier: "a/b", uuid: Self.uuid)), Self.lobby]).isEmpty)
    }

    /// Every identity ever heard left a retained `not_home` room (and, ranged, a distance and
    /// attributes) on the broker for good: a publisher inventing identities, or neighbours'
    /// beacons walking past, grew it without bound (review finding). Only a beacon with a Home
    /// Assistant entity keeps them retained: its device tracker must find `not_home` after HA's
    /// own restart.
    @Test("A departed beacon's room stays retained only when a Home Assistant entity reads it; otherwise not_home is sent and the topic removed; its distance and attributes alike")
    func departuresRetainedOnlyForEntities() throws {
        let discovery = HomeAssistantDiscovery(topics: Self.topics, beacons: BeaconAnnouncement(scope: .regions, maximum: 1_000))
        var outputs = PresenceOutputs(topics: Self.topics, discovery: discovery)
        let neighbour = BeaconIdentity(uuid: try #require(UUID(uuidString: "11111111-2222-3333-4444-555555555555")), major: 1, minor: 1)
        func placed(_ id: Int64, _ beacon: BeaconIdentity, _ scanner: String?) -> StoredEvent {
            let field = scanner.map { #","scanner":"\#($0)""# } ?? ""
            return Self.event(id, "didChangeNearestScanner", json: #"{"type":"didChangeNearestScanner","beacon":"\#(beacon.description)"\#(field)}"#)
        }
        func rooms(_ messages: [PresenceMessage], _ beacon: BeaconIdentity) -> [[String]] {
            messages.filter { $0.topic == Self.topics.beaconRoom(beacon) }.map { [$0.text, "\($0.retain)"] }
        }
        let regions = { [Self.lobby] }
        // The user's beacon (the lobby region matches it) is announced when placed; the neighbour's is out of scope.
        for (id, beacon) in [(Int64(1), Self.beacon), (2, neighbour)] {
            let event = placed(id, beacon, "kitchen")
            #expect(rooms(outputs.messages(for: event, region: { _ in nil }, regions: regions), beacon) == [["kitchen", "true"]])
            outputs.published(event, regions: regions)
        }
        #expect(outputs.announcedBeacons == [Self.beacon])
        #expect(rooms(outputs.messages(for: placed(3, Self.beacon, nil), region: { _ in nil }, regions: regions), Self.beacon) == [["not_home", "true"]])
        #expect(rooms(outputs.messages(for: placed(4, neighbour, nil), region: { _ in nil }, regions: regions), neighbour) == [["not_home", "false"], ["", "true"]])
        // mqtt.retainDepartures: all (device trackers configured without discovery read every room topic).
        var retainingAll = outputs
        retainingAll.retainsAllDepartures = true
        #expect(rooms(retainingAll.messages(for: placed(4, neighbour, nil), region: { _ in nil }, regions: regions), neighbour) == [["not_home", "true"]])
        #expect(retainingAll.keepsDeparture(of: neighbour) && !outputs.keepsDeparture(of: neighbour) && outputs.keepsDeparture(of: Self.beacon))

        // The distance and attributes of a ranged beacon follow the same rule.
        let kept = PresenceRangingTracker.departure(Self.beacon, topics: Self.topics, kept: true)
        #expect(kept.map { [$0.text, "\($0.retain)"] } == [["None", "true"], [#"{"room":"not_home"}"#, "true"]])
        let removed = PresenceRangingTracker.departure(neighbour, topics: Self.topics, kept: false)
        #expect(removed.map { [$0.topic, $0.text, "\($0.retain)"] } == [
            [Self.topics.beaconDistance(neighbour), "None", "false"], [Self.topics.beaconDistance(neighbour), "", "true"],
            [Self.topics.beaconAttributes(neighbour), #"{"room":"not_home"}"#, "false"], [Self.topics.beaconAttributes(neighbour), "", "true"],
        ])
        #expect(removed.allSatisfy { $0.qos == 1 })
    }

    @Test func homeAssistantEntitiesAppearAndDisappear() throws {
        let discovery = HomeAssistantDiscovery(topics: Self.topics)
        var outputs = PresenceOutputs(topics: Self.topics, discovery: discovery)
        let started = outputs.messages(for: Self.event(1, "didStartMonitoring", region: Self.lobby.identifier, json: "{}")) { id in
            id == Self.lobby.identifier ? Self.lobby : nil
        }
        let config = try #require(started.last)
        #expect(config.topic == "homeassistant/binary_sensor/regionkit_home/lobby_main_1_80e22b6d/config")
        #expect(config.retain)
        let sensor = try Self.object(config)
        #expect(sensor["device_class"] as? String == "presence")
        #expect(sensor["state_topic"] as? String == "regionkit/home/regions/lobby_main_1_80e22b6d/state")
        #expect(sensor["unique_id"] as? String == "regionkit_home_region_lobby_main_1_80e22b6d")
        // default_entity_id, not object_id (deprecated in Home Assistant 2025.10, ignored since 2026.4).
        // The entity id asked for is the one the sanitized identifier gave before (the unique id moved).
        #expect(sensor["default_entity_id"] as? String == "binary_sensor.regionkit_home_region_lobby_main_1" && sensor["object_id"] == nil)
        #expect(sensor["name"] as? String == "lobby/main+1")
        #expect(sensor["availability_topic"] as? String == "regionkit/home/status")
        #expect((sensor["device"] as? [String: Any])?["identifiers"] as? [String] == ["regionkit_home"])
        // A version, not the program's name (Home Assistant shows it as the device's firmware).
        #expect((sensor["device"] as? [String: Any])?["sw_version"] as? String == RegionKitVersion.current)

        let json = #"{"type":"didChangeNearestScanner","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2","scanner":"kitchen"}"#
        // The lobby region (its whole UUID) matches the beacon: it is ranged, so it gets a distance sensor too.
        let first = outputs.messages(for: Self.event(2, "didChangeNearestScanner", json: json), region: { _ in nil }, regions: { [Self.lobby] })
        let tracker = try Self.object(try #require(first.first { $0.topic.hasPrefix("homeassistant/device_tracker/") }))
        #expect(tracker["source_type"] as? String == "bluetooth_le")
        #expect(tracker["json_attributes_topic"] as? String == Self.topics.beaconTracker(Self.beacon) && tracker["state_topic"] == nil)
        // The tracker is its device's main feature: name null (the device's name; an equal entity
        // name is a repair issue in Home Assistant); no via_device to a hub device that may not exist.
        #expect(tracker.keys.contains("name") && tracker["name"] is NSNull, "\(tracker)")
        #expect(tracker["default_entity_id"] as? String == "device_tracker.regionkit_home_ibeacon_e2c56db5_dffb_48d2_b060_d0f5a71096e0_1_2")
        #expect(HomeAssistantDiscovery.entitySlug("__Room  1--Ü_") == "room_1" && HomeAssistantDiscovery.entitySlug("кухня") == "regionkit")
        #expect((tracker["device"] as? [String: Any]).map { $0["via_device"] == nil && $0["name"] as? String == "iBeacon 1/2" } == true, "\(tracker)")
        #expect(first.contains { $0.topic == "homeassistant/sensor/regionkit_home/ibeacon_e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2_distance/config" })
        // Announced once acknowledged; a later room change publishes only the room and the tracker's zones.
        outputs.published(Self.event(2, "didChangeNearestScanner", json: json), regions: { [Self.lobby] })
        let second = outputs.messages(for: Self.event(3, "didChangeNearestScanner", json: json)) { _ in nil }
        #expect(second.map(\.topic) == [Self.topics.events, Self.topics.beaconRoom(Self.beacon), Self.topics.beaconTracker(Self.beacon)])
        #expect(outputs.discoveryMessages(regions: [Self.lobby]).count == 3, "region + tracker + distance, re-sent when HA restarts")

        let removed = outputs.messages(for: Self.event(4, "monitoringStopped", region: Self.lobby.identifier, json: "{}")) { _ in nil }
        #expect(removed.last?.topic == config.topic)
        #expect(removed.last?.payload == [] && removed.last?.retain == true)
        // Every id Home Assistant sees is in [a-zA-Z0-9_-].
        for message in started + first {
            guard message.topic.hasPrefix("homeassistant/"), let object = try? Self.object(message), let id = object["unique_id"] as? String else { continue }
            #expect(id.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-" }, "\(id)")
        }
    }

    @Test("The device tracker takes home / not_home from in_zones on its own topic (Home Assistant deprecated a tracker's state_topic and ends it in 2027.1); trackerState: room, no longer the default, keeps the room topic as its state beside in_zones; the distance sensor carries the rich attributes")
    func trackerInZones() throws {
        func configs(_ discovery: HomeAssistantDiscovery) throws -> (tracker: [String: Any], distance: [String: Any]) {
            let messages = discovery.beaconConfigs(Self.beacon)
            return (try Self.object(try #require(messages.first { $0.topic.hasPrefix("homeassistant/device_tracker/") })),
                    try Self.object(try #require(messages.first { $0.topic.hasPrefix("homeassistant/sensor/") })))
        }
        let home = try configs(HomeAssistantDiscovery(topics: Self.topics))
        #expect(home.tracker["state_topic"] == nil && home.tracker["value_template"] == nil && home.tracker["payload_home"] == nil,
                "none of the deprecated keys: \(home.tracker)")
        #expect(home.tracker["json_attributes_topic"] as? String == "regionkit/home/beacons/e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2/tracker")
        #expect(home.tracker["source_type"] as? String == "bluetooth_le")
        #expect(home.distance["json_attributes_topic"] as? String == Self.topics.beaconAttributes(Self.beacon), "RSSI, proximity, telemetry")
        let room = try configs(HomeAssistantDiscovery(topics: Self.topics, trackerState: .room))
        #expect(room.tracker["state_topic"] as? String == Self.topics.beaconRoom(Self.beacon) && room.tracker["payload_home"] as? String == "home")
        #expect(room.tracker["json_attributes_topic"] as? String == Self.topics.beaconTracker(Self.beacon))
        // What the tracker topic carries: exactly Home Assistant's in_zones form.
        #expect(HomeAssistantDiscovery.trackerAttributes(room: "Küche") == #"{"in_zones":["zone.home"],"room":"Küche"}"#)
        #expect(HomeAssistantDiscovery.trackerAttributes(room: nil) == #"{"in_zones":[],"room":"not_home"}"#)
        // From the configuration file (home by default), with a misspelt value refused naming the choices.
        let sources = "sources:\n  - mqtt: {format: espresense}\nmqtt: {url: \"mqtt://127.0.0.1:1883\", site: home}\n"
        let configuration = try ServiceConfiguration.decode(sources + "homeAssistant: {discovery: true, trackerState: room}\n", path: "c.yaml")
        #expect(configuration.homeAssistant?.discovery(topics: Self.topics)?.trackerState == .room)
        #expect(try ServiceConfiguration.decode(sources + "homeAssistant: {discovery: true}\n", path: "c.yaml").homeAssistant?.discovery(topics: Self.topics)?.trackerState == .home)
        let error = #expect(throws: RegionKitError.self) { try ServiceConfiguration.decode(sources + "homeAssistant: {discovery: true, trackerState: homes}\n", path: "c.yaml") }
        #expect(error?.message.contains("room") == true && error?.message.contains("home") == true, "\(error?.message ?? "")")
    }

    @Test("A room change of a beacon with a tracker publishes its zones (retained) after its room; to nowhere, in_zones empty; a beacon without a tracker (no discovery, or not announced) gets none; a connection re-sends them with the rooms; removing the beacon clears the topic")
    func trackerZonesFollowTheRoom() throws {
        var outputs = PresenceOutputs(topics: Self.topics, discovery: HomeAssistantDiscovery(topics: Self.topics))
        let trackerTopic = Self.topics.beaconTracker(Self.beacon)
        let into = Self.event(5, "didChangeNearestScanner", json: #"{"type":"didChangeNearestScanner","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2","scanner":"kitchen"}"#)
        let first = outputs.messages(for: into, region: { _ in nil })
        // Announced with this event: its configuration, its room, then its zones.
        let zones = try #require(first.first { $0.topic == trackerTopic })
        #expect(zones.text == #"{"in_zones":["zone.home"],"room":"kitchen"}"# && zones.retain && zones.qos == 1)
        #expect(first.firstIndex { $0.topic == Self.topics.beaconRoom(Self.beacon) }! < first.firstIndex { $0.topic == trackerTopic }!)
        outputs.published(into)
        let out = Self.event(6, "didChangeNearestScanner", json: #"{"type":"didChangeNearestScanner","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2"}"#)
        let left = outputs.messages(for: out, region: { _ in nil }).filter { $0.topic == trackerTopic }
        #expect(left.map(\.text) == [#"{"in_zones":[],"room":"not_home"}"#] && left.allSatisfy(\.retain))
        // Re-sent at a connection, for the announced beacon, placed or not.
        #expect(outputs.roomMessages(placed: [:]).filter { $0.topic == trackerTopic }.map(\.text) == [#"{"in_zones":[],"room":"not_home"}"#])
        #expect(outputs.roomMessages(placed: [Self.beacon: "hall"]).filter { $0.topic == trackerTopic }.map(\.text)
                == [#"{"in_zones":["zone.home"],"room":"hall"}"#])
        // Its device deleted while placed nowhere: the tracker topic is emptied with the others.
        #expect(outputs.removalMessages([Self.beacon], placed: { _ in false }).contains { $0.topic == trackerTopic && $0.payload.isEmpty && $0.retain })
        // Without discovery: rooms only.
        var plain = PresenceOutputs(topics: Self.topics, discovery: nil)
        #expect(!plain.messages(for: into, region: { _ in nil }).contains { $0.topic == trackerTopic })
        #expect(!plain.roomMessages(placed: [Self.beacon: "hall"]).contains { $0.topic == trackerTopic })
    }

    @Test("A beacon's entities count as announced only once the broker acknowledged them")
    func announcementWaitsForTheAcknowledgment() {
        var outputs = PresenceOutputs(topics: Self.topics, discovery: HomeAssistantDiscovery(topics: Self.topics))
        let json = #"{"type":"didChangeNearestScanner","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2","scanner":"kitchen"}"#
        let event = Self.event(5, "didChangeNearestScanner", json: json)
        let configs = { (messages: [PresenceMessage]) in messages.filter { $0.topic.hasPrefix("homeassistant/") }.count }
        // The group was lost with the connection: published again, it still carries the tracker's
        // configuration (no region ranges the beacon: no distance sensor), and a reconnection's
        // discovery does not know the beacon yet.
        let lost = outputs.messages(for: event) { _ in nil }
        #expect(configs(lost) == 1)
        #expect(outputs.discoveryMessages(regions: []).isEmpty)
        let again = outputs.messages(for: event) { _ in nil }
        #expect(again.map(\.topic) == lost.map(\.topic))
        // Acknowledged: announced from now on.
        outputs.published(event)
        #expect(outputs.announcedBeacons == [Self.beacon])
        #expect(configs(outputs.messages(for: Self.event(6, "didChangeNearestScanner", json: json)) { _ in nil }) == 0)
        #expect(outputs.discoveryMessages(regions: []).count == 1)
        // Other events, or no discovery, announce nothing.
        var plain = PresenceOutputs(topics: Self.topics, discovery: nil)
        plain.published(event)
        #expect(plain.announcedBeacons.isEmpty)
        outputs.published(Self.event(7, "didEnterRegion", region: "lobby", json: "{}"))
        #expect(outputs.announcedBeacons.count == 1)
    }

    @Test("AltBeacon and Eddystone-UID beacons get their room and Home Assistant entities, as an iBeacon does")
    func everyBeaconFormatIsPlaced() throws {
        let altBeacon = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2, format: .altBeacon)
        let eddystone = try #require(BeaconIdentity(eddystoneNamespace: Array(0..<10), instance: [0, 0, 0, 0, 0, 0xa1]))
        for identity in [altBeacon, eddystone] {
            var outputs = PresenceOutputs(topics: Self.topics, discovery: HomeAssistantDiscovery(topics: Self.topics))
            // The JSON line the engine logs (LocationEvent.jsonLine).
            let json = LocationEvent(timestamp: Timestamp(seconds: 3), kind: .didChangeNearestScanner(identity, scannerID: "kitchen", previous: nil)).jsonLine(origin: .zero)
            let event = Self.event(2, "didChangeNearestScanner", json: json)
            let messages = outputs.messages(for: event) { _ in nil }
            #expect(messages.filter { $0.topic.hasPrefix("homeassistant/device_tracker/") }.count == 1, "\(identity): \(messages.map(\.topic))")
            #expect(messages.dropLast().last.map { [$0.topic, $0.text] } == [Self.topics.beaconRoom(identity), "kitchen"])
            #expect(messages.last.map { [$0.topic, $0.text] } == [Self.topics.beaconTracker(identity), #"{"in_zones":["zone.home"],"room":"kitchen"}"#])
            outputs.published(event)
            #expect(outputs.announcedBeacons == [identity])
        }
    }

    @Test func circularRegionsAreNotBinarySensors() {
        let outputs = PresenceOutputs(topics: Self.topics, discovery: HomeAssistantDiscovery(topics: Self.topics))
        let park = Region.circular(try! CircularRegion(identifier: "park", latitude: 1, longitude: 2, radius: 50))
        #expect(outputs.messages(for: Self.event(1, "didStartMonitoring", region: "park", json: "{}")) { _ in park }.count == 1)
    }

    @Test func distancesArePublishedOnChangeNotEverySecond() {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: true)
        func ranged(_ accuracy: Double, rssi: Int = -70) -> [Beacon] {
            [Beacon(identity: Self.beacon, proximity: .near, accuracy: accuracy, rssi: rssi, timestamp: .zero)]
        }
        let first = tracker.messages(for: ranged(2.0), at: Timestamp(seconds: 1)) { _ in "kitchen" }
        #expect(first.map(\.topic) == [Self.topics.beaconDistance(Self.beacon), Self.topics.beaconAttributes(Self.beacon), "regionkit/home/mqtt_room/kitchen"])
        #expect(first[0].text == "2" && first[0].retain)
        // The id is ESPresense's, as Home Assistant's mqtt_room sensors are set up for (their device_id).
        #expect(first[2].text == #"{"id":"iBeacon:\#(Self.beacon.uuid.uuidString.lowercased())-\#(Self.beacon.major)-\#(Self.beacon.minor)","name":"\#(HomeAssistantDiscovery.beaconName(Self.beacon))","distance":2}"#, "\(first[2].text)")
        #expect(tracker.messages(for: ranged(2.05), at: Timestamp(seconds: 2)) { _ in "kitchen" }.isEmpty)
        #expect(tracker.messages(for: ranged(2.2), at: Timestamp(seconds: 3)) { _ in "kitchen" }.count == 3)
        #expect(tracker.messages(for: ranged(2.2), at: Timestamp(seconds: 4)) { _ in "hall" }.count == 3, "a room change publishes at once")
        #expect(tracker.messages(for: ranged(2.2), at: Timestamp(seconds: 40)) { _ in "hall" }.count == 3, "refreshed every 30 s")
        #expect(tracker.messages(for: ranged(-1, rssi: 0), at: Timestamp(seconds: 80)) { _ in "hall" }.isEmpty, "a silent beacon publishes nothing")
    }

    @Test("mqtt_room: a room's topic carries that room's scanner's distance, not the nearer distance another scanner reads while the room holds on; the move then goes out with a smaller distance, as Home Assistant's mqtt_room needs to take it")
    func mqttRoomDistanceIsTheRoomsScanners() throws {
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        var engine = MonitoringEngine(profile: profile, sources: [.beacon: .authorized])
        let constraint = try BeaconIdentityConstraint(uuid: Self.uuid)
        _ = engine.startRanging(constraint, label: "lobby", at: .zero)
        func sighting(_ t: Double, _ rssi: Int, _ scanner: String) -> BeaconObservation {
            BeaconObservation(identity: Self.beacon, rssi: rssi, measuredPower: -59, timestamp: Timestamp(seconds: t), scannerID: scanner)
        }
        var deliveries: [(time: Timestamp, beacons: [Beacon])] = []
        func feed(_ observations: [BeaconObservation]) {
            for observation in observations {
                for event in engine.ingest(observation) {
                    if case .didRangeBeacons(let beacons, _, let label) = event.kind, label == "lobby" { deliveries.append((event.timestamp, beacons)) }
                }
            }
        }
        // The kitchen's node hears it for 10 s; then the hall's node hears it 14 dB louder.
        feed(stride(from: 0.25, to: 10, by: 0.5).map { sighting($0, -60, "kitchen") })
        #expect(engine.nearestScanner(for: Self.beacon) == "kitchen")
        feed(stride(from: 10.25, to: 12.2, by: 0.5).flatMap { [sighting($0, -72, "kitchen"), sighting($0 + 0.1, -58, "hall")] })
        // The room holds on (its dwell), while the delivery's distance is already the hall's.
        #expect(engine.nearestScanner(for: Self.beacon) == "kitchen")
        let held = try #require(deliveries.last?.beacons.first)
        let kitchen = try #require(engine.rangedDistance(of: Self.beacon, from: "kitchen", ranging: constraint, label: "lobby"))
        let hall = try #require(engine.rangedDistance(of: Self.beacon, from: "hall", ranging: constraint, label: "lobby"))
        #expect(hall < kitchen && abs(held.accuracy - hall) < 0.01, "delivery \(held.accuracy), kitchen \(kitchen), hall \(hall)")
        #expect(engine.rangedDistance(of: Self.beacon, from: "garage", ranging: constraint, label: "lobby") == nil, "a scanner that never heard it")
        #expect(engine.rangedDistance(of: Self.beacon, from: "kitchen", ranging: constraint, label: "other") == nil, "a label no session delivers under")

        func roomMessage(_ tracker: inout PresenceRangingTracker, _ beacons: [Beacon], at time: Timestamp) throws -> (room: String, distance: Double)? {
            let snapshot = engine
            let messages = tracker.messages(for: beacons, at: time, room: { snapshot.nearestScanner(for: $0) },
                                            roomDistance: { snapshot.rangedDistance(of: $0, from: $1, ranging: constraint, label: "lobby") })
            guard let message = messages.first(where: { $0.topic.hasPrefix("regionkit/home/mqtt_room/") }) else { return nil }
            let object = try Self.object(message)
            let distance = try #require(object["distance"] as? Double)
            return (String(message.topic.dropFirst("regionkit/home/mqtt_room/".count)), distance)
        }
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: true)
        let inKitchen = try #require(try roomMessage(&tracker, [held], at: Timestamp(seconds: 12)))
        #expect(inKitchen.room == "kitchen" && abs(inKitchen.distance - kitchen) < 0.01, "\(inKitchen): the kitchen's topic carried the hall's \(held.accuracy)")
        // Before, the kitchen's topic carried the hall's distance (the closure left out).
        var before = PresenceRangingTracker(topics: Self.topics, mqttRoom: true)
        let old = try #require(before.messages(for: [held], at: Timestamp(seconds: 12)) { _ in "kitchen" }.last)
        #expect(abs((try Self.object(old)["distance"] as? Double ?? 0) - held.accuracy) < 0.01)

        // The hall takes the beacon: its topic's distance is below the kitchen's last one, so
        // Home Assistant's mqtt_room moves it at once.
        feed(stride(from: 12.25, to: 25, by: 0.5).flatMap { [sighting($0, -72, "kitchen"), sighting($0 + 0.1, -58, "hall")] })
        #expect(engine.nearestScanner(for: Self.beacon) == "hall")
        let latest = try #require(deliveries.last?.beacons)
        let moved = try #require(try roomMessage(&tracker, latest, at: Timestamp(seconds: 25)))
        #expect(moved.room == "hall" && moved.distance < inKitchen.distance, "\(moved) after \(inKitchen)")
        // A room whose scanner has no current reading of it: no mqtt_room message (the distance
        // and attributes still go out).
        let elsewhere = tracker.messages(for: [held], at: Timestamp(seconds: 60), room: { _ in "garage" },
                                         roomDistance: { engine.rangedDistance(of: $0, from: $1, ranging: constraint, label: "lobby") })
        #expect(elsewhere.map(\.topic) == [Self.topics.beaconDistance(Self.beacon), Self.topics.beaconAttributes(Self.beacon)])
    }

    @Test("A stream of ever new identities (random minors under a ranged UUID) keeps the tracker's table bounded, and a beacon heard again within the refresh interval is still not republished")
    func rangingTrackerStaysBounded() {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        let kept = BeaconIdentity(uuid: Self.uuid, major: 7, minor: 7)
        func beacon(_ identity: BeaconIdentity, _ accuracy: Double = 2) -> [Beacon] {
            [Beacon(identity: identity, proximity: .near, accuracy: accuracy, rssi: -70, timestamp: .zero)]
        }
        var largest = 0
        // 100 new identities a second for 1,000 s; `kept` is heard every 10 s throughout.
        for second in 0..<1_000 {
            let now = Timestamp(seconds: Double(second))
            if second % 10 == 0 {
                let republished = tracker.messages(for: beacon(kept), at: now) { _ in "hall" }
                // Published at 0, then every 30 s (the refresh), never in between: the sweeps kept its entry.
                #expect(republished.isEmpty == (second % 30 != 0), "second \(second)")
            }
            for index in 0..<100 {
                let stranger = BeaconIdentity(uuid: Self.uuid, major: UInt16(second % 60_000), minor: UInt16(index))
                _ = tracker.messages(for: beacon(stranger), at: now) { _ in "hall" }
            }
            largest = max(largest, tracker.published.count)
        }
        // 100,001 identities were published; at most 30 s of them (≈ 3,000) are live at once.
        #expect(largest < 8_192, "the table reached \(largest) entries")
    }

    @Test("A beacon heard by no scanner: its published distance becomes None and its attributes not_home, once, and its next distance goes out at once; a beacon never ranged publishes nothing")
    func unplacedBeacon() {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        let heard = Beacon(identity: Self.beacon, proximity: .near, accuracy: 1.5, rssi: -70, timestamp: Timestamp(seconds: 1))
        #expect(tracker.messages(for: [heard], at: Timestamp(seconds: 1)) { _ in "hall" }.count == 2)
        #expect(tracker.messages(for: [heard], at: Timestamp(seconds: 2)) { _ in "hall" }.isEmpty, "unchanged: held back")
        let cleared = tracker.unplaced(Self.beacon)
        #expect(cleared.map { [$0.topic, $0.text, "\($0.retain)"] } == [
            [Self.topics.beaconDistance(Self.beacon), "None", "true"],
            [Self.topics.beaconAttributes(Self.beacon), #"{"room":"not_home"}"#, "true"],
        ])
        #expect(tracker.unplaced(Self.beacon).isEmpty, "once")
        #expect(tracker.messages(for: [heard], at: Timestamp(seconds: 3)) { _ in "hall" }.count == 2, "back in the same room: published at once")
        #expect(tracker.unplaced(BeaconIdentity(uuid: Self.uuid, major: 7, minor: 7)).isEmpty, "never ranged")
    }

    @Test("Beacons an earlier run ranged (rooms restored at a start): their departure clears the distance and attributes it may have left retained, and their first distance goes out at once; a new connection republishes every distance yet keeps the beacons for their departure")
    func assumedAndRepublished() {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        let restored = BeaconIdentity(uuid: Self.uuid, major: 3, minor: 3)
        tracker.assumePublished([restored])
        // Its departure before any distance of this run: cleared (a fresh tracker sent nothing).
        #expect(tracker.unplaced(restored).map(\.topic) == [Self.topics.beaconDistance(restored), Self.topics.beaconAttributes(restored)])
        tracker.assumePublished([restored])
        let heard = Beacon(identity: restored, proximity: .near, accuracy: 1.5, rssi: -70, timestamp: Timestamp(seconds: 1))
        #expect(tracker.messages(for: [heard], at: Timestamp(seconds: 1)) { _ in "hall" }.count == 2, "its first distance at once")
        #expect(tracker.messages(for: [heard], at: Timestamp(seconds: 2)) { _ in "hall" }.isEmpty)
        // 2,000 new beacons a while later (the table swept as it grows): the assumed one is kept.
        tracker.assumePublished([Self.beacon])
        for minor in 0..<2_000 {
            let other = Beacon(identity: BeaconIdentity(uuid: Self.uuid, major: 9, minor: UInt16(minor)), proximity: .near, accuracy: 2, rssi: -70,
                               timestamp: Timestamp(seconds: 100))
            _ = tracker.messages(for: [other], at: Timestamp(seconds: 100)) { _ in "hall" }
        }
        #expect(tracker.unplaced(Self.beacon).count == 2, "an assumed beacon is never swept before its departure")
        // A new connection: the unchanged distance goes out again, and the beacon is still known.
        tracker.republishAll()
        #expect(tracker.messages(for: [heard], at: Timestamp(seconds: 3)) { _ in "hall" }.count == 2)
        tracker.republishAll()
        #expect(tracker.unplaced(restored).count == 2, "a departure right after a new connection still clears it")
    }

    @Test("Beacons announced to Home Assistant: in scope `regions` only those a monitored region matches, and never more than maximumBeacons; a beacon left out still gets its room")
    func announcementScopeAndLimit() throws {
        func placed(_ id: Int64, major: UInt16, minor: UInt16, uuid: String = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") -> StoredEvent {
            Self.event(id, "didChangeNearestScanner", json: #"{"type":"didChangeNearestScanner","beacon":"\#(uuid):\#(major):\#(minor)","scanner":"kitchen"}"#)
        }
        func isAnnouncement(_ message: PresenceMessage) -> Bool { message.topic.hasPrefix("homeassistant/") }
        let family = Region.beacon(try BeaconRegion(identifier: "family", uuid: Self.uuid, major: 1))
        let regions = { [family] }
        var outputs = PresenceOutputs(topics: Self.topics, discovery: HomeAssistantDiscovery(topics: Self.topics, beacons: BeaconAnnouncement(scope: .regions, maximum: 2)))
        // A neighbour's beacon (another UUID) and one of ours outside the region (major 2): rooms only.
        for event in [placed(1, major: 9, minor: 9, uuid: "B9407F30-F5F8-466E-AFF9-25556B57FE6D"), placed(2, major: 2, minor: 1)] {
            let messages = outputs.messages(for: event, region: { _ in nil }, regions: regions)
            #expect(!messages.contains(where: isAnnouncement) && messages.last?.text == "kitchen")
            #expect(!outputs.isBeyondLimit(event, regions: regions))
            outputs.published(event, regions: regions)
        }
        #expect(outputs.announcedBeacons.isEmpty)
        // Three of the region's beacons: the first two are announced, the third is beyond the limit.
        for (index, minor) in [1, 2, 3].enumerated() {
            let event = placed(Int64(10 + index), major: 1, minor: UInt16(minor))
            let messages = outputs.messages(for: event, region: { _ in nil }, regions: regions)
            #expect(messages.contains(where: isAnnouncement) == (minor <= 2), "minor \(minor)")
            #expect(outputs.isBeyondLimit(event, regions: regions) == (minor == 3))
            // Its room; the announced ones their tracker's zones after it.
            #expect(messages.last?.topic.hasSuffix(minor <= 2 ? "-1-\(minor)/tracker" : "-1-\(minor)/room") == true, "\(messages.map(\.topic))")
            #expect(messages.contains { $0.topic.hasSuffix("-1-\(minor)/room") })
            outputs.published(event, regions: regions)
        }
        #expect(outputs.announcedBeacons.map(\.minor).sorted() == [1, 2])
        #expect(outputs.discoveryMessages(regions: [family]).filter { $0.topic.hasPrefix("homeassistant/device_tracker/") }.count == 2)
        // Scope `all` (the default) announces the neighbour too.
        var everyone = PresenceOutputs(topics: Self.topics, discovery: HomeAssistantDiscovery(topics: Self.topics))
        let neighbour = placed(20, major: 9, minor: 9, uuid: "B9407F30-F5F8-466E-AFF9-25556B57FE6D")
        let announced = everyone.messages(for: neighbour, region: { _ in nil })
        #expect(announced.contains(where: isAnnouncement))
        // No region matches it, so it is never ranged: its device tracker, no distance sensor.
        #expect(!announced.contains { $0.topic.hasSuffix("_distance/config") }, "\(announced.map(\.topic))")
        #expect(announced.contains { $0.topic.hasPrefix("homeassistant/device_tracker/") && !$0.payload.isEmpty })
        everyone.published(neighbour)
        // A region that matches it starts: its distance sensor is announced with the region.
        let matching = Region.beacon(try BeaconRegion(identifier: "neighbours", uuid: UUID(uuidString: "B9407F30-F5F8-466E-AFF9-25556B57FE6D")!))
        let started = everyone.messages(for: Self.event(21, "didStartMonitoring", region: "neighbours", json: "{}"), region: { $0 == "neighbours" ? matching : nil })
        #expect(started.contains { $0.topic == "homeassistant/sensor/regionkit_home/ibeacon_b9407f30-f5f8-466e-aff9-25556b57fe6d-9-9_distance/config" && !$0.payload.isEmpty },
                "\(started.map(\.topic))")
        #expect(everyone.announcedBeacons.count == 1)
        // Scope `all` with a limit of 2: the neighbours fill their two places; the region's own
        // beacons still get theirs (the limit holds apart for each), and a third of each is beyond it.
        var crowded = PresenceOutputs(topics: Self.topics, discovery: HomeAssistantDiscovery(topics: Self.topics, beacons: BeaconAnnouncement(scope: .all, maximum: 2)))
        for minor in 1...3 {
            let event = placed(Int64(30 + minor), major: 9, minor: UInt16(minor), uuid: "B9407F30-F5F8-466E-AFF9-25556B57FE6D")
            #expect(crowded.messages(for: event, region: { _ in nil }, regions: regions).contains(where: isAnnouncement) == (minor <= 2))
            #expect(crowded.isBeyondLimit(event, regions: regions) == (minor == 3))
            crowded.published(event, regions: regions)
        }
        for minor in 1...3 {
            let event = placed(Int64(40 + minor), major: 1, minor: UInt16(minor))
            #expect(crowded.messages(for: event, region: { _ in nil }, regions: regions).contains(where: isAnnouncement) == (minor <= 2), "own beacon \(minor)")
            #expect(crowded.isBeyondLimit(event, regions: regions) == (minor == 3))
            crowded.published(event, regions: regions)
        }
        #expect(crowded.announcedBeacons.count == 4)
        // The count of announced beacons the regions match is kept between events (it was
        // recounted three times an event) and counted again when the regions change. Limit 3:
        // two neighbours and one of ours announced while only `family` is monitored (1 matched,
        // 2 others). With a region matching the neighbours too, all three are matched, so a third
        // neighbour is beyond the limit (a count kept from `family` alone said 1 < 3).
        var kept = PresenceOutputs(topics: Self.topics, discovery: HomeAssistantDiscovery(topics: Self.topics, beacons: BeaconAnnouncement(scope: .all, maximum: 3)))
        for event in [placed(60, major: 9, minor: 1, uuid: "B9407F30-F5F8-466E-AFF9-25556B57FE6D"),
                      placed(61, major: 9, minor: 2, uuid: "B9407F30-F5F8-466E-AFF9-25556B57FE6D"), placed(62, major: 1, minor: 1)] {
            #expect(!kept.isBeyondLimit(event, regions: regions))
            kept.published(event, regions: regions)
        }
        #expect(kept.announcedBeacons.count == 3)
        let third = placed(63, major: 9, minor: 3, uuid: "B9407F30-F5F8-466E-AFF9-25556B57FE6D")
        #expect(!kept.isBeyondLimit(third, regions: regions), "under `family` alone: 2 others of 3")
        #expect(kept.isBeyondLimit(third, regions: { [family, matching] }), "matched: 3 of 3")
        #expect(kept.isBeyondLimit(placed(64, major: 1, minor: 2), regions: { [] }), "no region: every one is an other (3 of 3)")
    }

    @Test("homeAssistant: beacons and maximumBeacons read from the configuration; out of range or unknown values are errors naming the field")
    func announcementConfiguration() throws {
        func decode(_ homeAssistant: String) throws -> ServiceConfiguration {
            try ServiceConfiguration.decode("""
            mqtt: {url: "mqtt://127.0.0.1:1883", site: home}
            homeAssistant: \(homeAssistant)
            sources:
              - mqtt: {format: espresense}
            """, path: "/tmp/regionkit-test.yaml")
        }
        let configured = try decode("{discovery: true, beacons: regions, maximumBeacons: 50}")
        #expect(configured.homeAssistant?.discovery(topics: Self.topics)?.beacons == BeaconAnnouncement(scope: .regions, maximum: 50))
        #expect(try decode("{discovery: true}").homeAssistant?.beaconAnnouncement == BeaconAnnouncement(scope: .all, maximum: 1_000))
        #expect(try decode("{discovery: false}").homeAssistant?.discovery(topics: Self.topics) == nil)
        // Home Assistant's birth topic stays homeassistant/status when its discovery prefix
        // changes (two settings): a prefix of its own listens there too; statusTopic replaces both.
        #expect(try decode("{discovery: true}").homeAssistant?.discovery(topics: Self.topics)?.statusTopics == ["homeassistant/status"])
        #expect(try decode("{discovery: true, prefix: ha2}").homeAssistant?.discovery(topics: Self.topics)?.statusTopics == ["homeassistant/status", "ha2/status"])
        #expect(try decode("{discovery: true, prefix: ha2, statusTopic: ha2/birth}").homeAssistant?.discovery(topics: Self.topics)?.statusTopics == ["ha2/birth"])
        for (bad, field) in [("{discovery: true, maximumBeacons: -1}", "maximumBeacons"), ("{discovery: true, maximumBeacons: 100001}", "maximumBeacons"),
                             ("{discovery: true, beacons: some}", "beacons"), ("{discovery: true, prefix: \"home/#\"}", "prefix"),
                             ("{discovery: true, statusTopic: \"ha/+\"}", "statusTopic: invalid topic name"), ("{discovery: true, statusTopic: \"\"}", "statusTopic")] {
            do {
                _ = try decode(bad)
                Issue.record("\(bad) was accepted")
            } catch let error as RegionKitError {
                #expect(error.message.contains(field), "\(bad): \(error.message)")
            }
        }
    }

    @Test func eddystoneBeaconAttributesCarryFormatAndTelemetry() throws {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        let eddy = try #require(BeaconIdentity(eddystoneNamespace: [0x8B, 0x0C, 0xA7, 0x50, 0xE7, 0xA7, 0x4E, 0x14, 0xBD, 0x99], instance: [0, 0, 0, 0, 0, 0xA1]))
        let telemetry = EddystoneTelemetry(batteryMillivolts: 3000, temperatureRaw: 0x1880, advertisingCount: 256, uptimeDeciseconds: 600)
        let beacon = Beacon(identity: eddy, proximity: .near, accuracy: 1.5, rssi: -66, timestamp: .zero, telemetry: telemetry)
        let messages = tracker.messages(for: [beacon], at: Timestamp(seconds: 1)) { _ in "shop" }
        #expect(messages.map(\.topic) == ["regionkit/home/beacons/eddystone-8b0ca750e7a74e14bd99-0000000000a1/distance",
                                           "regionkit/home/beacons/eddystone-8b0ca750e7a74e14bd99-0000000000a1/attributes"])
        let attributes = try Self.object(messages[1])
        #expect(attributes["format"] as? String == "eddystone-uid" && attributes["namespace"] as? String == "8b0ca750e7a74e14bd99")
        #expect(attributes["battery_mv"] as? Int == 3000 && attributes["temperature"] as? Double == 24.5 && attributes["uptime"] as? Double == 60)
        // Telemetry an MQTT scanner forwarded (battery and temperature only): no uptime attribute.
        let forwarded = Beacon(identity: eddy, proximity: .near, accuracy: 1.5, rssi: -66, timestamp: .zero,
                               telemetry: EddystoneTelemetry(batteryMillivolts: 2900, temperature: 21.25))
        var fresh = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        let partial = try Self.object(fresh.messages(for: [forwarded], at: Timestamp(seconds: 1)) { _ in "shop" }[1])
        #expect(partial["battery_mv"] as? Int == 2900 && partial["temperature"] as? Double == 21.25 && partial["uptime"] == nil)
        // An AltBeacon with an iBeacon's bytes gets its own topics.
        let alt = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2, format: .altBeacon)
        #expect(PresenceTopics.beaconKey(alt) != PresenceTopics.beaconKey(Self.beacon))
        #expect(HomeAssistantDiscovery(topics: Self.topics).beaconConfigs(eddy).allSatisfy { !$0.text.contains("iBeacon") })
    }

    @Test func configurationRejectsInlinePasswordsAndReadsTheFile() throws {
        let yaml = Data(#"{"url":"mqtt://127.0.0.1:1883","username":"rk","password":"hunter2"}"#.utf8)
        let inline = try JSONDecoder().decode(MQTTHubConfiguration.self, from: yaml)
        #expect(throws: RegionKitError.self) { try inline.validate() }
        do { try inline.validate() } catch let error as RegionKitError {
            #expect(error.message.contains("passwordFile"))
            #expect(!error.message.contains("hunter2"))
        }
        let file = TestScratch.directory.appendingPathComponent("rk-pass-\(UUID().uuidString)").path
        try "s3cret\n".write(toFile: file, atomically: true, encoding: .utf8)
        var configuration = MQTTHubConfiguration(url: "mqtt://127.0.0.1:1883")
        configuration.username = "rk"
        configuration.passwordFile = file
        try configuration.validate()
        #expect(try configuration.credentials(environment: [:]) == ("rk", "s3cret"))
        let fromEnvironment = MQTTHubConfiguration(url: "mqtt://127.0.0.1")
        #expect(try fromEnvironment.credentials(environment: ["REGIONKIT_MQTT_USERNAME": "u", "REGIONKIT_MQTT_PASSWORD": "p"]) == ("u", "p"))
        #expect(throws: RegionKitError.self) { try fromEnvironment.credentials(environment: ["REGIONKIT_MQTT_PASSWORD": "p"]) }
        #expect(throws: RegionKitError.self) { try MQTTHubConfiguration(url: "http://x").validate() }
    }

    @Test func outputCursorStartsAtTheLogsEndAndPersists() throws {
        let path = temporaryStorePath()
        let store = try RegionStore(path: path)
        for index in 0..<3 { try store.append(time: Double(index), type: "processStarted", region: nil, state: nil, reason: nil, json: "{}") }
        #expect(try store.outputCursor("mqtt:home") == 0)
        #expect(try store.outputCursor("mqtt:home", createAtEnd: true) == 3)
        try store.append(time: 3, type: "processStarted", region: nil, state: nil, reason: nil, json: "{}")
        try store.setOutputCursor("mqtt:home", to: 4)
        #expect(try RegionStore(path: path).outputCursor("mqtt:home", createAtEnd: true) == 4)
        try store.setOutputCursor("mqtt:home", to: 2)
        #expect(try RegionStore(path: path).outputCursor("mqtt:home", createAtEnd: true) == 4, "never back")
        #expect(try store.outputCursor("mqtt:office", createAtEnd: true) == 4)
    }

    @Test("A beacon whose device Home Assistant deleted: found by its tracker's configuration topic (this site's only), dismissed out of the limit, its topics removed (its room only when placed nowhere, and not with retainDepartures all)")
    func forgettingADeletedDevice() throws {
        let discovery = HomeAssistantDiscovery(topics: Self.topics, beacons: BeaconAnnouncement(maximum: 2))
        var outputs = PresenceOutputs(topics: Self.topics, discovery: discovery)
        let other = BeaconIdentity(uuid: Self.uuid, major: 9, minor: 9)
        let third = BeaconIdentity(uuid: Self.uuid, major: 7, minor: 7)
        outputs.restoreAnnounced([Self.beacon, other])
        #expect(!outputs.announces(third, regions: { [] }), "the limit of 2 is reached")
        // The topic of its tracker configuration, as Home Assistant empties it.
        let tracker = "homeassistant/device_tracker/regionkit_home/ibeacon_e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2/config"
        #expect(discovery.trackerConfigFilter == "homeassistant/device_tracker/regionkit_home/+/config")
        #expect(outputs.announcedBeacons(trackerConfigTopics: [tracker]) == [Self.beacon])
        for unrelated in [tracker.replacingOccurrences(of: "regionkit_home", with: "regionkit_office"),          // another site
                          tracker.replacingOccurrences(of: "device_tracker", with: "sensor"),                     // another component
                          tracker.replacingOccurrences(of: "/config", with: "/x/config"),                         // one level more
                          "homeassistant/device_tracker/regionkit_home//config",                                  // no object
                          tracker.replacingOccurrences(of: "-1-2", with: "-3-4")] {                               // not announced
            #expect(outputs.announcedBeacons(trackerConfigTopics: [unrelated]).isEmpty, "\(unrelated)")
        }

        #expect(outputs.forget([Self.beacon, third]) == [Self.beacon], "only the announced one of the two")
        #expect(outputs.announcedBeacons == [other] && outputs.dismissedBeacons == [Self.beacon])
        #expect(outputs.announces(third, regions: { [] }), "its place in the limit is free")
        #expect(!outputs.announces(Self.beacon, regions: { [] }), "dismissed")
        #expect(!outputs.keepsDeparture(of: Self.beacon))
        #expect(outputs.forget([Self.beacon]).isEmpty, "dismissed once")
        // Placed nowhere: its configurations, room, distance and attributes removed (empty, retained).
        let removals = outputs.removalMessages([Self.beacon], placed: { _ in false })
        #expect(removals.map(\.topic) == [tracker, "homeassistant/sensor/regionkit_home/ibeacon_e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2_distance/config",
                                          Self.topics.beaconRoom(Self.beacon), Self.topics.beaconDistance(Self.beacon), Self.topics.beaconAttributes(Self.beacon),
                                          Self.topics.beaconTracker(Self.beacon)])
        #expect(removals.allSatisfy { $0.payload.isEmpty && $0.retain && $0.qos == 1 })
        // Placed in a room, or every departure kept retained for other consumers: its room, distance and attributes stay.
        #expect(outputs.removalMessages([Self.beacon], placed: { _ in true }).count == 2)
        var keepingAll = outputs
        keepingAll.retainsAllDepartures = true
        #expect(keepingAll.removalMessages([Self.beacon], placed: { _ in false }).count == 2)
        // A discovery round announces the other and sends nothing for the dismissed one (an empty
        // configuration sent by the round came back on the output's own subscription as a deletion).
        let round = outputs.discoveryMessages(regions: []).map(\.topic)
        #expect(!round.contains(tracker))
        #expect(round.contains(discovery.trackerConfigTopic(object: discovery.beaconObject(other))))
        var without = PresenceOutputs(topics: Self.topics, discovery: nil)
        #expect(without.forget([other]).isEmpty && without.removalMessages([other], placed: { _ in false }).isEmpty, "no discovery, nothing announced")
    }

    @Test("A dismissed beacon stays dismissed at its room changes and departure while it stays around; placed anew (from nowhere) it is announced again and no longer dismissed")
    func dismissedBeaconIsAnnouncedOnlyWhenPlacedAnew() throws {
        let discovery = HomeAssistantDiscovery(topics: Self.topics)
        var outputs = PresenceOutputs(topics: Self.topics, discovery: discovery)
        outputs.restoreAnnounced([Self.beacon])
        outputs.restoreDismissed([Self.beacon])
        #expect(outputs.dismissedBeacons.isEmpty, "announced wins over dismissed (an announcement recorded after the dismissal)")
        outputs.forget([Self.beacon])
        let key = Self.beacon.description
        func change(_ id: Int64, _ scanner: String?, previous: String?) -> StoredEvent {
            var json = #"{"type":"didChangeNearestScanner","beacon":"\#(key)""#
            if let scanner { json += #","scanner":"\#(scanner)""# }
            if let previous { json += #","previous":"\#(previous)""# }
            return Self.event(id, "didChangeNearestScanner", json: json + "}")
        }
        let configs = { (messages: [PresenceMessage]) in messages.filter { $0.topic.hasPrefix("homeassistant/") } }
        // Still around: a room change, then its departure, announce nothing.
        for event in [change(1, "hall", previous: "kitchen"), change(2, nil, previous: "hall")] {
            #expect(configs(outputs.messages(for: event) { _ in nil }).isEmpty, "\(event.json)")
            #expect(!outputs.isBeyondLimit(event, regions: { [] }))
            outputs.published(event)
            #expect(outputs.dismissedBeacons == [Self.beacon] && outputs.announcedBeacons.isEmpty)
        }
        // Its departure is not kept retained (no entity reads it).
        let departure = outputs.messages(for: change(2, nil, previous: "hall")) { _ in nil }.filter { $0.topic == Self.topics.beaconRoom(Self.beacon) }
        #expect(departure.map(\.retain) == [false, true] && departure.last?.payload.isEmpty == true)
        // Placed anew: announced again.
        let placed = change(3, "kitchen", previous: nil)
        #expect(configs(outputs.messages(for: placed) { _ in nil }).map(\.topic) == [discovery.trackerConfigTopic(object: discovery.beaconObject(Self.beacon))],
                "its tracker (no region ranges it: no distance sensor)")
        outputs.published(placed)
        #expect(outputs.announcedBeacons == [Self.beacon] && outputs.dismissedBeacons.isEmpty)
    }

    @Test("Tracker configurations: an emptied one asks for its beacon to be dismissed; a configuration, another topic, or a copy of the output's own removal does not; a configuration after a lost copy clears the expectation")
    func deviceRemovalRequests() async throws {
        let discovery = HomeAssistantDiscovery(topics: Self.topics)
        let removals = TrackerConfigWatch(discovery: discovery)
        let tracker = discovery.trackerConfigTopic(object: discovery.beaconObject(Self.beacon))
        let empty = MQTTMessage(topic: tracker, payload: [], qos: .atLeastOnce)
        let config = MQTTMessage(topic: tracker, payload: Array("{}".utf8), qos: .atLeastOnce)
        #expect(!removals.received(MQTTMessage(topic: "espresense/devices/x/kitchen", payload: [], qos: .atMostOnce)), "a sighting topic is not its")
        #expect(removals.received(config), "a configuration is its, but asks nothing")
        #expect(!removals.isPending)
        #expect(removals.received(empty))
        #expect(removals.isPending)

        // Applied: the store dismisses first, then the outputs; the removal is published.
        let path = TestScratch.directory.appendingPathComponent("rk-removals-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try RegionStore(path: path)
        try store.addAnnouncedBeacons([Self.beacon.description], output: "mqtt:home")
        var outputs = PresenceOutputs(topics: Self.topics, discovery: discovery)
        outputs.restoreAnnounced([Self.beacon])
        var published: [[MQTTMessage]] = []
        var failNext = false
        func apply() async {
            await removals.apply(outputs: { outputs }, update: { outputs = $0 }, messages: { outputs.removalMessages($0, placed: { _ in true }) },
                                 output: "mqtt:home", store: store, publish: { messages in
                                     if failNext { failNext = false; throw MQTTError.notConnected }
                                     published.append(messages)
                                 }, logger: Logger(label: "test"))
        }
        await apply()
        #expect(try store.announcedBeacons("mqtt:home").isEmpty && store.dismissedBeacons("mqtt:home") == [Self.beacon.description])
        #expect(outputs.announcedBeacons.isEmpty && outputs.dismissedBeacons == [Self.beacon] && removals.forgotten == 1 && !removals.isPending)
        #expect(published.map { $0.map(\.topic) } == [[tracker, discovery.distanceConfigTopic(object: discovery.beaconObject(Self.beacon))]])
        // Its own removal comes back on the subscription: not a request.
        #expect(removals.received(empty))
        #expect(!removals.isPending, "the copy of the output's own removal")
        // Deleted again later (after being announced again): that is a request.
        #expect(removals.received(empty))
        #expect(removals.isPending)
        _ = removals.received(config)   // (the request stays until applied)

        // A copy expected but lost: the configuration the output publishes next on the topic
        // (the broker keeps one connection's order) clears the expectation, so a real deletion
        // after it is not taken for the copy.
        outputs.restoreAnnounced([Self.beacon])
        await apply()
        #expect(published.count == 2 && removals.forgotten == 2)
        #expect(removals.received(config), "announced again; the copy of the removal never came")
        #expect(removals.received(empty))
        #expect(removals.isPending, "a deletion, not the lost copy")
        // A failed publication keeps its beacons; the next call sends their removal.
        outputs.restoreAnnounced([Self.beacon])
        failNext = true
        await apply()
        #expect(published.count == 2 && removals.isPending)
        await apply()
        #expect(published.count == 3 && !removals.isPending)
    }

    @Test("A beacon's key in topics and entity ids reads back as the beacon, in every format; any other text, or another spelling of a key, is none")
    func beaconKeysReadBack() throws {
        let eddystone = try #require(BeaconIdentity(eddystoneNamespace: Array(0..<10), instance: [0, 0, 0, 0, 0, 0xa1]))
        let devices = try ["irk:0123456789abcdef0123456789abcdef", "C8:0F:10:4D:C7:EB", "a", "0123456789abcdefWXYZ", "!\"$%&'()*,-.:;<=>?@["]
            .map { try #require(BeaconIdentity(deviceID: $0)) }
        for beacon in [Self.beacon, BeaconIdentity(uuid: Self.uuid, major: 65535, minor: 0, format: .altBeacon), eddystone] + devices {
            #expect(PresenceTopics.beacon(key: PresenceTopics.beaconKey(beacon)) == beacon, "\(PresenceTopics.beaconKey(beacon))")
        }
        for other in ["", "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "e2c56db5-dffb-48d2-b060-d0f5a71096e0-1", "e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2-3",
                      "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-1-2",   // not the lowercase the key has
                      "e2c56db5-dffb-48d2-b060-d0f5a71096e0-01-2",  // a leading zero
                      "e2c56db5-dffb-48d2-b060-d0f5a71096e0-65536-2", "e2c56db5-dffb-48d2-b060-d0f5a71096e0--1-2",
                      "altbeacon-", "eddystone-00", "eddystone-000102030405060708-0000000000a1", "x2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2",
                      "device-", "device-6100", "device-610062",   // (a trailing zero; a zero inside an id)
                      "device-612f62", "device-61206200", "device-c3bc",        // a/b, "a b", non-ASCII: no device has them
                      "device-4A4B", "device-414243444546474849505152535455565758595a5b"] {   // upper-case hex; longer than 20 bytes
            #expect(PresenceTopics.beacon(key: other) == nil, "\(other)")
        }
        // The key of a device: hex of its id's bytes (an IRK's 16 and ffffffff), an entity id's characters only.
        #expect(PresenceTopics.beaconKey(devices[2]) == "device-61")
        #expect(PresenceTopics.beaconKey(devices[0]) == "device-0123456789abcdef0123456789abcdefffffffff")
        for device in devices { #expect(PresenceTopics.beaconKey(device).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) }
        let discovery = HomeAssistantDiscovery(topics: Self.topics)
        #expect(discovery.beacon(trackerConfigTopic: discovery.trackerConfigTopic(object: discovery.beaconObject(eddystone))) == eddystone)
        #expect(discovery.beacon(trackerConfigTopic: discovery.trackerConfigTopic(object: discovery.beaconObject(devices[0]))) == devices[0])
        #expect(discovery.beacon(trackerConfigTopic: "homeassistant/device_tracker/regionkit_home/phone_1/config") == nil)
    }

    @Test("Tracker configurations the broker keeps for beacons not recorded as announced: adopted (recorded first), unless dismissed, within twice the limit; live copies of the output's own configurations are not")
    func unrecordedEntitiesAreAdopted() async throws {
        let discovery = HomeAssistantDiscovery(topics: Self.topics, beacons: BeaconAnnouncement(maximum: 2))
        let watch = TrackerConfigWatch(discovery: discovery)
        let beacons = (1...6).map { BeaconIdentity(uuid: Self.uuid, major: 3, minor: UInt16($0)) }
        let config = { (beacon: BeaconIdentity, retained: Bool) in
            MQTTMessage(topic: discovery.trackerConfigTopic(object: discovery.beaconObject(beacon)), payload: Array("{}".utf8), qos: .atLeastOnce, retain: retained)
        }
        var outputs = PresenceOutputs(topics: Self.topics, discovery: discovery)
        outputs.restoreAnnounced([beacons[0]])
        outputs.restoreDismissed([beacons[1]])
        #expect(watch.received(config(beacons[5], false)) && !watch.isPending, "a live copy (the output's own announcement) is not a find")
        // The announced and the dismissed alone: nothing to do (no wait for the round's lock).
        for beacon in beacons.prefix(2) { _ = watch.received(config(beacon, true)) }
        #expect(watch.isPending)
        watch.discardKnown(outputs)
        #expect(!watch.isPending)
        for beacon in beacons { _ = watch.received(config(beacon, true)) }   // as the broker sends them at a subscription
        #expect(watch.isPending)
        let path = TestScratch.directory.appendingPathComponent("rk-adopt-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try RegionStore(path: path)
        // beacons[2] is recorded already (a round the broker took, its acknowledgement lost with
        // the connection): counted as announced, not as adopted.
        try store.addAnnouncedBeacons([beacons[2].description], output: "mqtt:home")
        await watch.apply(outputs: { outputs }, update: { outputs = $0 }, messages: { outputs.removalMessages($0, placed: { _ in true }) },
                          output: "mqtt:home", store: store, publish: { _ in Issue.record("nothing to publish") }, logger: Logger(label: "test"))
        // Announced already: beacons[0]; dismissed: beacons[1]; room for 2 × 2 − 1 = 3 more, in identity order.
        #expect(outputs.announcedBeacons == Set([beacons[0], beacons[2], beacons[3], beacons[4]]))
        #expect(try store.announcedBeacons("mqtt:home") == [beacons[2], beacons[3], beacons[4]].map(\.description).sorted())
        #expect(outputs.dismissedBeacons == [beacons[1]] && watch.adopted == 2 && !watch.isPending)
    }
}
