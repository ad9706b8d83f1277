/// The evidence detector's per-stream state (issue 15, items 3 and 4; see
/// ``ReceptionEstimator`` and its `+Trend` extension): the RSSI trend regression, the stream's RSSI
/// spread, how often it fades and what followed, and sightings of its beacon elsewhere.
///
/// Kept out of line (issue 13, memory per tracked beacon): a ``ReceptionEstimator`` holds one only
/// when its detector uses the evidence (``ExitDetector/usesEvidence``), so the streams of every other
/// profile do not carry these 100-odd bytes nor compute them on each sighting.
///
/// ```swift
/// let stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1, rssi: -60, tracksEvidence: true)
/// stream.tracksEvidence // true
/// stream.trendWeight    // 1: the first RSSI sample
/// ```
public struct ReceptionEvidence: Hashable, Sendable, Codable {
    /// The RSSI trend: an exponentially weighted linear regression of RSSI on time over the last
    /// few seconds, as weighted sums with times relative to the stream's last sighting (x ≤ 0):
    /// Σw, Σw·x, Σw·x², Σw·r, Σw·x·r.
    public internal(set) var trendWeight: Double = 0
    public internal(set) var trendTime: Double = 0
    public internal(set) var trendTimeSquares: Double = 0
    public internal(set) var trendRSSI: Double = 0
    public internal(set) var trendProduct: Double = 0
    /// The stream's own RSSI spread: the running mean of its squared one-step prediction errors, dB².
    public internal(set) var rssiVariance: Double = ReceptionEstimator.rssiVariancePrior
    /// Share of sightings at which the stream was fading.
    public internal(set) var fadeShare: Double = ReceptionEstimator.fadeSharePrior
    /// Share of the intervals that followed a fading sighting and reached the tail (0 before any).
    public internal(set) var fadeTailShare: Double = 0
    /// Share of the stream's tail intervals during which it was heard elsewhere.
    public internal(set) var elsewhereShare: Double = ReceptionEstimator.elsewherePrior
    /// RSSI samples behind ``rssiVariance``.
    public internal(set) var rssiSamples: Int = 0
    /// Intervals behind ``fadeTailShare``.
    public internal(set) var fadeIntervals: Int = 0
    /// Stronger sightings of the beacon at other scanners during the current silence.
    public internal(set) var heardElsewhere: Int = 0
    /// Whether the stream was fading at its last sighting.
    public internal(set) var fading: Bool = false

    public init() {}
}
