import Foundation
import RegionKitCore

/// A Theengs Gateway / OpenMQTTGateway advertisement: topic `home/<gateway>/BTtoMQTT/<mac>`, a JSON
/// object with `id` (the MAC), `rssi`, and either the raw `manufacturerdata` (hex, company id
/// first, little-endian: an iBeacon starts `4c000215`), decoded here with RegionKit's own iBeacon
/// codec (an AltBeacon, company id then `beac`, with the AltBeacon codec), or the decoder's fields
/// `uuid` (32 hex digits), `major`, `minor`, `txpower`; Eddystone arrives as `servicedatauuid`
/// `0xfeaa` with `servicedata` (hex, the frame after the UUID), decoded with the Eddystone codec
/// (UID frames are sightings; a TLM frame is ``SightingMessageDecoder/Outcome/telemetry(_:)`` for
/// the transmitter of the topic; URL frames carry no identity and are ignored). Any other
/// advertisement is a sighting of the device its `id` names (`BeaconIdentity.init(deviceID:)`:
/// its address, or the identity address a resolved IRK gives), with `txpower` as its measured
/// power. The gateway (topic level before `BTtoMQTT`) is the scanner unless the configuration
/// names one.
///
/// Theengs Decoder's iBeacon model (`IBEACON`, theengs/decoder `src/devices/iBeacon_json.h`) reads
/// the byte after the minor as `txpower` when its high bit is set (negative dBm) and otherwise as
/// `volt`, the battery voltage in tenths of a volt (some nRF51822 beacons send it there): a message
/// with `volt` gets no measured power and carries the voltage as the sighting's battery
/// telemetry. Theengs Decoder has no AltBeacon or Eddystone model (its devices as of 2024-10), so
/// those arrive only raw and are decoded here.
///
/// ```swift
/// try TheengsMessage.iBeacon(manufacturerData: "4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")?.identity   // …:1:2
/// ```
public enum TheengsMessage {
    /// The members read; every other one is validated and skipped.
    static let keys = FlatJSONReader.Keys(["rssi", "manufacturerdata", "uuid", "major", "minor", "txpower", "servicedata", "servicedatauuid", "volt", "id", "power"])

    static func decode(topic: String, payload: [UInt8], receivedAt now: Timestamp, scanner: String?) throws(SightingMessageError) -> SightingMessageDecoder.Outcome {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        let marker = levels.lastIndex { $0 == "BTtoMQTT" }
        let fields = try FlatJSONReader.fields(of: payload, keys: keys)
        let (rssiField, manufacturerData, uuidField, majorField, minorField, txPower) = (fields[0], fields[1], fields[2], fields[3], fields[4], fields[5])
        var frame: IBeaconFrame?
        var other: (identity: BeaconIdentity, power: Int)?
        if let hex = try SightingMessageDecoder.optionalString(manufacturerData, "manufacturerdata") {
            frame = try iBeacon(manufacturerData: hex)
            if frame == nil, let alt = try altBeacon(manufacturerData: hex) { other = (alt.identity, Int(alt.referenceRSSI)) }
        }
        if frame == nil, other == nil, let uuidText = try SightingMessageDecoder.optionalString(fields[7], "servicedatauuid"),
           uuidText.lowercased() == "0xfeaa" || uuidText.lowercased() == "feaa",
           let hex = try SightingMessageDecoder.optionalString(fields[6], "servicedata") {
            switch try eddystone(serviceData: hex) {
            case .uid(let uid)?: other = (uid.identity, uid.measuredPower)
            case .tlm(let tlm)?: return .telemetry(tlm)
            case .url?, nil: return .ignored("an Eddystone frame without identity (URL) or not a valid one")
            }
        }
        if let other {
            let rssi = try SightingMessageDecoder.integer(rssiField, "rssi", in: SightingMessageDecoder.rssiRange)
            let name = try gatewayName(topic: topic, levels: levels, marker: marker, scanner: scanner)
            return .sightings([BeaconObservation(identity: other.identity, rssi: rssi, measuredPower: other.power, timestamp: now, scannerID: name)])
        }
        if frame == nil, let uuidText = try SightingMessageDecoder.optionalString(uuidField, "uuid") {
            guard let uuid = UUID(flexibleString: uuidText) else {
                throw SightingMessageError(.malformedField, "field 'uuid' '\(uuidText.prefix(80))' is not 32 hex digits")
            }
            let major = try SightingMessageDecoder.integer(majorField, "major", in: 0...65535)
            let minor = try SightingMessageDecoder.integer(minorField, "minor", in: 0...65535)
            // Theengs Decoder before July 2022 named it `power` (the beacon's measured power was
            // dropped, and the distance model's own reference used).
            let power = try txPower != nil || fields[10] == nil ? SightingMessageDecoder.measuredPower(txPower, "txpower")
                                                                : SightingMessageDecoder.measuredPower(fields[10], "power")
            frame = IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: UInt16(major), minor: UInt16(minor)),
                                 measuredPower: power.map { Int8($0) })
        }
        guard let frame else {
            // Any other device by its address (`id`, the identity address when the gateway resolved
            // a phone's IRK): the engine keeps it only while a device region names it.
            guard let id = try SightingMessageDecoder.optionalString(fields[9], "id") else { return .ignored("not a beacon, and no id") }
            guard let device = BeaconIdentity(deviceID: id), device.deviceAddress != nil else { return .ignored("not a beacon, and an id that is no address") }
            guard rssiField != nil else { return .ignored("a device without rssi") }
            let rssi = try SightingMessageDecoder.integer(rssiField, "rssi", in: SightingMessageDecoder.rssiRange)
            let name = try gatewayName(topic: topic, levels: levels, marker: marker, scanner: scanner)
            // No measured power: a device's `txpower` is its TX Power Level (AD type 0x0A, what the
            // gateway's BLE stack reports as the advertisement's TX power: dBm at the antenna,
            // +12 on many phones), not the RSSI at 1 m a beacon announces. Taken as that, it put
            // a phone at −60 dBm 5,000 km away; the distance model's own reference is closer.
            return .sightings([BeaconObservation(identity: device, rssi: rssi, measuredPower: nil, timestamp: now, scannerID: name)])
        }
        let rssi = try SightingMessageDecoder.integer(rssiField, "rssi", in: SightingMessageDecoder.rssiRange)
        let name = try gatewayName(topic: topic, levels: levels, marker: marker, scanner: scanner)
        // Theengs' `volt`: the power byte was a battery voltage (tenths of a volt), not a measured power.
        let volts = try SightingMessageDecoder.optionalNumber(fields[8], "volt", in: 0...65.535)
        // A power byte no radio could measure (a beacon's own use of it, without `volt`): not set.
        let power = volts == nil ? Int(frame.measuredPower) : 0
        let measured = power != 0 && SightingMessageDecoder.measuredPowerRange.contains(power) ? power : nil
        return .sightings([BeaconObservation(identity: frame.identity, rssi: rssi, measuredPower: measured,
                                             timestamp: now, scannerID: name,
                                             telemetry: SightingMessageDecoder.telemetry(millivolts: volts.map { Int(($0 * 1000).rounded()) }, temperature: nil))])
    }

    /// The scanner: the configured one, else the topic level before `BTtoMQTT`.
    static func gatewayName(topic: String, levels: [Substring], marker: Int?, scanner: String?) throws(SightingMessageError) -> String {
        if let scanner { return scanner }
        guard let marker, marker > levels.startIndex else {
            throw SightingMessageError(.badTopic, "topic '\(topic.prefix(80))' has no gateway level before BTtoMQTT (set the source's scanner)")
        }
        return try SightingMessageDecoder.scannerName(String(levels[marker - 1]), from: "gateway")
    }

    /// The AltBeacon in Theengs' `manufacturerdata` hex, `nil` when it is not one; throws on bad hex.
    public static func altBeacon(manufacturerData hex: String) throws(SightingMessageError) -> AltBeaconFrame? {
        let bytes = try structure(hex, type: IBeaconFrame.adTypeManufacturerSpecific, field: "manufacturerdata", prefix: [])
        return try? AltBeaconFrame.decode(bytes)
    }

    /// The Eddystone frame in Theengs' `servicedata` hex (the frame after the 0xFEAA UUID), `nil`
    /// when it is not a valid one; throws on bad hex.
    public static func eddystone(serviceData hex: String) throws(SightingMessageError) -> EddystoneFrame? {
        let bytes = try structure(hex, type: EddystoneFrame.adTypeServiceData, field: "servicedata", prefix: [0xAA, 0xFE])
        return try? EddystoneFrame.decode(bytes)
    }

    /// One AD structure of `type` holding `prefix` then the bytes of `hex`.
    static func structure(_ hex: String, type: UInt8, field: String, prefix: [UInt8]) throws(SightingMessageError) -> [UInt8] {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0, digits.count / 2 + prefix.count <= 253 else {
            throw SightingMessageError(.malformedField, "field '\(field)' is not an even number of hex digits (at most \(253 - prefix.count) bytes)")
        }
        var bytes: [UInt8] = [UInt8(digits.count / 2 + prefix.count + 1), type] + prefix
        var index = 0
        while index < digits.count {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else {
                throw SightingMessageError(.malformedField, "field '\(field)' has a non-hex digit at position \(index)")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// The iBeacon in Theengs' `manufacturerdata` hex (the Manufacturer Specific Data AD structure's
    /// content), `nil` when it is another company's or another Apple frame; throws on bad hex.
    public static func iBeacon(manufacturerData hex: String) throws(SightingMessageError) -> IBeaconFrame? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0, digits.count <= 2 * 254 else {
            throw SightingMessageError(.malformedField, "field 'manufacturerdata' is not an even number of hex digits (at most 254 bytes)")
        }
        var structure: [UInt8] = [UInt8(digits.count / 2 + 1), IBeaconFrame.adTypeManufacturerSpecific]
        structure.reserveCapacity(2 + digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else {
                throw SightingMessageError(.malformedField, "field 'manufacturerdata' has a non-hex digit at position \(index)")
            }
            structure.append(high << 4 | low)
            index += 2
        }
        return try? IBeaconFrame.decode(structure)
    }

    static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The `manufacturerdata` hex Theengs publishes for an iBeacon frame (lowercase).
    public static func manufacturerData(for frame: IBeaconFrame) -> String {
        let prefix: [UInt8] = [UInt8(IBeaconFrame.appleCompanyID & 0xFF), UInt8(IBeaconFrame.appleCompanyID >> 8),
                               IBeaconFrame.beaconType, IBeaconFrame.beaconPayloadLength]
        return (prefix + frame.payload).map { String(format: "%02x", $0) }.joined()
    }
}
