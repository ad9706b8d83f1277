/// The decoded content of one NMEA sentence this package understands (GGA, RMC, GLL, GSA,
/// VTG, ZDA, from any talker). Empty fields decode to `nil`; present but invalid fields are
/// an error, so a sentence is either fully trusted or rejected.
///
/// ```swift
/// let s = try NMEASentence.parse("$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47")
/// if case .gga(let gga) = try NMEAMessage.decode(s) {
///     gga.latitude       // 48.1173
///     gga.fixQuality     // 1
///     gga.hdop           // 0.9
/// }
/// ```
public enum NMEAMessage: Hashable, Sendable {
    case gga(GGA)
    case rmc(RMC)
    case gll(GLL)
    case gsa(GSA)
    case vtg(VTG)
    case zda(ZDA)
    /// A well-formed sentence of another type (GSV, TXT, proprietary, ...): carries no fix data.
    case other(type: String)

    /// 1 knot in metres per second (1852 m / 3600 s).
    public static let knotsToMetresPerSecond = 1852.0 / 3600.0

    /// GGA: Global Positioning System fix data.
    public struct GGA: Hashable, Sendable {
        /// Seconds since UTC midnight, if the time field was present.
        public var timeOfDay: Double?
        public var latitude: Double?
        public var longitude: Double?
        /// 0 invalid, 1 GPS, 2 DGPS, 3 PPS, 4 RTK fixed, 5 RTK float, 6 estimated, 7 manual, 8 simulator.
        public var fixQuality: Int?
        public var satellitesUsed: Int?
        public var hdop: Double?
        /// Metres above mean sea level.
        public var altitudeMSL: Double?
        public var geoidSeparation: Double?
    }

    /// RMC: recommended minimum specific GNSS data.
    public struct RMC: Hashable, Sendable {
        public var timeOfDay: Double?
        /// `true` for status `A` (or `D`), `false` for `V` or missing.
        public var isValid: Bool
        public var latitude: Double?
        public var longitude: Double?
        /// Metres per second (converted from knots).
        public var speed: Double?
        /// Degrees true.
        public var course: Double?
        /// The date, when the field was present and valid.
        public var date: NMEADate?
        /// FAA mode indicator (NMEA 2.3+): A, D, E, F, M, N, P, R, S, ...
        public var faaMode: Character?
    }

    /// GLL: geographic position, latitude/longitude.
    public struct GLL: Hashable, Sendable {
        public var latitude: Double?
        public var longitude: Double?
        public var timeOfDay: Double?
        public var isValid: Bool
        public var faaMode: Character?
    }

    /// GSA: DOP and active satellites.
    public struct GSA: Hashable, Sendable {
        /// 1 no fix, 2 2D, 3 3D; `nil` when missing or `E` (dead reckoning on some chips).
        public var fixMode: Int?
        public var satellites: [Int]
        public var pdop: Double?
        public var hdop: Double?
        public var vdop: Double?
    }

    /// VTG: course and speed over ground.
    public struct VTG: Hashable, Sendable {
        public var course: Double?
        /// Metres per second (from the knots field).
        public var speed: Double?
        public var faaMode: Character?
    }

    /// ZDA: time and date.
    public struct ZDA: Hashable, Sendable {
        public var timeOfDay: Double?
        public var date: NMEADate?
    }

    /// Decodes a framed sentence; throws `.badField`/`.missingField` for invalid content.
    public static func decode(_ s: NMEASentence, lineNumber: Int? = nil) throws(LocationInputError) -> NMEAMessage {
        let d = FieldDecoder(sentence: s, line: lineNumber)
        switch s.type {
        case "GGA":
            try d.require(6)
            var m = GGA()
            m.timeOfDay = try d.time(0)
            (m.latitude, m.longitude) = try d.position(1)
            m.fixQuality = try d.int(5, in: 0...9)
            m.satellitesUsed = try d.int(6, in: 0...999)
            m.hdop = try d.double(7, in: 0...1000)
            m.altitudeMSL = try d.double(8, in: -20_000...1_000_000)
            m.geoidSeparation = try d.double(10, in: -1000...1000)
            return .gga(m)
        case "RMC":
            try d.require(9)
            let status = s[field: 1]
            guard ["A", "D", "V", ""].contains(status) else {
                throw d.error(.badField, 1, "status '\(status)' is not A, D or V")
            }
            var m = RMC(isValid: status == "A" || status == "D")
            m.timeOfDay = try d.time(0)
            (m.latitude, m.longitude) = try d.position(2)
            m.speed = try d.double(6, in: 0...100_000).map { $0 * knotsToMetresPerSecond }
            m.course = try d.double(7, in: -360...360)
            m.date = try d.ddmmyy(8)
            m.faaMode = s[field: 11].first
            return .rmc(m)
        case "GLL":
            try d.require(4)
            let status = s[field: 5]
            guard ["A", "D", "V", ""].contains(status) else {
                throw d.error(.badField, 5, "status '\(status)' is not A or V")
            }
            var m = GLL(isValid: status == "A" || status == "D")
            (m.latitude, m.longitude) = try d.position(0)
            m.timeOfDay = try d.time(4)
            m.faaMode = s[field: 6].first
            return .gll(m)
        case "GSA":
            try d.require(2)
            var m = GSA(satellites: [])
            let mode = s[field: 1]
            if mode != "E" { m.fixMode = try d.int(1, in: 1...3) }
            for i in 2..<min(14, max(2, s.fields.count - 3)) {
                if let prn = try d.int(i, in: 0...9999), prn > 0 { m.satellites.append(prn) }
            }
            if s.fields.count >= 17 {
                m.pdop = try d.double(14, in: 0...1000)
                m.hdop = try d.double(15, in: 0...1000)
                m.vdop = try d.double(16, in: 0...1000)
            }
            return .gsa(m)
        case "VTG":
            try d.require(5)
            var m = VTG()
            m.course = try d.double(0, in: -360...360)
            m.speed = try d.double(4, in: 0...100_000).map { $0 * knotsToMetresPerSecond }
            m.faaMode = s[field: 8].first
            return .vtg(m)
        case "ZDA":
            try d.require(4)
            var m = ZDA()
            m.timeOfDay = try d.time(0)
            let day = try d.int(1, in: 1...31), month = try d.int(2, in: 1...12), year = try d.int(3, in: 1...9999)
            if let day, let month, let year {
                guard day <= UTCCalendar.daysInMonth(year: year, month: month) else {
                    throw d.error(.badField, 1, "day \(day) does not exist in \(year)-\(month)")
                }
                m.date = NMEADate(year: year, month: month, day: day)
            }
            return .zda(m)
        default:
            return .other(type: s.type)
        }
    }
}

/// Field-level decoding with precise error messages; internal to the NMEA decoder.
struct FieldDecoder {
    let sentence: NMEASentence
    let line: Int?

    init(sentence: NMEASentence, line: Int?) {
        self.sentence = sentence
        self.line = line
    }

    func error(_ code: LocationInputError.Code, _ field: Int, _ message: String) -> LocationInputError {
        LocationInputError(
            code: code, message: "\(sentence.talker)\(sentence.type) field \(field + 1): \(message)", line: line,
            excerpt: "\(sentence.talker)\(sentence.type),\(sentence.fields.joined(separator: ","))")
    }

    func require(_ n: Int) throws(LocationInputError) {
        guard sentence.fields.count >= n else {
            throw LocationInputError(
                code: .missingField,
                message: "\(sentence.talker)\(sentence.type) has \(sentence.fields.count) fields, needs at least \(n)",
                line: line, excerpt: "\(sentence.talker)\(sentence.type),\(sentence.fields.joined(separator: ","))")
        }
    }

    /// Strict decimal: optional sign, digits, optional '.', digits. No exponents, no "nan".
    static func decimal(_ s: String) -> Double? {
        var digits = 0
        var seenDot = false
        for (i, c) in s.utf8.enumerated() {
            switch c {
            case 48...57: digits += 1
            case 46 where !seenDot: seenDot = true
            case 43 where i == 0, 45 where i == 0: break
            default: return nil
            }
        }
        guard digits > 0, digits <= 30 else { return nil }
        return Double(s)
    }

    func double(_ i: Int, in range: ClosedRange<Double>) throws(LocationInputError) -> Double? {
        let s = sentence[field: i]
        if s.isEmpty { return nil }
        guard let v = FieldDecoder.decimal(s) else { throw error(.badField, i, "'\(s)' is not a number") }
        guard range.contains(v) else { throw error(.badField, i, "\(s) is outside \(range)") }
        return v
    }

    func int(_ i: Int, in range: ClosedRange<Int>) throws(LocationInputError) -> Int? {
        let s = sentence[field: i]
        if s.isEmpty { return nil }
        guard s.utf8.count <= 9, s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let v = Int(s) else {
            throw error(.badField, i, "'\(s)' is not an unsigned integer")
        }
        guard range.contains(v) else { throw error(.badField, i, "\(s) is outside \(range)") }
        return v
    }

    /// `hhmmss[.s…]` → seconds since midnight.
    func time(_ i: Int) throws(LocationInputError) -> Double? {
        let s = sentence[field: i]
        if s.isEmpty { return nil }
        let u = Array(s.utf8)
        func dd(_ k: Int) -> Int? {
            guard k + 1 < u.count, (48...57).contains(u[k]), (48...57).contains(u[k + 1]) else { return nil }
            return Int(u[k] - 48) * 10 + Int(u[k + 1] - 48)
        }
        guard u.count >= 6, let hh = dd(0), let mm = dd(2), let ss = dd(4) else {
            throw error(.badField, i, "time '\(s)' is not hhmmss[.sss]")
        }
        guard hh < 24, mm < 60, ss <= 60 else { throw error(.badField, i, "time '\(s)' is out of range") }
        var frac = 0.0
        if u.count > 6 {
            guard u[6] == 46, u.count <= 16, u.count > 7, u[7...].allSatisfy({ (48...57).contains($0) }) else {
                throw error(.badField, i, "time '\(s)' has a malformed fraction")
            }
            frac = Double("0" + s.dropFirst(6)) ?? 0
        }
        return Double(hh * 3600 + mm * 60 + ss) + frac
    }

    /// `ddmmyy` → date; two-digit years 80–99 are 1980–1999, 00–79 are 2000–2079 (as gpsd).
    func ddmmyy(_ i: Int) throws(LocationInputError) -> NMEADate? {
        let s = sentence[field: i]
        if s.isEmpty { return nil }
        let u = Array(s.utf8)
        guard u.count == 6, u.allSatisfy({ (48...57).contains($0) }) else {
            throw error(.badField, i, "date '\(s)' is not ddmmyy")
        }
        let day = Int(u[0] - 48) * 10 + Int(u[1] - 48)
        let month = Int(u[2] - 48) * 10 + Int(u[3] - 48)
        let yy = Int(u[4] - 48) * 10 + Int(u[5] - 48)
        let year = yy >= 80 ? 1900 + yy : 2000 + yy
        guard (1...12).contains(month), day >= 1, day <= UTCCalendar.daysInMonth(year: year, month: month) else {
            throw error(.badField, i, "date '\(s)' is not a calendar date")
        }
        return NMEADate(year: year, month: month, day: day)
    }

    /// `ddmm.mmmm,N,dddmm.mmmm,E` starting at field `i`. All four empty → (nil, nil).
    func position(_ i: Int) throws(LocationInputError) -> (Double?, Double?) {
        let f = (0..<4).map { sentence[field: i + $0] }
        if f.allSatisfy(\.isEmpty) { return (nil, nil) }
        guard !f[0].isEmpty, !f[2].isEmpty else { throw error(.badField, i, "latitude or longitude is missing") }
        guard var lat = try angle(i, maxDegrees: 90), var lon = try angle(i + 2, maxDegrees: 180) else {
            return (nil, nil)
        }
        switch f[1] {
        case "N": break
        case "S": lat = -lat
        default: throw error(.badField, i + 1, "latitude hemisphere '\(f[1])' is not N or S")
        }
        switch f[3] {
        case "E": break
        case "W": lon = -lon
        default: throw error(.badField, i + 3, "longitude hemisphere '\(f[3])' is not E or W")
        }
        return (lat, lon)
    }

    /// `[d]ddmm[.mmmm]` → degrees. Integer minutes and fraction are kept apart for precision.
    func angle(_ i: Int, maxDegrees: Double) throws(LocationInputError) -> Double? {
        let s = sentence[field: i]
        let u = Array(s.utf8)
        let dot = u.firstIndex(of: 46) ?? u.count
        guard dot >= 3, dot <= 5, u[..<dot].allSatisfy({ (48...57).contains($0) }),
              dot == u.count || (u.count > dot + 1 && u.count - dot <= 16
                  && u[(dot + 1)...].allSatisfy({ (48...57).contains($0) }))
        else { throw error(.badField, i, "'\(s)' is not [d]ddmm.mmmm") }
        var whole = 0
        for c in u[..<dot] { whole = whole * 10 + Int(c - 48) }
        let degrees = whole / 100
        let minutes = Double(whole % 100) + (dot < u.count ? (Double("0" + s.dropFirst(dot)) ?? 0) : 0)
        // 60.0 exactly is accepted: some chips (MTK-3301) print 89°60.000' for 90° before a fix.
        guard minutes <= 60 else { throw error(.badField, i, "'\(s)' has \(minutes) minutes (must be ≤ 60)") }
        let value = Double(degrees) + minutes / 60
        guard value <= maxDegrees else { throw error(.badField, i, "'\(s)' exceeds \(Int(maxDegrees))°") }
        return value
    }
}
