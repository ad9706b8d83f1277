import RegionKitCore

/// One partition's view of a region in a cluster: the state that partition's engine determined
/// from the beacons it owns, since when, and under which lease epoch. A region's state is the
/// union of its contributions (``merged(_:)``): inside while any partition sees one of its
/// beacons inside.
///
/// ```swift
/// RegionContribution.merged([.init(partition: 0, state: .outside, since: 10),
///                            .init(partition: 5, state: .inside, since: 12)])   // (.inside, 12)
/// ```
public struct RegionContribution: Hashable, Sendable {
    public var partition: Int
    public var state: RegionState
    public var since: Double?

    public init(partition: Int, state: RegionState, since: Double?) {
        self.partition = partition
        self.state = state
        self.since = since
    }

    /// The union of a region's contributions: `inside` when any is inside (since the earliest such
    /// `since`), else `outside` when any is outside (since the latest: the moment the last one left),
    /// else `unknown`.
    public static func merged(_ contributions: [RegionContribution]) -> (state: RegionState, since: Double?) {
        let inside = contributions.filter { $0.state == .inside }
        if !inside.isEmpty { return (.inside, inside.compactMap(\.since).min()) }
        let outside = contributions.filter { $0.state == .outside }
        if !outside.isEmpty { return (.outside, outside.compactMap(\.since).max()) }
        return (.unknown, nil)
    }
}
