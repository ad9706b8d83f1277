import RegionKitCore
import Foundation

/// What one scanner's channel has shown, across every stream it hears: when it last heard
/// anything, how fast it hears (all streams together), its recent **dark gaps** — silences of the
/// whole scanner far longer than its aggregate rate explains — and the tail scale its settled
/// streams have learned (a prior for its new streams).
///
/// A blackout (a person by the scanner, a Wi-Fi burst, the scanner's radio busy) silences every
/// stream of the scanner at once; a departure silences one stream while the others go on. So a
/// stream's silence is excused (``excusedSilence(from:to:streamRate:)``) for the part of it during
/// which the *other* streams of the scanner, heard at rate R − r (R the scanner's rate just before,
/// r the stream's own share of it), were silent for more than ``chanceGaps`` / (R − r) seconds —
/// a silence they would show by chance with probability about e^−5. A scanner that hears one
/// stream only excuses nothing.
///
/// Plain values: a decayed sighting count, a handful of gaps (at most ``gapCapacity``), two
/// numbers for the prior. One per scanner, not per beacon.
///
/// ```swift
/// var channel = ScannerChannel()
/// for step in 0..<1000 { channel.record(at: Timestamp(seconds: Double(step) * 0.01)) }  // 100 sightings/s
/// channel.record(at: Timestamp(seconds: 12))          // 2 s of silence of the whole scanner
/// channel.excusedSilence(from: Timestamp(seconds: 9.95), to: Timestamp(seconds: 12), streamRate: 10)  // ≈ 1.9 s
/// ```
public struct ScannerChannel: Hashable, Sendable {
    /// A silence of the whole scanner.
    public struct Gap: Hashable, Sendable {
        public var from: Timestamp
        public var to: Timestamp
        /// The scanner's sighting rate just before the gap, per second.
        public var rate: Double
    }

    /// The last sighting heard by this scanner.
    public private(set) var lastHeard: Timestamp?
    /// Sightings, each decayed e-fold per ``rateMemory`` seconds, as of ``weightTime``.
    public private(set) var weight: Double = 0
    public private(set) var weightTime: Timestamp = .zero
    /// The most recent dark gaps, oldest first.
    public private(set) var gaps: [Gap] = []
    /// The longest dark gap seen, decaying e-fold per hour.
    public private(set) var longestGap: Double = 0
    /// The tail scale the scanner's settled streams have learned (``ExitDetector/tailScale(of:)``),
    /// a running mean; `nil` until one has.
    public private(set) var priorScale: Double?
    /// Updates behind ``priorScale`` (counted up to ``priorMemory``).
    public private(set) var priorUpdates: Double = 0

    /// Seconds over which the scanner's rate is averaged (e-fold decay).
    public static let rateMemory = 10.0
    /// Expected aggregate intervals of the other streams that must pass silent before a
    /// silence counts as the scanner's.
    public static let chanceGaps = 5.0
    /// Dark gaps kept.
    public static let gapCapacity = 32
    /// An excused silence is never longer than this, nor than twice the longest dark gap seen.
    public static let minimumExcuseLimit = 10.0
    /// Seconds over which the longest dark gap is forgotten (e-fold).
    public static let longestGapMemory = 3_600.0
    /// Stream updates the prior scale averages over once warmed up.
    public static let priorMemory = 1_000.0
    /// Intervals a stream must have shown before it informs the prior.
    public static let settledIntervals = 30
    /// With ``ExitDetector/learnedGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``,
    /// seconds a stream must also have been heard before it informs the prior: long enough to
    /// have met the blackouts of its channel (1 s blackouts every 7–20 s in the sweep's bursty
    /// conditions), so "no bursts" from it is evidence.
    public static let settledSeconds = 60.0

    public init() {}

    /// The scanner's sighting rate at `time`, per second, from sightings up to then.
    public func rate(at time: Timestamp) -> Double {
        weight * exp(-max(0, time - weightTime) / Self.rateMemory) / Self.rateMemory
    }

    /// The longest silence this scanner excuses: twice its longest dark gap, at least
    /// ``minimumExcuseLimit``. When everything a scanner hears goes silent for good (the scanner
    /// is off, or every beacon left at once), exits come that much later.
    public var excuseLimit: Double { max(Self.minimumExcuseLimit, 2 * longestGap) }

    /// Records a sighting of any stream at `time` (earlier times count as simultaneous).
    public mutating func record(at time: Timestamp) {
        if let last = lastHeard {
            guard time > last else {
                weight += 1
                return
            }
            // (The weight is kept as of the last sighting, so its rate then needs no decay: the
            // same number `rate(at:)` gives, e^0 being 1, without the `exp`.)
            let rate = weightTime == last ? weight / Self.rateMemory : rate(at: last)
            let gap = time - last
            if rate * gap > Self.chanceGaps {
                gaps.append(Gap(from: last, to: time, rate: rate))
                if gaps.count > Self.gapCapacity { gaps.removeFirst(gaps.count - Self.gapCapacity) }
            }
            if rate > 0 {
                let dark = gap - Self.chanceGaps / rate
                // The decayed longest gap is at most the longest gap: when that is 0 or this
                // silence is longer, the maximum is known without the `exp`.
                longestGap = longestGap == 0 || dark >= longestGap ? max(dark, 0) : max(dark, longestGap * exp(-gap / Self.longestGapMemory))
            }
        }
        weight = weight * exp(-max(0, time - weightTime) / Self.rateMemory) + 1
        weightTime = time
        lastHeard = time
    }

    /// Folds a settled stream's tail scale into ``priorScale``.
    public mutating func learnPrior(_ scale: Double) {
        guard scale.isFinite, scale >= 0 else { return }
        priorUpdates = min(priorUpdates + 1, Self.priorMemory)
        let current = priorScale ?? scale
        priorScale = current + (scale - current) / priorUpdates
    }

    /// Seconds of a stream's silence from `lastSighting` to `now` that were the scanner's: the
    /// parts of the scanner's dark gaps (and of its current silence, if it is silent now) after the
    /// other streams, heard at the scanner's rate less `streamRate` (the stream's own, per second,
    /// decaying as it stays silent), were silent for ``chanceGaps`` of their intervals. At most
    /// ``excuseLimit``.
    public func excusedSilence(from lastSighting: Timestamp, to now: Timestamp, streamRate: Double) -> Double {
        guard now > lastSighting else { return 0 }
        var excused = 0.0
        func credit(from: Timestamp, to: Timestamp, rate: Double) {
            let own = max(streamRate, 0) * exp(-max(0, from - lastSighting) / Self.rateMemory)
            let others = rate - own
            guard others > 0 else { return }
            let start = max(from + Self.chanceGaps / others, lastSighting)
            let end = min(to, now)
            if end > start { excused += end - start }
        }
        if let last = lastHeard, last < now {
            credit(from: last, to: now, rate: rate(at: last))
        }
        for gap in gaps.reversed() {
            guard gap.to > lastSighting else { break }
            credit(from: gap.from, to: gap.to, rate: gap.rate)
        }
        return min(excused, excuseLimit)
    }
}
