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
        base = "regionkit/" + Self.level(site)
    }

    /// Every logged event, QoS 1, not retained.
    public var events: String { base + "/events" }
    /// `online` (retained) while the daemon is connected; the will sets `offline`.
    public var status: String { base + "/status" }
    public func regionState(_ identifier: String) -> String { base + "/regions/" + Self.level(identifier) + "/state" }
    public func beaconRoom(_ identity: BeaconIdentity) -> String { base + "/beacons/" + Self.beaconKey(identity) + "/room" }
    public func beaconDistance(_ identity: BeaconIdentity) -> String { base + "/beacons/" + Self.beaconKey(identity) + "/distance" }
    /// JSON attributes of a beacon (rssi, proximity, distance, room, last seen).
    public func beaconAttributes(_ identity: BeaconIdentity) -> String { base + "/beacons/" + Self.beaconKey(identity) + "/attributes" }
    /// Home Assistant's `mqtt_room` sensors read `<this>/<room>`.
    public var mqttRoom: String { base + "/mqtt_room" }

    /// A beacon's key in topics and entity ids: lowercase dashed UUID, major, minor (an iBeacon);
    /// `altbeacon-` before the same for an AltBeacon; `eddystone-<namespace>-<instance>` (hex).
    public static func beaconKey(_ identity: BeaconIdentity) -> String {
        switch identity.format {
        case .iBeacon: "\(identity.uuid.uuidString.lowercased())-\(identity.major)-\(identity.minor)"
        case .altBeacon: "altbeacon-\(identity.uuid.uuidString.lowercased())-\(identity.major)-\(identity.minor)"
        case .eddystoneUID: "eddystone-\(BeaconIdentity.hex(identity.namespace))-\(BeaconIdentity.hex(identity.instance))"
        }
    }

    /// A user string made safe as one topic level and as a Home Assistant object id: letters,
    /// digits, `_` and `-` are kept, anything else becomes `_` (`+`, `#`, `/` would change the
    /// topic's meaning); an empty result becomes `_`.
    public static func level(_ text: String) -> String {
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
