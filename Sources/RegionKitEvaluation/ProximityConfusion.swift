import RegionKitEngine
/// Counts of true proximity class (from the known distance) against the class of the estimate.
///
/// ```swift
/// var confusion = ProximityConfusion(thresholds: ProximityThresholds())
/// confusion.add(truth: 0.2, estimate: 1.1)   // immediate taken for near
/// confusion.count(truth: .immediate, estimated: .near) // 1
/// confusion.accuracy // 0.0
/// ```
public struct ProximityConfusion: Hashable, Sendable {
    /// The classes in table order; estimates may also be `unknown` (no estimate).
    public static let classes: [Proximity] = [.immediate, .near, .far, .unknown]

    public var thresholds: ProximityThresholds
    /// `counts[truth][estimated]`, indexed as ``classes``.
    public private(set) var counts: [[Int]] = Array(repeating: Array(repeating: 0, count: 4), count: 4)

    public init(thresholds: ProximityThresholds) {
        self.thresholds = thresholds
    }

    /// Counts one estimate (`nil`: the model gave none) of a sample truly `truth` metres away.
    public mutating func add(truth: Double, estimate: Double?) {
        let estimated = estimate.map { thresholds.proximity(forAccuracy: $0) } ?? .unknown
        counts[Self.index(thresholds.proximity(forAccuracy: truth))][Self.index(estimated)] += 1
    }

    public func count(truth: Proximity, estimated: Proximity) -> Int {
        counts[Self.index(truth)][Self.index(estimated)]
    }

    public var total: Int { counts.joined().reduce(0, +) }

    /// The fraction of samples whose estimated class is the true one (0 when empty).
    public var accuracy: Double {
        let total = total
        guard total > 0 else { return 0 }
        return Double((0..<4).reduce(0) { $0 + counts[$1][$1] }) / Double(total)
    }

    /// Adds another table's counts (same thresholds).
    public mutating func merge(_ other: ProximityConfusion) {
        for truth in 0..<4 { for estimated in 0..<4 { counts[truth][estimated] += other.counts[truth][estimated] } }
    }

    private static func index(_ proximity: Proximity) -> Int {
        switch proximity {
        case .immediate: 0
        case .near: 1
        case .far: 2
        case .unknown: 3
        }
    }
}
