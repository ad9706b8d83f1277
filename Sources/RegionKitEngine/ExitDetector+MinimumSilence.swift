import RegionKitCore

extension ExitDetector {
    /// This detector with no exit before `seconds` of silence: its minimum silence (and its
    /// maximum, when that is shorter) raised to `seconds`; a fixed silence at least `seconds`.
    /// Nothing changes when `seconds` is already below its minimum.
    ///
    /// For scanners that report in slow cycles — an OpenMQTTGateway node on its default settings
    /// scans about once a minute (`TimeBtwRead` 55.5 s): its beacons fall silent for a cycle
    /// at a time, longer than ``MonitoringProfile/responsive``'s 60 s ceiling, and would leave
    /// and come back every cycle. No detector can tell a departure from a silence the scanner
    /// always has; the floor says how long that silence is.
    ///
    /// ```swift
    /// var profile = MonitoringProfile.responsive
    /// profile.exitDetector = profile.exitDetector.withMinimumSilence(150)   // 150...150 s
    /// ```
    public func withMinimumSilence(_ seconds: Double) -> ExitDetector {
        guard seconds.isFinite, seconds > 0 else { return self }
        switch self {
        case .fixedSilence(let silence, let grid):
            return .fixedSilence(seconds: max(silence, seconds), evaluationInterval: grid)
        case .adaptive(let probability, let minimum, let maximum, let prior):
            return .adaptive(falseExitProbability: probability, minimumSilence: max(minimum, seconds), maximumSilence: max(maximum, seconds), priorInterval: prior)
        case .learnedGaps(let rate, let minimum, let maximum, let prior):
            return .learnedGaps(falseExitsPerHour: rate, minimumSilence: max(minimum, seconds), maximumSilence: max(maximum, seconds), priorInterval: prior)
        case .periodicGaps(let rate, let minimum, let maximum, let prior):
            return .periodicGaps(falseExitsPerHour: rate, minimumSilence: max(minimum, seconds), maximumSilence: max(maximum, seconds), priorInterval: prior)
        case .cautiousGaps(let rate, let minimum, let maximum, let prior):
            return .cautiousGaps(falseExitsPerHour: rate, minimumSilence: max(minimum, seconds), maximumSilence: max(maximum, seconds), priorInterval: prior)
        case .evidenceGaps(let rate, let minimum, let maximum, let prior):
            return .evidenceGaps(falseExitsPerHour: rate, minimumSilence: max(minimum, seconds), maximumSilence: max(maximum, seconds), priorInterval: prior)
        }
    }
}
