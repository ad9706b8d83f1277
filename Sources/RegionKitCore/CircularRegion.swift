/// A circular geographic region, as Core Location's `CLCircularRegion`.
///
/// ```swift
/// let station = try CircularRegion(identifier: "station", latitude: 35.6812, longitude: 139.7671, radius: 150)
/// station.contains(latitude: 35.6813, longitude: 139.7671) // true
/// ```
public struct CircularRegion: Hashable, Sendable, Codable {
    public let identifier: String
    /// Centre latitude in degrees, −90...90.
    public let latitude: Double
    /// Centre longitude in degrees, −180...180.
    public let longitude: Double
    /// Radius in metres, finite and ≥ 0.
    public let radius: Double
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool

    public init(
        identifier: String,
        latitude: Double,
        longitude: Double,
        radius: Double,
        notifyOnEntry: Bool = true,
        notifyOnExit: Bool = true
    ) throws {
        try Region.validate(identifier: identifier)
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            throw RegionKitError(.invalidRegion, "region '\(identifier)': latitude \(latitude) is outside -90...90")
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            throw RegionKitError(.invalidRegion, "region '\(identifier)': longitude \(longitude) is outside -180...180")
        }
        guard radius.isFinite, radius >= 0 else {
            throw RegionKitError(.invalidRegion, "region '\(identifier)': radius \(radius) m must be a finite number >= 0")
        }
        self.identifier = Region.canonical(identifier: identifier)
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
    }

    private enum CodingKeys: String, CodingKey {
        case identifier, latitude, longitude, radius, notifyOnEntry, notifyOnExit
    }

    /// Decodes through the checking initializer: a stored or received definition with an empty
    /// identifier, a latitude of 500 or a negative radius is refused as ``init(identifier:latitude:longitude:radius:notifyOnEntry:notifyOnExit:)``
    /// refuses it, instead of reaching the engine.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        do {
            try self.init(identifier: container.decode(String.self, forKey: .identifier),
                          latitude: container.decode(Double.self, forKey: .latitude),
                          longitude: container.decode(Double.self, forKey: .longitude),
                          radius: container.decode(Double.self, forKey: .radius),
                          notifyOnEntry: container.decode(Bool.self, forKey: .notifyOnEntry),
                          notifyOnExit: container.decode(Bool.self, forKey: .notifyOnExit))
        } catch let error as RegionKitError {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    /// Great-circle distance from the centre to a point, in metres.
    public func distance(latitude: Double, longitude: Double) -> Double {
        Geodesy.distance(latitude1: self.latitude, longitude1: self.longitude, latitude2: latitude, longitude2: longitude)
    }

    /// Whether a point lies within the radius (no hysteresis; the engine adds that).
    public func contains(latitude: Double, longitude: Double) -> Bool {
        distance(latitude: latitude, longitude: longitude) <= radius
    }
}
