import RegionKitCore
/// Maps an estimated distance to a `Proximity` class.
///
/// ```swift
/// let thresholds = ProximityThresholds(immediate: 0.5, near: 3.0)
/// thresholds.proximity(forAccuracy: 1.2) // .near
/// thresholds.proximity(forAccuracy: -1)  // .unknown
/// ```
public struct ProximityThresholds: Hashable, Sendable, Codable {
    /// Distances below this many metres are `immediate`.
    public var immediate: Double
    /// Distances below this many metres (and not immediate) are `near`; beyond, `far`.
    public var near: Double

    public init(immediate: Double = 0.5, near: Double = 3.0) {
        self.immediate = immediate
        self.near = near
    }

    public func proximity(forAccuracy accuracy: Double) -> Proximity {
        guard accuracy >= 0, accuracy.isFinite else { return .unknown }
        if accuracy < immediate { return .immediate }
        if accuracy < near { return .near }
        return .far
    }
}
