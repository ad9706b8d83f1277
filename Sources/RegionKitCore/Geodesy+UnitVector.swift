import Foundation

extension Geodesy {
    /// A point on the unit sphere (Earth-centred, z towards the north pole, x towards 0° E):
    /// computed once per stored point, it turns every later distance to it into a few
    /// multiplications, a square root and a short series (``Geodesy/distance(_:_:)``).
    ///
    /// ```swift
    /// let centre = Geodesy.UnitVector(latitude: 48.137, longitude: 11.575)
    /// let fix = Geodesy.UnitVector(latitude: 48.138, longitude: 11.575)
    /// Geodesy.distance(centre, fix)                           // ≈ 111.2 m
    /// Geodesy.arc(chordSquared: centre.chordSquared(to: fix)) // the same, in two steps
    /// ```
    public struct UnitVector: Hashable, Sendable {
        public var x: Double
        public var y: Double
        public var z: Double

        /// The point at `latitude`, `longitude` (degrees; any longitude). Non-finite in, NaN
        /// components out. (Sines and cosines from ``Geodesy/sineCosine(degrees:)``: exact at
        /// whole right angles, so the poles and the equator's quarter points are exact too.)
        @inlinable
        public init(latitude: Double, longitude: Double) {
            let φ = Geodesy.sineCosine(degrees: latitude), λ = Geodesy.sineCosine(degrees: longitude)
            self.init(x: φ.cos * λ.cos, y: φ.cos * λ.sin, z: φ.sin)
        }

        @inlinable
        public init(x: Double, y: Double, z: Double) {
            self.x = x
            self.y = y
            self.z = z
        }

        /// The squared length of the chord to `other`: 0 for the same point, 4 for its antipode;
        /// its square root never exceeds the arc in radians, so a bound on it rejects far points
        /// before any distance is computed.
        @inlinable
        public func chordSquared(to other: UnitVector) -> Double {
            let dx = x - other.x, dy = y - other.y, dz = z - other.z
            return dx * dx + dy * dy + dz * dz
        }
    }
}
