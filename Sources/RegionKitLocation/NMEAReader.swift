import RegionKitCore

/// Reads NMEA 0183 line by line and merges sentences into one ``NMEAReport`` per reporting
/// cycle, the way gpsd does.
///
/// A *cycle* is the run of sentences sharing one UTC time of day (RMC, GGA, GLL, ZDA carry
/// it; GSA, GSV, VTG belong to the cycle they arrive in). A cycle is reported when a sentence
/// with a different time arrives, or at ``finish()``, so a live stream reports each cycle one
/// sentence late. Sentences with an empty time field (receivers without a fix) form their own
/// cycles; a repeated sentence type starts the next one.
///
/// The date comes from RMC (or ZDA) and is remembered for GGA/GLL-only cycles, rolling over
/// at midnight. Until a date is known, reports have `time == nil` (gpsd's TPVs have no `time`
/// then either).
///
/// Malformed lines never stop the reader: each yields a ``LocationInputError`` with its line
/// number and the reader carries on.
///
/// ```swift
/// let text = """
/// $GPRMC,152506.00,A,5547.82126,N,02334.14117,E,0.340,,091209,,,A*79
/// $GPGGA,152506.00,5547.82126,N,02334.14117,E,1,04,2.72,36.5,M,26.9,M,,*6F
/// """
/// let result = NMEAReader.read(text)
/// let fix = result.fixes[0]
/// fix.latitude            // 55.797021
/// fix.mode                // .threeD
/// fix.horizontalAccuracy  // 51.68 (HDOP 2.72 × 19 m)
/// ```
public struct NMEAReader: Sendable {
    /// Reader options.
    public struct Configuration: Sendable, Hashable {
        /// Reject sentences without a `*hh` checksum (gpsd accepts them). Default `true`.
        public var requireChecksum: Bool
        /// Date used for cycles before the receiver has sent a date (RMC/ZDA). Default `nil`:
        /// such cycles have no absolute time, exactly like gpsd.
        public var referenceDate: NMEADate?
        /// Report well-formed sentences of types the reader ignores (GSV, TXT, ...) as
        /// `.unsupportedSentence` diagnostics. Default `false`.
        public var reportUnsupportedSentences: Bool

        public init(requireChecksum: Bool = true, referenceDate: NMEADate? = nil, reportUnsupportedSentences: Bool = false) {
            self.requireChecksum = requireChecksum
            self.referenceDate = referenceDate
            self.reportUnsupportedSentences = reportUnsupportedSentences
        }
    }

    /// One thing the reader produced for a line.
    public enum Output: Hashable, Sendable {
        case report(NMEAReport)
        case diagnostic(LocationInputError)
    }

    /// The outcome of reading a whole input.
    public struct Result: Hashable, Sendable {
        /// One report per cycle, in input order.
        public var reports: [NMEAReport]
        /// Rejected lines, in input order.
        public var diagnostics: [LocationInputError]

        /// The reports that have an absolute time, as `LocationFix` values
        /// (mode `.noFix` for "location unavailable").
        public var fixes: [LocationFix] { reports.compactMap(\.locationFix) }
    }

    /// UERE (user equivalent range error) gpsd uses to turn HDOP into `eph` (95 % confidence):
    /// 19 m autonomous (`P_UERE_NO_DGPS`), 4.75 m differential (`P_UERE_WITH_DGPS`).
    public static let uereAutonomous = 19.0
    /// See ``uereAutonomous``.
    public static let uereDifferential = 4.75

    public var configuration: Configuration

    // Session state that outlives a cycle (as in gpsd's session).
    private var dateDay: Int?
    private var dateTimeOfDay: Double = 0
    private var hdop: Double?
    private var satellitesUsed: Int?
    private var previousMode = 0
    private var cycle: Cycle?
    private var lineNumber = 0

    private struct Cycle {
        var key: Double?
        var timedTypes: Set<String> = []
        var hasTimedSentence = false
        var mode = 0
        var latitude: Double?
        var longitude: Double?
        var altitude: Double?
        var speed: Double?
        var course: Double?
        var ggaQuality: Int?
        var ggaSatellites: Int?
        var otherDifferential = false
        var sawGSA = false
        var firstLine: Int
        var lastLine: Int
    }

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Reads a whole text (any line endings).
    public static func read(_ text: String, configuration: Configuration = Configuration()) -> Result {
        read(bytes: Array(text.utf8), configuration: configuration)
    }

    /// Reads raw bytes; lines containing binary junk are rejected as `.badFraming`.
    public static func read(bytes: [UInt8], configuration: Configuration = Configuration()) -> Result {
        var reader = NMEAReader(configuration: configuration)
        var result = Result(reports: [], diagnostics: [])
        func take(_ outputs: [Output]) {
            for o in outputs {
                switch o {
                case .report(let r): result.reports.append(r)
                case .diagnostic(let d): result.diagnostics.append(d)
                }
            }
        }
        var start = 0
        var i = 0
        while i <= bytes.count {
            if i == bytes.count || bytes[i] == 10 || bytes[i] == 13 {
                let isCRLF = i < bytes.count && bytes[i] == 13 && i + 1 < bytes.count && bytes[i + 1] == 10
                if i < bytes.count || start < i {
                    take(reader.consume(line: bytes[start..<i]))
                }
                i += isCRLF ? 2 : 1
                start = i
            } else {
                i += 1
            }
        }
        take(reader.finish())
        return result
    }

    /// Feeds one line (without or with its line terminator). Blank lines and `#` comments are
    /// counted but ignored.
    public mutating func consume(line: String) -> [Output] {
        consume(line: Array(line.utf8))
    }

    /// Feeds one line of raw bytes.
    public mutating func consume<Bytes: Collection<UInt8>>(line: Bytes) -> [Output] {
        lineNumber += 1
        let n = lineNumber
        var firstNonSpace = line.first { $0 != 32 && $0 != 9 && $0 != 10 && $0 != 13 }
        if firstNonSpace == nil || firstNonSpace == UInt8(ascii: "#") { return [] }
        firstNonSpace = nil
        let sentence: NMEASentence
        let message: NMEAMessage
        do throws(LocationInputError) {
            sentence = try NMEASentence.parse(bytes: line, lineNumber: n, requireChecksum: configuration.requireChecksum)
            message = try NMEAMessage.decode(sentence, lineNumber: n)
        } catch {
            return [.diagnostic(error)]
        }
        var out: [Output] = []
        if case .other(let type) = message {
            if configuration.reportUnsupportedSentences {
                out.append(.diagnostic(LocationInputError(
                    code: .unsupportedSentence, message: "\(sentence.talker)\(type) carries no fix data; ignored",
                    line: n)))
            }
            return out
        }
        if let report = advanceCycle(for: message, type: sentence.type, line: n) {
            out.append(.report(report))
        }
        apply(message)
        return out
    }

    /// Ends the input: reports the cycle in progress, if any.
    public mutating func finish() -> [Output] {
        guard let report = closeCycle() else { return [] }
        return [.report(report)]
    }

    // MARK: - Cycle boundaries

    private static func timeOfDay(_ m: NMEAMessage) -> (isTimed: Bool, tod: Double?) {
        switch m {
        case .gga(let x): return (true, x.timeOfDay)
        case .rmc(let x): return (true, x.timeOfDay)
        case .gll(let x): return (true, x.timeOfDay)
        case .zda(let x): return (true, x.timeOfDay)
        default: return (false, nil)
        }
    }

    private mutating func advanceCycle(for message: NMEAMessage, type: String, line: Int) -> NMEAReport? {
        let (isTimed, tod) = NMEAReader.timeOfDay(message)
        var report: NMEAReport?
        if var c = cycle {
            var startNew = false
            if isTimed {
                if let tod {
                    if c.key == tod {
                    } else if c.key == nil && !c.hasTimedSentence {
                        c.key = tod
                    } else {
                        startNew = true
                    }
                } else if c.key != nil || c.timedTypes.contains(type) {
                    startNew = true
                }
            }
            if startNew {
                report = closeCycle()
                cycle = Cycle(key: tod, firstLine: line, lastLine: line)
            } else {
                c.lastLine = line
                cycle = c
            }
        } else {
            cycle = Cycle(key: tod, firstLine: line, lastLine: line)
        }
        if isTimed {
            cycle?.hasTimedSentence = true
            if tod == nil { cycle?.timedTypes.insert(type) }
        }
        return report
    }

    private mutating func closeCycle() -> NMEAReport? {
        guard let c = cycle else { return nil }
        cycle = nil
        var time: Timestamp?
        if let tod = c.key {
            var day: Int?
            if let dateDay {
                day = dateDay
                if tod < dateTimeOfDay - 43_200 { day = dateDay + 1 }      // past midnight
                else if tod > dateTimeOfDay + 43_200 { day = dateDay - 1 } // before midnight
            } else if let ref = configuration.referenceDate {
                day = ref.daysSinceEpoch
            }
            if let day { time = Timestamp(seconds: Double(day) * 86_400 + tod) }
        }
        let rawMode = c.mode == 0 ? 1 : c.mode
        let mode = LocationFix.Mode(rawValue: rawMode) ?? .noFix
        let differential = c.ggaQuality.map { $0 == 2 } ?? c.otherDifferential
        var eph: Double?
        if mode != .noFix, let hdop {
            eph = hdop * (differential ? NMEAReader.uereDifferential : NMEAReader.uereAutonomous)
        }
        previousMode = rawMode
        return NMEAReport(
            time: time, timeOfDay: c.key, mode: mode,
            latitude: c.latitude, longitude: c.longitude, altitude: c.altitude,
            speed: c.speed, course: c.course, hdop: hdop, isDifferential: differential,
            estimatedHorizontalError: eph, satellitesUsed: satellitesUsed ?? c.ggaSatellites,
            lines: c.firstLine...c.lastLine)
    }

    // MARK: - Merging (rules follow gpsd's NMEA driver, see README notes in the tests)

    private mutating func setDate(_ date: NMEADate?, tod: Double?) {
        guard let date, let tod else { return }
        dateDay = date.daysSinceEpoch
        dateTimeOfDay = tod
    }

    private mutating func apply(_ message: NMEAMessage) {
        guard var c = cycle else { return }
        defer { cycle = c }
        switch message {
        case .gga(let m):
            if let q = m.fixQuality { c.ggaQuality = q }
            if let s = m.satellitesUsed { c.ggaSatellites = s }
            if let h = m.hdop, h < 99 { hdop = h }
            if let lat = m.latitude, let lon = m.longitude, let q = m.fixQuality, q != 0 {
                c.latitude = lat
                c.longitude = lon
                if let alt = m.altitudeMSL {
                    c.altitude = alt
                    // Altitude means 3D once the receiver has had a fix (or uses ≥ 4 satellites).
                    c.mode = (previousMode >= 2 || (m.satellitesUsed ?? 0) >= 4) ? 3 : 2
                } else {
                    c.mode = 2
                }
            } else {
                c.mode = 1
            }
        case .rmc(let m):
            if m.isValid {
                setDate(m.date, tod: m.timeOfDay)
                if let lat = m.latitude, let lon = m.longitude {
                    c.latitude = lat
                    c.longitude = lon
                    if (satellitesUsed ?? 0) > 3 || c.altitude != nil || previousMode == 3 || c.mode == 3 {
                        c.mode = 3
                    } else {
                        c.mode = 2
                    }
                } else {
                    c.mode = 1
                }
                if let s = m.speed { c.speed = s }
                if let t = m.course { c.course = t }
                if m.faaMode == "D" { c.otherDifferential = true }
            } else {
                c.mode = 1
                if m.timeOfDay == nil || m.date == nil { dateDay = nil } // gpsd forgets the date here
            }
        case .gll(let m):
            if m.isValid, m.faaMode != "N", let lat = m.latitude, let lon = m.longitude {
                c.latitude = lat
                c.longitude = lon
                if c.altitude != nil || (satellitesUsed ?? 0) > 3 {
                    c.mode = 3
                } else if c.mode < 2 {
                    c.mode = 2
                }
                if m.faaMode == "D" { c.otherDifferential = true }
            } else {
                c.mode = 1
            }
        case .gsa(let m):
            if let mode = m.fixMode { c.mode = mode }
            if c.sawGSA {
                satellitesUsed = (satellitesUsed ?? 0) + m.satellites.count
            } else {
                satellitesUsed = m.satellites.count
                c.sawGSA = true
            }
            if let h = m.hdop, h < 99 { hdop = h }
        case .vtg(let m):
            if m.faaMode != "N" && m.faaMode != "E" {
                if let s = m.speed { c.speed = s }
                if let t = m.course { c.course = t }
            }
        case .zda(let m):
            setDate(m.date, tod: m.timeOfDay)
        case .other:
            break
        }
    }
}
