import Foundation
import RegionKitCore

/// The engine's beacon regions by constraint — format, UUID (or Eddystone namespace/instance),
/// major and minor, `nil` = any — in an open-addressing hash table (linear probing,
/// backward-shift deletion) with a cheap multiplicative hash of the 16 id bytes (random already)
/// and the packed rest: no SipHash, no `Dictionary`, on the per-sighting path. Each constraint
/// keeps its regions in registration order: a lone region inline in its 16-byte slot, several
/// in a list (``Matches``). The table keeps no keys: a slot holds 32 bits of its key's hash, and
/// a lookup whose bits match asks the ``KeySource`` (the engine's region records) whether the
/// slot's first region has the key looked up — so an identity that only shares a hash with a
/// registered constraint (the hash is not secret) matches nothing. Lookups of a kind no stored
/// constraint has (UUID only, UUID + major, exact) are skipped.
///
/// Identities that match no constraint (most traffic in a busy place) are remembered in a small
/// direct-mapped **miss cache**, so such a sighting costs one probe instead of three; any new
/// registration empties it (a generation counter, O(1)).
///
/// ```swift
/// var table = BeaconMatchTable()
/// table.append(RegisteredID(sequence: 0, slot: 0), for: .init(constraint), in: records)
/// if let (any, major, exact) = table.candidates(for: identity, in: records) { … }   // UUID, UUID+major, exact
/// ```
struct BeaconMatchTable: Sendable {
    /// A constraint's key: the 16 id bytes as two words, and format, major and minor packed
    /// (an absent major or minor is 0x1_0000, outside the UInt16 range).
    struct Key: Equatable, Sendable {
        var high: UInt64
        var low: UInt64
        var tag: UInt64

        static let absent: UInt64 = 0x1_0000

        /// Whether `constraint`'s key is this one.
        @inline(__always)
        func isKey(of constraint: BeaconIdentityConstraint) -> Bool { Key(constraint) == self }

        init(uuid: UUID, major: UInt16?, minor: UInt16?, format: BeaconFormat) {
            (high, low) = withUnsafeBytes(of: uuid.uuid) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
            tag = UInt64(format.rawValue) << 40 | (major.map { UInt64($0) } ?? Self.absent) << 20 | (minor.map { UInt64($0) } ?? Self.absent)
        }

        /// Which of a sighting's three lookups can reach this key: 0 UUID (namespace) only,
        /// 1 UUID + major, 2 exact (a minor).
        var kind: Int {
            if tag & 0x1_FFFF != Self.absent { return 2 }
            return tag >> 20 & 0x1_FFFF != Self.absent ? 1 : 0
        }

        init(high: UInt64, low: UInt64, tag: UInt64) {
            (self.high, self.low, self.tag) = (high, low, tag)
        }

        init(_ constraint: BeaconIdentityConstraint) {
            self.init(uuid: constraint.uuid, major: constraint.major, minor: constraint.minor, format: constraint.format)
        }

        /// The 32 bits of ``hash`` the table keeps (its home bucket and a fingerprint).
        @inline(__always)
        var fingerprint: UInt32 { UInt32(truncatingIfNeeded: hash) }

        /// Cheap and good enough: the id words are random (UUIDs), the tag is spread by a multiply.
        @inline(__always)
        var hash: UInt64 {
            var h = high ^ (low &* 0x9E37_79B9_7F4A_7C15) ^ (tag &* 0xC2B2_AE3D_27D4_EB4F)
            h ^= h >> 32
            h &*= 0xD6E8_FEB8_6659_FD93
            h ^= h >> 29
            return h
        }
    }

    typealias Registered = MonitoringEngine.RegisteredID

    /// One constraint's regions in registration order: the only one stored inline in the table's
    /// slot, or all of them in a list. Most constraints (an exact region per beacon) have one
    /// region, so they cost no allocation and a lookup no second memory access.
    struct Matches: RandomAccessCollection, Sendable {
        /// No region (computed, not a `static let`: a global's lazy initialisation check would
        /// run on every sighting that misses a list).
        @inline(__always)
        static var empty: Matches { Matches(count: 0, head: Registered(sequence: 0, slot: -1), list: nil) }
        /// How many regions (0: `head` is a placeholder).
        let count: Int
        /// The first region.
        let head: Registered
        /// All of them, in registration order, when there are several; `nil` when there is one
        /// (most constraints): an empty array is still retained and released, three times a sighting.
        let list: [Registered]?

        var startIndex: Int { 0 }
        var endIndex: Int { count }

        @inline(__always)
        subscript(position: Int) -> Registered { position == 0 ? head : list![position] }
    }

    /// Where a table's user keeps its constraints: the table does not store keys (they were 24
    /// of a slot's 48 bytes: memory per region), it asks whether a list's first region has the
    /// key looked up when the stored hash bits equal the key's.
    protocol KeySource {
        /// Whether the region (or session) in `slot` has the constraint of `key` (`false` when
        /// the slot holds none).
        func slot(_ slot: Int32, hasKey key: Key) -> Bool
    }

    /// A slot of the table, 16 bytes: 32 bits of its key's hash (its home and a fingerprint),
    /// and its constraint's region when it has one (`slot` ≥ 0, with its sequence number), or
    /// its list in ``lists`` (`slot` = −2 − the list's number). Vacant when `slot` is −1. The key
    /// itself is the ``KeySource``'s (a constraint's key and its first region were 48 bytes).
    private struct Entry: Sendable {
        var fingerprint: UInt32
        var slot: Int32
        var sequence: Int

        static let vacant = Entry(fingerprint: 0, slot: -1, sequence: 0)

        init(fingerprint: UInt32, slot: Int32, sequence: Int) {
            (self.fingerprint, self.slot, self.sequence) = (fingerprint, slot, sequence)
        }

        init(fingerprint: UInt32, region: Registered) {
            self.init(fingerprint: fingerprint, slot: region.slot, sequence: region.sequence)
        }

        init(fingerprint: UInt32, list: Int) {
            self.init(fingerprint: fingerprint, slot: Int32(truncatingIfNeeded: -2 - list), sequence: 0)
        }

        var isVacant: Bool { slot == -1 }
        /// The number of its list in ``lists``, when it has several regions.
        var list: Int? { slot < -1 ? -2 - Int(slot) : nil }
    }

    private struct Miss: Sendable {
        var key: Key
        var generation: UInt64
    }

    private var entries: [Entry] = Array(repeating: .vacant, count: 16)
    private var mask = 15
    /// Constraints stored.
    private(set) var count = 0
    /// Constraints stored of each ``Key/kind``: a sighting skips the lookups no constraint can
    /// answer (most deployments register no UUID + major region, many no UUID-wide one).
    private var kinds: (any: Int, major: Int, exact: Int) = (0, 0, 0)
    /// The regions of constraints that have more than one, in registration order; emptied
    /// lists are reused.
    private var lists: [[Registered]] = []
    private var freeLists: [Int] = []
    private var misses: [Miss] = []
    private var generation: UInt64 = 1
    static let missCacheSize = 1_024

    @inline(__always)
    private func home(_ fingerprint: UInt32) -> Int { Int(fingerprint) & mask }

    /// The first region of the entry at `index` (not vacant).
    @inline(__always)
    private func firstSlot(at index: Int) -> Int32 {
        let entry = entries[index]
        guard let list = entry.list else { return entry.slot }
        return lists[list][0].slot
    }

    /// The slot of `key`'s entry: the stored hash bits equal, then the key of its first region.
    @inline(__always)
    private func find<Source: KeySource>(_ key: Key, fingerprint: UInt32, in source: Source) -> Int? {
        var index = home(fingerprint)
        while !entries[index].isVacant {
            if entries[index].fingerprint == fingerprint, source.slot(firstSlot(at: index), hasKey: key) { return index }
            index = (index &+ 1) & mask
        }
        return nil
    }

    @inline(__always)
    private func matches(at index: Int) -> Matches {
        let entry = entries[index]
        guard let list = entry.list else {
            return Matches(count: 1, head: Registered(sequence: entry.sequence, slot: entry.slot), list: nil)
        }
        let regions = lists[list]
        return Matches(count: regions.count, head: regions[0], list: regions)
    }

    /// The regions of one constraint, in registration order (empty when none).
    @inline(__always)
    func regions<Source: KeySource>(for key: Key, in source: Source) -> Matches {
        guard let index = find(key, fingerprint: key.fingerprint, in: source) else { return .empty }
        return matches(at: index)
    }

    /// Adds a region (registered after every region already there) to `key`'s list. The
    /// region's own key in `source` may already be `key` (it is not read).
    mutating func append<Source: KeySource>(_ region: Registered, for key: Key, in source: Source) {
        precondition(region.slot >= 0, "a region's slot is not negative")
        generation &+= 1   // a new region may match identities that matched nothing
        let fingerprint = key.fingerprint
        if let index = find(key, fingerprint: fingerprint, in: source) {
            if let list = entries[index].list {
                lists[list].append(region)
            } else {
                let first = Registered(sequence: entries[index].sequence, slot: entries[index].slot)
                let list: Int
                if let reused = freeLists.popLast() {
                    list = reused
                    lists[list] = [first, region]
                } else {
                    list = lists.count
                    lists.append([first, region])
                }
                entries[index] = Entry(fingerprint: fingerprint, list: list)
            }
            return
        }
        if (count + 1) * 2 > entries.count { grow() }
        var index = home(fingerprint)
        while !entries[index].isVacant { index = (index &+ 1) & mask }
        entries[index] = Entry(fingerprint: fingerprint, region: region)
        count += 1
        countKind(of: key, by: 1)
    }

    private mutating func countKind(of key: Key, by change: Int) {
        switch key.kind {
        case 0: kinds.any += change
        case 1: kinds.major += change
        default: kinds.exact += change
        }
    }

    /// Makes room for `additional` more constraints without growing (one rehash instead of one
    /// per doubling when many regions are registered at once).
    mutating func reserveCapacity(_ additional: Int) {
        let wanted = (count + max(0, additional)) * 2
        var size = entries.count
        while size < wanted { size *= 2 }
        // One table of the final size (doubling step by step wrote and freed every size between).
        if size > entries.count { rehash(into: size) }
    }

    /// Removes the region in `slot` from `key`'s list (and the key when its list empties). Found
    /// by `key`'s hash bits and the slot (a slot is in one list at most), not by reading a key:
    /// the slot may already hold another region's record when its old region is removed.
    mutating func remove(slot: Int32, for key: Key) {
        let fingerprint = key.fingerprint
        var index = home(fingerprint)
        while !entries[index].isVacant {
            if entries[index].fingerprint == fingerprint, contains(slot, at: index) { break }
            index = (index &+ 1) & mask
        }
        guard !entries[index].isVacant else { return }
        guard let list = entries[index].list else {
            delete(at: index)
            countKind(of: key, by: -1)
            return
        }
        lists[list].removeAll { $0.slot == slot }
        if lists[list].count == 1 {
            // One region left: back inline, the list's storage freed and its number reused.
            entries[index] = Entry(fingerprint: fingerprint, region: lists[list][0])
            lists[list] = []
            freeLists.append(list)
        }
    }

    private func contains(_ slot: Int32, at index: Int) -> Bool {
        guard let list = entries[index].list else { return entries[index].slot == slot }
        return lists[list].contains { $0.slot == slot }
    }

    /// Backward-shift deletion: later entries of the probe run move up, so no tombstones.
    private mutating func delete(at start: Int) {
        var hole = start
        entries[hole] = .vacant
        count -= 1
        var index = (hole + 1) & mask
        while !entries[index].isVacant {
            if OpenAddressing.canMove(home: home(entries[index].fingerprint), into: hole, from: index) {
                entries[hole] = entries[index]
                entries[index] = .vacant
                hole = index
            }
            index = (index + 1) & mask
        }
    }

    private mutating func grow() { rehash(into: entries.count * 2) }

    /// Refiles every constraint in a table of `size` slots (a power of two), by its stored hash bits.
    private mutating func rehash(into size: Int) {
        let old = entries
        entries = Array(repeating: .vacant, count: size)
        mask = entries.count - 1
        for entry in old where !entry.isVacant {
            var index = home(entry.fingerprint)
            while !entries[index].isVacant { index = (index + 1) & mask }
            entries[index] = entry
        }
    }

    /// The three lists that can hold regions matching `identity` (UUID only, UUID+major, exact;
    /// for Eddystone-UID: namespace only, nothing, namespace+instance), or `nil` when none does
    /// (answered from the miss cache when the identity was looked up before and nothing was
    /// registered since).
    ///
    /// The miss cache is asked inline and the lookups are out of line: a sighting of an identity
    /// known to match nothing (most traffic in a busy place) does not pay the lookups' frame.
    @inline(__always)
    mutating func candidates<Source: KeySource>(for identity: BeaconIdentity, in source: Source) -> (any: Matches, major: Matches, exact: Matches)? {
        let exactKey = Key(uuid: identity.uuid, major: identity.major, minor: identity.minor, format: identity.format)
        let missIndex = Int(truncatingIfNeeded: exactKey.hash >> 40) & (Self.missCacheSize - 1)
        if !misses.isEmpty, misses[missIndex].generation == generation, misses[missIndex].key == exactKey { return nil }
        return lookUp(identity, exactKey: exactKey, missIndex: missIndex, in: source)
    }

    /// ``candidates(for:in:)`` past the miss cache.
    @inline(never)
    private mutating func lookUp<Source: KeySource>(_ identity: BeaconIdentity, exactKey: Key, missIndex: Int,
                                                    in source: Source) -> (any: Matches, major: Matches, exact: Matches)? {
        let format = identity.format
        let anyUUID = format == .eddystoneUID ? BeaconIdentityConstraint.namespaceKey(identity.uuid) : identity.uuid
        let any = kinds.any == 0 ? .empty : regions(for: Key(uuid: anyUUID, major: nil, minor: nil, format: format), in: source)
        let major = kinds.major == 0 || format == .eddystoneUID ? .empty
            : regions(for: Key(uuid: identity.uuid, major: identity.major, minor: nil, format: format), in: source)
        let exact = kinds.exact == 0 ? .empty : regions(for: exactKey, in: source)
        if any.isEmpty && major.isEmpty && exact.isEmpty {
            if misses.isEmpty { misses = Array(repeating: Miss(key: exactKey, generation: 0), count: Self.missCacheSize) }
            misses[missIndex] = Miss(key: exactKey, generation: generation)
            return nil
        }
        return (any, major, exact)
    }
}
