import Foundation

/// Great-circle geometry on a spherical Earth: the one implementation every RegionKit module uses
/// (engine, spatial index, location readers).
///
/// Distances are arcs computed from the chord between unit vectors, with the IUGG mean Earth
/// radius R₁ = 6,371,008.8 m (the mean of the WGS 84 semi-axes, (2a + b) / 3). Against the WGS 84
/// ellipsoid, spherical distances are off by up to about 0.5 % — a few metres per kilometre, far
/// below GPS and geofence tolerances.
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
    /// antimeridian is handled). NaN in, NaN out. The same value, to the bit, as
    /// ``distance(_:_:)`` of the points' ``UnitVector``s, the form for loops that test one point
    /// against many stored ones.
    public static func distance(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
        distance(UnitVector(latitude: latitude1, longitude: longitude1), UnitVector(latitude: latitude2, longitude: longitude2))
    }

    /// Great-circle distance in metres between two points on the unit sphere: the arc
    /// 2R·asin(c/2) of their chord c. Rounding in the vectors' components costs nanometres (within
    /// 10⁻⁸ m of the haversine in the tests), growing to under 1 m within ~1 km of the antipode,
    /// where the arc is ill conditioned in the chord. NaN in, NaN out.
    ///
    /// ```swift
    /// let paris = Geodesy.UnitVector(latitude: 48.8566, longitude: 2.3522)
    /// let london = Geodesy.UnitVector(latitude: 51.5074, longitude: -0.1278)
    /// Geodesy.distance(paris, london)          // ≈ 343,557 m
    /// ```
    @inlinable
    public static func distance(_ a: UnitVector, _ b: UnitVector) -> Double {
        arc(chordSquared: a.chordSquared(to: b))
    }

    /// The great-circle distance in metres for a squared chord between unit vectors (as
    /// ``UnitVector/chordSquared(to:)`` gives): for loops that test the chord first and need
    /// the distance only for the points that pass. NaN in, NaN out.
    @inlinable
    public static func arc(chordSquared c2: Double) -> Double {
        if c2.isNaN { return .nan }
        let x = min(1, max(0, c2).squareRoot() / 2)     // sin of half the central angle
        // asin by its series below 2⁻⁷ (arcs under ~100 km, every geofence): the first omitted
        // term, 35/1152·x⁹, is below 5·10⁻¹⁹ of x there, so the sum is asin to rounding.
        if x < 0.0078125 {
            let x2 = x * x
            return 2 * earthRadius * (x + x * x2 * (1.0 / 6 + x2 * (3.0 / 40 + x2 * (15.0 / 336))))
        }
        return 2 * earthRadius * asin(x)
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
