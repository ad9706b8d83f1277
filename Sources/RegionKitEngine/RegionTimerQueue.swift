import RegionKitCore

/// A binary min-heap of region timers ordered by due time, ties going to the earliest
/// registered region (lowest registration sequence): the order in which the engine fires them.
///
/// The engine keeps it lazily: an entry may be stale (its region gone, or superseded by an
/// earlier entry) or early (the region's real deadline moved later since it was pushed); the
/// engine checks the minimum against the region's record before using it. That keeps the hot
/// path — a sighting that pushes an exit deadline later — free of heap operations.
///
/// ```swift
/// var queue = RegionTimerQueue()
/// queue.push(.init(time: Timestamp(seconds: 5), sequence: 2))
/// queue.push(.init(time: Timestamp(seconds: 5), sequence: 1))
/// queue.min?.sequence // 1
/// ```
struct RegionTimerQueue: Sendable {
    struct Entry: Sendable, Equatable {
        var time: Timestamp
        var sequence: Int

        static func precedes(_ lhs: Entry, _ rhs: Entry) -> Bool {
            lhs.time.seconds < rhs.time.seconds || (lhs.time.seconds == rhs.time.seconds && lhs.sequence < rhs.sequence)
        }
    }

    private(set) var entries: [Entry] = []

    var count: Int { entries.count }
    var min: Entry? { entries.first }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Entry.precedes(entries[child], entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func popMin() -> Entry? {
        guard !entries.isEmpty else { return nil }
        let first = entries[0]
        let last = entries.removeLast()
        guard !entries.isEmpty else { return first }
        entries[0] = last
        siftDown(from: 0)
        return first
    }

    /// Moves the entry at `start` down until neither child precedes it.
    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { return }
            let right = left + 1
            let child = right < entries.count && Entry.precedes(entries[right], entries[left]) ? right : left
            guard Entry.precedes(entries[child], entries[parent]) else { return }
            entries.swapAt(child, parent)
            parent = child
        }
    }

    /// Replaces the contents with `entries` (heapified in O(n)).
    mutating func rebuild(_ newEntries: [Entry]) {
        entries = newEntries
        guard entries.count > 1 else { return }
        for start in stride(from: entries.count / 2 - 1, through: 0, by: -1) { siftDown(from: start) }
    }
}
