import Foundation
import RegionKitCore

/// The engine's beacon regions by constraint — format, UUID (or Eddystone namespace/instance),
/// major and minor, `nil` = any — in an open-addressing hash table (linear probing,
/// backward-shift deletion) with a cheap multiplicative hash of the 16 id bytes (random already)
/// and the packed rest: no SipHash, no `Dictionary`, on the per-sighting path. Each constraint
/// keeps its regions in registration order.
///
/// Identities that match no constraint (most traffic in a busy place) are remembered in a small
/// direct-mapped **miss cache**, so such a sighting costs one probe instead of three; any new
/// registration empties it (a generation counter, O(1)).
///
/// ```swift
/// var table = BeaconMatchTable()
/// table.append(RegisteredID(sequence: 0, slot: 0), for: .init(constraint))
/// table.candidates(for: identity) { lists in … }     // the UUID, UUID+major, exact lists
/// ```
struct BeaconMatchTable: Sendable {
    /// A constraint's key: the 16 id bytes as two words, and format, major and minor packed
    /// (an absent major or minor is 0x1_0000, outside the UInt16 range).
    struct Key: Equatable, Sendable {
        var high: UInt64
        var low: UInt64
        var tag: UInt64

        static let absent: UInt64 = 0x1_0000

        init(uuid: UUID, major: UInt16?, minor: UInt16?, format: BeaconFormat) {
            (high, low) = withUnsafeBytes(of: uuid.uuid) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
            tag = UInt64(format.rawValue) << 40 | (major.map { UInt64($0) } ?? Self.absent) << 20 | (minor.map { UInt64($0) } ?? Self.absent)
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

    private struct Entry: Sendable {
        var key: Key
        var regions: [Registered]
    }

    private struct Miss: Sendable {
        var key: Key
        var generation: UInt64
    }

    private var entries: [Entry?] = Array(repeating: nil, count: 16)
    private var mask = 15
    /// Constraints stored.
    private(set) var count = 0
    private var misses: [Miss] = []
    private var generation: UInt64 = 1
    static let missCacheSize = 1_024

    @inline(__always)
    private func find(_ key: Key) -> Int? {
        var index = Int(truncatingIfNeeded: key.hash) & mask
        while let entry = entries[index] {
            if entry.key == key { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    /// The regions of one constraint, in registration order (empty when none).
    func regions(for key: Key) -> [Registered] {
        find(key).flatMap { entries[$0]?.regions } ?? []
    }

    /// Adds a region (registered after every region already there) to `key`'s list.
    mutating func append(_ region: Registered, for key: Key) {
        generation &+= 1   // a new region may match identities that matched nothing
        if let index = find(key) {
            entries[index]?.regions.append(region)
            return
        }
        if (count + 1) * 2 > entries.count { grow() }
        var index = Int(truncatingIfNeeded: key.hash) & mask
        while entries[index] != nil { index = (index + 1) & mask }
        entries[index] = Entry(key: key, regions: [region])
        count += 1
    }

    /// Makes room for `additional` more constraints without growing (one rehash instead of one
    /// per doubling when many regions are registered at once).
    mutating func reserveCapacity(_ additional: Int) {
        let wanted = (count + max(0, additional)) * 2
        while entries.count < wanted { grow() }
    }

    /// Removes the region in `slot` from `key`'s list (and the key when its list empties).
    mutating func remove(slot: Int32, for key: Key) {
        guard let index = find(key) else { return }
        entries[index]?.regions.removeAll { $0.slot == slot }
        if entries[index]?.regions.isEmpty == true { delete(at: index) }
    }

    /// Backward-shift deletion: later entries of the probe run move up, so no tombstones.
    private mutating func delete(at start: Int) {
        var hole = start
        entries[hole] = nil
        count -= 1
        var index = (hole + 1) & mask
        while let entry = entries[index] {
            let home = Int(truncatingIfNeeded: entry.key.hash) & mask
            // The entry may fill the hole unless its home lies cyclically in (hole, index].
            let stays = hole <= index ? (home > hole && home <= index) : (home > hole || home <= index)
            if !stays {
                entries[hole] = entry
                entries[index] = nil
                hole = index
            }
            index = (index + 1) & mask
        }
    }

    private mutating func grow() {
        let old = entries
        entries = Array(repeating: nil, count: old.count * 2)
        mask = entries.count - 1
        for case let entry? in old {
            var index = Int(truncatingIfNeeded: entry.key.hash) & mask
            while entries[index] != nil { index = (index + 1) & mask }
            entries[index] = entry
        }
    }

    /// The three lists that can hold regions matching `identity` (UUID only, UUID+major, exact;
    /// for Eddystone-UID: namespace only, nothing, namespace+instance), or `nil` when none does
    /// (answered from the miss cache when the identity was looked up before and nothing was
    /// registered since).
    mutating func candidates(for identity: BeaconIdentity) -> (any: [Registered], major: [Registered], exact: [Registered])? {
        let exactKey = Key(uuid: identity.uuid, major: identity.major, minor: identity.minor, format: identity.format)
        let missIndex = Int(truncatingIfNeeded: exactKey.hash >> 40) & (Self.missCacheSize - 1)
        if !misses.isEmpty, misses[missIndex].generation == generation, misses[missIndex].key == exactKey { return nil }
        let format = identity.format
        let anyUUID = format == .eddystoneUID ? BeaconIdentityConstraint.namespaceKey(identity.uuid) : identity.uuid
        let any = regions(for: Key(uuid: anyUUID, major: nil, minor: nil, format: format))
        let major = format == .eddystoneUID ? [] : regions(for: Key(uuid: identity.uuid, major: identity.major, minor: nil, format: format))
        let exact = regions(for: exactKey)
        if any.isEmpty && major.isEmpty && exact.isEmpty {
            if misses.isEmpty { misses = Array(repeating: Miss(key: exactKey, generation: 0), count: Self.missCacheSize) }
            misses[missIndex] = Miss(key: exactKey, generation: generation)
            return nil
        }
        return (any, major, exact)
    }
}
