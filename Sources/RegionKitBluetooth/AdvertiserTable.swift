import RegionKitCore

/// The ``ScanResponseDeduplicator``'s memory: what each advertiser last advertised, by address,
/// in one flat open-addressing table (linear probing) instead of a `Dictionary`.
///
/// Every advertising report writes its advertiser's entry, so this is on the scanner's path for
/// every frame: the key (48 address bits and the address type) is hashed by one multiplication
/// with an odd multiplier drawn per table (multiply-shift hashing — a radio neighbour choosing
/// addresses cannot aim them at one bucket without knowing it), where `Dictionary` ran SipHash and
/// its generic machinery. Stale entries (older than the window when the table fills) are dropped
/// in bulk when the table is rebuilt; nothing is removed one by one, so no tombstones are needed.
///
/// ```swift
/// var table = AdvertiserTable()
/// table.store(key: 0x01_C0FFEE000001, entry)          // an advertisement
/// if let i = table.position(of: 0x01_C0FFEE000001) { table.entries[i].absorbed = true }
/// ```
struct AdvertiserTable: Sendable {
    /// What is remembered of an advertiser's last advertisement: its data (up to 32 bytes held
    /// exactly; longer extended data as its first 32 bytes plus a 64-bit FNV-1a hash of the
    /// rest), when, and whether a repeat was already absorbed. Plain words: no allocation.
    struct Entry: Sendable {
        var words: (UInt64, UInt64, UInt64, UInt64)
        var tailHash: UInt64
        var time: Timestamp
        var count: Int32
        var absorbed: Bool

        init(_ data: UnsafeRawBufferPointer, time: Timestamp) {
            var padded: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &padded) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: data.prefix(32))) }
            words = padded
            // An HCI event carries at most 255 bytes (an extended report's data, fragments
            // included, stays below 1,650): the count fits, clamped all the same.
            count = Int32(clamping: data.count)
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            if data.count > 32 {
                for byte in data[32...] { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            }
            tailHash = hash
            self.time = time
            absorbed = false
        }

        func sameData(as other: Entry) -> Bool {
            count == other.count && words == other.words && tailHash == other.tailHash
        }
    }

    /// Marks a free bucket: keys use 56 bits (address and type), so this is never one.
    static let empty = UInt64.max
    /// Buckets of a table's first allocation.
    static let minimumCapacity = 64

    /// Keys by bucket (``empty`` where free); ``entries`` holds each bucket's value.
    private(set) var keys: [UInt64] = []
    /// Values by bucket; meaningful where ``keys`` holds a key.
    var entries: [Entry] = []
    /// Buckets holding a key (live or stale).
    private(set) var count = 0
    private let multiplier: UInt64
    private var shift: UInt64 = 64

    init() {
        multiplier = UInt64.random(in: 1...UInt64.max) | 1
    }

    /// Buckets allocated (a power of two, or 0 before the first store).
    var capacity: Int { keys.count }

    @inline(__always)
    private func bucket(of key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* multiplier) >> shift)
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
    /// quarters full it is rebuilt first, without the entries older than `window` seconds
    /// before `entry.time` (they can no longer pair with a scan response).
    mutating func store(key: UInt64, _ entry: Entry, window: Double) {
        if (count + 1) * 4 > keys.count * 3 { rebuild(keeping: entry.time, window: window) }
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

    /// Forgets every advertiser and returns the memory.
    mutating func removeAll() {
        keys = []
        entries = []
        count = 0
        shift = 64
    }

    /// Re-files the entries heard within `window` seconds before `time` in a table at most half
    /// full after the next store: a crowd of live advertisers doubles it, a flood of one-off
    /// addresses (privacy addresses rotating) is dropped and the table keeps its size.
    private mutating func rebuild(keeping time: Timestamp, window: Double) {
        var live = 0
        for index in keys.indices where keys[index] != Self.empty && time - entries[index].time <= window { live += 1 }
        var capacity = Self.minimumCapacity
        while capacity < 2 * (live + 1) { capacity *= 2 }
        let oldKeys = keys, oldEntries = entries
        keys = Array(repeating: Self.empty, count: capacity)
        entries = Array(repeating: oldEntries.first ?? Entry(UnsafeRawBufferPointer(start: nil, count: 0), time: time), count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        count = 0
        let mask = capacity - 1
        for index in oldKeys.indices where oldKeys[index] != Self.empty && time - oldEntries[index].time <= window {
            var target = bucket(of: oldKeys[index])
            while keys[target] != Self.empty { target = (target + 1) & mask }
            keys[target] = oldKeys[index]
            entries[target] = oldEntries[index]
            count += 1
        }
    }
}
