import RegionKitCore

/// When a beacon whose nearest scanner the engine tracks (``NearestScannerPolicy``) may be heard
/// by no scanner any more: an entry of the engine's absence queue, ordered by time, then by
/// identity (so equal times fire in one order whatever the order they were filed in).
///
/// The queue is lazy: an entry is never later than its beacon's real time (a sighting that moves
/// the time later files nothing; the entry, when due, finds the beacon still heard and files the
/// new time), and an entry its beacon's state no longer names (``NearestScannerState/absentAt``)
/// is dropped unread.
///
/// ```swift
/// var queue = MinHeap<NearestAbsence>()
/// queue.push(NearestAbsence(time: Timestamp(seconds: 12), identity: beacon))
/// ```
struct NearestAbsence: Comparable, Sendable {
    var time: Timestamp
    var identity: BeaconIdentity

    static func < (lhs: NearestAbsence, rhs: NearestAbsence) -> Bool {
        lhs.time != rhs.time ? lhs.time < rhs.time : lhs.identity < rhs.identity
    }
}
