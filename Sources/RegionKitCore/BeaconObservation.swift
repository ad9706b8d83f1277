/// One sighting of a beacon frame (iBeacon, AltBeacon, Eddystone-UID) by a scanner: what every radio, simulator and replay produces.
///
/// ```swift
/// let seen = BeaconObservation(identity: id, rssi: -67, measuredPower: -59, timestamp: now, scannerID: "Room201")
/// ```
public struct BeaconObservation: Hashable, Sendable, Codable {
    public var identity: BeaconIdentity
    /// Received signal strength in dBm; a radio reports ``rssiRange`` (the engine ignores a
    /// sighting outside it).
    public var rssi: Int
    /// Expected RSSI at 1 m as transmitted in the frame, in dBm; `nil` when the frame carries none
    /// (or 0, "not set"): `IBeaconFrame.defaultMeasuredPower` is used then, as for a value no
    /// radio could measure (outside ``rssiRange``: a beacon that puts its battery voltage in the
    /// byte, an Eddystone ranging byte of −128 less 41).
    public var measuredPower: Int?
    public var timestamp: Timestamp
    /// Which scanner heard it (gateway deployments); `nil` for a single local radio.
    public var scannerID: String?
    /// The latest Eddystone-TLM telemetry heard from the same transmitter address, if any.
    public var telemetry: EddystoneTelemetry?

    public init(identity: BeaconIdentity, rssi: Int, measuredPower: Int? = nil, timestamp: Timestamp, scannerID: String? = nil,
                telemetry: EddystoneTelemetry? = nil) {
        self.identity = identity
        self.rssi = rssi
        self.measuredPower = measuredPower
        self.timestamp = timestamp
        self.scannerID = scannerID
        self.telemetry = telemetry
    }

    /// The RSSI a radio can report, dBm: −127…+20, as the Bluetooth controller's advertising
    /// report (HCI) defines it. Gateways' messages and recordings are checked against it.
    /// (Inlinable, computed: the engine checks every sighting against it, and a `static let` of
    /// another module costs a call and a lazy-initialisation check each time.)
    @inlinable public static var rssiRange: ClosedRange<Int> { -127...20 }

    /// The measured power to use for distance estimates: the frame's, when set (not 0) and an
    /// RSSI a radio can report (``rssiRange``), else `IBeaconFrame.defaultMeasuredPower`.
    ///
    /// ```swift
    /// BeaconObservation(identity: id, rssi: -67, measuredPower: 30, timestamp: now).effectiveMeasuredPower   // -59
    /// ```
    public var effectiveMeasuredPower: Int {
        guard let measuredPower, measuredPower != 0, Self.rssiRange.contains(measuredPower) else { return IBeaconFrame.defaultMeasuredPower }
        return measuredPower
    }
}
