import Foundation
import RegionKitCore

/// One sighting reported by a beacon gateway (the RaspberryPiBeaconParser format): which scanner
/// heard which iBeacon, how strongly, when.
///
/// ```swift
/// let sighting = try GatewaySighting(json: bytes, offset: 0, source: "run.json")
/// sighting.observation(origin: firstTime).scannerID // "Room201"
/// ```
public struct GatewaySighting: Hashable, Sendable {
    public var scannerID: String
    public var identity: BeaconIdentity
    /// Measured power at 1 m (`calibratedPower`, else `power`; 0 means not set → `nil`).
    public var measuredPower: Int?
    public var rssi: Int
    /// 0 = sighting, 1 = scanner heartbeat beacon; `nil` when the file does not say.
    public var messageType: Int?
    /// Unix epoch milliseconds.
    public var timeMilliseconds: Int64

    public init(scannerID: String, identity: BeaconIdentity, measuredPower: Int?, rssi: Int, messageType: Int?, timeMilliseconds: Int64) {
        self.scannerID = scannerID
        self.identity = identity
        self.measuredPower = measuredPower
        self.rssi = rssi
        self.messageType = messageType
        self.timeMilliseconds = timeMilliseconds
    }

    /// The wire form; every field optional so that a missing one gets a clear message.
    private struct Wire: Decodable {
        var scannerID: String?
        var uuid: String?
        var major: Int?
        var minor: Int?
        var calibratedPower: Int?
        var power: Int?
        var rssi: Int?
        var messageType: Int?
        var time: Int64?
    }

    /// Decodes one JSON object; errors name the source, the object's offset and the field.
    public init(json bytes: [UInt8], offset: Int, source: String) throws {
        if let sighting = Self.fastDecode(bytes) {
            self = sighting
            return
        }
        try self.init(decoding: bytes, offset: offset, source: source)
    }

    /// The wire form's members, for ``fastDecode(_:)``.
    private static let wireKeys = FlatJSONReader.Keys(["scannerID", "uuid", "major", "minor", "calibratedPower", "power", "rssi", "messageType", "time"])

    /// The common case without Foundation's `JSONDecoder` (which cost ~15 µs per object, most of a
    /// replay): ``FlatJSONReader`` in one pass, and a plain hex parse of the UUID. It accepts only
    /// what the decoder below accepts, with the same result — ASCII, no escapes in strings, every
    /// field present with its type and in range, integers written exactly (`1`, `1.0` and `1e2` are
    /// integers to both), the first of repeated keys — and returns nil for anything else, which
    /// then takes the decoder's path and gets its error message. (The gateway-json fuzz target
    /// checks that both paths agree.)
    static func fastDecode(_ bytes: [UInt8]) -> GatewaySighting? {
        guard bytes.allSatisfy({ $0 < 0x80 && $0 != 0x5C }),   // ASCII without escapes (real gateways write none)
              let fields = try? FlatJSONReader.fields(of: bytes, keys: wireKeys, firstWins: true) else { return nil }
        /// .some(nil): absent or null; nil: present but not an integer the decoder would read.
        func integer(_ index: Int) -> Int64?? {
            switch fields[index] {
            case nil, .null?: return .some(nil)
            case .number(let value)?:
                guard value.isFinite, value.rounded(.towardZero) == value, abs(value) < 9_007_199_254_740_992 else { return nil }
                return .some(Int64(value))
            default: return nil
            }
        }
        guard case .string(let scanner)? = fields[0], case .string(let uuidText)? = fields[1],
              let uuid = Self.hexUUID(uuidText) ?? UUID(flexibleString: uuidText),
              case let major?? = integer(2), case let minor?? = integer(3),
              case let calibrated? = integer(4), case let power? = integer(5),
              case let rssi?? = integer(6), case let messageType? = integer(7), case let time?? = integer(8),
              identifierRange.contains(Int(major)), identifierRange.contains(Int(minor)), rssiRange.contains(Int(rssi)), timeRange.contains(time),
              calibrated.map({ Int(exactly: $0) != nil }) ?? true, power.map({ Int(exactly: $0) != nil }) ?? true,
              messageType.map({ Int(exactly: $0) != nil }) ?? true else { return nil }
        return GatewaySighting(scannerID: scanner, identity: BeaconIdentity(uuid: uuid, major: UInt16(major), minor: UInt16(minor)),
                               measuredPower: measuredPower(calibrated: calibrated.map(Int.init), power: power.map(Int.init)),
                               rssi: Int(rssi), messageType: messageType.map(Int.init), timeMilliseconds: time)
    }

    /// 32 hex digits, or 36 with dashes at 8, 13, 18 and 23 (what `UUID(flexibleString:)` reads), as a UUID.
    static func hexUUID(_ text: String) -> UUID? {
        text.utf8.withContiguousStorageIfAvailable { chars -> UUID? in
            guard chars.count == 32 || (chars.count == 36 && chars[8] == 0x2D && chars[13] == 0x2D && chars[18] == 0x2D && chars[23] == 0x2D) else { return nil }
            var bytes = [UInt8](repeating: 0, count: 16)
            var nibble = 0
            for char in chars {
                if chars.count == 36 && char == 0x2D { continue }
                let value: UInt8
                switch char {
                case 0x30...0x39: value = char - 0x30
                case 0x41...0x46: value = char - 0x41 + 10
                case 0x61...0x66: value = char - 0x61 + 10
                default: return nil
                }
                guard nibble < 32 else { return nil }
                bytes[nibble / 2] |= nibble % 2 == 0 ? value << 4 : value
                nibble += 1
            }
            guard nibble == 32 else { return nil }
            return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                               bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        } ?? nil
    }

    /// The decoder's path: Foundation's `JSONDecoder`, with an error naming the field for anything
    /// ``fastDecode(_:)`` did not take.
    init(decoding bytes: [UInt8], offset: Int, source: String) throws {
        func bad(_ message: String) -> RegionKitError {
            RegionKitError(.malformedInput, "\(source): sighting at offset \(offset): \(message)")
        }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(bytes))
        } catch let DecodingError.typeMismatch(type, context) {
            throw bad("field '\(context.codingPath.map(\.stringValue).joined(separator: "."))' is not \(type == Int.self || type == Int64.self ? "an integer" : "\(type)")")
        } catch let DecodingError.dataCorrupted(context) {
            throw bad(Self.explainCorrupted(bytes) ?? "invalid JSON: \(context.debugDescription)")
        } catch {
            throw bad("invalid JSON (\(error))")
        }
        guard let scanner = wire.scannerID else { throw bad("missing string field 'scannerID'") }
        guard let uuidText = wire.uuid else { throw bad("missing string field 'uuid'") }
        guard let uuid = UUID(flexibleString: uuidText) else { throw bad("uuid '\(uuidText.prefix(80))\(uuidText.count > 80 ? "…" : "")' is not 32 hex digits") }
        guard let major = wire.major, let minor = wire.minor else { throw bad("missing field 'major' or 'minor'") }
        guard Self.identifierRange.contains(major), Self.identifierRange.contains(minor) else {
            throw bad("major \(major) / minor \(minor) outside \(Self.identifierRange.lowerBound)...\(Self.identifierRange.upperBound)")
        }
        guard let rssi = wire.rssi else { throw bad("missing field 'rssi'") }
        guard Self.rssiRange.contains(rssi) else { throw bad("rssi \(rssi) outside \(Self.rssiRange.lowerBound)...\(Self.rssiRange.upperBound) dBm") }
        guard let time = wire.time else { throw bad("missing integer field 'time' (Unix epoch milliseconds)") }
        guard Self.timeRange.contains(time) else {
            throw bad("time \(time) outside \(Self.timeRange.lowerBound)...\(Self.timeRange.upperBound) (Unix epoch milliseconds, up to the year 9999)")
        }
        self.init(scannerID: scanner, identity: BeaconIdentity(uuid: uuid, major: UInt16(major), minor: UInt16(minor)),
                  measuredPower: Self.measuredPower(calibrated: wire.calibratedPower, power: wire.power), rssi: rssi,
                  messageType: wire.messageType, timeMilliseconds: time)
    }

    /// What Foundation's "The given data was not valid JSON." meant (on Linux it names neither a
    /// place nor a field, and says it for a number that does not fit the field too): our reader's
    /// message with the byte offset, or the integer field whose number is fractional or too large.
    /// Nil when neither applies.
    static func explainCorrupted(_ bytes: [UInt8]) -> String? {
        guard String(validating: bytes, as: UTF8.self) != nil else { return "not valid UTF-8" }
        let fields: [JSONScalar?]
        do {
            fields = try FlatJSONReader.fields(of: bytes, keys: wireKeys, firstWins: true)
        } catch {
            return error.message
        }
        for (index, name) in integerFieldNames.enumerated() {
            guard case .number(let value)? = fields[index + 2] else { continue }
            if !value.isFinite || abs(value) >= 9_223_372_036_854_775_808.0 {   // 2⁶³
                return "field '\(name)' is a number beyond any 64-bit integer"
            }
            if value.rounded(.towardZero) != value { return "field '\(name)' is \(value.compactDescription), not an integer" }
        }
        return nil
    }

    /// ``wireKeys`` from the third on: the fields read as integers.
    private static let integerFieldNames = ["major", "minor", "calibratedPower", "power", "rssi", "messageType", "time"]

    /// The measured power a sighting reports: `calibratedPower` when set, else `power`; 0 means
    /// not set. (Both decoding paths take it from here.)
    static func measuredPower(calibrated: Int?, power: Int?) -> Int? {
        if let calibrated, calibrated != 0 { return calibrated }
        if let power, power != 0 { return power }
        return nil
    }

    /// Major and minor, as iBeacon carries them.
    static let identifierRange = 0...65535
    /// RSSI a sighting may report, dBm.
    static let rssiRange = BeaconObservation.rssiRange

    /// The times a recording may hold: Unix epoch milliseconds from 1970 to the end of the year
    /// 9999, so that the difference of any two fits an `Int64` many times over.
    public static let timeRange: ClosedRange<Int64> = 0...253_402_300_799_999

    /// The sighting as an engine observation, timed in seconds since `originMilliseconds`.
    public func observation(originMilliseconds: Int64) -> BeaconObservation {
        BeaconObservation(identity: identity, rssi: rssi, measuredPower: measuredPower,
                          timestamp: Timestamp(seconds: Self.seconds(from: originMilliseconds, to: timeMilliseconds)), scannerID: scannerID)
    }

    /// Seconds from one epoch-millisecond time to another, for any two `Int64`s (no overflow:
    /// the difference is taken in `Double`, exact for times within ±2⁵³ ms, ~285,000 years).
    public static func seconds(from start: Int64, to end: Int64) -> Double {
        (Double(end) - Double(start)) / 1000
    }
}
