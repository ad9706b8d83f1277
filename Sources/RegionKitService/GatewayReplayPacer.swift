/// The replay offsets of a gateway recording's sightings, one at a time in the order they are
/// replayed: recorded seconds after the first, every gap longer than ``maximumGap`` shortened to
/// it (a damaged far-future timestamp would otherwise stop the replay for years). Differences are
/// taken in `Double`, so timestamps of an untrusted file far apart cannot overflow; one before the
/// previous (out of order beyond the reorder window) waits nothing, never a negative time.
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
}
