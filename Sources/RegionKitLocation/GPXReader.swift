import Foundation
import RegionKitCore

/// Reads GPX 1.0/1.1 (waypoints `wpt`, routes `rte/rtept`, tracks `trk/trkseg/trkpt`) with
/// `lat`, `lon`, `ele`, `time` (plus `hdop`, `speed`, `course`, `name` when present), and turns
/// a point list into `LocationFix` values — using recorded times, or times derived from a
/// constant speed along the great-circle path when a track has none (or only useless ones).
///
/// ```swift
/// let doc = try GPXReader.read(data: Data(contentsOf: url))
/// let points = doc.tracks[0].points
/// let timed = GPXReader.fixes(points, timing: .automatic(speed: 1.4, start: Timestamp(seconds: 0)))
/// timed.fixes.count   // one fix per point
/// timed.usedRecordedTimes
/// ```
public enum GPXReader {
    /// One `wpt`, `rtept` or `trkpt`.
    public struct Point: Hashable, Sendable {
        public var latitude: Double
        public var longitude: Double
        /// Metres (GPX: above mean sea level / geoid).
        public var elevation: Double?
        public var time: Timestamp?
        public var hdop: Double?
        /// GPX 1.0 `speed` (m/s) and `course` (degrees), when present.
        public var speed: Double?
        public var course: Double?
        public var name: String?
        /// Line of the point's start tag.
        public var line: Int
    }

    /// A route or a track (all segments' points in order; `segments` keeps the split).
    public struct Path: Hashable, Sendable {
        public var name: String?
        public var segments: [[Point]]
        public var points: [Point] { segments.flatMap { $0 } }
    }

    /// A parsed document.
    public struct Document: Hashable, Sendable {
        public var waypoints: [Point] = []
        public var routes: [Path] = []
        public var tracks: [Path] = []
    }

    /// How ``fixes(_:timing:)`` assigns times.
    public enum Timing: Hashable, Sendable {
        /// Use each point's `time`; points without one are skipped.
        case recorded
        /// Ignore recorded times: `start` + great-circle distance travelled / `speed` (m/s).
        case constantSpeed(metresPerSecond: Double, start: Timestamp)
        /// Recorded times when every point has one, they never decrease and they span at least
        /// one second (not a constant "no time" sentinel); otherwise constant speed.
        case automatic(speed: Double, start: Timestamp)
    }

    /// Result of ``fixes(_:timing:)``.
    public struct TimedFixes: Hashable, Sendable {
        public var fixes: [LocationFix]
        /// Whether recorded times were used (false: times derived from speed).
        public var usedRecordedTimes: Bool
        /// Why recorded times were not used, for `.automatic`.
        public var note: String?
    }

    /// Parses GPX. Throws `.malformedXML` (with line and column) for XML errors and
    /// `.missingAttribute` for a point without valid `lat`/`lon`, `.badField` for an
    /// unparseable `ele`/`time`/... value. The document is UTF-8 (the default), UTF-16 with a
    /// byte-order mark, or declares ISO-8859-1, US-ASCII or windows-1252; an invalid UTF-8
    /// sequence is `.malformedXML` at its line and column. The XML is read by `XMLScanner`
    /// (not FoundationXML, which trapped on hostile input).
    public static func read(data: Data) throws(LocationInputError) -> Document {
        let bytes = try utf8(data)
        var scanner = XMLScanner(bytes)
        var builder = Builder()
        while true {
            let next: XMLScanner.Event?
            do {
                next = try scanner.next()
            } catch {
                let (line, column) = scanner.position(of: error.offset)
                throw LocationInputError(code: .malformedXML, message: "XML is not well-formed: \(error.message)", line: line, column: column)
            }
            guard let event = next else { break }
            let offset: Int
            do {
                switch event {
                case .start(let name, let attributes, let at):
                    offset = at
                    try builder.start(name, attributes: attributes, line: scanner.line(of: at))
                case .text(let text):
                    builder.text += text
                    continue
                case .end(let name, let at):
                    offset = at
                    try builder.end(name)
                }
            } catch {
                let (line, column) = scanner.position(of: offset)
                throw LocationInputError(code: error.code, message: error.message, line: line, column: column)
            }
        }
        return builder.document
    }

    /// The document as UTF-8: UTF-16 (byte-order mark) and the declared single-byte encodings
    /// transcoded, UTF-8 checked (``checkUTF8(_:)``). Other encodings are refused by name.
    static func utf8(_ data: Data) throws(LocationInputError) -> [UInt8] {
        let bytes = [UInt8](data)
        if bytes.starts(with: [0, 0, 0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE, 0, 0]) {
            throw LocationInputError(code: .malformedXML, message: "UTF-32 documents are not supported (use UTF-8)", line: 1)
        }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            guard let text = String(data: data, encoding: .utf16) else {
                throw LocationInputError(code: .malformedXML, message: "invalid UTF-16 (the document starts with a UTF-16 byte-order mark)", line: 1)
            }
            return Array(text.utf8)
        }
        if let encoding = declaredEncoding(bytes) {
            switch encoding {
            case "utf-8", "utf8", "us-ascii", "ascii":
                break
            case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1":
                // Every byte is the scalar of the same value.
                return Array(String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) })).utf8)
            case "windows-1252", "cp1252":
                guard let text = String(data: data, encoding: .windowsCP1252) else {
                    throw LocationInputError(code: .malformedXML, message: "the document is not valid windows-1252", line: 1)
                }
                return Array(text.utf8)
            default:
                throw LocationInputError(code: .malformedXML,
                    message: "encoding \"\(encoding)\" is not supported (UTF-8, UTF-16, ISO-8859-1, windows-1252)", line: 1)
            }
        }
        try checkUTF8(bytes)
        return bytes
    }

    /// The `encoding="…"` of a leading XML declaration, lowercased.
    static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
        guard body.starts(with: Array("<?xml".utf8)), let end = body.prefix(512).firstIndex(of: UInt8(ascii: ">")) else { return nil }
        // The XML declaration is ASCII.
        let declaration = String(decoding: body[..<end], as: UTF8.self).lowercased()
        guard let range = declaration.range(of: "encoding") else { return nil }
        let value = declaration[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" }
        return String(value.prefix { $0 != "\"" && $0 != "'" && $0 != " " && $0 != "?" })
    }

    /// Throws `.malformedXML` at the first invalid UTF-8 sequence.
    static func checkUTF8(_ bytes: [UInt8]) throws(LocationInputError) {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var line = 1, column = 1, offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                offset += encoded.count
                if encoded.count == 1 && encoded.first == 0x0A { line += 1; column = 1 } else { column += 1 }
            case .emptyInput:
                return
            case .error(let length):
                let shown = bytes[offset..<min(offset + max(length, 1), bytes.count)].map { String($0, radix: 16, uppercase: true) }.joined(separator: " ")
                throw LocationInputError(code: .malformedXML, message: "invalid UTF-8 (bytes \(shown)) at byte \(offset)", line: line, column: column)
            }
        }
    }

    /// Parses GPX text. See ``read(data:)``.
    public static func read(_ text: String) throws(LocationInputError) -> Document {
        try read(data: Data(text.utf8))
    }

    /// Turns points into fixes. Mode is `.threeD` with elevation, else `.twoD`;
    /// `horizontalAccuracy` is `hdop × 19 m` (the UERE the NMEA reader uses) when `hdop` is given.
    /// Speed and course: recorded values, else the constant speed and the bearing to the next point.
    public static func fixes(_ points: [Point], timing: Timing) -> TimedFixes {
        var useRecorded: Bool
        var note: String?
        var speed = 0.0
        var start = Timestamp.zero
        switch timing {
        case .recorded:
            useRecorded = true
        case .constantSpeed(let s, let t):
            useRecorded = false
            speed = s
            start = t
        case .automatic(let s, let t):
            speed = s
            start = t
            let times = points.map(\.time)
            if points.isEmpty {
                useRecorded = true
            } else if times.contains(where: { $0 == nil }) {
                useRecorded = false
                note = "\(times.filter { $0 == nil }.count) of \(points.count) points have no time"
            } else {
                let ts = times.map { $0!.seconds }
                let span = (ts.max() ?? 0) - (ts.min() ?? 0)
                let decreasing = zip(ts, ts.dropFirst()).contains { $1 < $0 }
                if ts.count > 1 && span < 1 {
                    useRecorded = false
                    note = "all \(ts.count) points carry (nearly) the same time \(UTCCalendar.formatISO8601(Timestamp(seconds: ts[0])))"
                } else if decreasing {
                    useRecorded = false
                    note = "recorded times go backwards"
                } else {
                    useRecorded = true
                }
            }
        }
        guard useRecorded || (speed.isFinite && speed > 0) else {
            return TimedFixes(fixes: [], usedRecordedTimes: false, note: "speed must be a positive number of m/s")
        }
        var out: [LocationFix] = []
        out.reserveCapacity(points.count)
        var travelled = 0.0
        for (i, p) in points.enumerated() {
            if i > 0 {
                let q = points[i - 1]
                travelled += Geodesy.distance(latitude1: q.latitude, longitude1: q.longitude, latitude2: p.latitude, longitude2: p.longitude)
            }
            let time: Timestamp
            if useRecorded {
                guard let t = p.time else { continue }
                time = t
            } else {
                time = start + travelled / speed
            }
            var course = p.course
            if course == nil, i + 1 < points.count {
                let n = points[i + 1]
                if n.latitude != p.latitude || n.longitude != p.longitude {
                    course = Geodesy.initialBearing(latitude1: p.latitude, longitude1: p.longitude, latitude2: n.latitude, longitude2: n.longitude)
                }
            }
            out.append(LocationFix(
                timestamp: time, latitude: p.latitude, longitude: p.longitude,
                horizontalAccuracy: p.hdop.map { $0 * NMEAReader.uereAutonomous },
                altitude: p.elevation, speed: p.speed ?? (useRecorded ? nil : speed), course: course,
                mode: p.elevation == nil ? .twoD : .threeD))
        }
        return TimedFixes(fixes: out, usedRecordedTimes: useRecorded, note: note)
    }

    // MARK: - Building the document from the scanner's events

    private struct Builder {
        struct Failure: Error {
            var code: LocationInputError.Code
            var message: String
        }

        var document = Document()
        var text = ""
        private var stack: [String] = []
        private var point: Point?
        private var pathName: String?
        private var segments: [[Point]] = []
        private var currentSegment: [Point] = []

        private static func local(_ name: String) -> String {
            name.split(separator: ":").last.map(String.init) ?? name
        }

        mutating func start(_ elementName: String, attributes: [String: String], line: Int) throws(Failure) {
            let name = Builder.local(elementName)
            if stack.isEmpty, name != "gpx" {
                throw Failure(code: .malformedXML, message: "root element is <\(elementName)>, expected <gpx>")
            }
            stack.append(name)
            text = ""
            switch name {
            case "wpt", "rtept", "trkpt":
                guard let latText = attributes["lat"], let lonText = attributes["lon"] else {
                    throw Failure(code: .missingAttribute, message: "<\(name)> needs lat and lon attributes")
                }
                guard let lat = FieldDecoder.decimal(latText.trimmingCharacters(in: .whitespaces)), abs(lat) <= 90,
                      let lon = FieldDecoder.decimal(lonText.trimmingCharacters(in: .whitespaces)), abs(lon) <= 180
                else {
                    throw Failure(code: .missingAttribute, message: "<\(name)> has invalid lat=\"\(latText)\" lon=\"\(lonText)\"")
                }
                point = Point(latitude: lat, longitude: lon, line: line)
            case "rte", "trk":
                pathName = nil
                segments = []
                currentSegment = []
            case "trkseg":
                currentSegment = []
            default:
                break
            }
        }

        mutating func end(_ elementName: String) throws(Failure) {
            let name = Builder.local(elementName)
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            text = ""
            defer { if !stack.isEmpty { stack.removeLast() } }
            let parent = stack.count >= 2 ? stack[stack.count - 2] : ""
            func number() throws(Failure) -> Double {
                guard let v = FieldDecoder.decimal(value) else {
                    throw Failure(code: .badField, message: "<\(name)> value '\(value)' is not a number")
                }
                return v
            }
            switch name {
            case "ele" where point != nil: point?.elevation = try number()
            case "hdop" where point != nil: point?.hdop = try number()
            case "speed" where point != nil: point?.speed = try number()
            case "course" where point != nil: point?.course = try number()
            case "time" where point != nil:
                guard let t = UTCCalendar.parseISO8601(value) else {
                    throw Failure(code: .badField, message: "<time> value '\(value.prefix(80))\(value.count > 80 ? "…" : "")' is not an ISO 8601 UTC time")
                }
                point?.time = t
            case "name":
                if point != nil { point?.name = value } else if parent == "rte" || parent == "trk" { pathName = value }
            case "wpt":
                if let p = point { document.waypoints.append(p) }
                point = nil
            case "rtept", "trkpt":
                if let p = point { currentSegment.append(p) }
                point = nil
            case "trkseg":
                segments.append(currentSegment)
                currentSegment = []
            case "rte":
                document.routes.append(Path(name: pathName, segments: [currentSegment]))
                currentSegment = []
            case "trk":
                if !currentSegment.isEmpty { segments.append(currentSegment) }
                document.tracks.append(Path(name: pathName, segments: segments))
                segments = []
                currentSegment = []
            default:
                break
            }
        }
    }
}
