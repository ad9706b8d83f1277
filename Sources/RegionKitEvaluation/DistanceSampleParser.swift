import RegionKitEngine
/// Reads calibration recordings: CSV rows `time,rssi,distance` with the distance in centimetres,
/// as in the Herald reference data (`2021-01-03 10:26:48,-54.0,20`).
///
/// Text in, samples out (no I/O). A header row naming the columns may come first and may order them
/// differently; blank lines and lines starting with `#` are skipped; `\r\n` line ends are accepted.
/// `time` is `YYYY-MM-DD HH:MM:SS[.fff]` (a `T` separator and a trailing `Z` are accepted; read as
/// UTC) or a number of seconds. Every bad row is an error naming the source and the line; RSSI must
/// be within ``rssiRange`` dBm, the distance within ``distanceRange`` centimetres, and time must not
/// go backwards.
///
/// ```swift
/// let samples = try DistanceSampleParser.parse("time,rssi,distance\n2021-01-03 10:26:48,-54.0,20\n", source: "a.csv")
/// samples[0].distance // 0.2 (metres)
/// ```
public enum DistanceSampleParser {
    /// The RSSI values accepted, dBm.
    public static let rssiRange: ClosedRange<Double> = -200...50
    /// The distances accepted, centimetres (up to 100 km).
    public static let distanceRange: ClosedRange<Double> = 0...10_000_000

    /// The samples of `text`; `source` names it in errors (a file path).
    public static func parse(_ text: String, source: String) throws -> [DistanceSample] {
        var columns = (time: 0, rssi: 1, distance: 2)
        var firstRow = true
        var samples: [DistanceSample] = []
        var lineNumber = 0
        for rawLine in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            let trimmed = Self.trimmed(rawLine)
            if trimmed.isEmpty || trimmed.first == UInt8(ascii: "#") { continue }
            let fields = trimmed.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { String(Substring(Self.trimmed($0))) }
            func bad(_ message: String) -> RegionKitError {
                RegionKitError(.malformedInput, "\(source):\(lineNumber): \(message)")
            }
            if firstRow {
                firstRow = false
                if let header = try headerColumns(fields, bad: bad) {
                    columns = header
                    continue
                }
            }
            let needed = max(columns.time, columns.rssi, columns.distance) + 1
            guard fields.count >= needed else {
                throw bad("expected \(needed) comma-separated fields (time,rssi,distance), found \(fields.count)")
            }
            let timeText = fields[columns.time], rssiText = fields[columns.rssi], distanceText = fields[columns.distance]
            guard let time = Self.time(timeText) else {
                throw bad("time '\(timeText)' is neither YYYY-MM-DD HH:MM:SS nor a number of seconds")
            }
            guard let rssi = Double(rssiText) else { throw bad("rssi '\(rssiText)' is not a number") }
            guard rssi.isFinite, rssiRange.contains(rssi) else {
                throw bad("rssi '\(rssiText)' must be within \(Int(rssiRange.lowerBound))...\(Int(rssiRange.upperBound)) dBm")
            }
            guard let centimetres = Double(distanceText) else { throw bad("distance '\(distanceText)' is not a number (centimetres)") }
            guard centimetres.isFinite, distanceRange.contains(centimetres) else {
                throw bad("distance '\(distanceText)' must be within 0...\(Int(distanceRange.upperBound)) centimetres")
            }
            if let previous = samples.last, time < previous.time.seconds {
                throw bad("time '\(timeText)' goes backwards (the previous row is \(previous.time.seconds - time) s later)")
            }
            samples.append(DistanceSample(time: Timestamp(seconds: time), rssi: rssi, distance: centimetres / 100))
        }
        guard !samples.isEmpty else {
            throw RegionKitError(.malformedInput, "\(source): no samples (expected CSV rows time,rssi,distance with the distance in cm)")
        }
        return samples
    }

    /// The column positions named by a header row, or `nil` when the row is data.
    private static func headerColumns(_ fields: [String], bad: (String) -> RegionKitError) throws -> (time: Int, rssi: Int, distance: Int)? {
        let names = fields.map { $0.lowercased().strippingQuotes }
        guard names.contains(where: { $0 == "rssi" || $0 == "distance" || $0 == "time" }) else { return nil }
        guard let time = names.firstIndex(of: "time"), let rssi = names.firstIndex(of: "rssi"),
              let distance = names.firstIndex(of: "distance") else {
            throw bad("header '\(fields.joined(separator: ","))' must name the columns time, rssi and distance")
        }
        return (time, rssi, distance)
    }

    /// Seconds since 1970-01-01 UTC for `YYYY-MM-DD[ T]HH:MM:SS[.fff][Z]`, or a plain number.
    static func time(_ text: String) -> Double? {
        var bytes = Array(text.utf8)
        if bytes.count >= 19, bytes[4] == UInt8(ascii: "-") {
            if bytes.last == UInt8(ascii: "Z") { bytes.removeLast() }
            // "2021-01-03 10:26:4Z" is 19 bytes with its "Z": one short of a whole time once it is dropped.
            guard bytes.count >= 19 else { return nil }
            func digits(_ range: Range<Int>) -> Int? {
                var value = 0
                for index in range {
                    let byte = bytes[index]
                    guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                }
                return value
            }
            guard bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"),
                  bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
                  let year = digits(0..<4), let month = digits(5..<7), let day = digits(8..<10),
                  let hour = digits(11..<13), let minute = digits(14..<16), let wholeSecond = digits(17..<19),
                  (1...12).contains(month), (1...31).contains(day), hour <= 23, minute <= 59, wholeSecond <= 60 else { return nil }
            var second = Double(wholeSecond)
            if bytes.count > 19 {
                // Up to 9 fraction digits count (nanoseconds); more are checked but add nothing,
                // so that a long run of digits cannot overflow the integer it is read into.
                let significant = min(bytes.count, 29)
                guard bytes[19] == UInt8(ascii: "."), bytes.count > 20, let fraction = digits(20..<significant),
                      bytes[significant...].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
                second += Double(fraction) / pow10(significant - 20)
            }
            return Double(daysFromCivil(year: year, month: month, day: day)) * 86_400 + Double(hour * 3600 + minute * 60) + second
        }
        // Plain seconds: within ±10¹² (±31,700 years), so that differences stay exact enough.
        guard let seconds = Double(text), seconds.isFinite, abs(seconds) <= 1e12 else { return nil }
        return seconds
    }

    private static func pow10(_ exponent: Int) -> Double {
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension DistanceSampleParser {
    /// The bytes without leading/trailing spaces, tabs and carriage returns.
    fileprivate static func trimmed(_ bytes: Substring.UTF8View.SubSequence) -> Substring.UTF8View.SubSequence {
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }
        guard let first = bytes.firstIndex(where: { !blank($0) }), let last = bytes.lastIndex(where: { !blank($0) }) else {
            return bytes[bytes.startIndex..<bytes.startIndex]
        }
        return bytes[first...last]
    }
}

private extension String {
    var strippingQuotes: String {
        var text = Substring(self)
        while text.first == "\"" { text = text.dropFirst() }
        while text.last == "\"" { text = text.dropLast() }
        return String(text)
    }
}
