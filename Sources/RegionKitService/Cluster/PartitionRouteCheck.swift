import RegionKitMQTT

/// Tells which partition the broker should have put a sighting in, from its topic: the level at
/// the topic filter's first `+` (the beacon's ESPresense id, the token the broker's mapping
/// `{{partition(N,1)}}` hashes) hashed as nats-server does (``NATSPartition``).
///
/// A partition delivered sightings of other partitions has a broker whose mapping counts another
/// number of partitions than `cluster.partitions` (a node missed a re-partition, or a queue kept
/// an old mapping's messages): the beacons are then decided by a partition that lacks their
/// regions and the one that has them never hears them. ``PartitionWorker`` counts and logs them.
///
/// ```swift
/// let check = PartitionRouteCheck(filter: "regionkit/part/3/espresense/devices/+/+", count: 16)
/// check?.partition(of: "regionkit/part/3/espresense/devices/iBeacon:e2c5…-1-1/kitchen")   // 3 when routed right
/// ```
struct PartitionRouteCheck: Sendable, Hashable {
    /// The topic level holding the hashed token.
    let level: Int
    let filter: String
    let count: Int

    /// Nil when `filter` has no `+` level (nothing to hash) or there is one partition.
    init?(filter: String, count: Int) {
        guard count > 1, let level = filter.split(separator: "/", omittingEmptySubsequences: false).firstIndex(of: "+") else { return nil }
        self.level = level
        self.filter = filter
        self.count = count
    }

    /// The partition `topic`'s token hashes to; nil for a topic the filter does not match (a
    /// node's status on its own subscription).
    func partition(of topic: String) -> Int? {
        guard MQTTTopicFilter.matches(filter: filter, topic: topic) else { return nil }
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard level < levels.count else { return nil }
        // NATS's MQTT listener makes an empty level the token "/".
        let token = levels[level].isEmpty ? "/" : String(levels[level])
        return NATSPartition.partition(of: token, count: count)
    }
}
