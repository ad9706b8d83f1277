import RegionKitCore
/// A circular geofence as ``RegionIndex`` stores it: centre (WGS 84 degrees) and radius in
/// metres on RegionKitCore's `Geodesy` sphere. A deliberately small value type so the
/// index does not depend on the engine's region model; from RegionKitCore's `CircularRegion`:
/// `IndexedRegion(id: r.identifier, latitude: r.latitude, longitude: r.longitude, radius: r.radius)`.
///
/// ```swift
/// let office = IndexedRegion(id: "office", latitude: 35.6812, longitude: 139.7671, radius: 150)
/// office.contains(latitude: 35.6815, longitude: 139.7670)   // true (≈ 34 m from the centre)
/// ```
public struct IndexedRegion: Hashable, Sendable, Codable {
    public var id: String
    public var latitude: Double
    public var longitude: Double
    /// Metres, ≥ 0.
    public var radius: Double

    public init(id: String, latitude: Double, longitude: Double, radius: Double) {
        self.id = id
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
    }

    /// Great-circle distance from the centre, metres.
    public func distance(toLatitude lat: Double, longitude lon: Double) -> Double {
        Geodesy.distance(latitude1: latitude, longitude1: longitude, latitude2: lat, longitude2: lon)
    }

    /// Whether the point is inside the circle or within `margin` metres of its edge.
    public func contains(latitude lat: Double, longitude lon: Double, margin: Double = 0) -> Bool {
        distance(toLatitude: lat, longitude: lon) <= radius + margin
    }

    /// Why a region cannot be indexed, or `nil` when it is valid.
    public var validationError: String? {
        if !latitude.isFinite || abs(latitude) > 90 { return "latitude \(latitude) is not in [-90, 90]" }
        if !longitude.isFinite { return "longitude \(longitude) is not finite" }
        if !radius.isFinite || radius < 0 { return "radius \(radius) is not a finite number ≥ 0" }
        return nil
    }
}
