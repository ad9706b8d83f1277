import RegionKitCore

/// Everything one NMEA reporting cycle (the sentences sharing one UTC time) said, merged the
/// way gpsd merges them into one `TPV`. Convert it with ``locationFix``.
///
/// ```swift
/// let result = NMEAReader.read(text)
/// for report in result.reports {
///     guard let fix = report.locationFix else { continue }   // no date yet: no absolute time
///     if fix.mode == .noFix { print("location unavailable at", fix.timestamp) }
/// }
/// ```
public struct NMEAReport: Hashable, Sendable {
    /// Absolute UTC time of the cycle; `nil` until a date has been seen (RMC or ZDA) or when
    /// no sentence in the cycle carried a time (gpsd then prints a TPV without `time`).
    public var time: Timestamp?
    /// Seconds since UTC midnight shared by the cycle's sentences, when any carried a time.
    public var timeOfDay: Double?
    /// gpsd-compatible fix mode of the cycle. `.twoD`/`.threeD` with no `latitude` can happen
    /// (a GSA saying "3D" before any position sentence); ``locationFix`` treats that as no fix.
    public var mode: LocationFix.Mode
    /// Degrees, WGS 84.
    public var latitude: Double?
    public var longitude: Double?
    /// Metres above mean sea level (GGA).
    public var altitude: Double?
    /// Metres per second over ground (RMC or VTG).
    public var speed: Double?
    /// Degrees true (RMC or VTG).
    public var course: Double?
    /// Horizontal dilution of precision last reported (GGA or GSA; values ≥ 99 mean "unknown").
    public var hdop: Double?
    /// Whether the receiver reports a differential (DGPS/SBAS) solution: GGA quality 2, or RMC/GLL
    /// status/FAA mode `D` in a cycle without GGA.
    public var isDifferential: Bool
    /// gpsd's `eph`: estimated horizontal position error in metres at ~95 % confidence, computed
    /// as `hdop × UERE`, UERE = 19 m (4.75 m when differential). `nil` without a 2D/3D fix or HDOP.
    public var estimatedHorizontalError: Double?
    /// Satellites used in the solution (GSA list, else GGA count), when known.
    public var satellitesUsed: Int?
    /// First and last input line of the cycle (1-based).
    public var lines: ClosedRange<Int>

    public init(
        time: Timestamp?, timeOfDay: Double?, mode: LocationFix.Mode, latitude: Double? = nil,
        longitude: Double? = nil, altitude: Double? = nil, speed: Double? = nil, course: Double? = nil,
        hdop: Double? = nil, isDifferential: Bool = false, estimatedHorizontalError: Double? = nil,
        satellitesUsed: Int? = nil, lines: ClosedRange<Int>
    ) {
        self.time = time
        self.timeOfDay = timeOfDay
        self.mode = mode
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.hdop = hdop
        self.isDifferential = isDifferential
        self.estimatedHorizontalError = estimatedHorizontalError
        self.satellitesUsed = satellitesUsed
        self.lines = lines
    }

    /// Whether the report carries a usable position (mode 2D/3D and latitude/longitude).
    public var hasPosition: Bool {
        mode != .noFix && latitude != nil && longitude != nil
    }

    /// The cycle as a `LocationFix`, or `nil` when its absolute time is unknown.
    ///
    /// Without a position (mode 1, or mode 2/3 but no latitude/longitude in the cycle) the fix
    /// has `mode == .noFix` — "location unavailable" — and latitude/longitude are NaN so that
    /// they can never be mistaken for a place. `horizontalAccuracy` is gpsd's `eph`
    /// (``estimatedHorizontalError``), altitude is MSL.
    public var locationFix: LocationFix? {
        guard let time else { return nil }
        guard hasPosition, let latitude, let longitude else {
            return LocationFix(timestamp: time, latitude: .nan, longitude: .nan, mode: .noFix)
        }
        return LocationFix(
            timestamp: time, latitude: latitude, longitude: longitude,
            horizontalAccuracy: estimatedHorizontalError,
            altitude: mode == .threeD ? altitude : nil,
            speed: speed, course: course, mode: mode)
    }
}
