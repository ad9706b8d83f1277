import Foundation
import RegionKitCore

/// One line of gpsd's JSON protocol (`TPV`, `SKY`, `VERSION`, `DEVICES`, `WATCH`; other classes
/// such as `GST`, `ATT`, `PPS`, `TOFF` are kept as ``unknown(class:)`` and can be ignored).
///
/// ```swift
/// let line = #"{"class":"TPV","mode":3,"time":"2009-12-09T15:25:05.000Z","lat":55.797,"lon":23.569,"eph":51.68}"#
/// if case .tpv(let tpv) = try GPSDMessage.decode(line) {
///     let fix = tpv.locationFix(receivedAt: .zero)
///     fix.mode                 // .threeD
///     fix.horizontalAccuracy   // 51.68
/// }
/// ```
public enum GPSDMessage: Hashable, Sendable {
    case tpv(TPV)
    case sky(SKY)
    case version(Version)
    case devices([Device])
    case watch(Watch)
    /// A well-formed object of a class this decoder does not model.
    case unknown(class: String)

    /// Time-position-velocity report.
    public struct TPV: Hashable, Sendable, Decodable {
        /// Device path, when gpsd names it.
        public var device: String?
        /// 0 = not seen, 1 = no fix, 2 = 2D, 3 = 3D.
        public var mode: Int
        /// ISO 8601 UTC time of the fix, as gpsd printed it.
        public var time: String?
        public var lat: Double?
        public var lon: Double?
        /// Deprecated in gpsd 3.20+ (same as `altMSL`); older gpsd only sends this.
        public var alt: Double?
        public var altMSL: Double?
        public var altHAE: Double?
        /// Estimated horizontal error, metres, ~95 %.
        public var eph: Double?
        /// Estimated longitude / latitude error, metres, ~95 %.
        public var epx: Double?
        public var epy: Double?
        /// Metres per second.
        public var speed: Double?
        /// Degrees true.
        public var track: Double?
        /// gpsd fix status (2 = DGPS, 3 = RTK fixed, ...), when sent.
        public var status: Int?

        public init(mode: Int, time: String? = nil, lat: Double? = nil, lon: Double? = nil) {
            self.mode = mode
            self.time = time
            self.lat = lat
            self.lon = lon
        }

        enum CodingKeys: String, CodingKey {
            case device, mode, time, lat, lon, alt, altMSL, altHAE, eph, epx, epy, speed, track, status
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            device = try c.decodeIfPresent(String.self, forKey: .device)
            mode = try c.decodeIfPresent(Int.self, forKey: .mode) ?? 0
            time = try c.decodeIfPresent(String.self, forKey: .time)
            lat = try c.decodeIfPresent(Double.self, forKey: .lat)
            lon = try c.decodeIfPresent(Double.self, forKey: .lon)
            alt = try c.decodeIfPresent(Double.self, forKey: .alt)
            altMSL = try c.decodeIfPresent(Double.self, forKey: .altMSL)
            altHAE = try c.decodeIfPresent(Double.self, forKey: .altHAE)
            eph = try c.decodeIfPresent(Double.self, forKey: .eph)
            epx = try c.decodeIfPresent(Double.self, forKey: .epx)
            epy = try c.decodeIfPresent(Double.self, forKey: .epy)
            speed = try c.decodeIfPresent(Double.self, forKey: .speed)
            track = try c.decodeIfPresent(Double.self, forKey: .track)
            status = try c.decodeIfPresent(Int.self, forKey: .status)
        }

        /// The parsed `time`, when present and valid.
        public var timestamp: Timestamp? { time.flatMap { UTCCalendar.parseISO8601($0) } }

        /// Whether this report carries a usable position.
        public var hasPosition: Bool {
            guard mode >= 2, let lat, let lon else { return false }
            return lat.isFinite && lon.isFinite && abs(lat) <= 90 && abs(lon) <= 180
        }

        /// The report as a `LocationFix`.
        ///
        /// - Mode ≤ 1, or no valid lat/lon: `.noFix` ("location unavailable"), NaN coordinates.
        /// - Time: the TPV's `time`, else `receivedAt` (gpsd omits `time` before it knows the date).
        /// - `horizontalAccuracy`: `eph`; else `sqrt(epx² + epy²)` (both ~95 %); else `nil`.
        /// - `altitude`: `altMSL`, else legacy `alt` (never the ellipsoidal `altHAE`).
        public func locationFix(receivedAt: Timestamp) -> LocationFix {
            let t = timestamp ?? receivedAt
            guard hasPosition, let lat, let lon else {
                return LocationFix(timestamp: t, latitude: .nan, longitude: .nan, mode: .noFix)
            }
            var accuracy = eph
            if accuracy == nil, let epx, let epy { accuracy = (epx * epx + epy * epy).squareRoot() }
            return LocationFix(
                timestamp: t, latitude: lat, longitude: lon, horizontalAccuracy: accuracy,
                altitude: mode >= 3 ? (altMSL ?? alt) : nil, speed: speed, course: track,
                mode: mode >= 3 ? .threeD : .twoD)
        }
    }

    /// Sky view summary (satellites are not modelled beyond counts).
    public struct SKY: Hashable, Sendable, Decodable {
        public var hdop: Double?
        public var pdop: Double?
        public var vdop: Double?
        /// Satellites seen / used, when gpsd sends the counts.
        public var nSat: Int?
        public var uSat: Int?
    }

    /// Server greeting.
    public struct Version: Hashable, Sendable, Decodable {
        public var release: String?
        public var rev: String?
        public var proto_major: Int?
        public var proto_minor: Int?
    }

    /// One receiver gpsd knows about.
    public struct Device: Hashable, Sendable, Decodable {
        public var path: String?
        public var driver: String?
        public var activated: String?
    }

    /// Echo of the watch policy.
    public struct Watch: Hashable, Sendable, Decodable {
        public var enable: Bool?
        public var json: Bool?
    }

    private struct Envelope: Decodable {
        var `class`: String
    }

    private struct DevicesEnvelope: Decodable {
        var devices: [Device]?
    }

    /// Decodes one line. Throws `.malformedJSON` (with `line` when given) for anything that is
    /// not a JSON object with a string `class`, or whose known class has wrongly typed members.
    public static func decode(_ line: some StringProtocol, lineNumber: Int? = nil) throws(LocationInputError) -> GPSDMessage {
        let data = Data(line.utf8)
        func fail(_ message: String) -> LocationInputError {
            LocationInputError(code: .malformedJSON, message: message, line: lineNumber, excerpt: String(line))
        }
        let decoder = JSONDecoder()
        let envelope: Envelope
        do {
            envelope = try decoder.decode(Envelope.self, from: data)
        } catch {
            throw fail("not a JSON object with a string \"class\" member (\(GPSDMessage.describe(error)))")
        }
        do {
            switch envelope.class {
            case "TPV": return .tpv(try decoder.decode(TPV.self, from: data))
            case "SKY": return .sky(try decoder.decode(SKY.self, from: data))
            case "VERSION": return .version(try decoder.decode(Version.self, from: data))
            case "DEVICES": return .devices(try decoder.decode(DevicesEnvelope.self, from: data).devices ?? [])
            case "WATCH": return .watch(try decoder.decode(Watch.self, from: data))
            default: return .unknown(class: envelope.class)
            }
        } catch {
            throw fail("\(envelope.class): \(GPSDMessage.describe(error))")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .typeMismatch(_, let ctx), .valueNotFound(_, let ctx), .keyNotFound(_, let ctx), .dataCorrupted(let ctx):
            let path = ctx.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? ctx.debugDescription : "\(path): \(ctx.debugDescription)"
        default:
            return "invalid JSON"
        }
    }
}
