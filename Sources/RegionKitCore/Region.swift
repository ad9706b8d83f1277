/// A monitored region of either kind.
///
/// ```swift
/// let region = Region.beacon(try BeaconRegion(identifier: "lobby", uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
/// region.identifier // "lobby"
/// region.kind       // .beacon
/// ```
public enum Region: Hashable, Sendable, Codable {
    case beacon(BeaconRegion)
    case circular(CircularRegion)

    public var identifier: String {
        switch self {
        case .beacon(let region): region.identifier
        case .circular(let region): region.identifier
        }
    }

    public var kind: RegionKind {
        switch self {
        case .beacon: .beacon
        case .circular: .circular
        }
    }

    public var notifyOnEntry: Bool {
        switch self {
        case .beacon(let region): region.notifyOnEntry
        case .circular(let region): region.notifyOnEntry
        }
    }

    public var notifyOnExit: Bool {
        switch self {
        case .beacon(let region): region.notifyOnExit
        case .circular(let region): region.notifyOnExit
        }
    }

    public var beaconRegion: BeaconRegion? {
        if case .beacon(let region) = self { return region }
        return nil
    }

    public var circularRegion: CircularRegion? {
        if case .circular(let region) = self { return region }
        return nil
    }

    /// A region identifier is not empty and holds no U+0000: the stores keep text as C strings
    /// (SQLite through GRDB ends it at the first NUL — `a\0b` would be stored as, and overwrite,
    /// region `a` — and PostgreSQL refuses it).
    static func validate(identifier: String) throws {
        guard !identifier.isEmpty else {
            throw RegionKitError(.invalidRegion, "a region identifier must not be empty")
        }
        guard !identifier.utf8.contains(0) else {
            throw RegionKitError(.invalidRegion, "a region identifier must not contain U+0000 (NUL)")
        }
    }
}
