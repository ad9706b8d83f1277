import Foundation
import RegionKitCore

/// Turns one MQTT message from a scanner into engine observations, for each
/// ``SightingMessageFormat``. Pure: no I/O, no clock (the arrival time is passed in).
///
/// Every sighting keeps its scanner (the ESPresense room, the Theengs gateway, the RegionKit
/// scanner name), so scanner-bound regions and the nearest-scanner (room) decision work as in a
/// replay. Messages about devices that are not iBeacons (phones, tags with other frames, ids the
/// format does not map to an iBeacon) are ``Outcome/ignored(_:)``, not errors; damaged messages
/// throw a ``SightingMessageError`` naming the field.
///
/// ```swift
/// let decoder = SightingMessageDecoder(format: .espresense)
/// let outcome = try decoder.decode(topic: "espresense/devices/iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2/kitchen",
///                                  payload: Array(#"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-71.5,"rssi@1m":-59}"#.utf8),
///                                  receivedAt: now)
/// // .sightings([BeaconObservation(identity: …:1:2, rssi: -72, measuredPower: -59, timestamp: now, scannerID: "kitchen")])
/// ```
public struct SightingMessageDecoder: Sendable {
    /// What one message gave.
    public enum Outcome: Hashable, Sendable {
        case sightings([BeaconObservation])
        /// A well-formed message about something that is not an iBeacon sighting (why, for counting).
        case ignored(String)
        /// An Eddystone-TLM frame (Theengs' raw `servicedata`): no identity, so no sighting; the
        /// ingest keeps it for the transmitter (the topic's last level, its address) and attaches it
        /// to that transmitter's later sightings, as the HCI scanner does by address.
        case telemetry(EddystoneTelemetry)
    }

    public var format: SightingMessageFormat
    /// The scanner to report for every sighting instead of the one the topic or payload names.
    public var scannerOverride: String?
    /// Larger payloads are rejected unread.
    public var maximumPayloadSize: Int

    public init(format: SightingMessageFormat, scannerOverride: String? = nil, maximumPayloadSize: Int? = nil) {
        self.format = format
        self.scannerOverride = scannerOverride
        self.maximumPayloadSize = maximumPayloadSize ?? (format == .regionkit ? 1 << 20 : 16 << 10)
    }

    /// Decodes one message received at `now` (the engine clock's time of arrival).
    public func decode(topic: String, payload: [UInt8], receivedAt now: Timestamp) throws(SightingMessageError) -> Outcome {
        guard payload.count <= maximumPayloadSize else {
            throw SightingMessageError(.tooLarge, "payload of \(payload.count) bytes exceeds the \(maximumPayloadSize)-byte limit for \(format.rawValue) messages")
        }
        guard Self.isUTF8(payload) else {
            throw SightingMessageError(.invalidUTF8, "payload is not valid UTF-8")
        }
        switch format {
        case .espresense: return try ESPresenseMessage.decode(topic: topic, payload: payload, receivedAt: now, scanner: scannerOverride)
        case .theengs: return try TheengsMessage.decode(topic: topic, payload: payload, receivedAt: now, scanner: scannerOverride)
        case .regionkit: return try ScannerBatch.decodeObservations(topic: topic, payload: payload, receivedAt: now, scanner: scannerOverride)
        }
    }
}

extension SightingMessageDecoder {
    /// UTF-8 validity, with a fast path for the all-ASCII payloads scanners send.
    static func isUTF8(_ payload: [UInt8]) -> Bool {
        let ascii = payload.withUnsafeBufferPointer { bytes -> Bool in
            var combined: UInt8 = 0
            for byte in bytes { combined |= byte }
            return combined < 0x80
        }
        return ascii || String(validating: payload, as: UTF8.self) != nil
    }

    /// Decodes a JSON object into `Wire`, mapping syntax errors to ``SightingMessageError``.
    static func object<Wire: Decodable>(_ type: Wire.Type, from payload: [UInt8]) throws(SightingMessageError) -> Wire {
        do {
            return try JSONDecoder().decode(Wire.self, from: Data(payload))
        } catch let DecodingError.typeMismatch(_, context) where context.codingPath.isEmpty {
            throw SightingMessageError(.invalidJSON, "payload is not a JSON object")
        } catch let DecodingError.typeMismatch(_, context) {
            throw SightingMessageError(.wrongType, "field '\(path(context.codingPath))' has the wrong type")
        } catch let DecodingError.keyNotFound(key, context) {
            throw SightingMessageError(.missingField, "missing field '\(path(context.codingPath + [key]))'")
        } catch let DecodingError.valueNotFound(_, context) {
            throw SightingMessageError(.wrongType, "field '\(path(context.codingPath))' is null")
        } catch let DecodingError.dataCorrupted(context) {
            throw SightingMessageError(.invalidJSON, "invalid JSON: \(context.debugDescription.prefix(120))")
        } catch {
            throw SightingMessageError(.invalidJSON, "invalid JSON")
        }
    }

    static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    /// A required integer-valued field within `range` (fractions are rounded: ESPresense sends filtered RSSI with decimals).
    static func integer(_ value: JSONScalar?, _ field: String, in range: ClosedRange<Int>) throws(SightingMessageError) -> Int {
        guard let value else { throw SightingMessageError(.missingField, "missing field '\(field)'") }
        guard let result = try optionalInteger(value, field, in: range) else {
            throw SightingMessageError(.wrongType, "field '\(field)' is null")
        }
        return result
    }

    /// An optional integer-valued field within `range`; `nil` when absent or null.
    static func optionalInteger(_ value: JSONScalar?, _ field: String, in range: ClosedRange<Int>) throws(SightingMessageError) -> Int? {
        switch value {
        case nil, .null?:
            return nil
        case .number(let number)?:
            guard number.isFinite, number >= Double(range.lowerBound) - 0.5, number <= Double(range.upperBound) + 0.5 else {
                throw SightingMessageError(.outOfRange, "field '\(field)' = \(number) is outside \(range.lowerBound)...\(range.upperBound)")
            }
            return min(max(Int(number.rounded()), range.lowerBound), range.upperBound)
        case .string(let text)?:
            // Some gateways quote numbers; accept a quoted integer, nothing looser.
            guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw SightingMessageError(.wrongType, "field '\(field)' is not a number")
            }
            guard range.contains(number) else {
                throw SightingMessageError(.outOfRange, "field '\(field)' = \(number) is outside \(range.lowerBound)...\(range.upperBound)")
            }
            return number
        case let other?:
            throw SightingMessageError(.wrongType, "field '\(field)' is \(other.typeName), not a number")
        }
    }

    /// The number of an optional field: `nil` when absent or null; a quoted number is accepted;
    /// anything else (an object, `true`, a word) throws `wrongType` naming the field.
    static func numberValue(_ value: JSONScalar?, _ field: String) throws(SightingMessageError) -> Double? {
        switch value {
        case nil, .null?: return nil
        case .number(let value)?: return value
        case .string(let text)?:
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)) else { throw SightingMessageError(.wrongType, "field '\(field)' is not a number") }
            return value
        case let other?: throw SightingMessageError(.wrongType, "field '\(field)' is \(other.typeName), not a number")
        }
    }

    /// An optional number field within `range`; `nil` when absent or null (a quoted number is accepted).
    static func optionalNumber(_ value: JSONScalar?, _ field: String, in range: ClosedRange<Double>) throws(SightingMessageError) -> Double? {
        guard let number = try numberValue(value, field) else { return nil }
        guard number.isFinite, range.contains(number) else {
            throw SightingMessageError(.outOfRange, "field '\(field)' = \(number) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    /// Battery and temperature a scanner decoded from the transmitter's telemetry, nil when it
    /// reported neither (a battery of 0 mV means "not supported", as in Eddystone-TLM; so does a
    /// temperature TEMP cannot carry, see `EddystoneTelemetry.init(batteryMillivolts:temperature:)`).
    static func telemetry(millivolts: Int?, temperature: Double?) -> EddystoneTelemetry? {
        let battery = millivolts.map { UInt16(clamping: $0) }   // callers check 0...65535
        let telemetry = EddystoneTelemetry(batteryMillivolts: battery, temperature: temperature)
        return telemetry.isEmptyOfReadings ? nil : telemetry
    }

    /// An optional telemetry number: `nil` when absent, null or not finite; a quoted number is
    /// accepted; only a value that is not a number at all (an object, `true`, a word) throws.
    /// The caller drops a value out of its field's range instead of rejecting the message.
    static func telemetryNumber(_ value: JSONScalar?, _ field: String) throws(SightingMessageError) -> Double? {
        guard let number = try numberValue(value, field), number.isFinite else { return nil }
        return number
    }

    /// An optional string field.
    static func optionalString(_ value: JSONScalar?, _ field: String) throws(SightingMessageError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other?: throw SightingMessageError(.wrongType, "field '\(field)' is \(other.typeName), not a string")
        }
    }

    /// The RSSI range accepted from any scanner, dBm.
    static let rssiRange = BeaconObservation.rssiRange
    /// Measured power at 1 m as scanners report it, dBm (0 = not set).
    static let measuredPowerRange = BeaconObservation.rssiRange

    /// A measured power field, `nil` when absent, 0 ("not set"), or an integer outside
    /// ``measuredPowerRange``. That is the beacon's own byte relayed by the scanner (a beacon that
    /// puts its battery voltage there, ESPresense's `rssi@1m` of such a beacon, a RegionKit
    /// scanner's batch): the sighting and its RSSI are good, and one such beacon rejected every
    /// sighting of a scanner's batch. Not an integer, or beyond ±2³¹: an error naming the field.
    static func measuredPower(_ value: JSONScalar?, _ field: String) throws(SightingMessageError) -> Int? {
        guard let power = try optionalInteger(value, field, in: Int(Int32.min)...Int(Int32.max)),
              power != 0, measuredPowerRange.contains(power) else { return nil }
        return power
    }

    /// A scanner name from a topic level or payload, as `ScannerName` allows.
    static func scannerName(_ text: String, from origin: String) throws(SightingMessageError) -> String {
        if let problem = ScannerName.problem(text) {
            throw SightingMessageError(.badTopic, "\(origin) \(JSONLine.quote(String(text.prefix(40)))) is not a scanner name: it \(problem)")
        }
        return text
    }
}
