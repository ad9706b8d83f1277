import Foundation
import RegionKitCore

/// Proleptic-Gregorian UTC date arithmetic without Foundation's `Calendar`, so results are
/// identical on every platform and never depend on the process time zone.
///
/// ```swift
/// let t = UTCCalendar.timestamp(year: 2009, month: 12, day: 9, secondsOfDay: 55505)
/// t?.seconds // 1260372305.0  (2009-12-09T15:25:05Z)
/// UTCCalendar.parseISO8601("2009-12-09T15:25:05.000Z") == t // true
/// ```
public enum UTCCalendar {
    /// Days since 1970-01-01 for a civil date (Howard Hinnant's algorithm).
    public static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The civil date of a day count since 1970-01-01.
    public static func civil(daysSinceEpoch z0: Int) -> (year: Int, month: Int, day: Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// Number of days in a month, or 0 for an invalid month.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 1, 3, 5, 7, 8, 10, 12: return 31
        case 4, 6, 9, 11: return 30
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        default: return 0
        }
    }

    /// A timestamp (seconds since the Unix epoch) for a date plus seconds of that day;
    /// `nil` when the date is not a real calendar date.
    public static func timestamp(year: Int, month: Int, day: Int, secondsOfDay: Double) -> Timestamp? {
        guard (1...9999).contains(year), day >= 1, day <= daysInMonth(year: year, month: month),
              secondsOfDay.isFinite, secondsOfDay >= 0, secondsOfDay < 86_401
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Timestamp(seconds: Double(days) * 86_400 + secondsOfDay)
    }

    /// Parses the RFC 3339 / ISO 8601 subset gpsd and GPX use:
    /// `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM|±HHMM)`; a missing zone is taken as UTC.
    /// Returns `nil` for anything else; never traps.
    public static func parseISO8601(_ text: some StringProtocol) -> Timestamp? {
        let b = Array(text.utf8)
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in 0..<n {
                let c = b[i + k]
                guard c >= 48, c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            i += n
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        // skip leading/trailing whitespace
        while i < b.count, b[i] == 32 || b[i] == 9 { i += 1 }
        var end = b.count
        while end > i, b[end - 1] == 32 || b[end - 1] == 9 || b[end - 1] == 10 || b[end - 1] == 13 { end -= 1 }
        guard let year = digits(4), expect(45), let month = digits(2), expect(45), let day = digits(2) else { return nil }
        guard i < end, b[i] == 84 || b[i] == 116 || b[i] == 32 else { return nil } // 'T', 't' or ' '
        i += 1
        guard let hh = digits(2), expect(58), let mm = digits(2), expect(58), let ss = digits(2) else { return nil }
        guard hh < 24, mm < 60, ss <= 60 else { return nil }
        var frac = 0.0
        if i < end, b[i] == 46 || b[i] == 44 { // '.' or ','
            i += 1
            var scale = 0.1
            var any = false
            while i < end, b[i] >= 48, b[i] <= 57 {
                frac += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
                any = true
            }
            guard any else { return nil }
        }
        var offset = 0
        if i < end {
            if b[i] == 90 || b[i] == 122 { // Z
                i += 1
            } else if b[i] == 43 || b[i] == 45 { // + -
                let sign = b[i] == 45 ? -1 : 1
                i += 1
                guard let oh = digits(2) else { return nil }
                _ = expect(58)
                guard let om = digits(2), oh < 24, om < 60 else { return nil }
                offset = sign * (oh * 3600 + om * 60)
            } else {
                return nil
            }
        }
        guard i == end else { return nil }
        let sod = Double(hh * 3600 + mm * 60 + ss) + frac
        guard let t = timestamp(year: year, month: month, day: day, secondsOfDay: sod) else { return nil }
        return t - Double(offset)
    }

    /// Formats a timestamp as `YYYY-MM-DDTHH:MM:SS.sssZ` (milliseconds, like gpsd).
    public static func formatISO8601(_ t: Timestamp) -> String {
        guard t.seconds.isFinite, abs(t.seconds) < 2.5e11 else { return "invalid" }
        let ms = Int((t.seconds * 1000).rounded())
        var days = ms / 86_400_000
        var rem = ms % 86_400_000
        if rem < 0 { rem += 86_400_000; days -= 1 }
        let (y, m, d) = civil(daysSinceEpoch: days)
        func pad(_ v: Int, _ n: Int) -> String {
            let s = String(v)
            return s.count >= n ? s : String(repeating: "0", count: n - s.count) + s
        }
        let h = rem / 3_600_000, mi = rem / 60_000 % 60, s = rem / 1000 % 60, f = rem % 1000
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2)).\(pad(f, 3))Z"
    }
}
