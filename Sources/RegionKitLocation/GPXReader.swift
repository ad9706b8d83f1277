import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
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
    /// unparseable `ele`/`time`/... value. A UTF-8 document (no other encoding declared) with
    /// an invalid UTF-8 sequence is `.malformedXML` at that sequence's line and column, checked
    /// before `XMLParser` sees it (FoundationXML traps on invalid UTF-8 in names).
    public static func read(data: Data) throws(LocationInputError) -> Document {
        try checkUTF8(data)
        let parser = XMLParser(data: data)
        let delegate = Delegate(parser: parser)
        parser.delegate = delegate
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        let ok = parser.parse()
        if let e = delegate.failure { throw e }
        guard ok else {
            let err = parser.parserError.map { describe($0) } ?? "unknown XML error"
            throw LocationInputError(
                code: .malformedXML, message: "XML is not well-formed: \(err)",
                line: parser.lineNumber, column: parser.columnNumber)
        }
        guard delegate.sawGPX else {
            throw LocationInputError(code: .malformedXML, message: "no <gpx> root element", line: 1)
        }
        return delegate.document
    }

    /// Throws `.malformedXML` at the first invalid UTF-8 sequence of a document that is UTF-8:
    /// no byte-order mark of another encoding and no `encoding="…"` other than UTF-8 declared.
    static func checkUTF8(_ data: Data) throws(LocationInputError) {
        let bytes = [UInt8](data)
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0, 0]) { return }   // UTF-16/32
        if bytes.starts(with: [0x3C, 0x3F]), let end = bytes.prefix(512).firstIndex(of: UInt8(ascii: ">")) {
            // The XML declaration is ASCII; libxml2 transcodes any other declared encoding itself.
            let declaration = String(decoding: bytes[..<end], as: UTF8.self).lowercased()
            if let range = declaration.range(of: "encoding") {
                let value = declaration[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" }
                if !(value.hasPrefix("utf-8") || value.hasPrefix("utf8")) { return }
            }
        }
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

    /// Names for the libxml2-derived `XMLParser.ErrorCode`s that malformed GPX typically hits
    /// (Linux reports only "The operation could not be completed").
    static func describe(_ error: any Error) -> String {
        let code = (error as NSError).code
        let known: [Int: String] = [
            4: "empty document", 5: "premature end of document", 9: "invalid character",
            38: "attribute value not started", 39: "attribute value not finished", 41: "attribute redefined",
            65: "space or '>' required", 73: "'>' required", 76: "start and end tags do not match",
            77: "unfinished tag",
        ]
        return "\(known[code] ?? "XML error") (XMLParser error \(code))"
    }

    // MARK: - XMLParser delegate

    private final class Delegate: NSObject, XMLParserDelegate {
        let parser: XMLParser
        var document = Document()
        var failure: LocationInputError?
        var sawGPX = false
        private var stack: [String] = []
        private var point: Point?
        private var pathName: String?
        private var segments: [[Point]] = []
        private var currentSegment: [Point] = []
        private var text = ""

        init(parser: XMLParser) { self.parser = parser }

        private static func local(_ name: String) -> String {
            name.split(separator: ":").last.map(String.init) ?? name
        }

        private func fail(_ code: LocationInputError.Code, _ message: String) {
            if failure == nil {
                failure = LocationInputError(code: code, message: message, line: parser.lineNumber, column: parser.columnNumber)
            }
            parser.abortParsing()
        }

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes: [String: String] = [:]) {
            let name = Delegate.local(elementName)
            if stack.isEmpty {
                guard name == "gpx" else { fail(.malformedXML, "root element is <\(elementName)>, expected <gpx>"); return }
                sawGPX = true
            }
            stack.append(name)
            text = ""
            switch name {
            case "wpt", "rtept", "trkpt":
                guard let latText = attributes["lat"], let lonText = attributes["lon"] else {
                    fail(.missingAttribute, "<\(name)> needs lat and lon attributes")
                    return
                }
                guard let lat = FieldDecoder.decimal(latText.trimmingCharacters(in: .whitespaces)), abs(lat) <= 90,
                      let lon = FieldDecoder.decimal(lonText.trimmingCharacters(in: .whitespaces)), abs(lon) <= 180
                else {
                    fail(.missingAttribute, "<\(name)> has invalid lat=\"\(latText)\" lon=\"\(lonText)\"")
                    return
                }
                point = Point(latitude: lat, longitude: lon, line: parser.lineNumber)
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

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            text += string
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            let name = Delegate.local(elementName)
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            text = ""
            defer { if !stack.isEmpty { stack.removeLast() } }
            let parent = stack.count >= 2 ? stack[stack.count - 2] : ""
            func number() -> Double? {
                guard let v = FieldDecoder.decimal(value) else {
                    fail(.badField, "<\(name)> value '\(value)' is not a number")
                    return nil
                }
                return v
            }
            switch name {
            case "ele" where point != nil: point?.elevation = number()
            case "hdop" where point != nil: point?.hdop = number()
            case "speed" where point != nil: point?.speed = number()
            case "course" where point != nil: point?.course = number()
            case "time" where point != nil:
                guard let t = UTCCalendar.parseISO8601(value) else {
                    fail(.badField, "<time> value '\(value)' is not an ISO 8601 UTC time")
                    return
                }
                point?.time = t
            case "name":
                if point != nil { point?.name = value } else if parent == "rte" || parent == "trk" { pathName = value }
            case "wpt":
                if let p = point { document.waypoints.append(p) }
                point = nil
            case "rtept":
                if let p = point { currentSegment.append(p) }
                point = nil
            case "trkpt":
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

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if failure == nil {
                failure = LocationInputError(
                    code: .malformedXML,
                    message: "XML is not well-formed: \(GPXReader.describe(parseError))",
                    line: parser.lineNumber, column: parser.columnNumber)
            }
        }
    }
}
