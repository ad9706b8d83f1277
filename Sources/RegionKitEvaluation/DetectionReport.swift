import Foundation
import RegionKit

/// The detection figures of one profile in one condition of a ``DetectionSweep``.
///
/// ```swift
/// let report = reports[0]
/// report.exitLatency(percentile: 0.95)   // seconds from the beacon stopping to didExitRegion
/// report.falseExitsPer1000Hours          // exits of stationary beacons per 1000 beacon-hours
/// report.jsonLine.text                   // {"profile":"responsive","interval_s":0.1,...}
/// ```
public struct DetectionReport: Hashable, Sendable {
    public var condition: DetectionSweep.Condition
    public var profile: String
    /// Exit latencies of the departures that got an exit, seconds, ascending.
    public var latencies: [Double]
    /// Departures whose beacon was still "inside" when it stopped but got no exit before it came
    /// back (``DetectionSweep/absence`` later): latency longer than the absence.
    public var missedExits: Int
    /// Departures where the region had already (falsely) exited when the beacon stopped.
    public var outsideAtDeparture: Int
    /// Exits of stationary beacons.
    public var falseExits: Int
    /// Exits of stationary beacons after their first ``DetectionSweep/settlingTime`` seconds
    /// (what a long-lived beacon sees once its stream is known).
    public var settledFalseExits: Int
    /// Beacon-hours of stationary beacons.
    public var stationaryHours: Double
    /// Exits of departing beacons while they were still present.
    public var arrivalFalseExits: Int
    /// Arrivals of departing beacons (each one a new stream for the detector).
    public var arrivals: Int
    /// Hours departing beacons were present.
    public var arrivalHours: Double
    /// How long departed beacons stayed away: a missed exit was later than this, seconds.
    public var absence: Double

    public init(condition: DetectionSweep.Condition, profile: String, latencies: [Double] = [], missedExits: Int = 0,
                outsideAtDeparture: Int = 0, falseExits: Int = 0, settledFalseExits: Int = 0, stationaryHours: Double = 0,
                arrivalFalseExits: Int = 0, arrivals: Int = 0, arrivalHours: Double = 0, absence: Double = 180) {
        self.condition = condition
        self.profile = profile
        self.latencies = latencies.sorted()
        self.missedExits = missedExits
        self.outsideAtDeparture = outsideAtDeparture
        self.falseExits = falseExits
        self.settledFalseExits = settledFalseExits
        self.stationaryHours = stationaryHours
        self.arrivalFalseExits = arrivalFalseExits
        self.arrivals = arrivals
        self.arrivalHours = arrivalHours
        self.absence = absence
    }

    /// Departures measured: exits seen plus missed ones.
    public var departures: Int { latencies.count + missedExits }

    /// The exit latency at `percentile` (0...1, nearest rank) over all departures that were
    /// inside when the beacon stopped; missed exits count as infinitely late. `nil` without departures.
    public func exitLatency(percentile: Double) -> Double? {
        let count = departures
        guard count > 0 else { return nil }
        let rank = min(max(Int((percentile * Double(count)).rounded(.up)), 1), count)
        return rank <= latencies.count ? latencies[rank - 1] : .infinity
    }

    /// False exits of stationary beacons per 1000 beacon-hours (`nil` without stationary hours).
    public var falseExitsPer1000Hours: Double? {
        stationaryHours > 0 ? Double(falseExits) / stationaryHours * 1000 : nil
    }

    /// False exits after arrival per 1000 arrivals (`nil` without arrivals).
    public var arrivalFalseExitsPer1000: Double? {
        arrivals > 0 ? Double(arrivalFalseExits) / Double(arrivals) * 1000 : nil
    }

    /// Adds the counts of `other` (same condition and profile).
    mutating func merge(_ other: DetectionReport) {
        latencies = (latencies + other.latencies).sorted()
        missedExits += other.missedExits
        outsideAtDeparture += other.outsideAtDeparture
        falseExits += other.falseExits
        settledFalseExits += other.settledFalseExits
        stationaryHours += other.stationaryHours
        arrivalFalseExits += other.arrivalFalseExits
        arrivals += other.arrivals
        arrivalHours += other.arrivalHours
    }

    /// One JSON object: `profile`, `interval_s`, `loss`, `shadowing`, `departures`,
    /// `exit_p50_s`, `exit_p95_s` (null when there is none or it was missed), `missed_exits`,
    /// `outside_at_departure`, `false_exits`, `settled_false_exits` (after each stationary
    /// beacon's first 10 minutes), `beacon_hours`, `false_exits_per_1000h`,
    /// `arrivals`, `arrival_false_exits`, `arrival_false_exits_per_1000`.
    public var jsonLine: JSONLine {
        var line = JSONLine()
        line.add("profile", profile)
        line.add("interval_s", condition.advertisingInterval)
        line.add("loss", condition.lossRate)
        line.add("shadowing", condition.shadowing.rawValue)
        line.add("departures", departures)
        line.addRaw("exit_p50_s", json: JSONLine.number(exitLatency(percentile: 0.5) ?? .nan, decimals: 3))
        line.addRaw("exit_p95_s", json: JSONLine.number(exitLatency(percentile: 0.95) ?? .nan, decimals: 3))
        line.add("missed_exits", missedExits)
        line.add("outside_at_departure", outsideAtDeparture)
        line.add("false_exits", falseExits)
        line.add("settled_false_exits", settledFalseExits)
        line.add("beacon_hours", stationaryHours, decimals: 1)
        line.addRaw("false_exits_per_1000h", json: JSONLine.number(falseExitsPer1000Hours ?? .nan, decimals: 3))
        line.add("arrivals", arrivals)
        line.add("arrival_false_exits", arrivalFalseExits)
        line.addRaw("arrival_false_exits_per_1000", json: JSONLine.number(arrivalFalseExitsPer1000 ?? .nan, decimals: 1))
        return line
    }

    /// The column titles of ``tableRow``.
    public static var tableHeader: String {
        row(["interval", "loss", "shadowing", "profile", "exit p50", "exit p95", "false exits /1000 h", "false exits after arrival"])
    }

    /// A fixed-width row: the false-exit rate shows its resolution ("0 in 1000 h", "2.00 (2 in
    /// 1000 h, 1 settled)": of which 1 after the beacon's first 10 minutes).
    public var tableRow: String {
        func seconds(_ value: Double?) -> String {
            guard let value else { return "-" }
            return value.isFinite ? String(format: "%.1f s", value) : "> \(Int(absence)) s"
        }
        let hours = Self.hours(stationaryHours)
        let stationary: String
        if stationaryHours <= 0 {
            stationary = "-"
        } else if falseExits == 0 {
            stationary = "0 in \(hours) h"
        } else {
            let rate = falseExitsPer1000Hours ?? 0
            stationary = String(format: rate < 10 ? "%.2f" : rate < 100 ? "%.1f" : "%.0f", rate)
                + " (\(falseExits) in \(hours) h, \(settledFalseExits) settled)"
        }
        let arrival = arrivals > 0 ? "\(arrivalFalseExits) in \(arrivals) arrivals" : "-"
        return Self.row(["\(DetectionSweep.Condition.format(condition.advertisingInterval)) s", "\(Int((condition.lossRate * 100).rounded()))%",
                         condition.shadowing.rawValue, profile, seconds(exitLatency(percentile: 0.5)), seconds(exitLatency(percentile: 0.95)),
                         stationary, arrival])
    }

    static let columns: [(width: Int, right: Bool)] = [(8, false), (5, false), (9, false), (12, false), (9, true), (9, true), (36, false), (0, false)]

    static func row(_ cells: [String]) -> String {
        zip(cells, columns).map { cell, column in
            let padding = String(repeating: " ", count: max(0, column.width - cell.count))
            return column.right ? padding + cell : cell + padding
        }.joined(separator: "  ")
    }

    /// Hours for display: whole hours from 10 h, else one decimal.
    public static func hours(_ value: Double) -> String {
        value >= 10 ? String(Int(value.rounded())) : String(format: "%.1f", value)
    }
}
