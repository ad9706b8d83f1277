import RegionKitCore
import Foundation

/// Decides when a beacon stream that has gone silent is gone: the exit-timing policy.
///
/// ```swift
/// // Core Location: 30 s of silence, noticed on a 10 s evaluation grid → exits 30–40 s after the last sighting.
/// let ios = ExitDetector.fixedSilence(seconds: 30, evaluationInterval: 10)
/// // Responsive: silence improbable (p < 1e-4) under the stream's own reception rate.
/// let fast = ExitDetector.adaptive(falseExitProbability: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
/// ```
public enum ExitDetector: Hashable, Sendable, Codable {
    /// Gone after `seconds` without a sighting; when `evaluationInterval` is set the decision is
    /// only taken on a grid of that period from the region's registration, as iOS appears to do.
    case fixedSilence(seconds: Double, evaluationInterval: Double?)
    /// Gone when a silence this long has probability below `falseExitProbability` under the
    /// stream's learned reception rate (sightings modelled as a Poisson process with the stream's
    /// mean interval m: P(silence ≥ s) = e^(−s/m), so s = m · ln(1/p)), clamped to
    /// `minimumSilence...maximumSilence`. `priorInterval` seeds m before any interval is seen.
    case adaptive(falseExitProbability: Double, minimumSilence: Double, maximumSilence: Double, priorInterval: Double)

    /// The prior mean interval new streams start from.
    public var priorInterval: Double {
        switch self {
        case .fixedSilence(let seconds, _): seconds
        case .adaptive(_, _, _, let prior): prior
        }
    }

    /// The silence, in seconds, after which `stream` counts as gone.
    public func silenceThreshold(for stream: ReceptionEstimator) -> Double {
        switch self {
        case .fixedSilence(let seconds, _):
            return seconds
        case .adaptive(let probability, let minimum, let maximum, _):
            let p = min(max(probability, 1e-12), 0.5)
            return min(max(stream.meanInterval * log(1 / p), minimum), maximum)
        }
    }

    /// When `stream` will count as gone if nothing more is heard.
    /// - Parameter gridOrigin: origin of the evaluation grid (the region's registration time).
    public func goneDeadline(for stream: ReceptionEstimator, gridOrigin: Timestamp) -> Timestamp {
        let raw = stream.lastSighting + silenceThreshold(for: stream)
        guard case .fixedSilence(_, let interval?) = self, interval > 0 else { return raw }
        let steps = ((raw - gridOrigin) / interval).rounded(.up)
        return gridOrigin + max(0, steps) * interval
    }
}
