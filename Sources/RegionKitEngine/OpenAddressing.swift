/// What the engine's open-addressing tables share (``BeaconMatchTable``, ``RegionTable``'s
/// identifier index): linear probing in a power-of-two array, deletion by shifting the rest of a
/// probe run back instead of leaving tombstones.
///
/// ```swift
/// // Bucket 5 was emptied; the entry in bucket 7 lives at home 4: it may move into 5.
/// OpenAddressing.canMove(home: 4, into: 5, from: 7)   // true
/// OpenAddressing.canMove(home: 6, into: 5, from: 7)   // false: 5 is before its home
/// ```
enum OpenAddressing {
    /// Whether the entry in `bucket`, whose home bucket is `home`, may move back into the empty
    /// `hole` of its probe run: it may unless its home lies cyclically in (hole, bucket] — a
    /// lookup starting there would no longer reach it.
    @inline(__always)
    static func canMove(home: Int, into hole: Int, from bucket: Int) -> Bool {
        hole <= bucket ? !(home > hole && home <= bucket) : !(home > hole || home <= bucket)
    }
}
