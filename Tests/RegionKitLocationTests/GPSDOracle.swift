import Foundation
import RegionKitCore
@testable import RegionKitLocation

/// The truth side of the oracle: gpsd's `.chk` output for one regression log.
///
/// gpsd prints a TPV after *several* sentences of a cycle (on each sentence it considers a
/// possible cycle end, plus forced reports), so one cycle gives one or more TPVs with the same
/// `time`, each a more complete merge than the last. The final TPV of such a run is gpsd's
/// complete view of the cycle — that is what one ``NMEAReport`` corresponds to. TPVs without
/// `time` are printed before the receiver has sent a date (or while it sends empty time fields);
/// they have no absolute time, so they are counted, not matched.
struct GPSDOracle {
    struct TPV: Equatable {
        var time: Timestamp?
        var timeText: String?
        var mode: Int
        var lat: Double?
        var lon: Double?
        var eph: Double?
        var speed: Double?
        var track: Double?
        var altMSL: Double?
        /// 1-based line of the log whose sentence gpsd had just read when it printed this TPV.
        var afterLogLine = 0
    }

    /// All TPV objects in file order.
    var tpvs: [TPV] = []

    /// The log's lines, 1-based (index 0 unused), split exactly like NMEAReader counts them.
    var logLines: [String] = [""]

    init(chk: Data, log: [UInt8]) {
        // Split on bytes: "\r\n" is one Character in Swift, so String.split("\n") would miss it.
        logLines += log.split(separator: 10, omittingEmptySubsequences: false)
            .map { String(decoding: $0.last == 13 ? $0.dropLast() : $0, as: UTF8.self) }
        if logLines.count > 1, logLines.last == "" { logLines.removeLast() }
        // gpsd echoes every sentence it accepted, in order, before the JSON it caused. Walk the
        // log alongside to learn which log line each TPV follows (gpsd drops lines it rejects,
        // e.g. mtk-3301's checksum-less $POLYN, so skip forward to the next equal line).
        var logIndex = 0
        var current = 0
        let text = String(decoding: chk, as: UTF8.self)
        for line in text.split(whereSeparator: \.isNewline) {
            if !line.hasPrefix("{") {
                let line = String(line)
                var k = logIndex + 1
                while k < logLines.count, logLines[k] != line { k += 1 }
                if k < logLines.count { logIndex = k; current = k }
                continue
            }
            guard let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  obj["class"] as? String == "TPV" else { continue }
            let ts = obj["time"] as? String
            tpvs.append(TPV(
                time: ts.flatMap { UTCCalendar.parseISO8601($0) }, timeText: ts,
                mode: (obj["mode"] as? NSNumber)?.intValue ?? 0,
                lat: (obj["lat"] as? NSNumber)?.doubleValue, lon: (obj["lon"] as? NSNumber)?.doubleValue,
                eph: (obj["eph"] as? NSNumber)?.doubleValue, speed: (obj["speed"] as? NSNumber)?.doubleValue,
                track: (obj["track"] as? NSNumber)?.doubleValue,
                altMSL: (obj["altMSL"] as? NSNumber)?.doubleValue, afterLogLine: current))
        }
    }

    /// Last TPV of every run of consecutive TPVs sharing a `time` (nil runs included).
    static func lastOfRuns<T>(_ items: [T], key: (T) -> Timestamp?) -> [T] {
        var out: [T] = []
        for item in items {
            if let last = out.last, key(last) == key(item) { out[out.count - 1] = item } else { out.append(item) }
        }
        return out
    }

    var cycles: [TPV] { GPSDOracle.lastOfRuns(tpvs, key: \.time) }
    var timedCycles: [TPV] { cycles.filter { $0.time != nil } }
}

/// Comparison of one log's NMEAReader output with gpsd's TPVs.
///
/// Headline: every cycle gpsd printed a timed TPV for must have a report with the same time,
/// mode and (mode ≥ 2) latitude/longitude within 1e-6°. Differences must fall into one of the
/// explained categories below, each checked, never waved through:
/// - `extraDateLate`: our cycle has a time but every TPV gpsd printed during it was untimed —
///   the date (RMC/ZDA) came later in the cycle than the sentences gpsd reported on, and gpsd
///   printed nothing after it (mtk-3301 08:14:36, bt451 15:25:04.5).
/// - `extraSilent`: gpsd printed no TPV at all while reading the cycle's lines — the cycle was
///   cut off before gpsd's learned cycle-ending sentence (log segments spliced together, end of
///   file). We still report it: its sentences are complete and valid.
/// - `positionFromEarlierSentence`: gpsd's position is the one carried by an earlier sentence of
///   the same cycle. gpsd reports at the sentence it learned ends a cycle and ignores later
///   sentences stamped with the same time; we merge the whole cycle and keep the last position.
///   Seen only in bundg_zeus_9 where a multiplexer relays GLL stamped one second ahead of GGA.
struct OracleComparison: CustomStringConvertible {
    var file: String
    var gpsdTimed = 0
    var matched = 0
    var missing: [String] = []
    var extraDateLate: [String] = []
    var extraSilent: [String] = []
    var extraUnexplained: [String] = []
    var modeMismatch: [String] = []
    var positionFromEarlierSentence: [String] = []
    var positionUnexplained: [String] = []
    var gpsdUntimedTPVs = 0
    var ourUntimedReports = 0
    var ephCompared = 0
    var ephMatched = 0
    var diagnostics = 0

    var rate: Double { gpsdTimed == 0 ? 1 : Double(matched) / Double(gpsdTimed) }
    var unexplained: Int { missing.count + extraUnexplained.count + modeMismatch.count + positionUnexplained.count }

    var description: String {
        let pct = String(format: "%.1f%%", rate * 100)
        var s = "\(file): \(matched)/\(gpsdTimed) gpsd timed cycles match exactly (\(pct)); "
        s += "explained: \(positionFromEarlierSentence.count) position-from-earlier-sentence, "
        s += "\(extraDateLate.count) extra (date late in cycle), \(extraSilent.count) extra (gpsd silent, truncated cycle); "
        s += "unexplained: \(unexplained); eph \(ephMatched)/\(ephCompared); "
        s += "untimed: gpsd \(gpsdUntimedTPVs) TPVs, ours \(ourUntimedReports) reports; diagnostics \(diagnostics)"
        return s
    }

    static func close(_ a: Double?, _ b: Double?) -> Bool {
        guard let a, let b else { return false }
        return abs(a - b) <= 1e-6
    }

    init(file: String, oracle: GPSDOracle, result: NMEAReader.Result) {
        self.file = file
        diagnostics = result.diagnostics.count
        gpsdUntimedTPVs = oracle.tpvs.filter { $0.time == nil }.count
        ourUntimedReports = result.reports.filter { $0.time == nil }.count
        let reports = result.reports
        // TPVs gpsd printed while reading each report's lines (up to the next report's first line).
        func tpvs(during index: Int) -> [GPSDOracle.TPV] {
            let lo = reports[index].lines.lowerBound
            let hi = index + 1 < reports.count ? reports[index + 1].lines.lowerBound : Int.max
            return oracle.tpvs.filter { $0.afterLogLine >= lo && $0.afterLogLine < hi }
        }
        // Positions carried by the sentences of one report's lines.
        func positions(in r: NMEAReport) -> [(Double, Double)] {
            var out: [(Double, Double)] = []
            for n in r.lines where n < oracle.logLines.count {
                guard let s = try? NMEASentence.parse(oracle.logLines[n]), let m = try? NMEAMessage.decode(s) else { continue }
                switch m {
                case .gga(let x): if let a = x.latitude, let b = x.longitude { out.append((a, b)) }
                case .rmc(let x): if let a = x.latitude, let b = x.longitude { out.append((a, b)) }
                case .gll(let x): if let a = x.latitude, let b = x.longitude { out.append((a, b)) }
                default: break
                }
            }
            return out
        }
        var byTime: [Double: Int] = [:]
        for (i, r) in reports.enumerated() { if let t = r.time { byTime[t.seconds] = i } }
        let truth = oracle.timedCycles
        gpsdTimed = truth.count
        let truthTimes = Set(truth.map { $0.time!.seconds })
        for (i, r) in reports.enumerated() {
            guard let t = r.time, !truthTimes.contains(t.seconds) else { continue }
            let label = UTCCalendar.formatISO8601(t) + " (lines \(r.lines))"
            let printed = tpvs(during: i)
            if printed.isEmpty { extraSilent.append(label) }
            else if printed.allSatisfy({ $0.time == nil }) { extraDateLate.append(label) }
            else { extraUnexplained.append(label) }
        }
        for t in truth {
            let label = t.timeText ?? "?"
            guard let i = byTime[t.time!.seconds] else { missing.append(label); continue }
            let r = reports[i]
            var ok = true
            if r.mode.rawValue != t.mode {
                ok = false
                modeMismatch.append("\(label) gpsd \(t.mode) ours \(r.mode.rawValue) (lines \(r.lines))")
            }
            if t.mode >= 2, let lat = t.lat, let lon = t.lon {
                if !(OracleComparison.close(r.latitude, lat) && OracleComparison.close(r.longitude, lon)) {
                    ok = false
                    let msg = "\(label) gpsd \(lat),\(lon) ours \(r.latitude ?? .nan),\(r.longitude ?? .nan) (lines \(r.lines))"
                    if positions(in: r).contains(where: { OracleComparison.close($0.0, lat) && OracleComparison.close($0.1, lon) }) {
                        positionFromEarlierSentence.append(msg)
                    } else {
                        positionUnexplained.append(msg)
                    }
                }
            }
            if t.mode >= 2, let e = t.eph {
                ephCompared += 1
                if let m = r.estimatedHorizontalError, abs(m - e) <= 0.0015 { ephMatched += 1 }
            }
            if ok { matched += 1 }
        }
    }
}
