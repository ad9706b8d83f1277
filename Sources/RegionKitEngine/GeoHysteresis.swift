import RegionKitCore
/// Boundary hysteresis for circular regions: a crossing counts once the position is past the
/// boundary by a buffer distance and has stayed there for a dwell time.
///
/// The buffer is `max(minimumBuffer, accuracyFactor × horizontalAccuracy)`; on the inside it is
/// capped at half the radius so small regions can still be entered.
///
/// ```swift
/// let ios = GeoHysteresis.coreLocation // 200 m past the boundary (half the radius inside), held 20 s
/// ios.buffer(forAccuracy: 300)          // 300 m
/// ```
public struct GeoHysteresis: Hashable, Sendable, Codable {
    /// Smallest distance past the boundary, in metres.
    public var minimumBuffer: Double
    /// Multiplier of the fix's horizontal accuracy that widens the buffer.
    public var accuracyFactor: Double
    /// Seconds the position must stay past the boundary before the event fires.
    public var dwell: Double

    public init(minimumBuffer: Double, accuracyFactor: Double = 1, dwell: Double) {
        self.minimumBuffer = minimumBuffer
        self.accuracyFactor = accuracyFactor
        self.dwell = dwell
    }

    /// Core Location: 200 m past the boundary and a 20 s dwell (spec §2: the position must cross
    /// the boundary and be a minimum distance *from it* — "about 200 m" for testing, seed 000 —
    /// for 20 s). It was 100 m each side (a 200 m band) before.
    public static let coreLocation = GeoHysteresis(minimumBuffer: 200, accuracyFactor: 1, dwell: 20)
    /// Faster default: 10 m past the boundary (or the fix's accuracy), held 5 s.
    public static let responsive = GeoHysteresis(minimumBuffer: 10, accuracyFactor: 1, dwell: 5)

    public func buffer(forAccuracy accuracy: Double?) -> Double {
        max(minimumBuffer, accuracyFactor * max(0, accuracy ?? 0))
    }

    /// Whether a point at `distance` metres from the centre is convincingly inside / outside.
    public func side(distance: Double, radius: Double, accuracy: Double?) -> RegionState {
        let b = buffer(forAccuracy: accuracy)
        if distance <= radius - min(b, radius / 2) { return .inside }
        if distance >= radius + b { return .outside }
        return .unknown
    }
}
