import Foundation

/// Great-circle geometry on a spherical Earth.
///
/// Uses the haversine formula with the IUGG mean Earth radius (6,371,008.8 m); the error against
/// the WGS 84 ellipsoid is below 0.5 %, far below GPS and geofence tolerances.
///
/// ```swift
/// Geodesy.distance(latitude1: 0, longitude1: 0, latitude2: 0, longitude2: 1) // ≈ 111,195 m
/// ```
public enum Geodesy {
    /// Mean Earth radius in metres (IUGG).
    public static let earthRadius = 6_371_008.8

    /// Great-circle distance in metres between two points given in degrees.
    public static func distance(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
        let φ1 = latitude1 * .pi / 180
        let φ2 = latitude2 * .pi / 180
        let Δφ = (latitude2 - latitude1) * .pi / 180
        let Δλ = (longitude2 - longitude1) * .pi / 180
        let a = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }

    /// The point reached from a start point after `distance` metres on initial bearing `bearing`
    /// (degrees clockwise from north).
    public static func destination(latitude: Double, longitude: Double, distance: Double, bearing: Double) -> (latitude: Double, longitude: Double) {
        let δ = distance / earthRadius
        let θ = bearing * .pi / 180
        let φ1 = latitude * .pi / 180
        let λ1 = longitude * .pi / 180
        let φ2 = asin(sin(φ1) * cos(δ) + cos(φ1) * sin(δ) * cos(θ))
        let λ2 = λ1 + atan2(sin(θ) * sin(δ) * cos(φ1), cos(δ) - sin(φ1) * sin(φ2))
        var lon = λ2 * 180 / .pi
        lon = (lon + 540).truncatingRemainder(dividingBy: 360) - 180
        return (φ2 * 180 / .pi, lon)
    }
}
