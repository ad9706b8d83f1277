import Foundation

/// Great-circle geometry on a spherical Earth (same sphere and haversine formula as
/// RegionKitCore's `Geodesy`, plus bearing, intermediate points and longitude normalisation).
///
/// The sphere has the IUGG mean Earth radius R₁ = 6,371,008.8 m (the mean of the WGS 84
/// semi-axes, (2a + b) / 3). Against the WGS 84 ellipsoid, spherical distances are off by up to
/// about 0.5 % (worst along meridians near the poles/equator) — a few metres per kilometre,
/// well inside GNSS error for geofences of typical size.
///
/// ```swift
/// // Paris → London
/// let d = GreatCircle.distance(latitude1: 48.8566, longitude1: 2.3522, latitude2: 51.5074, longitude2: -0.1278)
/// // d ≈ 343_557 m
/// let b = GreatCircle.initialBearing(latitude1: 48.8566, longitude1: 2.3522, latitude2: 51.5074, longitude2: -0.1278)
/// // b ≈ 330° (north-north-west)
/// ```
public enum GreatCircle {
    /// IUGG mean Earth radius R₁ in metres.
    public static let meanEarthRadius = 6_371_008.8

    @inline(__always) static func radians(_ d: Double) -> Double { d * .pi / 180 }
    @inline(__always) static func degrees(_ r: Double) -> Double { r * 180 / .pi }

    /// Haversine distance in metres. Inputs in degrees; any longitudes (wraps correctly across
    /// the antimeridian). NaN in, NaN out.
    public static func distance(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
        let φ1 = radians(latitude1), φ2 = radians(latitude2)
        let dφ = φ2 - φ1
        let dλ = radians(longitude2 - longitude1)
        let s1 = sin(dφ / 2), s2 = sin(dλ / 2)
        let h = s1 * s1 + cos(φ1) * cos(φ2) * s2 * s2
        if h.isNaN { return .nan }
        let a = min(1, max(0, h))
        // Well conditioned except within ~1 km of the antipode, where rounding costs < 1 m.
        return 2 * meanEarthRadius * asin(a.squareRoot())
    }

    /// Initial bearing (forward azimuth) from point 1 to point 2, degrees clockwise from true
    /// north in [0, 360). 0 for coincident points.
    public static func initialBearing(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
        let φ1 = radians(latitude1), φ2 = radians(latitude2)
        let dλ = radians(longitude2 - longitude1)
        let y = sin(dλ) * cos(φ2)
        let x = cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(dλ)
        if x == 0 && y == 0 { return 0 }
        let b = degrees(atan2(y, x))
        return b < 0 ? b + 360 : (b >= 360 ? b - 360 : b)
    }

    /// The point `distance` metres from the start along the great circle with the given
    /// initial bearing. Longitude is normalised to [-180, 180).
    public static func destination(latitude: Double, longitude: Double, bearing: Double, distance: Double) -> (latitude: Double, longitude: Double) {
        let δ = distance / meanEarthRadius
        let θ = radians(bearing)
        let φ1 = radians(latitude), λ1 = radians(longitude)
        let sinφ2 = sin(φ1) * cos(δ) + cos(φ1) * sin(δ) * cos(θ)
        let φ2 = asin(min(1, max(-1, sinφ2)))
        let λ2 = λ1 + atan2(sin(θ) * sin(δ) * cos(φ1), cos(δ) - sin(φ1) * sinφ2)
        return (degrees(φ2), normalizedLongitude(degrees(λ2)))
    }

    /// The point at `fraction` (0…1) of the way along the great circle from point 1 to point 2.
    public static func intermediate(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double, fraction f: Double) -> (latitude: Double, longitude: Double) {
        let φ1 = radians(latitude1), λ1 = radians(longitude1)
        let φ2 = radians(latitude2), λ2 = radians(longitude2)
        let δ = distance(latitude1: latitude1, longitude1: longitude1, latitude2: latitude2, longitude2: longitude2) / meanEarthRadius
        if δ < 1e-12 { return (latitude1, longitude1) }
        let a = sin((1 - f) * δ) / sin(δ), b = sin(f * δ) / sin(δ)
        let x = a * cos(φ1) * cos(λ1) + b * cos(φ2) * cos(λ2)
        let y = a * cos(φ1) * sin(λ1) + b * cos(φ2) * sin(λ2)
        let z = a * sin(φ1) + b * sin(φ2)
        return (degrees(atan2(z, (x * x + y * y).squareRoot())), normalizedLongitude(degrees(atan2(y, x))))
    }

    /// Longitude folded into [-180, 180).
    public static func normalizedLongitude(_ lon: Double) -> Double {
        guard lon.isFinite else { return lon }
        if lon >= -180 && lon < 180 { return lon }
        var l = (lon + 180).truncatingRemainder(dividingBy: 360)
        if l < 0 { l += 360 }
        return l - 180
    }
}
