import Foundation
import RegionKitCore

/// The engine's beacon regions by constraint — format, UUID (or Eddystone namespace/instance),
/// major and minor, `nil` = any — in an open-addressing hash table (linear probing,
/// backward-shift deletion) with a cheap multiplicative hash of the 16 id bytes (random already)
/// and the packed rest: no SipHash, no `Dictionary`, on the per-sighting path. Each constraint
/// keeps its regions in registration order, the first inline in its slot (``Matches``).
///
/// Identities that match no constraint (most traffic in a busy place) are remembered in a small
/// direct-mapped **miss cache**, so such a sighting costs one probe instead of three; any new
/// registration empties it (a generation counter, O(1)).
///
/// ```swift
/// var table = BeaconMatchTable()
/// table.append(RegisteredID(sequence: 0, slot: 0), for: .init(constraint))
/// if let (any, major, exact) = table.candidates(for: identity) { … }   // UUID, UUID+major, exact
/// ```
struct BeaconMatchTable: Sendable {
    /// A constraint's key: the 16 id bytes as two words, and format, major and minor packed
    /// (an absent major or minor is 0x1_0000, outside the UInt16 range).
    struct Key: Equatable, Sendable {
        var high: UInt64
        var low: UInt64
        var tag: UInt64

        static let absent: UInt64 = 0x1_0000
        /// The tag of a vacant table slot: no constraint's (format, major and minor use 48 bits).
        static let vacant: UInt64 = 1 << 63

        init(uuid: UUID, major: UInt16?, minor: UInt16?, format: BeaconFormat) {
            (high, low) = withUnsafeBytes(of: uuid.uuid) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
            tag = UInt64(format.rawValue) << 40 | (major.map { UInt64($0) } ?? Self.absent) << 20 | (minor.map { UInt64($0) } ?? Self.absent)
        }

        init(high: UInt64, low: UInt64, tag: UInt64) {
            (self.high, self.low, self.tag) = (high, low, tag)
        }

        init(_ constraint: BeaconIdentityConstraint) {
            self.init(uuid: constraint.uuid, major: constraint.major, minor: constraint.minor, format: constraint.format)
        }

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

    /// One constraint's regions in registration order: the first stored inline in the table's
    /// slot, any others in an array. Most constraints (an exact region per beacon) have one
    /// region, so they cost no allocation and a lookup no second memory access.
    struct Matches: RandomAccessCollection, Sendable {
        /// No region (computed, not a `static let`: a global's lazy initialisation check would
        /// run on every sighting that misses a list).
        @inline(__always)
        static var empty: Matches { Matches(count: 0, head: Registered(sequence: 0, slot: -1), tail: nil) }
        /// How many regions (0: `head` is a placeholder).
        let count: Int
        /// The first region.
        let head: Registered
        /// The others, in registration order; `nil` when there are none (most constraints): an
        /// empty array is still retained and released, three times a sighting.
        let tail: [Registered]?

        var startIndex: Int { 0 }
        var endIndex: Int { count }

        @inline(__always)
        subscript(position: Int) -> Registered { position == 0 ? head : tail![position &- 1] }
    }

    /// A slot of the table: vacant when its key's tag is ``Key/vacant`` (not an `Optional`, whose
    /// tag byte would add 8 bytes of padding to every slot).
    private struct Entry: Sendable {
        var key: Key
        var head: Registered
        var tail: [Registered]

        static let vacant = Entry(key: Key(high: 0, low: 0, tag: Key.vacant), head: Registered(sequence: 0, slot: -1), tail: [])

        var isVacant: Bool { key.tag == Key.vacant }
    }

    private struct Miss: Sendable {
        var key: Key
        var generation: UInt64
    }

    private var entries: [Entry] = Array(repeating: .vacant, count: 16)
    private var mask = 15
    /// Constraints stored.
    private(set) var count = 0
    private var misses: [Miss] = []
    private var generation: UInt64 = 1
    static let missCacheSize = 1_024

    @inline(__always)
    private func home(_ key: Key) -> Int { Int(truncatingIfNeeded: key.hash) & mask }

    @inline(__always)
    private func find(_ key: Key) -> Int? {
        var index = home(key)
        while !entries[index].isVacant {
            if entries[index].key == key { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    /// The regions of one constraint, in registration order (empty when none).
    func regions(for key: Key) -> Matches {
        guard let index = find(key) else { return .empty }
        let others = entries[index].tail.count
        return Matches(count: 1 &+ others, head: entries[index].head, tail: others == 0 ? nil : entries[index].tail)
    }

    /// Adds a region (registered after every region already there) to `key`'s list.
    mutating func append(_ region: Registered, for key: Key) {
        generation &+= 1   // a new region may match identities that matched nothing
        var index = home(key)
        while !entries[index].isVacant {
            if entries[index].key == key {
                entries[index].tail.append(region)
                return
            }
            index = (index + 1) & mask
        }
        if (count + 1) * 2 > entries.count {
            grow()
            index = home(key)
            while !entries[index].isVacant { index = (index + 1) & mask }
        }
        entries[index] = Entry(key: key, head: region, tail: [])
        count += 1
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

    /// Removes the region in `slot` from `key`'s list (and the key when its list empties).
    mutating func remove(slot: Int32, for key: Key) {
        guard let index = find(key) else { return }
        entries[index].tail.removeAll { $0.slot == slot }
        guard entries[index].head.slot == slot else { return }
        if entries[index].tail.isEmpty {
            delete(at: index)
        } else {
            entries[index].head = entries[index].tail.removeFirst()
        }
    }

    /// Backward-shift deletion: later entries of the probe run move up, so no tombstones.
    private mutating func delete(at start: Int) {
        var hole = start
        entries[hole] = .vacant
        count -= 1
        var index = (hole + 1) & mask
        while !entries[index].isVacant {
            if OpenAddressing.canMove(home: home(entries[index].key), into: hole, from: index) {
                entries[hole] = entries[index]
                entries[index] = .vacant
                hole = index
            }
            index = (index + 1) & mask
        }
    }

    private mutating func grow() { rehash(into: entries.count * 2) }

    /// Refiles every constraint in a table of `size` slots (a power of two).
    private mutating func rehash(into size: Int) {
        let old = entries
        entries = Array(repeating: .vacant, count: size)
        mask = entries.count - 1
        for entry in old where !entry.isVacant {
            var index = home(entry.key)
            while !entries[index].isVacant { index = (index + 1) & mask }
            entries[index] = entry
        }
    }

    /// The three lists that can hold regions matching `identity` (UUID only, UUID+major, exact;
    /// for Eddystone-UID: namespace only, nothing, namespace+instance), or `nil` when none does
    /// (answered from the miss cache when the identity was looked up before and nothing was
    /// registered since).
    mutating func candidates(for identity: BeaconIdentity) -> (any: Matches, major: Matches, exact: Matches)? {
        let exactKey = Key(uuid: identity.uuid, major: identity.major, minor: identity.minor, format: identity.format)
        let missIndex = Int(truncatingIfNeeded: exactKey.hash >> 40) & (Self.missCacheSize - 1)
        if !misses.isEmpty, misses[missIndex].generation == generation, misses[missIndex].key == exactKey { return nil }
        let format = identity.format
        let anyUUID = format == .eddystoneUID ? BeaconIdentityConstraint.namespaceKey(identity.uuid) : identity.uuid
        let any = regions(for: Key(uuid: anyUUID, major: nil, minor: nil, format: format))
        let major = format == .eddystoneUID ? .empty : regions(for: Key(uuid: identity.uuid, major: identity.major, minor: nil, format: format))
        let exact = regions(for: exactKey)
        if any.isEmpty && major.isEmpty && exact.isEmpty {
            if misses.isEmpty { misses = Array(repeating: Miss(key: exactKey, generation: 0), count: Self.missCacheSize) }
            misses[missIndex] = Miss(key: exactKey, generation: generation)
            return nil
        }
        return (any, major, exact)
    }
}
