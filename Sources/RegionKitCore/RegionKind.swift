/// The two kinds of monitored region; each needs its own input source.
///
/// ```swift
/// manager.isMonitoringAvailable(for: .beacon)
/// ```
public enum RegionKind: String, Hashable, Sendable, Codable, CaseIterable {
    /// iBeacon regions, fed by a Bluetooth scanner (or simulator, or replay).
    case beacon
    /// Circular geographic regions, fed by a location source (gpsd, NMEA, GPX, simulator).
    case circular
}
