import RegionKitCore

/// A region timer in the engine's queue: due time, then registration sequence (ties go to the
/// earliest registered region — the order in which the engine fires them).
///
/// The schedule (``RegionSchedule``) keeps its queue lazily: an entry may be stale (its region gone, or superseded by
/// an earlier entry) or early (the region's real deadline moved later since it was pushed); the
/// engine checks the minimum against the region's record before using it. That keeps the hot
/// path — a sighting that pushes an exit deadline later — free of heap operations.
///
/// 16 bytes (issue 13, memory per region: a region inside has one): the time, the slot, and the
/// low 32 bits of the registration sequence number, compared as serial numbers (RFC 1982: the
/// difference taken as a signed 32-bit number). That is the order of the full numbers while
/// the regions registered at once were registered fewer than 2³¹ registrations apart — two
/// billion registrations while one region stays registered; past that only the order of
/// timers due at the same instant could differ, and telling an entry of a removed region from
/// its slot's new region also compares the scheduled time, to the bit.
///
/// ```swift
/// var queue = RegionTimerQueue()
/// queue.push(RegionTimer(time: Timestamp(seconds: 5), sequence: 2))
/// queue.push(RegionTimer(time: Timestamp(seconds: 5), sequence: 1))
/// queue.min?.has(sequence: 1) // true
/// ```
struct RegionTimer: Comparable, Sendable {
    var time: Timestamp
    /// The low 32 bits of the region's registration sequence number.
    private(set) var sequenceBits: UInt32
    /// The region's slot in the engine's ``RegionTable`` (not part of the order: a slot's
    /// registration number tells a live entry from one of a region removed since).
    var slot: Int32 = -1

    init(time: Timestamp, sequence: Int, slot: Int32 = -1) {
        self.time = time
        self.sequenceBits = UInt32(truncatingIfNeeded: sequence)
        self.slot = slot
    }

    /// Whether this is a timer of the region registered with `sequence` (its low 32 bits).
    @inline(__always)
    func has(sequence: Int) -> Bool { sequenceBits == UInt32(truncatingIfNeeded: sequence) }

    static func == (lhs: RegionTimer, rhs: RegionTimer) -> Bool { lhs.time.seconds == rhs.time.seconds && lhs.sequenceBits == rhs.sequenceBits }

    static func < (lhs: RegionTimer, rhs: RegionTimer) -> Bool {
        lhs.time.seconds < rhs.time.seconds
            || (lhs.time.seconds == rhs.time.seconds && Int32(bitPattern: lhs.sequenceBits &- rhs.sequenceBits) < 0)
    }
}

/// The engine's region timers, earliest first.
typealias RegionTimerQueue = MinHeap<RegionTimer>
