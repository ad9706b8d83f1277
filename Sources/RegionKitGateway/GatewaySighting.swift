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
        func bad(_ message: String) -> RegionKitError {
            RegionKitError(.malformedInput, "\(source): sighting at offset \(offset): \(message)")
        }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(bytes))
        } catch let DecodingError.typeMismatch(type, context) {
            throw bad("field '\(context.codingPath.map(\.stringValue).joined(separator: "."))' is not \(type == Int.self || type == Int64.self ? "an integer" : "\(type)")")
        } catch let DecodingError.dataCorrupted(context) {
            throw bad("invalid JSON: \(context.debugDescription)")
        } catch {
            throw bad("invalid JSON (\(error))")
        }
        guard let scanner = wire.scannerID else { throw bad("missing string field 'scannerID'") }
        guard let uuidText = wire.uuid else { throw bad("missing string field 'uuid'") }
        guard let uuid = UUID(flexibleString: uuidText) else { throw bad("uuid '\(uuidText)' is not 32 hex digits") }
        guard let major = wire.major, let minor = wire.minor else { throw bad("missing field 'major' or 'minor'") }
        guard (0...65535).contains(major), (0...65535).contains(minor) else { throw bad("major \(major) / minor \(minor) outside 0...65535") }
        guard let rssi = wire.rssi else { throw bad("missing field 'rssi'") }
        guard (-127...20).contains(rssi) else { throw bad("rssi \(rssi) outside -127...20 dBm") }
        guard let time = wire.time else { throw bad("missing integer field 'time' (Unix epoch milliseconds)") }
        guard Self.timeRange.contains(time) else {
            throw bad("time \(time) outside \(Self.timeRange.lowerBound)...\(Self.timeRange.upperBound) (Unix epoch milliseconds, up to the year 9999)")
        }
        let calibrated = wire.calibratedPower ?? 0
        let power = wire.power ?? 0
        let measured = calibrated != 0 ? calibrated : (power != 0 ? power : nil)
        self.init(scannerID: scanner, identity: BeaconIdentity(uuid: uuid, major: UInt16(major), minor: UInt16(minor)),
                  measuredPower: measured, rssi: rssi, messageType: wire.messageType, timeMilliseconds: time)
    }

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
