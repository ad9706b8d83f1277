import Foundation
import RegionKitCore

/// An ESPresense room node's sighting: topic `espresense/devices/<id>/<room>`, a JSON object with
/// `id` (`iBeacon:<uuid>-<major>-<minor>` for iBeacons, `altBeacon:<id1>-<id2>-<id3>` for AltBeacons,
/// `eddy:<namespace hex>-<instance hex>` for Eddystone-UID; any other id names a device that is no
/// beacon, `BeaconIdentity.init(deviceID:)`), `rssi` (filtered, may have decimals),
/// `rssi@1m` (the frame's measured power, or the node's calibration), `mV` and `temp` (battery in
/// millivolts and temperature in °C, which the node decodes from the transmitter's Eddystone-TLM
/// frames: ESPresense `src/BleFingerprint.cpp`, `fill()` and the `EDDYSTONE_TLM_FRAME_TYPE`
/// branch; they become the sighting's `BeaconObservation.telemetry`), and more that RegionKit does
/// not need: `distance` among them (the node's own estimate; RegionKit estimates from the RSSI),
/// whose value, whatever it is (−1 from a node without one), never costs the sighting. The room
/// (last topic level) is the scanner.
///
/// Field meanings follow ESPresense's `BleFingerprint::fill()`; older firmware (< v4) sent an
/// integer `rssi` and fewer fields, so every field but `id` and `rssi` is optional.
///
/// ```swift
/// try ESPresenseMessage.identity(fromID: "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")   // E2C56DB5-…:1:2
/// ```
public enum ESPresenseMessage {
    /// The members read; every other one is validated and skipped.
    static let keys = FlatJSONReader.Keys(["id", "rssi", "rssi@1m", "mV", "temp"])

    static func decode(topic: String, payload: [UInt8], receivedAt now: Timestamp, scanner: String?) throws(SightingMessageError) -> SightingMessageDecoder.Outcome {
        guard let slash = topic.utf8.lastIndex(of: UInt8(ascii: "/")) else {
            throw SightingMessageError(.badTopic, "topic '\(topic.prefix(80))' has no room level (espresense/devices/<id>/<room>)")
        }
        let room = topic[topic.utf8.index(after: slash)...]
        let fields = try FlatJSONReader.fields(of: payload, keys: keys)
        guard let id = try SightingMessageDecoder.optionalString(fields[0], "id") else {
            throw SightingMessageError(.missingField, "missing field 'id'")
        }
        let identity: BeaconIdentity
        if id.hasPrefix("iBeacon:") || id.hasPrefix("altBeacon:") {
            guard let parsed = Self.identity(fromID: id) else {
                throw SightingMessageError(.malformedField, "field 'id' '\(id.prefix(80))' is not \(id.hasPrefix("i") ? "iBeacon" : "altBeacon"):<uuid>-<major>-<minor>")
            }
            identity = parsed
        } else if id.hasPrefix("eddy:") {
            guard let parsed = Self.eddystoneIdentity(fromID: id) else {
                throw SightingMessageError(.malformedField, "field 'id' '\(id.prefix(80))' is not eddy:<namespace, 20 hex digits>-<instance, 12 hex digits>")
            }
            identity = parsed
        } else if let device = BeaconIdentity(deviceID: id) {
            // A phone (irk:…), an address, a tracker or an alias: the engine keeps it only while
            // a device region names it.
            identity = device
        } else {
            return .ignored("not a beacon's id, and too long or not printable to name a device")
        }
        let rssi = try SightingMessageDecoder.integer(fields[1], "rssi", in: SightingMessageDecoder.rssiRange)
        let power = try SightingMessageDecoder.measuredPower(fields[2], "rssi@1m")
        // Telemetry never costs the sighting: a value out of range is dropped (that field only).
        let millivolts = try SightingMessageDecoder.telemetryNumber(fields[3], "mV").flatMap { $0 >= 0 && $0 <= 65535.5 ? Int($0.rounded()) : nil }
        let temperature = try SightingMessageDecoder.telemetryNumber(fields[4], "temp").flatMap(Self.temperature(fromTemp:))
        let name: String
        if let scanner { name = scanner } else { name = try SightingMessageDecoder.scannerName(String(room), from: "room") }
        return .sightings([BeaconObservation(identity: identity, rssi: rssi, measuredPower: power, timestamp: now, scannerID: name,
                                             telemetry: SightingMessageDecoder.telemetry(millivolts: millivolts, temperature: temperature))])
    }

    /// The temperature in an ESPresense `temp`, nil when it is TLM's "not supported" or cannot be a
    /// TEMP reading (then only the temperature is dropped, never the sighting or its battery).
    ///
    /// ESPresense (src/BleFingerprint.cpp at a6f1105e, `fingerprintServiceData`, the
    /// `EDDYSTONE_TLM_FRAME_TYPE` branch) sets `temp = oBeacon.getTemp()` and `mv = oBeacon.getVolt()`
    /// from every TLM frame, and `fill()` publishes `temp` as `String(temp, 2)` whenever it is
    /// non-zero, also next to an `iBeacon:` id, and `mV` whenever non-zero. `getTemp()` comes from
    /// the NimBLE-Arduino it is built with (the TLM branch is compiled without `NIMBLE_V2` only):
    /// ESPresense's platformio.ini pins its fork ESPresense/NimBLE-Arduino#1.4.0, whose
    /// src/NimBLEEddystoneTLM.cpp (master at 18947bc) returns `ENDIAN_CHANGE_U16(temp) / 256.0f`
    /// with `ENDIAN_CHANGE_U16(x)` = `((x & 0xFF00) >> 8) + ((x & 0xFF) << 8)`, *unsigned*, as
    /// h2zero/NimBLE-Arduino 1.4.0 and 1.4.1 do: TEMP 0x8000 ("not supported") arrives as 128.00
    /// and a negative temperature as 128.01…256.00 (−0.5 °C, 0xFF80, as 255.50). h2zero 1.4.2
    /// casts to `int16_t` first, signed: 0x8000 arrives as −128.00. Hence: −128.00 and 128.00 are
    /// "not supported"; 128 < t ≤ 256 is the unsigned build's t − 256; −128 < t < 128 is t;
    /// anything else is dropped. (`getVolt()` is `uint16_t`, so `mV` is 1…65535.)
    static func temperature(fromTemp value: Double) -> Double? {
        if value > -128, value < 128 { return value }
        if value > 128, value <= 256 { return value - 256 }
        return nil
    }

    /// The iBeacon or AltBeacon identity in an ESPresense id, `nil` if it is not
    /// `iBeacon:<uuid>-<major>-<minor>` or `altBeacon:<id1>-<id2>-<id3>` (the UUID dashed or as 32
    /// hex digits, any case; the numbers decimal, 0...65535).
    public static func identity(fromID id: String) -> BeaconIdentity? {
        var text = id
        if id.hasPrefix("altBeacon:") { return text.withUTF8 { parse($0, prefix: "altBeacon:", format: .altBeacon) } }
        return text.withUTF8 { parse($0) }
    }

    /// The Eddystone-UID identity in an ESPresense id `eddy:<namespace>-<instance>`. ESPresense's
    /// `BleFingerprint::fingerprintServiceData` prints the namespace with its fifth byte twice (22
    /// hex digits; its format string repeats `strServiceData[6]`); both that and the correct 20
    /// digits are read (the repeated byte must equal the one before it).
    public static func eddystoneIdentity(fromID id: String) -> BeaconIdentity? {
        guard id.hasPrefix("eddy:") else { return nil }
        let parts = id.dropFirst(5).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, var namespace = BeaconIdentityConstraint.bytes(hex: String(parts[0])),
              let instance = BeaconIdentityConstraint.bytes(hex: String(parts[1])), instance.count == 6 else { return nil }
        if namespace.count == 11 {
            guard namespace[4] == namespace[5] else { return nil }
            namespace.remove(at: 5)
        }
        return BeaconIdentity(eddystoneNamespace: namespace, instance: instance)
    }

    /// The id ESPresense firmware gives an Eddystone-UID beacon (namespace byte 4 repeated, as it prints it).
    public static func eddystoneID(for identity: BeaconIdentity) -> String {
        var namespace = identity.namespace
        namespace.insert(namespace[4], at: 5)
        return "eddy:" + BeaconIdentity.hex(namespace) + "-" + BeaconIdentity.hex(identity.instance)
    }

    /// Reads the id's bytes directly: this runs for every ESPresense message.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, prefix: StaticString = "iBeacon:", format: BeaconFormat = .iBeacon) -> BeaconIdentity? {
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
        return BeaconIdentity(uuid: UUID(uuid: uuid), major: major, minor: minor, format: format)
    }

    /// The id ESPresense gives an iBeacon (lowercase dashed UUID, decimal major and minor), an
    /// AltBeacon, an Eddystone-UID beacon; for a device, an address as ESPresense prints one (12
    /// lowercase hex digits), any other device id as it is.
    public static func id(for identity: BeaconIdentity) -> String {
        switch identity.format {
        case .iBeacon: "iBeacon:\(identity.uuid.uuidString.lowercased())-\(identity.major)-\(identity.minor)"
        case .altBeacon: "altBeacon:\(identity.uuid.uuidString.lowercased())-\(identity.major)-\(identity.minor)"
        case .eddystoneUID: eddystoneID(for: identity)
        case .device: identity.deviceAddress.map { $0.replacingOccurrences(of: ":", with: "").lowercased() } ?? identity.deviceID ?? ""
        }
    }
}
