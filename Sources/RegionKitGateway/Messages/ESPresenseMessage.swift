import Foundation
import RegionKitCore

/// An ESPresense room node's sighting: topic `espresense/devices/<id>/<room>`, a JSON object with
/// `id` (`iBeacon:<uuid>-<major>-<minor>` for iBeacons), `rssi` (filtered, may have decimals),
/// `rssi@1m` (the frame's measured power, or the node's calibration), `distance`, and more that
/// RegionKit does not need. The room (last topic level) is the scanner.
///
/// Field meanings follow ESPresense's `BleFingerprint::fill()`; older firmware (< v4) sent an
/// integer `rssi` and fewer fields, so every field but `id` and `rssi` is optional.
///
/// ```swift
/// try ESPresenseMessage.identity(fromID: "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")   // E2C56DB5-…:1:2
/// ```
public enum ESPresenseMessage {
    /// The members read; every other one is validated and skipped.
    static let keys = ["id", "rssi", "rssi@1m", "distance"]

    static func decode(topic: String, payload: [UInt8], receivedAt now: Timestamp, scanner: String?) throws(SightingMessageError) -> SightingMessageDecoder.Outcome {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count >= 2, let room = levels.last else {
            throw SightingMessageError(.badTopic, "topic '\(topic.prefix(80))' has no room level (espresense/devices/<id>/<room>)")
        }
        let fields = try FlatJSONReader.fields(of: payload, keys: keys)
        guard let id = try SightingMessageDecoder.optionalString(fields[0], "id") else {
            throw SightingMessageError(.missingField, "missing field 'id'")
        }
        guard id.hasPrefix("iBeacon:") else { return .ignored("not an iBeacon id") }
        guard let identity = identity(fromID: id) else {
            throw SightingMessageError(.malformedField, "field 'id' '\(id.prefix(80))' is not iBeacon:<uuid>-<major>-<minor>")
        }
        let rssi = try SightingMessageDecoder.integer(fields[1], "rssi", in: SightingMessageDecoder.rssiRange)
        let power = try SightingMessageDecoder.measuredPower(fields[2], "rssi@1m")
        if case let .number(distance)? = fields[3], !(distance.isFinite && distance >= 0) {
            throw SightingMessageError(.outOfRange, "field 'distance' = \(distance) is not a distance in metres")
        }
        let name: String
        if let scanner { name = scanner } else { name = try SightingMessageDecoder.scannerName(String(room), from: "room") }
        return .sightings([BeaconObservation(identity: identity, rssi: rssi, measuredPower: power, timestamp: now, scannerID: name)])
    }

    /// The iBeacon identity in an ESPresense id, `nil` if it is not `iBeacon:<uuid>-<major>-<minor>`.
    public static func identity(fromID id: String) -> BeaconIdentity? {
        guard id.hasPrefix("iBeacon:") else { return nil }
        let parts = id.dropFirst("iBeacon:".count).split(separator: "-", omittingEmptySubsequences: false)
        // 5 dashed UUID groups (or one undashed) + major + minor.
        guard parts.count == 7 || parts.count == 3 else { return nil }
        let uuidText = parts.dropLast(2).joined(separator: "-")
        guard let uuid = UUID(flexibleString: uuidText),
              let major = UInt16(parts[parts.count - 2]), let minor = UInt16(parts[parts.count - 1]) else { return nil }
        return BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }

    /// The id ESPresense gives an iBeacon: lowercase dashed UUID, decimal major and minor.
    public static func id(for identity: BeaconIdentity) -> String {
        "iBeacon:\(identity.uuid.uuidString.lowercased())-\(identity.major)-\(identity.minor)"
    }
}
