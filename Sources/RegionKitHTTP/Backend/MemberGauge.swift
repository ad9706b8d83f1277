/// One gauge a backend adds to `/metrics` (``APIBackend/memberGauges()``), e.g. the partitions a
/// cluster member runs.
///
/// ```swift
/// MemberGauge(name: "regionkit_cluster_partitions_held", help: "Partitions this cluster member runs now", value: 6)
/// ```
public struct MemberGauge: Hashable, Sendable {
    public var name: String
    public var help: String
    public var value: Double

    public init(name: String, help: String, value: Double) {
        self.name = name
        self.help = help
        self.value = value
    }
}
