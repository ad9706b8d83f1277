/// Whether the device is inside a monitored region, as Core Location's `CLRegionState`.
///
/// ```swift
/// RegionState.inside.rawValue // "inside"
/// ```
public enum RegionState: String, Hashable, Sendable, Codable, CaseIterable {
    case unknown
    case inside
    case outside
}
