import Foundation
import RegionKitCore

/// The topics RegionKit publishes on for one site, and the names it derives from region
/// identifiers and beacon identities.
///
/// ```swift
/// let topics = PresenceTopics(site: "home")
/// topics.events                                     // "regionkit/home/events"
/// topics.regionState("lobby")                       // "regionkit/home/regions/lobby/state"
/// topics.beaconRoom(identity)                       // "regionkit/home/beacons/e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2/room"
/// ```
public struct PresenceTopics: Hashable, Sendable {
    /// The site's name as given (used in the base topic after sanitising).
    public var site: String
    /// `regionkit/<site>`.
    public var base: String

    public init(site: String) {
        self.site = site
        base = "regionkit/" + Self.sanitized(site)
    }

    /// Every logged event, QoS 1, not retained.
    public var events: String { base + "/events" }
    /// `online` (retained) while the daemon is connected; the will sets `offline`.
    public var status: String { base + "/status" }
    public func regionState(_ identifier: String) -> String { regionStateTopic(level: Self.level(identifier)) }
    /// The state topic of the region whose topic level is `level`.
    public func regionStateTopic(level: String) -> String { base + "/regions/" + level + "/state" }
    public func beaconRoom(_ identity: BeaconIdentity) -> String { base + "/beacons/" + Self.beaconKey(identity) + "/room" }
    public func beaconDistance(_ identity: BeaconIdentity) -> String { base + "/beacons/" + Self.beaconKey(identity) + "/distance" }
    /// What a beacon's Home Assistant `device_tracker` reads (its `json_attributes_topic`):
    /// `{"in_zones":["zone.home"],"room":"<room>"}` while the beacon is in a room, else
    /// `{"in_zones":[],"room":"not_home"}` (``HomeAssistantDiscovery/trackerAttributes(room:)``).
    public func beaconTracker(_ identity: BeaconIdentity) -> String { base + "/beacons/" + Self.beaconKey(identity) + "/tracker" }
    /// JSON attributes of a beacon (rssi, proximity, distance, room, last seen).
    public func beaconAttributes(_ identity: BeaconIdentity) -> String { base + "/beacons/" + Self.beaconKey(identity) + "/attributes" }
    /// Home Assistant's `mqtt_room` sensors read `<this>/<room>`.
    public var mqttRoom: String { base + "/mqtt_room" }

    /// Whether `topic` is one this site publishes (events, status, a region's state, a beacon's
    /// room, distance, tracker or attributes, an `mqtt_room` sensor's): what a source subscribed
    /// with `regionkit/#` or `#` gets back from the broker (MQTT 3.1.1 has no "no local"), which
    /// the hub must not read as sightings. Other topics under the site's base are not.
    ///
    /// ```swift
    /// PresenceTopics(site: "home").isOwnOutput("regionkit/home/events")            // true
    /// PresenceTopics(site: "home").isOwnOutput("regionkit/home/scanners/kitchen")  // false
    /// ```
    public func isOwnOutput(_ topic: String) -> Bool {
        guard topic.hasPrefix(base), topic.utf8.dropFirst(base.utf8.count).first == UInt8(ascii: "/") else { return false }
        let levels = topic.utf8.dropFirst(base.utf8.count + 1).split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        func level(_ index: Int, is name: String) -> Bool { levels[index].elementsEqual(name.utf8) }
        switch levels.count {
        case 1: return level(0, is: "events") || level(0, is: "status")
        case 2: return level(0, is: "mqtt_room")
        case 3:
            if level(0, is: "regions") { return level(2, is: "state") }
            return level(0, is: "beacons") && ["room", "distance", "tracker", "attributes"].contains { level(2, is: $0) }
        default: return false
        }
    }

    /// A beacon's key in topics and entity ids: lowercase dashed UUID, major, minor (an iBeacon);
    /// `altbeacon-` before the same for an AltBeacon; `eddystone-<namespace>-<instance>` (hex);
    /// `device-` and the hex of a device's identity bytes (its id's bytes; an `irk:` key's 16 and
    /// `ffffffff`), so any id a device may have is a topic level and an entity id.
    public static func beaconKey(_ identity: BeaconIdentity) -> String {
        switch identity.format {
        case .iBeacon: "\(identity.uuid.uuidString.lowercased())-\(identity.major)-\(identity.minor)"
        case .altBeacon: "altbeacon-\(identity.uuid.uuidString.lowercased())-\(identity.major)-\(identity.minor)"
        case .eddystoneUID: "eddystone-\(BeaconIdentity.hex(identity.namespace))-\(BeaconIdentity.hex(identity.instance))"
        case .device: "device-" + BeaconIdentity.hex(deviceBytes(identity))
        }
    }

    /// A device's 20 identity bytes without the zeros that pad a short id (its key stays short).
    private static func deviceBytes(_ identity: BeaconIdentity) -> ArraySlice<UInt8> {
        let bytes = identity.uuidBytes + [UInt8(identity.major >> 8), UInt8(identity.major & 0xFF), UInt8(identity.minor >> 8), UInt8(identity.minor & 0xFF)]
        return bytes[..<((bytes.lastIndex { $0 != 0 } ?? -1) + 1)]
    }

    /// The beacon whose ``beaconKey(_:)`` is `key`, or nil when `key` is no beacon's key (only the
    /// exact form ``beaconKey(_:)`` writes: lowercase, no leading zeros).
    ///
    /// ```swift
    /// PresenceTopics.beacon(key: "e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")   // the iBeacon 1/2
    /// ```
    public static func beacon(key: String) -> BeaconIdentity? {
        var parsed: BeaconIdentity?
        if key.hasPrefix("device-") {
            if var bytes = BeaconIdentityConstraint.bytes(hex: String(key.dropFirst("device-".count))), (1...20).contains(bytes.count) {
                bytes += [UInt8](repeating: 0, count: 20 - bytes.count)
                let identity = BeaconIdentity(uuid: UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                                                                bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])),
                                              major: UInt16(bytes[16]) << 8 | UInt16(bytes[17]), minor: UInt16(bytes[18]) << 8 | UInt16(bytes[19]), format: .device)
                // Only bytes a device id gives (no zero inside an id, no byte it may not have).
                parsed = identity.deviceID.flatMap(BeaconIdentity.init(deviceID:)) == identity ? identity : nil
            }
        } else if key.hasPrefix("eddystone-") {
            let parts = key.dropFirst("eddystone-".count).split(separator: "-", omittingEmptySubsequences: false)
            if parts.count == 2, let namespace = BeaconIdentityConstraint.bytes(hex: String(parts[0])),
               let instance = BeaconIdentityConstraint.bytes(hex: String(parts[1])) {
                parsed = BeaconIdentity(eddystoneNamespace: namespace, instance: instance)
            }
        } else {
            let format: BeaconFormat = key.hasPrefix("altbeacon-") ? .altBeacon : .iBeacon
            let rest = format == .altBeacon ? key.dropFirst("altbeacon-".count) : Substring(key)
            // 36 characters of dashed UUID, then -major-minor.
            let numbers = rest.dropFirst(36).split(separator: "-", omittingEmptySubsequences: false)
            if rest.count > 37, numbers.count == 3, numbers[0].isEmpty, let uuid = UUID(uuidString: String(rest.prefix(36))),
               let major = UInt16(numbers[1]), let minor = UInt16(numbers[2]) {
                parsed = BeaconIdentity(uuid: uuid, major: major, minor: minor, format: format)
            }
        }
        // The exact form only, so one beacon has one key.
        guard let parsed, beaconKey(parsed) == key else { return nil }
        return parsed
    }

    /// A region's identifier as one topic level and Home Assistant unique id part,
    /// one-to-one: an identifier of letters, digits, `_` and `-` only is used as it is; any other
    /// becomes its ``sanitized(_:)`` form, `_` and 8 hex digits of the identifier's hash (FNV-1a,
    /// 32 bits, of its UTF-8), so `Room 1` and `Room_1`, or `кухня` and `спаль` (both `_____`
    /// once sanitized), no longer share topics and entities.
    ///
    /// ```swift
    /// PresenceTopics.level("lobby")     // "lobby"
    /// PresenceTopics.level("Room 1")    // "Room_1_" + 8 hex digits
    /// ```
    public static func level(_ text: String) -> String {
        let sanitized = sanitized(text)
        guard sanitized != text else { return text }
        let hex = String(FNV1a.hash32(text.utf8), radix: 16)
        return sanitized + "_" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// A room (scanner) name as the last level of Home Assistant's `mqtt_room` topics, which HA
    /// shows as the room's name: kept as it is (`Küche`, `キッチン`), except what a topic level
    /// cannot hold (`/`, `+`, `#`, control characters, Unicode noncharacters: Mosquitto
    /// disconnects a client that publishes one) and what NATS's MQTT listener refuses in a topic
    /// (space, `.`), each replaced by `_` (`Living room` → `Living_room`, as before); an empty
    /// name becomes `_`. (`ScannerName` keeps control characters and noncharacters out of the
    /// names that come in; this is the topic's own guard.)
    public static func roomLevel(_ name: String) -> String {
        var kept = ""
        for scalar in name.unicodeScalars {
            switch scalar {
            case "/", "+", "#", " ", ".": kept.append("_")
            default:
                if scalar.properties.generalCategory == .control || scalar.properties.isNoncharacterCodePoint {
                    kept.append("_")
                } else {
                    kept.unicodeScalars.append(scalar)
                }
            }
        }
        return kept.isEmpty ? "_" : kept
    }

    /// A user string made safe as one topic level and as a Home Assistant object id: letters,
    /// digits, `_` and `-` are kept, anything else becomes `_` (`+`, `#`, `/` would change the
    /// topic's meaning); an empty result becomes `_`. Not one-to-one: used for the site's name
    /// (one per daemon) and scanners' names; regions use ``level(_:)``, rooms ``roomLevel(_:)``. (Regions used it
    /// too before session 45: ``PresenceOutputs`` clears the topics and entities that left behind.)
    public static func sanitized(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "_", "-": result.unicodeScalars.append(scalar)
            default: result.append("_")
            }
        }
        return result.isEmpty ? "_" : result
    }
}
