import Foundation

/// Great-circle geometry on a spherical Earth: the one implementation every RegionKit module uses
/// (engine, spatial index, location readers).
///
/// Uses the haversine formula with the IUGG mean Earth radius R₁ = 6,371,008.8 m (the mean of the
/// WGS 84 semi-axes, (2a + b) / 3). Against the WGS 84 ellipsoid, spherical distances are off by
/// up to about 0.5 % — a few metres per kilometre, far below GPS and geofence tolerances.
///
/// ```swift
/// Geodesy.distance(latitude1: 0, longitude1: 0, latitude2: 0, longitude2: 1)          // ≈ 111,195 m
/// Geodesy.initialBearing(latitude1: 48.8566, longitude1: 2.3522,
///                        latitude2: 51.5074, longitude2: -0.1278)                      // ≈ 330° (Paris → London)
/// let p = Geodesy.destination(latitude: 0, longitude: 0, distance: 1_000, bearing: 90) // 1 km east
/// ```
public enum Geodesy {
    /// Mean Earth radius in metres (IUGG).
    public static let earthRadius = 6_371_008.8

    /// Great-circle distance in metres between two points given in degrees (any longitudes: the
    /// antimeridian is handled). NaN in, NaN out.
    public static func distance(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
        distance(latitude1: latitude1, longitude1: longitude1, cosLatitude1: cos(latitude1 * .pi / 180),
                 latitude2: latitude2, longitude2: longitude2, cosLatitude2: cos(latitude2 * .pi / 180))
    }

    /// ``distance(latitude1:longitude1:latitude2:longitude2:)`` with the cosines of both latitudes
    /// supplied by the caller (`cos(latitude * .pi / 180)`), for loops that test one point against
    /// many stored ones. Gives bit-for-bit the same result when the cosines are computed that way.
    @inlinable
    public static func distance(latitude1: Double, longitude1: Double, cosLatitude1: Double,
                                latitude2: Double, longitude2: Double, cosLatitude2: Double) -> Double {
        let Δφ = (latitude2 - latitude1) * .pi / 180
        let Δλ = (longitude2 - longitude1) * .pi / 180
        let s1 = sin(Δφ / 2), s2 = sin(Δλ / 2)
        let a = s1 * s1 + cosLatitude1 * cosLatitude2 * s2 * s2
        if a.isNaN { return .nan }
        // Well conditioned except within ~1 km of the antipode, where rounding costs < 1 m.
        return 2 * earthRadius * asin(min(1, max(0, a).squareRoot()))
    }

    /// Initial bearing (forward azimuth) from point 1 to point 2, degrees clockwise from true
    /// north in [0, 360); 0 for coincident points.
    public static func initialBearing(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
        let φ1 = latitude1 * .pi / 180, φ2 = latitude2 * .pi / 180
        let Δλ = (longitude2 - longitude1) * .pi / 180
        let y = sin(Δλ) * cos(φ2)
        let x = cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(Δλ)
        if x == 0 && y == 0 { return 0 }
        let b = atan2(y, x) * 180 / .pi
        return b < 0 ? b + 360 : (b >= 360 ? b - 360 : b)
    }

    /// The point reached from a start point after `distance` metres on initial bearing `bearing`
    /// (degrees clockwise from north). The longitude is normalised to [-180, 180).
    public static func destination(latitude: Double, longitude: Double, distance: Double, bearing: Double) -> (latitude: Double, longitude: Double) {
        let δ = distance / earthRadius
        let θ = bearing * .pi / 180
        let φ1 = latitude * .pi / 180
        let λ1 = longitude * .pi / 180
        let sinφ2 = sin(φ1) * cos(δ) + cos(φ1) * sin(δ) * cos(θ)
        let φ2 = asin(min(1, max(-1, sinφ2)))
        let λ2 = λ1 + atan2(sin(θ) * sin(δ) * cos(φ1), cos(δ) - sin(φ1) * sinφ2)
        return (φ2 * 180 / .pi, normalizedLongitude(λ2 * 180 / .pi))
    }

    /// A longitude folded into [-180, 180) (non-finite values are returned unchanged).
    public static func normalizedLongitude(_ longitude: Double) -> Double {
        guard longitude.isFinite else { return longitude }
        if longitude >= -180 && longitude < 180 { return longitude }
        var l = (longitude + 180).truncatingRemainder(dividingBy: 360)
        if l < 0 { l += 360 }
        return l - 180
    }
}
