/// Notices a scanner that reports in cycles longer than the exit detector's longest silence —
/// an OpenMQTTGateway node on its default settings scans about once a minute — whose beacons then
/// leave and come back every cycle, with nothing in the log to say why. Plain values: the time of
/// each scanner's last message, when its current burst began and how many short bursts with a
/// long silence before each came in a row.
///
/// A scanner is reported once, after ``burstsBeforeWarning`` such cycles in a row: each a silence
/// of the whole scanner longer than `ceiling` (but shorter than ``outageSeconds``: longer is an
/// outage or a quiet night, not a cycle) after a burst shorter than `ceiling`. A scanner that
/// hears something all the time never qualifies.
///
/// ```swift
/// var watch = ScannerCycleWatch(ceiling: 60)
/// for cycle in 0..<4 { _ = watch.heard("omg", at: Double(cycle) * 65) }   // the fourth returns ≈ 65
/// ```
struct ScannerCycleWatch: Sendable {
    /// The exit detector's longest silence: a scanner silent longer between reports is too slow.
    let ceiling: Double
    /// Cycles in a row before a scanner is reported.
    static let burstsBeforeWarning = 3
    /// A silence this long is an outage (or nothing to hear), not a scan cycle.
    static let outageSeconds = 600.0
    /// Scanners followed at most (a broker's worth of forged names cannot grow it further).
    static let capacity = 4_096

    private struct Track: Sendable {
        var last: Double
        var burstStart: Double
        var cycles: Int
        var longestSilence: Double
        var reported: Bool
    }

    private var tracks: [String: Track] = [:]

    init(ceiling: Double) {
        self.ceiling = ceiling
    }

    /// Notes a message of `scanner` at `time` (seconds); returns the cycle's silence, seconds, the
    /// one time the scanner is found too slow.
    mutating func heard(_ scanner: String, at time: Double) -> Double? {
        guard ceiling.isFinite, time.isFinite else { return nil }
        guard var track = tracks[scanner] else {
            if tracks.count < Self.capacity {
                tracks[scanner] = Track(last: time, burstStart: time, cycles: 0, longestSilence: 0, reported: false)
            }
            return nil
        }
        defer { tracks[scanner] = track }
        let silence = time - track.last
        track.last = max(track.last, time)
        guard silence > ceiling else {
            // Heard continuously for longer than the ceiling: not a slow cycle.
            if time - track.burstStart > ceiling { (track.cycles, track.longestSilence) = (0, 0) }
            return nil
        }
        let shortBurst = time - silence - track.burstStart <= ceiling
        track.burstStart = time
        guard silence < Self.outageSeconds, shortBurst else {
            (track.cycles, track.longestSilence) = (0, 0)
            return nil
        }
        track.cycles += 1
        track.longestSilence = max(track.longestSilence, silence)
        guard track.cycles >= Self.burstsBeforeWarning, !track.reported else { return nil }
        track.reported = true
        return track.longestSilence
    }
}
