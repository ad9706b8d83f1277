/// One position report from a location source (gpsd, NMEA, GPX, simulator).
///
/// ```swift
/// let fix = LocationFix(timestamp: .zero, latitude: 35.6812, longitude: 139.7671, horizontalAccuracy: 8)
/// ```
public struct LocationFix: Hashable, Sendable, Codable {
    /// What the receiver could determine.
    public enum Mode: Int, Hashable, Sendable, Codable {
        /// No position: "location unavailable", never to be used as a position.
        case noFix = 1
        /// Latitude and longitude only.
        case twoD = 2
        /// Latitude, longitude and altitude.
        case threeD = 3
    }

    public var timestamp: Timestamp
    /// Degrees, WGS 84, positive north.
    public var latitude: Double
    /// Degrees, WGS 84, positive east.
    public var longitude: Double
    /// Estimated horizontal error in metres at 95 % confidence (gpsd's `eph`; from NMEA, HDOP × 19 m,
    /// or × 4.75 m with DGPS, as gpsd does); `nil` when the source does not say.
    public var horizontalAccuracy: Double?
    /// Metres above mean sea level, when known.
    public var altitude: Double?
    /// Metres per second over ground, when known.
    public var speed: Double?
    /// Degrees clockwise from true north, when known.
    public var course: Double?
    public var mode: Mode

    public init(
        timestamp: Timestamp,
        latitude: Double,
        longitude: Double,
        horizontalAccuracy: Double? = nil,
        altitude: Double? = nil,
        speed: Double? = nil,
        course: Double? = nil,
        mode: Mode = .twoD
    ) {
        self.timestamp = timestamp
        self.latitude = latitude
        self.longitude = longitude
        self.horizontalAccuracy = horizontalAccuracy
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.mode = mode
    }
}
