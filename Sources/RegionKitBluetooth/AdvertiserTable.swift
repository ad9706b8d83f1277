import RegionKitCore

/// The ``ScanResponseDeduplicator``'s memory: what each advertiser last advertised, by address,
/// in one flat open-addressing table (linear probing) instead of a `Dictionary`.
///
/// Every advertising report writes its advertiser's entry, so this is on the scanner's path for
/// every frame: the key (48 address bits and the address type) is mixed with a seed drawn per
/// table and a SplitMix64 finaliser (a few multiplications and shifts, where `Dictionary` ran
/// SipHash and its generic machinery). The finaliser, not a bare multiply-shift, because linear
/// probing needs more than 2-independence on structured keys — a fleet's consecutive public
/// addresses. The seed makes aiming chosen addresses at one bucket impractical for a radio
/// neighbour who does not know it; it is not a keyed hash (SipHash, which `Dictionary` used, is),
/// and it is drawn once per table (kept across rebuilds and ``removeAll()``). Stale entries
/// (older than the window when the table fills) are dropped in bulk when the table is rebuilt;
/// nothing is removed one by one, so no tombstones are needed. A rebuild comes when the table
/// would pass three quarters full; and once it has taken more stores than it has buckets, the
/// live entries are counted and the table rebuilt if that makes it smaller (amortised O(1)
/// either way): after a crowd has gone, the table shrinks back instead of keeping its size while
/// the few beacons left overwrite their own entries.
///
/// ```swift
/// var table = AdvertiserTable()
/// let entry = advertisingData.withUnsafeBytes { AdvertiserTable.Entry($0, time: now) }
/// table.store(key: 0x01_C0FFEE000001, entry, window: 0.5)   // an advertisement
/// if let i = table.position(of: 0x01_C0FFEE000001) { table.markAbsorbed(at: i) }
/// ```
struct AdvertiserTable: Sendable {
    /// What is remembered of an advertiser's last advertisement: its data (up to 32 bytes held
    /// exactly; longer extended data as its first 32 bytes plus a 64-bit FNV-1a hash of the
    /// rest), when, and whether a repeat was already absorbed. Plain words: no allocation.
    struct Entry: Sendable {
        var words: (UInt64, UInt64, UInt64, UInt64)
        var tailHash: UInt64
        var time: Timestamp
        var byteCount: Int32
        var absorbed: Bool

        init(_ data: UnsafeRawBufferPointer, time: Timestamp) {
            var padded: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &padded) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: data.prefix(32))) }
            words = padded
            // One report's data comes from one HCI event (at most 255 bytes): the count fits,
            // clamped all the same.
            byteCount = Int32(clamping: data.count)
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            if data.count > 32 {
                for byte in data[32...] { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            }
            tailHash = hash
            self.time = time
            absorbed = false
        }

        func sameData(as other: Entry) -> Bool {
            byteCount == other.byteCount && words == other.words && tailHash == other.tailHash
        }
    }

    /// Marks a free bucket: keys use 56 bits (address and type), so this is never one.
    static let empty = UInt64.max
    /// Buckets of a table's first allocation.
    static let minimumCapacity = 64

    /// Keys by bucket (``empty`` where free); ``entries`` holds each bucket's value.
    private(set) var keys: [UInt64] = []
    /// Values by bucket; meaningful where ``keys`` holds a key.
    private(set) var entries: [Entry] = []
    /// Buckets holding a key (live or stale).
    private(set) var count = 0
    private let seed: UInt64
    private var shift: UInt64 = 64
    /// Stores since the last rebuild.
    private var storesSinceRebuild = 0

    /// An empty table hashing with a random seed; `seed` fixes it (tests replaying a sequence).
    init(seed: UInt64 = UInt64.random(in: 0...UInt64.max)) {
        self.seed = seed
    }

    /// Buckets allocated (a power of two, or 0 before the first store).
    var capacity: Int { keys.count }

    /// The first bucket to probe for `key`: the top bits of its mixed value (only called on a
    /// table with buckets, so `shift` < 64).
    @inline(__always)
    private func bucket(of key: UInt64) -> Int {
        var mixed = key ^ seed
        mixed = (mixed ^ (mixed &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed &>> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed &>> 31
        return Int(truncatingIfNeeded: mixed &>> shift)
    }

    /// The bucket holding `key`, if it is stored.
    @inline(__always)
    func position(of key: UInt64) -> Int? {
        guard count > 0 else { return nil }
        let mask = keys.count - 1
        var index = bucket(of: key)
        while true {
            let stored = keys[index]
            if stored == key { return index }
            if stored == Self.empty { return nil }
            index = (index + 1) & mask
        }
    }

    /// Stores `entry` as `key`'s, replacing what it had. When the table would pass three
    /// quarters full, or has taken more stores than it has buckets and would be smaller
    /// without its stale entries, it is rebuilt first, without the entries older than `window`
    /// seconds before `entry.time` (they can no longer pair with a scan response).
    mutating func store(key: UInt64, _ entry: Entry, window: Double) {
        storesSinceRebuild += 1
        if (count + 1) * 4 > keys.count * 3 {
            rebuild(keeping: entry.time, window: window, live: liveCount(at: entry.time, window: window))
        } else if storesSinceRebuild > keys.count {
            // Counted without allocating; rebuilt only when that frees buckets (a rebuild to the
            // same size every `capacity` stores cost a fresh pair of arrays each time).
            storesSinceRebuild = 0
            let live = liveCount(at: entry.time, window: window)
            if Self.capacity(for: live) < keys.count { rebuild(keeping: entry.time, window: window, live: live) }
        }
        let mask = keys.count - 1
        var index = bucket(of: key)
        while true {
            let stored = keys[index]
            if stored == key { break }
            if stored == Self.empty {
                keys[index] = key
                count += 1
                break
            }
            index = (index + 1) & mask
        }
        entries[index] = entry
    }

    /// Records that the advertisement in bucket `index` (from ``position(of:)``) absorbed its repeat.
    mutating func markAbsorbed(at index: Int) {
        entries[index].absorbed = true
    }

    /// Forgets every advertiser and returns the memory.
    mutating func removeAll() {
        keys = []
        entries = []
        count = 0
        shift = 64
        storesSinceRebuild = 0
    }

    /// Whether a bucket holding `key` and `entry` is in use and was heard within `window`
    /// seconds before `time`: the one test for what a rebuild keeps, so the count that sizes the
    /// new table and the entries re-filed into it cannot disagree.
    @inline(__always)
    private static func isLive(_ key: UInt64, _ entry: Entry, at time: Timestamp, window: Double) -> Bool {
        key != empty && time - entry.time <= window
    }

    /// The entries heard within `window` seconds before `time`.
    private func liveCount(at time: Timestamp, window: Double) -> Int {
        var live = 0
        for index in keys.indices where Self.isLive(keys[index], entries[index], at: time, window: window) { live += 1 }
        return live
    }

    /// The buckets for `live` entries: a power of two, at least ``minimumCapacity``, and at least
    /// twice `live + 1` (so the table is at most half full after the next store).
    private static func capacity(for live: Int) -> Int {
        var capacity = minimumCapacity
        while capacity < 2 * (live + 1) { capacity *= 2 }
        return capacity
    }

    /// Re-files the entries heard within `window` seconds before `time` — `live` of them
    /// (``liveCount(at:window:)``) — in a table sized for them (at most half full after the next
    /// store): a crowd of live advertisers grows it; a flood of one-off addresses (privacy
    /// addresses rotating) that has gone stale is dropped and the table shrinks to what is left.
    private mutating func rebuild(keeping time: Timestamp, window: Double, live: Int) {
        let capacity = Self.capacity(for: live)
        let oldKeys = keys, oldEntries = entries
        keys = Array(repeating: Self.empty, count: capacity)
        entries = Array(repeating: oldEntries.first ?? Entry(UnsafeRawBufferPointer(start: nil, count: 0), time: time), count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        count = 0
        storesSinceRebuild = 0
        let mask = capacity - 1
        for index in oldKeys.indices where Self.isLive(oldKeys[index], oldEntries[index], at: time, window: window) {
            var target = bucket(of: oldKeys[index])
            while keys[target] != Self.empty { target = (target + 1) & mask }
            keys[target] = oldKeys[index]
            entries[target] = oldEntries[index]
            count += 1
        }
    }
}
