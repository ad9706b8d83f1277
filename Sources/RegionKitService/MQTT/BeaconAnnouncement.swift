import RegionKit
import RegionKitCore

/// Which beacons the hub announces to Home Assistant (a `device_tracker` and a distance `sensor`
/// each, retained on the broker): every beacon placed in a room, or only those a monitored beacon
/// region matches; and at most ``maximum`` of them. In a shared building the scanners hear the
/// neighbours' beacons too, and a misconfigured or hostile publisher can invent identities
/// without end: each announced one is a device in Home Assistant and retained topics on the broker.
///
/// ```yaml
/// homeAssistant: {discovery: true, beacons: regions, maximumBeacons: 200}
/// ```
public struct BeaconAnnouncement: Hashable, Sendable {
    /// `all`: every beacon placed in a room; `regions`: only beacons a monitored beacon region matches.
    public enum Scope: String, Codable, Hashable, Sendable, CaseIterable {
        case all
        case regions
    }

    public var scope: Scope
    /// The most beacons announced that a monitored region matches, and apart from them the most
    /// others; a beacon beyond its limit keeps its room topic but gets no entities.
    public var maximum: Int

    /// The default limit.
    public static let defaultMaximum = 1_000
    /// The largest limit a configuration may set.
    public static let largestMaximum = 100_000

    public init(scope: Scope = .all, maximum: Int = BeaconAnnouncement.defaultMaximum) {
        self.scope = scope
        self.maximum = maximum
    }

    /// Whether `beacon` is in scope, given the monitored regions (read only for ``Scope/regions``).
    public func covers(_ beacon: BeaconIdentity, regions: () -> [Region]) -> Bool {
        switch scope {
        case .all: true
        case .regions: regions().contains { $0.beaconRegion?.matches(beacon) == true }
        }
    }
}
