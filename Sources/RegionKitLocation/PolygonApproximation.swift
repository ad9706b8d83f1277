import Foundation

/// A GeoJSON Polygon imported as a circular region: the circle that replaced it, so callers can
/// tell the user (the CLI prints ``description``).
///
/// The circle is the **minimum enclosing circle of the outer ring's vertices** (Welzl's algorithm
/// in a local equirectangular projection centred on the ring), with the radius then taken as the
/// largest great-circle distance from that centre to any vertex, so every vertex — and, the cap
/// being convex, every edge — is inside. Holes are ignored (they are inside the ring anyway).
///
/// ```swift
/// let document = try GeoJSONRegions.decode(data, options: .init(approximatePolygons: true))
/// for approximation in document.approximations { print(approximation) }
/// // features[2] ('lake'): Polygon of 5 vertices approximated by its minimum enclosing circle:
/// //   centre 51.508000,-0.165000, radius 412.3 m (circle area 1.57× the polygon's)
/// ```
public struct PolygonApproximation: Hashable, Sendable, CustomStringConvertible {
    /// 0-based index in `features`.
    public var featureIndex: Int
    public var identifier: String
    /// Distinct vertices of the outer ring.
    public var vertexCount: Int
    /// The circle's centre, degrees.
    public var latitude: Double
    public var longitude: Double
    /// The circle's radius, metres.
    public var radius: Double
    /// The outer ring's area in square metres (local projection; 0 for a degenerate ring).
    public var polygonArea: Double

    public init(featureIndex: Int, identifier: String, vertexCount: Int, latitude: Double, longitude: Double, radius: Double, polygonArea: Double) {
        self.featureIndex = featureIndex
        self.identifier = identifier
        self.vertexCount = vertexCount
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
        self.polygonArea = polygonArea
    }

    /// Circle area over polygon area (∞ for a degenerate ring): how much larger the geofence got.
    public var areaRatio: Double {
        polygonArea > 0 ? Double.pi * radius * radius / polygonArea : .infinity
    }

    public var description: String {
        let ratio = areaRatio.isFinite ? String(format: "%.2f×", areaRatio) : "∞×, the ring has no area"
        return "features[\(featureIndex)] ('\(identifier)'): Polygon of \(vertexCount) vertices approximated by its minimum enclosing circle: "
            + String(format: "centre %.6f,%.6f, radius %.1f m", latitude, longitude, radius)
            + " (circle area \(ratio) the polygon's)"
    }
}
