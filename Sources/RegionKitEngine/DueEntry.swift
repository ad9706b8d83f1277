import RegionKitCore

/// A heap entry of something due at `time`: ordered by time, ties by `sequence` (the order in
/// which the items were filed or started), carrying the `key` that finds the item again. Equality
/// and order ignore the key: two entries with the same time and sequence are the same filing.
///
/// The tables that replaced scanned arrays (``PendingRetries`` by region identifier,
/// ``RangingSessionTable`` by slot) keep these in a ``MinHeap`` and drop the stale ones lazily.
///
/// ```swift
/// var heap = MinHeap<DueEntry<String>>()
/// heap.push(DueEntry(time: Timestamp(seconds: 2), sequence: 0, key: "hall"))
/// heap.push(DueEntry(time: Timestamp(seconds: 1), sequence: 1, key: "door"))
/// heap.min?.key // "door"
/// ```
struct DueEntry<Key: Sendable>: Comparable, Sendable {
    var time: Timestamp
    var sequence: Int
    var key: Key

    static func < (a: DueEntry, b: DueEntry) -> Bool {
        a.time != b.time ? a.time < b.time : a.sequence < b.sequence
    }

    static func == (a: DueEntry, b: DueEntry) -> Bool { a.time == b.time && a.sequence == b.sequence }
}
