import Foundation

/// One ranged beacon in a `didRangeBeacons` delivery, as Core Location's `CLBeacon`.
///
/// ```swift
/// let beacon = Beacon(identity: id, proximity: .near, accuracy: 1.2, rssi: -63, timestamp: now)
/// beacon.isHeard // true: rssi != 0
/// ```
public struct Beacon: Hashable, Sendable, Codable {
    public var identity: BeaconIdentity
    public var proximity: Proximity
    /// Estimated distance in metres, or −1 when unknown (not heard in the last interval).
    public var accuracy: Double
    /// Mean RSSI in dBm over the last interval, or 0 when not heard in it.
    public var rssi: Int
    /// When this beacon was last heard.
    public var timestamp: Timestamp
    /// The latest Eddystone-TLM telemetry of the transmitter (battery, temperature), if any.
    public var telemetry: EddystoneTelemetry?
    /// iBeacon, AltBeacon or Eddystone-UID.
    public var format: BeaconFormat { identity.format }

    public var uuid: UUID { identity.uuid }
    public var major: UInt16 { identity.major }
    public var minor: UInt16 { identity.minor }
    /// Whether the beacon was heard during the last ranging interval.
    public var isHeard: Bool { rssi != 0 }

    public init(identity: BeaconIdentity, proximity: Proximity, accuracy: Double, rssi: Int, timestamp: Timestamp,
                telemetry: EddystoneTelemetry? = nil) {
        self.telemetry = telemetry
        self.identity = identity
        self.proximity = proximity
        self.accuracy = accuracy
        self.rssi = rssi
        self.timestamp = timestamp
    }
}
