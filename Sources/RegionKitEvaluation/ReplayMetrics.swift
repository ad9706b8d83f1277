/// The detection-quality measures of a replay, as pure functions of event and sighting times (in
/// seconds on the recording's clock). ``ReplayEvaluator`` applies them to a real replay; tests
/// apply them to hand-made sequences.
///
/// ```swift
/// ReplayMetrics.falseExits(exits: [12, 900], lastSighting: 800)             // [12]: it was heard again after 12
/// ReplayMetrics.flaps(exits: [12, 900], entries: [13.5], window: 30)        // [12]
/// ReplayMetrics.percentile([1, 2, 3, 4], 0.5)                              // 2 (nearest rank)
/// ```
public enum ReplayMetrics {
    /// A nearest-scanner decision: from `time` on, the engine said the beacon is at `room`.
    public struct RoomDecision: Hashable, Sendable {
        public var time: Double
        public var room: String

        public init(time: Double, room: String) {
            self.time = time
            self.room = room
        }
    }

    /// Seconds scored and seconds assigned to the right room.
    public struct RoomScore: Hashable, Sendable {
        public var scored: Double
        public var correct: Double

        public init(scored: Double = 0, correct: Double = 0) {
            self.scored = scored
            self.correct = correct
        }

        /// `correct / scored`, `nil` when nothing was scored.
        public var fraction: Double? { scored > 0 ? correct / scored : nil }

        public static func + (lhs: RoomScore, rhs: RoomScore) -> RoomScore {
            RoomScore(scored: lhs.scored + rhs.scored, correct: lhs.correct + rhs.correct)
        }
    }

    /// Exits of a stream whose beacon never left that fired before the stream's last sighting:
    /// the beacon was heard again, so the exit was false. (An exit after the last sighting is the
    /// scanner stopping at the end of the run, not the beacon leaving.)
    public static func falseExits(exits: [Double], lastSighting: Double) -> [Double] {
        exits.filter { $0 < lastSighting }
    }

    /// The first exit during `silence` (after its last sighting, no later than the sighting that
    /// ended it): the time the detector took to call the stream gone, or `nil` if it never did.
    public static func exit(during silence: SightingStream.Silence, exits: [Double]) -> Double? {
        exits.filter { exit in exit > silence.lastSighting && (silence.resumed.map { exit <= $0 } ?? true) }.min()
    }

    /// Exits followed by a re-entry of the same region within `window` seconds (flaps): the
    /// exit times that were undone that quickly.
    public static func flaps(exits: [Double], entries: [Double], window: Double) -> [Double] {
        let entries = entries.sorted()
        return exits.filter { exit in
            guard let next = entries.first(where: { $0 >= exit }) else { return false }
            return next - exit <= window
        }
    }

    /// Scores nearest-scanner decisions against labelled periods. Each period loses `tolerance`
    /// seconds at both ends (the labels' times are rough) and is clipped to `within`; what is left
    /// is scored, and the part of it where the latest decision names the period's room is correct.
    /// Time before the first decision counts as wrong. Unlabelled time and transitions (`room ==
    /// nil`) are not scored; an open start or end is the bound of `within`.
    public static func roomScore(decisions: [RoomDecision], periods: [RoomPeriod], tolerance: Double,
                                 within bounds: ClosedRange<Double>) -> RoomScore {
        let decisions = decisions.sorted { $0.time < $1.time }
        var score = RoomScore()
        for period in periods {
            guard let room = period.room else { continue }
            let start = max((period.start ?? bounds.lowerBound) + tolerance, bounds.lowerBound)
            let end = min((period.end ?? bounds.upperBound) - tolerance, bounds.upperBound)
            guard end > start else { continue }
            score.scored += end - start
            for (index, decision) in decisions.enumerated() where decision.room == room {
                let until = index + 1 < decisions.count ? decisions[index + 1].time : Double.infinity
                let overlap = min(until, end) - max(decision.time, start)
                if overlap > 0 { score.correct += overlap }
            }
        }
        return score
    }

    /// The `p` quantile (0...1) of `values` by nearest rank (the smallest value with at least
    /// p·n values at or below it); `nil` when empty.
    public static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((min(max(p, 0), 1) * Double(sorted.count)).rounded(.up))
        return sorted[max(rank, 1) - 1]
    }
}
