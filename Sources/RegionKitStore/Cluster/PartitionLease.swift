/// A partition of a RegionKit cluster held by one engine: its number and the lease's *epoch*, which
/// increases every time the partition changes hands. Every write an engine makes for a partition
/// names the epoch it holds; the store refuses it once the lease has moved on (fencing), so an
/// engine that was paused past its lease cannot overwrite its successor.
///
/// ```swift
/// let round = try await store.balanceLeases(member: "engine-a", partitions: 16, ttl: 5)
/// for lease in round.taken { print("took partition \(lease.partition), epoch \(lease.epoch)") }
/// ```
public struct PartitionLease: Hashable, Sendable, Comparable {
    public var partition: Int
    public var epoch: Int64

    public init(partition: Int, epoch: Int64) {
        self.partition = partition
        self.epoch = epoch
    }

    public static func < (lhs: PartitionLease, rhs: PartitionLease) -> Bool {
        (lhs.partition, lhs.epoch) < (rhs.partition, rhs.epoch)
    }
}
