import RegionKitCore

/// One monitored region as the store holds it.
///
/// ```swift
/// for stored in try store.storedRegions() where stored.origin == .api { print(stored.region.identifier) }
/// ```
public struct StoredRegion: Hashable, Sendable {
    public var region: Region
    public var origin: RegionOrigin
    /// When the region was last saved (started or replaced).
    public var registeredAt: Double

    public init(region: Region, origin: RegionOrigin, registeredAt: Double) {
        self.region = region
        self.origin = origin
        self.registeredAt = registeredAt
    }
}
