/// The replay offsets of a gateway recording's sightings, one at a time in the order they are
/// replayed: recorded seconds after the first, every gap longer than ``maximumGap`` shortened to
/// it (a damaged far-future timestamp would otherwise stop the replay for years). Differences are
/// taken in `Double`, so timestamps of an untrusted file far apart cannot overflow; one before the
/// previous (out of order beyond the reorder window) waits nothing, never a negative time.
///
/// A replay fed as it is read (``wait(for:elapsed:speed:)``) is re-anchored at a sighting that
/// arrives more than ``slack`` seconds after it was due (a pipe whose writer paused): those after
/// it keep their recorded spacing from it instead of all being due at once.
///
/// ```swift
/// var pacer = GatewayReplayPacer(maximumGap: 60)
/// [0, 500, 9_000_000_000_000].map { pacer.offset(of: $0) }   // [0, 0.5, 60.5]; pacer.shortened == 1
/// ```
struct GatewayReplayPacer {
    /// The longest gap (seconds) waited through.
    let maximumGap: Double
    /// Gaps shortened so far, and the longest of them (seconds).
    private(set) var shortened = 0
    private(set) var longest = 0.0
    private var previous: Int64?
    private var elapsed = 0.0
    /// Real seconds the replay was pushed back by late input (``wait(for:elapsed:speed:)``).
    private var delay = 0.0
    /// How late (real seconds) a sighting may arrive before the replay is re-anchored at it.
    static let slack = 1.0

    init(maximumGap: Double) {
        self.maximumGap = maximumGap
    }

    /// The offset (seconds after the first sighting) of the sighting recorded at `time` (ms).
    mutating func offset(of time: Int64) -> Double {
        if let previous {
            let gap = max(0, (Double(time) - Double(previous)) / 1000)
            if gap > maximumGap {
                shortened += 1
                longest = max(longest, gap)
            }
            elapsed += min(gap, maximumGap)
        }
        previous = time
        return elapsed
    }

    /// The real seconds to wait before replaying the sighting recorded at `time` (ms), `elapsed`
    /// real seconds after the replay began, at `speed` recorded seconds per real second: 0 when it
    /// is due. One due more than ``slack`` seconds ago re-anchors the replay at it (it is
    /// replayed now, and the next ones keep their recorded spacing after it).
    mutating func wait(for time: Int64, elapsed now: Double, speed: Double) -> Double {
        let due = delay + offset(of: time) / speed
        if now - due > Self.slack { delay += now - due }
        return max(0, due - now)
    }
}
