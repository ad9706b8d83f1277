import RegionKitCore

/// Counters a ``BeaconScanner`` keeps: reports received, distinct frames counted, scan-response
/// repeats dropped, iBeacon frames, and the frame rate.
///
/// ```swift
/// let statistics = scanner.statistics
/// print("\(statistics.frames) frames, \(statistics.scanResponseRepeats) repeats dropped")
/// print(statistics.framesPerSecond.map { String(format: "%.1f frames/s", $0) } ?? "n/a")
/// ```
public struct ScanStatistics: Hashable, Sendable {
    /// Every advertising report the controller delivered (legacy and extended).
    public var reports = 0
    /// Distinct frames (``reports`` minus ``scanResponseRepeats``).
    public var frames = 0
    /// Scan-response reports that repeated an advertisement (see ``ScanResponseDeduplicator``).
    public var scanResponseRepeats = 0
    /// Frames whose data decodes as an iBeacon (also through a configured layout of format iBeacon).
    public var iBeaconFrames = 0
    /// Frames whose data decodes as an AltBeacon or Eddystone-UID (or a configured layout's beacon of those formats).
    public var otherBeaconFrames = 0
    /// Unencrypted Eddystone-TLM frames (kept per transmitter address and attached to its beacon).
    public var telemetryFrames = 0
    /// Beacon frames handed to the `LocationManager` (those with an RSSI).
    public var observations = 0
    /// Advertising report events that could not be decoded (damaged packets).
    public var malformedEvents = 0
    /// Successful (re)starts of scanning; 1 after the first start.
    public var scanningStarts = 0
    /// Failures of the controller or transport while scanning.
    public var failures = 0
    /// When the first and the latest frame were counted.
    public var firstFrame: Timestamp?
    public var lastFrame: Timestamp?

    public init() {}

    /// Frames per second between the first and the latest frame; nil before two frames.
    public var framesPerSecond: Double? {
        guard frames >= 2, let firstFrame, let lastFrame, lastFrame > firstFrame else { return nil }
        return Double(frames - 1) / (lastFrame - firstFrame)
    }
}
