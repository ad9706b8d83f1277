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
    /// Seconds of silence a scanner keeps its say in the beacon's room: set, a scanner's track
    /// goes only after this long (another scanner still takes the room by `margin` and `dwell`);
    /// `nil`: ``NearestScannerState``'s quick rule, 1–60 s by the track's own interval. Set to the
    /// daemon's `minimumExitSilence`, for scanners that report once a minute: their tracks went
    /// within 60 s (a new one's within 10), and the room jumped to another such scanner and back.
    public var longestQuiet: Double?

    public init(margin: Double = 6, dwell: Double = 5, halfLife: Double = 3, longestQuiet: Double? = nil) {
        self.margin = margin
        self.dwell = dwell
        self.halfLife = halfLife
        self.longestQuiet = longestQuiet
    }

    /// The rule by which a scanner stops counting for the room: ``NearestScannerState``'s quick
    /// one, or ``longestQuiet``'s fixed silence.
    var presence: ExitDetector {
        guard let longestQuiet, longestQuiet.isFinite, longestQuiet > 0 else { return NearestScannerState.presence }
        return .adaptive(falseExitProbability: 1e-4, minimumSilence: longestQuiet, maximumSilence: longestQuiet, priorInterval: 1)
    }
}

/// The plain-value state behind ``NearestScannerPolicy`` for one beacon.
public struct NearestScannerState: Hashable, Sendable, Codable {
    public struct Track: Hashable, Sendable, Codable {
        public var smoothed = RSSIFilterState()
        public var stream: ReceptionEstimator
    }

    /// One track per scanner hearing the beacon, at most ``maximumTracks``.
    public var tracks: [String: Track] = [:]
    /// The most scanners a beacon's tracks are kept for; a new one then replaces the one heard
    /// longest ago (never the current room's). Unbounded, a beacon reported under thousands of
    /// room names made every sighting walk and sort them all (audit: 67 % of the MQTT thread).
    public static let maximumTracks = RangingSession.maximumReadings
    public var current: String?
    public var candidate: String?
    public var candidateSince: Timestamp?
    /// Sightings by other scanners at least as strong as the current scanner's smoothed RSSI since
    /// the current scanner last heard the beacon (counted with other-scanner evidence only).
    public var heardElsewhere: Int = 0
    /// The time of the engine's absence entry for this beacon (`NearestAbsence`): never later
    /// than ``absentDeadline(detector:offlineSilence:)``; `nil` while none is filed.
    public var absentAt: Timestamp?

    public init() {}

    /// A beacon known to be in `scanner`'s room (``MonitoringEngine/restoreNearestScanner(_:scanner:at:)``):
    /// one track, as if the scanner had heard it once at `time`, with no RSSI yet (the first
    /// sighting gives it one; another scanner takes the beacon only after hearing it for `dwell`
    /// while this one does not, or once this track is gone).
    init(restoring scanner: String, at time: Timestamp) {
        let detector = Self.presence
        tracks[scanner] = Track(stream: ReceptionEstimator(firstSighting: time, priorInterval: detector.priorInterval, tracksEvidence: detector.usesEvidence))
        current = scanner
    }

    /// When no scanner hears the beacon any more: the latest time a track's stream is gone under
    /// `detector` — the profile's exit detector, as conservative as its region exits (not
    /// `presence`, the quick rule that lets a room go while the beacon is heard elsewhere: a
    /// few seconds' gap would read as the beacon gone); `nil` without a track.
    ///
    /// `offlineSilence`, given a track's scanner, its last sighting and its deadline without it,
    /// is the part of the silence since then that the scanner said it was offline, added to that
    /// track's deadline (``ScannerChannel/offlineSilence(from:to:)``).
    public func absentDeadline(detector: ExitDetector,
                               offlineSilence: ((_ scanner: String, _ lastSighting: Timestamp, _ deadline: Timestamp) -> Double)? = nil) -> Timestamp? {
        var latest: Timestamp?
        for (scanner, track) in tracks {
            var deadline = detector.goneDeadline(for: track.stream, gridOrigin: track.stream.firstSighting)
            if let offlineSilence { deadline = deadline + offlineSilence(scanner, track.stream.lastSighting, deadline) }
            if latest == nil || deadline > latest! { latest = deadline }
        }
        return latest
    }

    /// Stronger sightings elsewhere after which a quiet current scanner is let go.
    static let elsewhereEvidence = 3
    /// With other-scanner evidence, the current scanner is let go once it has been silent this
    /// many of its mean intervals (and ``minimumQuiet`` seconds) while the beacon was heard
    /// elsewhere ``elsewhereEvidence`` times at least as strongly.
    static let quietIntervals = 3.0
    static let minimumQuiet = 0.5

    /// When a scanner stops counting in the comparison: its silence is improbable (p < 10⁻⁴)
    /// under its own mean interval, within 1–60 s. Deliberately not the profile's exit detector:
    /// exits are tuned against false exits (a conservative, learned tail), while the nearest
    /// scanner must let go of a room the beacon has left within a few intervals — a stale track
    /// keeps its last smoothed RSSI and would hold the beacon in the old room (on the
    /// four-scanner recording, the learned-gap detector here cut room accuracy from 99.6% to 87%).
    static let presence = ExitDetector.adaptive(falseExitProbability: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)

    /// Records a sighting; returns the new nearest scanner when it changed.
    /// `otherScanners`: use the beacon being heard elsewhere as evidence that it left the current
    /// scanner (``ExitDetector/usesEvidence``): a current scanner silent for ``quietIntervals`` of its
    /// mean intervals while others heard the beacon at least as strongly ``elsewhereEvidence`` times
    /// no longer counts, and the strongest other scanner takes over at once.
    /// `offline`: the last time `scanner` said it was offline (``ScannerChannel/lastOffline``),
    /// left out of the interval its track learns.
    mutating func record(_ observation: BeaconObservation, scanner: String, policy: NearestScannerPolicy,
                         otherScanners: Bool = false, offline: ScannerChannel.Gap? = nil) -> (from: String?, to: String?)? {
        let detector = policy.presence
        let now = observation.timestamp
        let filter = RSSIFilter.exponential(halfLife: policy.halfLife)
        if otherScanners, let current {
            if scanner == current {
                heardElsewhere = 0
            } else if heardElsewhere < Self.elsewhereEvidence, let track = tracks[current],
                      now > track.stream.lastSighting, let value = filter.value(of: track.smoothed, at: now),
                      Double(observation.rssi) >= value {
                heardElsewhere += 1
            }
        }
        if tracks[scanner] == nil, tracks.count >= Self.maximumTracks {
            let current = self.current
            let oldest = tracks.lazy.filter { $0.key != current }.min { $0.value.stream.lastSighting < $1.value.stream.lastSighting }
            if let oldest { tracks[oldest.key] = nil }
        }
        var track: Track
        if let known = tracks[scanner], known.smoothed.smoothedAt != nil {
            track = known
            let excused = offline.map { min($0.seconds(from: known.stream.lastSighting, to: now), ScannerChannel.offlineExcuseLimit) } ?? 0
            track.stream.record(at: now, rssi: observation.rssi, excused: excused)
        } else {
            // New, or restored and not heard since (``init(restoring:at:)``): the time since the
            // restore is no interval of the beacon's (an outage's length would read as its rhythm).
            track = Track(stream: ReceptionEstimator(firstSighting: now, priorInterval: detector.priorInterval, tracksEvidence: detector.usesEvidence))
        }
        filter.add(Double(observation.rssi), at: now, to: &track.smoothed)
        tracks[scanner] = track
        // Present scanners and their smoothed RSSI; drop tracks that are gone.
        var present: [(scanner: String, rssi: Double)] = []
        for (name, track) in tracks {
            if detector.goneDeadline(for: track.stream, gridOrigin: track.stream.firstSighting) <= now && name != scanner {
                tracks[name] = nil
                continue
            }
            if otherScanners, name == current, name != scanner, heardElsewhere >= Self.elsewhereEvidence,
               now - track.stream.lastSighting >= max(Self.quietIntervals * track.stream.meanInterval, Self.minimumQuiet) {
                continue   // heard better elsewhere while quiet here: it left
            }
            if let value = filter.value(of: track.smoothed, at: now) { present.append((name, value)) }
        }
        present.sort { $0.rssi != $1.rssi ? $0.rssi > $1.rssi : $0.scanner < $1.scanner }
        guard let best = present.first else { return nil }
        let previous = current
        let currentRSSI = current.flatMap { name in present.first { $0.scanner == name }?.rssi }
        // A room carried over (``init(restoring:at:)``) and not heard since has no RSSI to compare:
        // another scanner takes the beacon only after `dwell` (or once the carried track is gone
        // under ``presence``), so that a beacon heard weakly elsewhere first, as ESPresense nodes in
        // neighbouring rooms do, does not leave its room and come back (two false room events).
        // (Looked up only when the current room has no RSSI: never on the usual path.)
        if currentRSSI == nil, let current, best.scanner != current, let carried = tracks[current], carried.smoothed.smoothedAt == nil {
            return takeOver(by: best.scanner, from: current, at: now, dwell: policy.dwell)
        }
        guard let current, let currentRSSI else {
            self.current = best.scanner
            if previous != best.scanner { heardElsewhere = 0 }
            candidate = nil
            candidateSince = nil
            return previous == best.scanner ? nil : (previous, best.scanner)
        }
        guard best.scanner != current, best.rssi >= currentRSSI + policy.margin else {
            candidate = nil
            candidateSince = nil
            return nil
        }
        return takeOver(by: best.scanner, from: current, at: now, dwell: policy.dwell)
    }

    /// `scanner` beats the current one (`current`): it is the candidate from now on, and takes the
    /// beacon once it has been the candidate for `dwell` seconds.
    private mutating func takeOver(by scanner: String, from current: String, at now: Timestamp, dwell: Double) -> (from: String?, to: String?)? {
        if candidate != scanner {
            candidate = scanner
            candidateSince = now
        }
        guard let since = candidateSince, now - since >= dwell else { return nil }
        self.current = scanner
        heardElsewhere = 0
        candidate = nil
        candidateSince = nil
        return (current, scanner)
    }
}
