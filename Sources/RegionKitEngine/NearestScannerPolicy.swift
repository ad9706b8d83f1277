import RegionKitCore

/// How the engine decides which scanner (room) a beacon is nearest to, with hysteresis so it does
/// not flap between two rooms that both hear it.
///
/// Each scanner's RSSI for the beacon is smoothed (exponential, `halfLife`). The nearest scanner
/// changes when another scanner's smoothed RSSI beats the current one's by `margin` dB for `dwell`
/// seconds, or at once when the current scanner has stopped hearing the beacon (its stream is gone
/// under the profile's exit detector).
///
/// ```swift
/// var profile = MonitoringProfile.responsive
/// profile.nearestScanner = NearestScannerPolicy(margin: 6, dwell: 5, halfLife: 3)
/// ```
public struct NearestScannerPolicy: Hashable, Sendable, Codable {
    public var margin: Double
    public var dwell: Double
    public var halfLife: Double

    public init(margin: Double = 6, dwell: Double = 5, halfLife: Double = 3) {
        self.margin = margin
        self.dwell = dwell
        self.halfLife = halfLife
    }
}

/// The plain-value state behind ``NearestScannerPolicy`` for one beacon.
public struct NearestScannerState: Hashable, Sendable, Codable {
    public struct Track: Hashable, Sendable, Codable {
        public var smoothed = RSSIFilterState()
        public var stream: ReceptionEstimator
    }

    public var tracks: [String: Track] = [:]
    public var current: String?
    public var candidate: String?
    public var candidateSince: Timestamp?

    public init() {}

    /// When a scanner stops counting in the comparison: its silence is improbable (p < 10⁻⁴)
    /// under its own mean interval, within 1–60 s. Deliberately not the profile's exit detector:
    /// exits are tuned against false exits (a conservative, learned tail), while the nearest
    /// scanner must let go of a room the beacon has left within a few intervals — a stale track
    /// keeps its last smoothed RSSI and would hold the beacon in the old room (on the
    /// four-scanner recording, the learned-gap detector here cut room accuracy from 99.6% to 87%).
    static let presence = ExitDetector.adaptive(falseExitProbability: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)

    /// Records a sighting; returns the new nearest scanner when it changed.
    mutating func record(_ observation: BeaconObservation, scanner: String, policy: NearestScannerPolicy) -> (from: String?, to: String?)? {
        let detector = Self.presence
        let now = observation.timestamp
        let filter = RSSIFilter.exponential(halfLife: policy.halfLife)
        var track = tracks[scanner] ?? Track(stream: ReceptionEstimator(firstSighting: now, priorInterval: detector.priorInterval))
        if tracks[scanner] != nil { track.stream.record(at: now, rssi: observation.rssi) }
        filter.add(Double(observation.rssi), at: now, to: &track.smoothed)
        tracks[scanner] = track
        // Present scanners and their smoothed RSSI; drop tracks that are gone.
        var present: [(scanner: String, rssi: Double)] = []
        for (name, track) in tracks {
            if detector.goneDeadline(for: track.stream, gridOrigin: track.stream.firstSighting) <= now && name != scanner {
                tracks[name] = nil
                continue
            }
            if let value = filter.value(of: track.smoothed, at: now) { present.append((name, value)) }
        }
        present.sort { $0.rssi != $1.rssi ? $0.rssi > $1.rssi : $0.scanner < $1.scanner }
        guard let best = present.first else { return nil }
        let previous = current
        guard let current, let currentRSSI = present.first(where: { $0.scanner == current })?.rssi else {
            self.current = best.scanner
            candidate = nil
            candidateSince = nil
            return previous == best.scanner ? nil : (previous, best.scanner)
        }
        guard best.scanner != current, best.rssi >= currentRSSI + policy.margin else {
            candidate = nil
            candidateSince = nil
            return nil
        }
        if candidate != best.scanner {
            candidate = best.scanner
            candidateSince = now
        }
        guard let since = candidateSince, now - since >= policy.dwell else { return nil }
        self.current = best.scanner
        candidate = nil
        candidateSince = nil
        return (current, best.scanner)
    }
}
