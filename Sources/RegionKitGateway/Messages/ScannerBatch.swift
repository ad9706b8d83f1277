import Foundation
import RegionKitCore

/// RegionKit's own scanner-to-hub message: what `regionkit scan --publish` sends, a batch of the
/// sightings one scanner made in the last moments, on `regionkit/scanners/<scanner>` (the name as
/// one topic level: ``topicLevel(scanner:)``).
///
/// ```json
/// {"v":1,"scanner":"lobby","time":1763884800.250,
///  "sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"rssi":-67,"power":-59,"dt":-0.180}]}
/// ```
/// A sighting of another format than iBeacon adds `"format"` (`altbeacon`, `eddystone-uid`; see
/// `BeaconFormat`), its id in `uuid`/`major`/`minor` as `BeaconIdentity` keeps it.
/// `time` is the scanner's clock when it sent the batch (Unix seconds) and `dt` each sighting's
/// time relative to it (≤ 0). The hub does not trust the scanner's absolute clock: a sighting is
/// timed at the batch's arrival plus its `dt`, so the spacing the scanner saw is kept and clock
/// skew between machines does not matter. Both are carried to the millisecond: ``json()`` writes
/// three decimals and the decoder rounds finer digits to the millisecond, so a decoded batch
/// encodes back to the same values.
///
/// ```swift
/// var batch = ScannerBatch(scanner: "lobby", time: 1763884800.25)
/// batch.sightings.append(.init(identity: id, rssi: -67, measuredPower: -59, offset: -0.18))
/// let bytes = batch.json()
/// ```
public struct ScannerBatch: Hashable, Sendable {
    public struct Sighting: Hashable, Sendable {
        public var identity: BeaconIdentity
        public var rssi: Int
        public var measuredPower: Int?
        /// Seconds relative to the batch's ``ScannerBatch/time`` (≤ 0).
        public var offset: Double

        public init(identity: BeaconIdentity, rssi: Int, measuredPower: Int?, offset: Double) {
            self.identity = identity
            self.rssi = rssi
            self.measuredPower = measuredPower
            self.offset = offset
        }
    }

    /// The format version written in `v`.
    public static let version = 1
    /// How far back a sighting may lie before its batch, seconds (older ones are rejected).
    public static let maximumAge = 60.0
    /// How far back before its batch's arrival a hub still takes a sighting as current, seconds
    /// (`MQTTSightingIngest` drops older ones, counted as late): a sighting older than that tells
    /// where a beacon was, not where it is. A publisher batches more often than this
    /// (`regionkit scan --publish`: every 100 ms; `ScannerPublisher` at most every second).
    public static let maximumLateness = 2.0

    public var scanner: String
    /// The scanner's clock when the batch was sent, Unix seconds.
    public var time: Double
    public var sightings: [Sighting]

    public init(scanner: String, time: Double, sightings: [Sighting] = []) {
        self.scanner = scanner
        self.time = time
        self.sightings = sightings
    }

    /// The JSON payload.
    public func json() -> [UInt8] {
        var text = #"{"v":\#(Self.version),"scanner":"# + Self.quoted(scanner) + #","time":"# + String(format: "%.3f", time) + #","sightings":["#
        for (index, sighting) in sightings.enumerated() {
            if index > 0 { text += "," }
            text += #"{"uuid":""# + sighting.identity.uuid.uuidString + #"","major":\#(sighting.identity.major),"minor":\#(sighting.identity.minor),"rssi":\#(sighting.rssi)"#
            if let power = sighting.measuredPower { text += #","power":\#(power)"# }
            if sighting.identity.format != .iBeacon { text += #","format":""# + sighting.identity.format.name + "\"" }
            text += #","dt":"# + String(format: "%.3f", sighting.offset) + "}"
        }
        text += "]}"
        return Array(text.utf8)
    }

    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\u{00}"..."\u{1F}": result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    struct Wire: Decodable {
        var v: JSONScalar?
        var scanner: JSONScalar?
        var time: JSONScalar?
        var sightings: [SightingWire]?
    }

    struct SightingWire: Decodable {
        var uuid: JSONScalar?
        var major: JSONScalar?
        var minor: JSONScalar?
        var rssi: JSONScalar?
        var power: JSONScalar?
        var dt: JSONScalar?
        var format: JSONScalar?
    }

    /// Decodes a batch; errors name the sighting's index and field.
    public init(json payload: [UInt8]) throws(SightingMessageError) {
        let wire = try SightingMessageDecoder.object(Wire.self, from: payload)
        let version = try SightingMessageDecoder.integer(wire.v, "v", in: 0...Int(Int32.max))
        guard version == Self.version else {
            throw SightingMessageError(.outOfRange, "field 'v' = \(version): only version \(Self.version) is understood")
        }
        guard let scanner = try SightingMessageDecoder.optionalString(wire.scanner, "scanner") else {
            throw SightingMessageError(.missingField, "missing field 'scanner'")
        }
        // Rounded before the range check, so the batch's time is one that json() writes and reads back.
        guard case .number(let written)? = wire.time, case let time = Self.milliseconds(written), time.isFinite, time >= 0, time < 1e11 else {
            throw SightingMessageError(wire.time == nil ? .missingField : .outOfRange, "field 'time' must be Unix seconds")
        }
        guard let list = wire.sightings else { throw SightingMessageError(.missingField, "missing field 'sightings'") }
        var sightings: [Sighting] = []
        sightings.reserveCapacity(list.count)
        for (index, item) in list.enumerated() {
            func field(_ name: String) -> String { "sightings[\(index)].\(name)" }
            guard let uuidText = try SightingMessageDecoder.optionalString(item.uuid, field("uuid")) else {
                throw SightingMessageError(.missingField, "missing field '\(field("uuid"))'")
            }
            guard let uuid = UUID(flexibleString: uuidText) else {
                throw SightingMessageError(.malformedField, "field '\(field("uuid"))' is not a UUID")
            }
            let major = try SightingMessageDecoder.integer(item.major, field("major"), in: 0...65535)
            let minor = try SightingMessageDecoder.integer(item.minor, field("minor"), in: 0...65535)
            let rssi = try SightingMessageDecoder.integer(item.rssi, field("rssi"), in: SightingMessageDecoder.rssiRange)
            let power = try SightingMessageDecoder.measuredPower(item.power, field("power"))
            guard case .number(let written)? = item.dt, case let offset = Self.milliseconds(written), offset.isFinite, offset <= 0,
                  offset >= -Self.maximumAge else {
                throw SightingMessageError(item.dt == nil ? .missingField : .outOfRange,
                                           "field '\(field("dt"))' must be seconds before the batch's time (-\(Int(Self.maximumAge))...0)")
            }
            var format = BeaconFormat.iBeacon
            if let name = try SightingMessageDecoder.optionalString(item.format, field("format")) {
                guard let named = BeaconFormat(name: name), named != .device else {
                    throw SightingMessageError(.malformedField, "field '\(field("format"))' '\(name.prefix(40))' is not ibeacon, altbeacon or eddystone-uid")
                }
                format = named
            }
            if format == .eddystoneUID && (major != 0 || minor != 0) {
                throw SightingMessageError(.outOfRange, "fields '\(field("major"))' and '\(field("minor"))' must be 0 for an eddystone-uid sighting")
            }
            sightings.append(Sighting(identity: BeaconIdentity(uuid: uuid, major: UInt16(major), minor: UInt16(minor), format: format),
                                      rssi: rssi, measuredPower: power, offset: offset))
        }
        self.init(scanner: try SightingMessageDecoder.scannerName(scanner, from: "scanner"), time: time, sightings: sightings)
    }

    /// `seconds` rounded to the millisecond, the resolution of the wire format. Exact below 2⁴³ s
    /// (the product is an integer-valued double and the quotient is correctly rounded), far beyond
    /// the accepted range; non-finite values stay non-finite for the range checks.
    static func milliseconds(_ seconds: Double) -> Double {
        (seconds * 1000).rounded() / 1000
    }

    /// JSON's white space (RFC 8259 §2): space, tab, line feed, carriage return.
    static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    static func decodeObservations(topic: String, payload: [UInt8], receivedAt now: Timestamp, scanner: String?) throws(SightingMessageError) -> SightingMessageDecoder.Outcome {
        // A scanner's status beside its batches (statusTopic(scanner:)), taken by a source whose
        // own filter reaches it (`regionkit/scanners/#`): no batch, and no damaged one either.
        // Told by its payload (`online`, `offline`), not a JSON object: the batches of a scanner
        // named `status` (`regionkit/scanners/status`) were all dropped as statuses.
        if topic.hasSuffix("/status"), payload.first(where: { !Self.isJSONWhitespace($0) }) != UInt8(ascii: "{") {
            return .ignored("a scanner's status (read with status: regionkit/scanners/+/status)")
        }
        let batch = try ScannerBatch(json: payload)
        let name = scanner ?? batch.scanner
        return .sightings(batch.sightings.map {
            BeaconObservation(identity: $0.identity, rssi: $0.rssi, measuredPower: $0.measuredPower, timestamp: now + $0.offset, scannerID: name)
        })
    }
}
