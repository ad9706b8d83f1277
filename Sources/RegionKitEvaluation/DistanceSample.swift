import RegionKitEngine
/// One RSSI reading taken at a known distance: a row of a calibration recording.
///
/// ```swift
/// let sample = DistanceSample(time: Timestamp(seconds: 12), rssi: -64, distance: 1.0)
/// sample.distance // metres
/// ```
public struct DistanceSample: Hashable, Sendable, Codable {
    /// When the reading was taken (seconds; only differences matter).
    public var time: Timestamp
    /// Received signal strength, dBm.
    public var rssi: Double
    /// The true distance between transmitter and receiver, metres.
    public var distance: Double

    public init(time: Timestamp, rssi: Double, distance: Double) {
        self.time = time
        self.rssi = rssi
        self.distance = distance
    }
}
