import Foundation
import Testing
@testable import RegionKitEngine

/// ``BeaconMatchTable`` (open addressing, backward-shift deletion, miss cache, no keys stored:
/// they are the ``BeaconMatchTable/KeySource``'s) against a plain `Dictionary` model: the same
/// lists after every random append and removal, on keys crowded into few UUIDs so probe runs
/// are long and deletions shift entries, and on keys made to share one hash.
@Suite("Beacon match table: identical to a dictionary")
struct BeaconMatchTableTests {
    static let uuids = [UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!,
                        UUID(uuidString: "00000000-0000-0000-0000-000000000000")!,
                        UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!]

    /// The keys by slot, as the engine's records hold them.
    struct Keys: BeaconMatchTable.KeySource {
        var bySlot: [Int32: BeaconMatchTable.Key] = [:]
        func slot(_ slot: Int32, hasKey key: BeaconMatchTable.Key) -> Bool { bySlot[slot] == key }
    }

    /// A key as a dictionary key of the model.
    struct ModelKey: Hashable {
        var high: UInt64
        var low: UInt64
        var tag: UInt64
        init(_ key: BeaconMatchTable.Key) { (high, low, tag) = (key.high, key.low, key.tag) }
        var key: BeaconMatchTable.Key { BeaconMatchTable.Key(high: high, low: low, tag: tag) }
    }

    /// The table and its model, changed together.
    struct Pair {
        var table = BeaconMatchTable()
        var keys = Keys()
        var model: [ModelKey: [Int32]] = [:]   // slots in registration order
        var sequence = 0

        mutating func append(_ key: BeaconMatchTable.Key) {
            let slot = Int32(sequence)
            keys.bySlot[slot] = key
            table.append(MonitoringEngine.RegisteredID(sequence: sequence, slot: slot), for: key, in: keys)
            model[ModelKey(key), default: []].append(slot)
            sequence += 1
        }

        mutating func remove(slot: Int32) {
            guard let key = keys.bySlot[slot] else { return }
            // As the engine does when a region is replaced in its slot: the record already holds
            // the new region when the old one's entry is removed (by key and slot, not by reading).
            keys.bySlot[slot] = BeaconMatchTable.Key(uuid: BeaconMatchTableTests.uuids[0], major: 9, minor: 9, format: .altBeacon)
            table.remove(slot: slot, for: key)
            keys.bySlot[slot] = nil
            model[ModelKey(key)]?.removeAll { $0 == slot }
            if model[ModelKey(key)]?.isEmpty == true { model[ModelKey(key)] = nil }
        }

        func check(_ note: String) {
            #expect(table.count == model.count, "\(note): count")
            for (key, slots) in model {
                #expect(table.regions(for: key.key, in: keys).map(\.slot) == slots, "\(note): key \(key)")
            }
        }
    }

    static func randomKey(_ random: inout SeededRandom) -> BeaconMatchTable.Key {
        func pick(_ n: Int) -> Int { min(Int(random.uniform() * Double(n)), n - 1) }
        return BeaconMatchTable.Key(uuid: uuids[pick(3)], major: random.uniform() < 0.2 ? nil : UInt16(pick(4)),
                                    minor: random.uniform() < 0.3 ? nil : UInt16(pick(40)), format: BeaconFormat.allCases[pick(3)])
    }

    @Test("random appends and removals keep every list equal to the model's", arguments: [1, 2, 3])
    func randomOperations(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        func pick(_ n: Int) -> Int { min(Int(random.uniform() * Double(n)), n - 1) }
        var pair = Pair()
        var used: [BeaconMatchTable.Key] = []
        for step in 0..<3_000 {
            if random.uniform() < 0.6 {
                let key = used.isEmpty || random.uniform() < 0.5 ? Self.randomKey(&random) : used[pick(used.count)]
                pair.append(key)
                used.append(key)
            } else if !pair.keys.bySlot.isEmpty {
                let slots = Array(pair.keys.bySlot.keys)
                pair.remove(slot: slots[pick(slots.count)])
            }
            if step % 500 == 499 { pair.check("step \(step)") }
        }
        pair.check("end")
        // A sighting's three lists (and the lookups skipped when no key of their kind is stored).
        var table = pair.table
        for _ in 0..<500 {
            let format = BeaconFormat.allCases[pick(3)]
            let identity = BeaconIdentity(uuid: Self.uuids[pick(3)], major: UInt16(pick(4)), minor: UInt16(pick(40)), format: format)
            let anyUUID = format == .eddystoneUID ? BeaconIdentityConstraint.namespaceKey(identity.uuid) : identity.uuid
            let any = pair.model[ModelKey(.init(uuid: anyUUID, major: nil, minor: nil, format: format))] ?? []
            let major = format == .eddystoneUID ? [] : pair.model[ModelKey(.init(uuid: identity.uuid, major: identity.major, minor: nil, format: format))] ?? []
            let exact = pair.model[ModelKey(.init(uuid: identity.uuid, major: identity.major, minor: identity.minor, format: format))] ?? []
            let lists = table.candidates(for: identity, in: pair.keys)
            #expect((lists?.any.map(\.slot) ?? []) == any, "\(identity)")
            #expect((lists?.major.map(\.slot) ?? []) == major, "\(identity)")
            #expect((lists?.exact.map(\.slot) ?? []) == exact, "\(identity)")
            #expect((lists == nil) == (any.isEmpty && major.isEmpty && exact.isEmpty))
        }
    }

    /// Keys with the tag of `base` and chosen id words so that all share `base`'s hash (the
    /// hash's first step, `high ^ low·c₁ ^ tag·c₂`, is then equal; the rest is a bijection).
    static func colliding(with base: BeaconMatchTable.Key, count: Int) -> [BeaconMatchTable.Key] {
        let c1: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (1...count).map { n in
            let low = base.low &+ UInt64(n) &* 0x1234_5678_9ABC_DEF1
            let high = base.high ^ (base.low &* c1) ^ (low &* c1)
            return BeaconMatchTable.Key(high: high, low: low, tag: base.tag)
        }
    }

    @Test("keys that share one hash stay apart: found by their own key, removed by their slot")
    func collidingKeys() {
        let base = BeaconMatchTable.Key(uuid: Self.uuids[0], major: 1, minor: 2, format: .iBeacon)
        let keys = [base] + Self.colliding(with: base, count: 40)
        #expect(Set(keys.map(\.hash)).count == 1, "the keys collide")
        #expect(Set(keys.map(ModelKey.init)).count == keys.count, "the keys differ")
        var random = SeededRandom(seed: 7)
        func pick(_ n: Int) -> Int { min(Int(random.uniform() * Double(n)), n - 1) }
        var pair = Pair()
        for step in 0..<2_000 {
            if random.uniform() < 0.55 || pair.keys.bySlot.isEmpty {
                pair.append(keys[pick(keys.count)])
            } else {
                let slots = Array(pair.keys.bySlot.keys)
                pair.remove(slot: slots[pick(slots.count)])
            }
            if step % 200 == 199 { pair.check("step \(step)") }
        }
        // A sighting whose exact key collides with a registered one but differs matches nothing
        // (a hostile beacon could pick such an identity: the hash is not secret).
        var table = BeaconMatchTable()
        var only = Keys()
        only.bySlot[0] = keys[1]
        table.append(MonitoringEngine.RegisteredID(sequence: 0, slot: 0), for: keys[1], in: only)
        #expect(table.candidates(for: BeaconIdentity(uuid: Self.uuids[0], major: 1, minor: 2), in: only) == nil)
        #expect(table.regions(for: keys[1], in: only).map(\.slot) == [0])
    }

    @Test("an identity that matched nothing matches a region registered later (the miss cache is emptied)")
    func missCacheInvalidation() throws {
        var table = BeaconMatchTable()
        var keys = Keys()
        let identity = BeaconIdentity(uuid: Self.uuids[0], major: 1, minor: 2)
        let first = table.candidates(for: identity, in: keys), second = table.candidates(for: identity, in: keys)
        #expect(first == nil)
        #expect(second == nil, "answered from the miss cache")
        let uuidWide = BeaconMatchTable.Key(uuid: Self.uuids[0], major: nil, minor: nil, format: .iBeacon)
        keys.bySlot[7] = uuidWide
        table.append(MonitoringEngine.RegisteredID(sequence: 0, slot: 7), for: uuidWide, in: keys)
        let found = table.candidates(for: identity, in: keys)
        let lists = try #require(found)
        #expect(lists.any.map(\.slot) == [7])
        #expect(lists.major.isEmpty && lists.exact.isEmpty)
        // Another format with the same bytes is a different key.
        let otherFormat = table.candidates(for: BeaconIdentity(uuid: Self.uuids[0], major: 1, minor: 2, format: .altBeacon), in: keys)
        #expect(otherFormat == nil)
        table.remove(slot: 7, for: uuidWide)
        keys.bySlot[7] = nil
        let afterRemoval = table.candidates(for: identity, in: keys)
        #expect(afterRemoval == nil)
    }
}
