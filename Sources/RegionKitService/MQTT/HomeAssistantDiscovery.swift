import RegionKit
import RegionKitCore

/// Home Assistant MQTT discovery for one site: a `binary_sensor` (device class `presence`) per
/// beacon region, a `device_tracker` (source type `bluetooth_le`, state `home` in any room, else
/// `not_home`, by its `in_zones` attribute) and a distance `sensor` per tracked beacon, all with unique ids, a device block and availability on
/// the daemon's status topic. Config topics are retained; an empty retained payload removes an
/// entity. Keys follow Home Assistant's MQTT integration documentation.
///
/// ```swift
/// let discovery = HomeAssistantDiscovery(topics: PresenceTopics(site: "home"))
/// discovery.regionConfig(region)      // homeassistant/binary_sensor/regionkit_home/lobby/config
/// discovery.regionRemoval("lobby")    // same topic, empty retained payload
/// ```
public struct HomeAssistantDiscovery: Hashable, Sendable {
    public var topics: PresenceTopics
    /// The discovery prefix (`homeassistant` by default).
    public var prefix: String
    /// The version reported in the device block (`sw_version`; RegionKit's own by default).
    public var softwareVersion: String
    /// Which beacons get entities, and how many at most.
    public var beacons: BeaconAnnouncement
    /// Where Home Assistant says `online` when it (re)starts (its MQTT birth message); `nil`:
    /// see ``statusTopics``.
    public var birthTopic: String?
    /// What each beacon's `device_tracker` shows.
    public var trackerState: TrackerState

    /// What a beacon's `device_tracker` shows as its state. Either way its attributes carry the
    /// room (`room`) and its zones (`in_zones`), the room topic carries the room's name, and the
    /// distance sensor's attributes the distance, RSSI and proximity.
    public enum TrackerState: String, Codable, Sendable, Hashable, CaseIterable {
        /// The room the beacon is in, or `not_home`, read from the room topic (`state_topic`):
        /// the room at a glance, but Home Assistant's `person` takes a tracker that is not GPS
        /// into account only when its state is `home` or `not_home`. Home Assistant deprecated a
        /// tracker's `state_topic` (it logs a warning for each such tracker, and announced the end
        /// of its support for 2027.1); its `in_zones` attribute still says home / not home.
        case room
        /// `home` while the beacon is in any room, else `not_home`, from the `in_zones` attribute
        /// on ``PresenceTopics/beaconTracker(_:)`` (no `state_topic`): what a `person` needs, and
        /// the form Home Assistant asks MQTT trackers to use.
        case home
    }

    public init(topics: PresenceTopics, prefix: String = "homeassistant", softwareVersion: String = RegionKitVersion.current,
                beacons: BeaconAnnouncement = BeaconAnnouncement(), birthTopic: String? = nil, trackerState: TrackerState = .home) {
        self.topics = topics
        self.prefix = prefix
        self.softwareVersion = softwareVersion
        self.beacons = beacons
        self.birthTopic = birthTopic
        self.trackerState = trackerState
    }

    /// Home Assistant's default birth topic, whatever its discovery prefix.
    public static let defaultBirthTopic = "homeassistant/status"

    /// The topics whose `online` re-sends discovery: ``birthTopic`` when set; otherwise Home
    /// Assistant's default, `homeassistant/status`, and `<prefix>/status` beside it for a prefix
    /// of its own. Home Assistant keeps its birth topic when its discovery prefix is changed (two
    /// separate settings), so a hub with `prefix: ha2` that listened on `ha2/status` only never
    /// heard Home Assistant restart, and its entities stayed gone until the hub restarted.
    ///
    /// ```swift
    /// HomeAssistantDiscovery(topics: topics).statusTopics                  // ["homeassistant/status"]
    /// HomeAssistantDiscovery(topics: topics, prefix: "ha2").statusTopics   // ["homeassistant/status", "ha2/status"]
    /// ```
    public var statusTopics: [String] {
        if let birthTopic { return [birthTopic] }
        let own = prefix + "/status"
        return own == Self.defaultBirthTopic ? [own] : [Self.defaultBirthTopic, own]
    }

    /// The node id grouping this site's entities.
    public var nodeID: String { "regionkit_" + PresenceTopics.sanitized(topics.site) }

    var hubDevice: JSONLine {
        var device = JSONLine()
        device.addRaw("identifiers", json: "[\(JSONLine.quote(nodeID))]")
        device.add("name", "RegionKit \(topics.site)")
        device.add("manufacturer", "RegionKit")
        device.add("model", "regionkit run")
        device.add("sw_version", softwareVersion)
        return device
    }

    /// A valid Home Assistant object id for `text`: lowercase letters, digits and single `_`, no
    /// `_` at either end (what Home Assistant's entity id check accepts, and what its slugify
    /// leaves unchanged); `regionkit` if nothing is left.
    static func entitySlug(_ text: String) -> String {
        var slug = ""
        for scalar in text.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                slug.unicodeScalars.append(scalar)
            } else if !slug.isEmpty && !slug.hasSuffix("_") {
                slug.append("_")
            }
        }
        while slug.hasSuffix("_") { slug.removeLast() }
        return slug.isEmpty ? "regionkit" : slug
    }

    /// The keys every entity has. `default_entity_id` (`<component>.<slug of the unique id>`) is what Home
    /// Assistant 2025.10 and later take for the entity id: `object_id`, sent before, is
    /// deprecated there and ignored since 2026.4. `name` nil: the entity is its device's main
    /// feature and takes the device's name (JSON null; an entity name equal to its device's is
    /// reported as a repair issue).
    /// `entityID`: the object id to ask for, when not the unique id's slug.
    func common(_ line: inout JSONLine, component: String, uniqueID: String, name: String?, entityID: String? = nil) {
        line.add("unique_id", uniqueID)
        line.add("default_entity_id", "\(component).\(Self.entitySlug(entityID ?? uniqueID))")
        if let name { line.add("name", name) } else { line.addRaw("name", json: "null") }
        line.add("availability_topic", topics.status)
        line.add("payload_available", "online")
        line.add("payload_not_available", "offline")
    }

    // MARK: Regions

    func regionTopic(_ identifier: String) -> String { regionTopic(level: PresenceTopics.level(identifier)) }

    /// The configuration topic of the region whose topic level is `level`.
    func regionTopic(level: String) -> String { "\(prefix)/binary_sensor/\(nodeID)/\(level)/config" }

    /// The presence `binary_sensor` of a beacon region (state `ON` inside, `OFF` outside).
    public func regionConfig(_ region: Region) -> PresenceMessage {
        var line = JSONLine()
        // The entity id from the sanitized identifier, as before topic levels became one-to-one: a
        // region whose unique id moved (its identifier is not letters, digits, _ and -) gets its
        // entity id back once the old entity is removed, so automations naming it keep working.
        // (Two regions asking for one id: Home Assistant numbers the second.)
        common(&line, component: "binary_sensor", uniqueID: "\(nodeID)_region_\(PresenceTopics.level(region.identifier))", name: region.identifier,
               entityID: "\(nodeID)_region_\(PresenceTopics.sanitized(region.identifier))")
        line.add("device_class", "presence")
        line.add("state_topic", topics.regionState(region.identifier))
        // The state topic carries inside / outside / unknown; unknown shows as unknown, not off.
        line.add("value_template", "{% if value == 'inside' %}ON{% elif value == 'outside' %}OFF{% else %}None{% endif %}")
        line.add("payload_on", "ON")
        line.add("payload_off", "OFF")
        line.add("device", object: hubDevice)
        return PresenceMessage(topic: regionTopic(region.identifier), text: line.text, qos: 1, retain: true)
    }

    /// Removes a region's entity (empty retained config).
    public func regionRemoval(_ identifier: String) -> PresenceMessage {
        PresenceMessage(topic: regionTopic(identifier), payload: [], qos: 1, retain: true)
    }

    // MARK: Beacons

    func beaconObject(_ identity: BeaconIdentity) -> String { "ibeacon_" + PresenceTopics.beaconKey(identity) }

    /// `iBeacon 1/2`, `AltBeacon 1/2`, `Eddystone 0000000000a1`; a device's id (`alice-phone`).
    static func beaconName(_ identity: BeaconIdentity) -> String {
        switch identity.format {
        case .iBeacon: "iBeacon \(identity.major)/\(identity.minor)"
        case .altBeacon: "AltBeacon \(identity.major)/\(identity.minor)"
        case .eddystoneUID: "Eddystone \(BeaconIdentity.hex(identity.instance))"
        case .device: identity.deviceID ?? ""
        }
    }

    func beaconDevice(_ identity: BeaconIdentity) -> JSONLine {
        var device = JSONLine()
        device.addRaw("identifiers", json: "[\(JSONLine.quote("\(nodeID)_\(beaconObject(identity))"))]")
        device.add("name", Self.beaconName(identity))
        switch identity.format {
        case .iBeacon, .altBeacon:
            device.add("manufacturer", identity.format == .iBeacon ? "iBeacon" : "AltBeacon")
            device.add("model", identity.uuid.uuidString)
        case .eddystoneUID:
            device.add("manufacturer", "Eddystone")
            device.add("model", BeaconIdentity.hex(identity.namespace))
        case .device:
            device.add("model", identity.deviceAddress != nil ? "Bluetooth address" : identity.deviceID?.hasPrefix("irk:") == true ? "Bluetooth IRK" : "Bluetooth device")
        }
        // No `via_device`: the hub device exists only while a beacon region's entity names it, and
        // Home Assistant warns about (and will refuse) a reference to a device it does not know.
        return device
    }

    /// The `device_tracker` (state `home` or `not_home` from its `in_zones` attribute; the room,
    /// or `not_home`, with ``TrackerState/room``) and the distance `sensor` of a beacon (its
    /// attributes: RSSI, proximity, distance, room, telemetry).
    /// `ranged`: whether the beacon's distance is measured (a monitored beacon region matches it,
    /// and ranging follows the regions); a beacon that is not gets no distance sensor, which would
    /// stay unknown for ever. (One announced before is not removed: at a start, before the regions
    /// are restored, every beacon looks unmatched, and a removal would delete the user's own.)
    public func beaconConfigs(_ identity: BeaconIdentity, ranged: Bool = true) -> [PresenceMessage] {
        let object = beaconObject(identity)
        var tracker = JSONLine()
        common(&tracker, component: "device_tracker", uniqueID: "\(nodeID)_\(object)", name: nil)
        if trackerState == .room {
            // Home Assistant's deprecated form: the room topic's text is the state.
            tracker.add("state_topic", topics.beaconRoom(identity))
            tracker.add("payload_home", "home")
            tracker.add("payload_not_home", "not_home")
        }
        tracker.add("source_type", "bluetooth_le")
        tracker.add("json_attributes_topic", topics.beaconTracker(identity))
        tracker.add("device", object: beaconDevice(identity))
        var distance = JSONLine()
        common(&distance, component: "sensor", uniqueID: "\(nodeID)_\(object)_distance", name: "Distance")
        distance.add("state_topic", topics.beaconDistance(identity))
        distance.add("device_class", "distance")
        distance.add("unit_of_measurement", "m")
        distance.add("state_class", "measurement")
        distance.add("suggested_display_precision", 1)
        distance.add("json_attributes_topic", topics.beaconAttributes(identity))
        distance.add("device", object: beaconDevice(identity))
        let trackerConfig = PresenceMessage(topic: trackerConfigTopic(object: object), text: tracker.text, qos: 1, retain: true)
        guard ranged else { return [trackerConfig] }
        return [trackerConfig, PresenceMessage(topic: distanceConfigTopic(object: object), text: distance.text, qos: 1, retain: true)]
    }

    /// What ``PresenceTopics/beaconTracker(_:)`` carries for a beacon in `room` (nil: in none):
    /// Home Assistant's tracker takes its state from `in_zones` (`zone.home`: `home`; none:
    /// `not_home`), and keeps `room` as an attribute.
    ///
    /// ```swift
    /// HomeAssistantDiscovery.trackerAttributes(room: "kitchen")   // {"in_zones":["zone.home"],"room":"kitchen"}
    /// HomeAssistantDiscovery.trackerAttributes(room: nil)         // {"in_zones":[],"room":"not_home"}
    /// ```
    public static func trackerAttributes(room: String?) -> String {
        var line = JSONLine()
        line.addRaw("in_zones", json: room == nil ? "[]" : #"["zone.home"]"#)
        line.add("room", room ?? "not_home")
        return line.text
    }

    /// The configuration topic of the `device_tracker` of the beacon whose object id is `object`.
    func trackerConfigTopic(object: String) -> String { "\(prefix)/device_tracker/\(nodeID)/\(object)/config" }

    /// The configuration topic of the distance `sensor` of the beacon whose object id is `object`.
    func distanceConfigTopic(object: String) -> String { "\(prefix)/sensor/\(nodeID)/\(object)_distance/config" }

    /// The subscription filter of every beacon's `device_tracker` configuration topic of this
    /// site. Home Assistant empties a device's configuration topics (an empty retained message)
    /// when the user deletes the device: the hub reads that to forget the beacon.
    public var trackerConfigFilter: String { trackerConfigTopic(object: "+") }

    /// The beacon object id (``beaconObject(_:)``) whose tracker configuration topic is `topic`, or
    /// nil for any other topic.
    func trackerObject(configTopic topic: String) -> String? {
        let start = "\(prefix)/device_tracker/\(nodeID)/", end = "/config"
        guard topic.count > start.count + end.count, topic.hasPrefix(start), topic.hasSuffix(end) else { return nil }
        let object = topic.dropFirst(start.count).dropLast(end.count)
        return object.contains("/") ? nil : String(object)
    }

    /// The beacon whose tracker configuration topic is `topic` (``trackerConfigTopic(object:)``), or nil.
    func beacon(trackerConfigTopic topic: String) -> BeaconIdentity? {
        guard let object = trackerObject(configTopic: topic), object.hasPrefix("ibeacon_") else { return nil }
        return PresenceTopics.beacon(key: String(object.dropFirst("ibeacon_".count)))
    }

    /// Removes a beacon's entities (empty retained configurations of its tracker and its distance sensor).
    public func beaconRemovals(_ identity: BeaconIdentity) -> [PresenceMessage] {
        let object = beaconObject(identity)
        return [trackerConfigTopic(object: object), distanceConfigTopic(object: object)].map { PresenceMessage(topic: $0, payload: [], qos: 1, retain: true) }
    }
}
