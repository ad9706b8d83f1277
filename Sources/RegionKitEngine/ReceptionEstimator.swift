import RegionKitCore
import Foundation

/// What the engine knows about one sighting stream (one beacon identity at one scanner): when it
/// was last heard and how often it is heard.
///
/// The mean interval is a running mean seeded with a prior, turning into an exponentially
/// weighted mean (weight floor 0.05, ≈ the last 20 intervals) once enough samples exist.
///
/// ```swift
/// var stream = ReceptionEstimator(firstSighting: Timestamp(seconds: 0), priorInterval: 1)
/// stream.record(at: Timestamp(seconds: 0.1))
/// stream.meanInterval // 0.55: halfway from the prior to the first interval
/// ```
public struct ReceptionEstimator: Hashable, Sendable, Codable {
    public private(set) var firstSighting: Timestamp
    public private(set) var lastSighting: Timestamp
    /// Estimated mean time between sightings, in seconds.
    public private(set) var meanInterval: Double
    /// Sightings recorded, including the first.
    public private(set) var sightings: Int
    /// RSSI of the last sighting, dBm.
    public var lastRSSI: Int?

    public init(firstSighting: Timestamp, priorInterval: Double, rssi: Int? = nil) {
        self.firstSighting = firstSighting
        self.lastSighting = firstSighting
        self.meanInterval = priorInterval
        self.sightings = 1
        self.lastRSSI = rssi
    }

    /// Records a sighting at `time` (times earlier than the last one are treated as simultaneous).
    public mutating func record(at time: Timestamp, rssi: Int? = nil) {
        let interval = max(0, time - lastSighting)
        let weight = max(1 / Double(sightings + 1), 0.05)
        meanInterval += weight * (interval - meanInterval)
        if time > lastSighting { lastSighting = time }
        sightings += 1
        if let rssi { lastRSSI = rssi }
    }
}
