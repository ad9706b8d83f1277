import RegionKitCore

/// A region timer in the engine's queue: due time, then registration sequence (ties go to the
/// earliest registered region — the order in which the engine fires them).
///
/// The schedule (``RegionSchedule``) keeps its queue lazily: an entry may be stale (its region gone, or superseded by
/// an earlier entry) or early (the region's real deadline moved later since it was pushed); the
/// engine checks the minimum against the region's record before using it. That keeps the hot
/// path — a sighting that pushes an exit deadline later — free of heap operations.
///
/// ```swift
/// var queue = RegionTimerQueue()
/// queue.push(RegionTimer(time: Timestamp(seconds: 5), sequence: 2))
/// queue.push(RegionTimer(time: Timestamp(seconds: 5), sequence: 1))
/// queue.min?.sequence // 1
/// ```
struct RegionTimer: Comparable, Sendable {
    var time: Timestamp
    var sequence: Int
    /// The region's slot in the engine's ``RegionTable`` (not part of the order: a slot's
    /// registration number tells a live entry from one of a region removed since).
    var slot: Int32 = -1

    static func == (lhs: RegionTimer, rhs: RegionTimer) -> Bool { lhs.time.seconds == rhs.time.seconds && lhs.sequence == rhs.sequence }

    static func < (lhs: RegionTimer, rhs: RegionTimer) -> Bool {
        lhs.time.seconds < rhs.time.seconds || (lhs.time.seconds == rhs.time.seconds && lhs.sequence < rhs.sequence)
    }
}

/// The engine's region timers, earliest first.
typealias RegionTimerQueue = MinHeap<RegionTimer>
