/// Relative distance class of a ranged beacon, as Core Location's `CLProximity`.
///
/// ```swift
/// let p = Proximity.near
/// p.rawValue // "near"
/// ```
public enum Proximity: String, Hashable, Sendable, Codable, CaseIterable {
    case unknown
    case immediate
    case near
    case far

    /// Ordering used to sort ranged beacons: immediate < near < far < unknown.
    public var sortRank: Int {
        switch self {
        case .immediate: 0
        case .near: 1
        case .far: 2
        case .unknown: 3
        }
    }
}
