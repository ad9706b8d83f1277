/// The outcome of one lease round of a cluster member (``ClusterStoring/balanceLeases(member:instance:regions:partitions:ttl:reclaimOnly:)``):
/// the partitions it holds now (renewed or newly taken), which of them it took in this round, and
/// how many it holds beyond its fair share (to hand back, so a member that joined gets some).
///
/// ```swift
/// let round = try await store.balanceLeases(member: me, partitions: 16, ttl: 5)
/// if round.surplus > 0 { /* stop the `surplus` highest partitions, then release them */ }
/// ```
public struct LeaseRound: Hashable, Sendable {
    /// Every partition the member holds after the round, by partition number.
    public var held: [PartitionLease]
    /// The partitions taken in this round (a subset of `held`).
    public var taken: [PartitionLease]
    /// How many held partitions exceed the fair share, `ceil(partitions / live members)`.
    public var surplus: Int
    /// Members whose heartbeat has not expired, this one included.
    public var liveMembers: Int
    /// The round only took back the member's own partitions (asked to, or because the member's
    /// own heartbeat had expired: it was away); see ``ClusterStoring/balanceLeases(member:instance:regions:partitions:ttl:reclaimOnly:)``.
    public var reclaimed: Bool
    /// The region definitions' digest (``RegionDefinitions/digest(of:)``) of every live member that
    /// recorded one, this one included, by member name: members whose digest differs from this
    /// one's decide their partitions' regions with other definitions.
    public var regionDefinitions: [String: String]

    public init(held: [PartitionLease], taken: [PartitionLease], surplus: Int, liveMembers: Int, reclaimed: Bool = false,
                regionDefinitions: [String: String] = [:]) {
        self.held = held
        self.taken = taken
        self.surplus = surplus
        self.liveMembers = liveMembers
        self.reclaimed = reclaimed
        self.regionDefinitions = regionDefinitions
    }
}
