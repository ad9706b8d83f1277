import Foundation

/// The silence tail of a periodic stream: a transmitter (or a gateway) reporting every `period`
/// seconds, each report lost independently with probability q. After a sighting, a silence of at
/// least s = T·(1 + x) needs the next ⌈x⌉ reports lost, probability q^⌈x⌉ — a geometric tail,
/// far lighter than the exponential tail of a Poisson process with the same mean interval
/// T/(1 − q).
///
/// The loss is not known exactly: it is learned from `lost` of `frames` periods. The expected
/// exceedance under that uncertainty, E[q^x] for q ~ Beta(lost + ½, received + ½), is used rather
/// than q̂^x, so a loss learned from few periods gives a longer silence:
///
///     E[q^x] = ∏_{i<x} (a + i) / (a + b + i),   a = lost + ½, b = received + ½
///
/// and with many losses its log-normal approximation, ln E[q^x] ≈ x·ln q̂ + x²·σ²/2 with
/// σ² = (1 − q̂)/(q̂·frames).
///
/// ```swift
/// // 1 Hz, 1 % loss learned from 2,000 periods, 3,564 sightings an hour, 1e-4 false exits an hour:
/// let s = PeriodicTail(period: 1, lost: 20, frames: 2_000).silence(sightingsPerHour: 3_564, falseExitsPerHour: 1e-4)
/// // s ≈ 5.25 (5 reports missed in a row: 3,564 · E[q⁵] < 1e-4)
/// ```
public struct PeriodicTail: Hashable, Sendable {
    /// The period T, seconds.
    public var period: Double
    /// Periods without a sighting among ``frames``.
    public var lost: Double
    /// Periods observed.
    public var frames: Double

    /// How far past ⌈x⌉ periods a silence must last, in periods: the advertising delay and clock
    /// drift move reports by up to this much around their grid.
    public static let gridMargin = 0.25
    /// Losses from which the log-normal approximation replaces the exact product.
    public static let exactBelow = 20.0

    public init(period: Double, lost: Double, frames: Double) {
        self.period = period
        self.lost = lost
        self.frames = frames
    }

    /// The tail of `stream`'s periodic view (`nil` unless it ``ReceptionEstimator/isPeriodic``).
    /// With a ``ReceptionEstimator/priorLoss`` (what its scanner's settled periodic streams lose),
    /// the loss is learned from that prior worth ``ReceptionEstimator/priorLossWeight`` periods
    /// (``scannerPriorFrames`` unless the scanner's links have shown they lose alike:
    /// ``ScannerChannel/priorLossWeight``) plus the stream's own periods: a stream heard for a
    /// minute at 1 Hz, with 1 loss in 60 periods, alone gives q ~ Beta(1.5, 59.5); beside a
    /// scanner whose streams lose 1 %, Beta(2.5, 158.5), and beside 32 links that lose 1 % alike,
    /// Beta(11.5, 1049.5).
    ///
    /// A stream whose own losses contradict a heavier prior (``contradicts(lost:frames:loss:)``:
    /// a link worse than its neighbours) is given the least weight, ``scannerPriorFrames``.
    public init?(_ stream: ReceptionEstimator) {
        guard stream.isPeriodic else { return nil }
        let frames = stream.periodicFrames
        var lost = stream.periodicLoss * frames
        var all = frames
        if let prior = stream.priorLoss {
            var weight = stream.priorLossWeight
            if weight > Self.scannerPriorFrames, Self.contradicts(lost: lost, frames: frames, loss: prior) {
                weight = Self.scannerPriorFrames
            }
            lost += prior * weight
            all += weight
        }
        self.init(period: stream.period, lost: lost, frames: all)
    }

    /// The least weight, in periods, of a scanner's learned loss in its streams' loss
    /// (``ReceptionEstimator/priorLoss``): a stream's own periods outweigh it after 100.
    public static let scannerPriorFrames = 100.0
    /// The most weight, in periods, of a scanner's learned loss (``ScannerChannel/priorLossWeight``):
    /// a stream's own periods outweigh it after 1,000 (17 minutes at 1 Hz, 100 s at 10 Hz).
    public static let maximumPriorFrames = 1_000.0

    /// Whether `lost` of `frames` periods are more losses than a loss of `loss` gives, beyond
    /// chance: more than the expected count by two of its standard deviations and half a loss
    /// (a binomial count; a link that loses like its neighbours exceeds it at a given check with
    /// probability 0.5–3.5 %, depending on its periods, and then learns its loss from the least
    /// prior weight). It catches links far worse than their neighbours; one only a little worse
    /// (2 % beside links losing 1 %) passes it for hundreds of periods and meanwhile waits as
    /// they do: the rule of one false exit per 10,000 stream-hours then holds over the scanner's
    /// links on average, not for each.
    ///
    /// ```swift
    /// PeriodicTail.contradicts(lost: 2, frames: 60, loss: 0.01)   // false: 0.6 expected, bound 2.6
    /// PeriodicTail.contradicts(lost: 3, frames: 60, loss: 0.01)   // true
    /// ```
    public static func contradicts(lost: Double, frames: Double, loss: Double) -> Bool {
        guard frames > 0, loss.isFinite else { return false }
        let p = min(max(loss, 0), 1)
        let expected = frames * p
        return lost > expected + 2 * (expected * (1 - p)).squareRoot() + 0.5
    }

    /// Whether `stream` has shown bursts its geometric tail does not explain: more of its
    /// intervals reached the learned-gap tail (longer than ``ReceptionEstimator/tailStart`` mean
    /// intervals, ``ReceptionEstimator/tailIntervals``) than independent losses at the learned
    /// loss would give — at least 2, and more than twice the expected count plus 3 of its
    /// standard deviations (a Poisson count; twice, because the count goes as a power of the
    /// loss, which is itself estimated). An interval may reach the tail once ⌊u/T − ¼⌋ reports in
    /// a row were lost, u the tail start (the advertising delay moves reports by up to a quarter
    /// period, ``gridMargin``): probability ``missProbability(_:)`` of that.
    ///
    /// Such a stream's silences are not geometric: ``ExitDetector`` gives it the learned-gap
    /// model. Measured (issue 15, seventh pass): at 1 Hz with 1 % loss in per-link blackouts
    /// (mean 1 s), the geometric tail of the 1 % gave 5.25 s, and blackouts of 5 s and more gave
    /// 264 false exits per 1000 beacon-hours.
    ///
    /// ```swift
    /// let tail = PeriodicTail(period: 1, lost: 6, frames: 600)  // 1 % of 10 minutes
    /// tail.showsBursts(tailIntervals: 2, intervals: 594, tailStart: 3.03)   // true: 594 · 0.01³ ≈ 0.0006 expected
    /// ```
    public func showsBursts(tailIntervals: Int, intervals: Int, tailStart: Double) -> Bool {
        guard tailIntervals >= 2, period > 0, tailStart.isFinite else { return false }
        let runs = Int(min(max(tailStart / period - Self.gridMargin, 0), 1_000).rounded(.down))
        let expected = Double(max(intervals, 0)) * missProbability(runs)
        return Double(tailIntervals) > 2 * expected + 3 * expected.squareRoot()
    }

    /// The expected probability that the next `missed` reports are all lost.
    public func missProbability(_ missed: Int) -> Double {
        let a = max(lost, 0) + 0.5
        let b = max(frames - lost, 0) + 0.5
        var product = 1.0
        for i in 0..<max(missed, 0) {
            product *= (a + Double(i)) / (a + b + Double(i))
        }
        return product
    }

    /// The shortest silence, seconds, that `sightingsPerHour` sightings an hour would exceed at
    /// most `falseExitsPerHour` times an hour; `nil` when more than `limit` reports in a row would
    /// be needed (the loss is too high or too uncertain for the periodic model to say anything).
    public func silence(sightingsPerHour: Double, falseExitsPerHour: Double, limit: Int = 2_000) -> Double? {
        guard period > 0, period.isFinite, frames > 0, sightingsPerHour > 0 else { return nil }
        let target = max(falseExitsPerHour, 1e-12) / sightingsPerHour
        guard target < 1 else { return period * (1 + Self.gridMargin) }
        let missed: Int
        if lost < Self.exactBelow {
            var product = 1.0
            let a = max(lost, 0) + 0.5
            let b = max(frames - lost, 0) + 0.5
            var count = 0
            while product > target {
                guard count < limit else { return nil }
                product *= (a + Double(count)) / (a + b + Double(count))
                count += 1
            }
            missed = count
        } else {
            // ln E[q^x] ≈ −x·L + x²·σ²/2 ≤ ln(target): the smaller root of σ²/2·x² − L·x + ln(1/target).
            let q = min(max(lost / frames, 1e-9), 1 - 1e-9)
            let l = -log(q)
            let variance = (1 - q) / (q * frames)
            let need = -log(target)
            let x: Double
            if variance < 1e-15 {
                x = need / l
            } else {
                let discriminant = l * l - 2 * variance * need
                guard discriminant >= 0 else { return nil }
                x = (l - discriminant.squareRoot()) / variance
            }
            guard x.isFinite, x < Double(limit) else { return nil }
            missed = Int(x.rounded(.up))
        }
        return period * (Double(missed) + Self.gridMargin)
    }
}
