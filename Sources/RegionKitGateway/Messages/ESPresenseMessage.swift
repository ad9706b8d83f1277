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
    static let keys = FlatJSONReader.Keys(["id", "rssi", "rssi@1m", "distance"])

    static func decode(topic: String, payload: [UInt8], receivedAt now: Timestamp, scanner: String?) throws(SightingMessageError) -> SightingMessageDecoder.Outcome {
        guard let slash = topic.utf8.lastIndex(of: UInt8(ascii: "/")) else {
            throw SightingMessageError(.badTopic, "topic '\(topic.prefix(80))' has no room level (espresense/devices/<id>/<room>)")
        }
        let room = topic[topic.utf8.index(after: slash)...]
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

    /// The iBeacon identity in an ESPresense id, `nil` if it is not `iBeacon:<uuid>-<major>-<minor>`
    /// (the UUID dashed or as 32 hex digits, any case; major and minor decimal, 0...65535).
    public static func identity(fromID id: String) -> BeaconIdentity? {
        var text = id
        return text.withUTF8 { parse($0) }
    }

    /// Reads the id's bytes directly: this runs for every ESPresense message.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> BeaconIdentity? {
        let prefix: StaticString = "iBeacon:"
        guard bytes.count > prefix.utf8CodeUnitCount else { return nil }
        for offset in 0..<prefix.utf8CodeUnitCount where bytes[offset] != prefix.utf8Start[offset] { return nil }
        var index = prefix.utf8CodeUnitCount
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        // Dashed (8-4-4-4-12) or plain: the dash is allowed before nibble 8, 12, 16 and 20 only, and then required at all four.
        let dashed = bytes.count > index + 8 && bytes[index + 8] == UInt8(ascii: "-")
        let parsed = withUnsafeMutableBytes(of: &uuid) { raw -> Bool in
            for nibble in 0..<32 {
                if dashed && (nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20) {
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "-") else { return false }
                    index += 1
                }
                guard index < bytes.count, let value = TheengsMessage.hexValue(bytes[index]) else { return false }
                raw[nibble / 2] |= nibble % 2 == 0 ? value << 4 : value
                index += 1
            }
            return true
        }
        guard parsed else { return nil }
        func number() -> UInt16? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "-") else { return nil }
            index += 1
            var value = 0, digits = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                digits += 1
                guard value <= 65535, digits <= 5 else { return nil }
                index += 1
            }
            return digits > 0 ? UInt16(value) : nil
        }
        guard let major = number(), let minor = number(), index == bytes.count else { return nil }
        return BeaconIdentity(uuid: UUID(uuid: uuid), major: major, minor: minor)
    }

    /// The id ESPresense gives an iBeacon: lowercase dashed UUID, decimal major and minor.
    public static func id(for identity: BeaconIdentity) -> String {
        "iBeacon:\(identity.uuid.uuidString.lowercased())-\(identity.major)-\(identity.minor)"
    }
}
