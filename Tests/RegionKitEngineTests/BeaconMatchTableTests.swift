import Foundation
import Testing
@testable import RegionKitEngine

/// ``BeaconMatchTable`` (open addressing, backward-shift deletion, miss cache) against a plain
/// `Dictionary` model: the same lists after every random append and removal, on keys crowded
/// into few UUIDs so probe runs are long and deletions shift entries.
@Suite("Beacon match table: identical to a dictionary")
struct BeaconMatchTableTests {
    static let uuids = [UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!,
                        UUID(uuidString: "00000000-0000-0000-0000-000000000000")!,
                        UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!]

    struct ModelKey: Hashable {
        var uuid: Int
        var major: UInt16?
        var minor: UInt16?
        var format: BeaconFormat
        var tableKey: BeaconMatchTable.Key {
            BeaconMatchTable.Key(uuid: BeaconMatchTableTests.uuids[uuid], major: major, minor: minor, format: format)
        }
    }

    @Test("random appends and removals keep every list equal to the model's", arguments: [1, 2, 3])
    func randomOperations(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        func pick(_ n: Int) -> Int { min(Int(random.uniform() * Double(n)), n - 1) }
        var table = BeaconMatchTable()
        var model: [ModelKey: [Int32]] = [:]   // slots
        var sequence = 0
        var keys: [ModelKey] = []
        for _ in 0..<3_000 {
            let key = keys.isEmpty || random.uniform() < 0.5
                ? ModelKey(uuid: pick(3), major: random.uniform() < 0.2 ? nil : UInt16(pick(4)),
                           minor: random.uniform() < 0.3 ? nil : UInt16(pick(40)), format: BeaconFormat.allCases[pick(3)])
                : keys[pick(keys.count)]
            if random.uniform() < 0.6 {
                let slot = Int32(sequence)
                table.append(MonitoringEngine.RegisteredID(sequence: sequence, slot: slot), for: key.tableKey)
                model[key, default: []].append(slot)
                sequence += 1
                keys.append(key)
            } else if let ids = model[key], !ids.isEmpty {
                let slot = ids[pick(ids.count)]
                table.remove(slot: slot, for: key.tableKey)
                model[key]?.removeAll { $0 == slot }
                if model[key]?.isEmpty == true { model[key] = nil }
            }
        }
        #expect(table.count == model.count)
        for key in Set(keys) {
            #expect(table.regions(for: key.tableKey).map(\.slot) == (model[key] ?? []), "key \(key)")
        }
    }

    @Test("an identity that matched nothing matches a region registered later (the miss cache is emptied)")
    func missCacheInvalidation() throws {
        var table = BeaconMatchTable()
        let identity = BeaconIdentity(uuid: Self.uuids[0], major: 1, minor: 2)
        let first = table.candidates(for: identity), second = table.candidates(for: identity)
        #expect(first == nil)
        #expect(second == nil, "answered from the miss cache")
        table.append(MonitoringEngine.RegisteredID(sequence: 0, slot: 7),
                     for: BeaconMatchTable.Key(uuid: Self.uuids[0], major: nil, minor: nil, format: .iBeacon))
        let found = table.candidates(for: identity)
        let lists = try #require(found)
        #expect(lists.any.map(\.slot) == [7])
        #expect(lists.major.isEmpty && lists.exact.isEmpty)
        // Another format with the same bytes is a different key.
        let otherFormat = table.candidates(for: BeaconIdentity(uuid: Self.uuids[0], major: 1, minor: 2, format: .altBeacon))
        #expect(otherFormat == nil)
        table.remove(slot: 7, for: BeaconMatchTable.Key(uuid: Self.uuids[0], major: nil, minor: nil, format: .iBeacon))
        let afterRemoval = table.candidates(for: identity)
        #expect(afterRemoval == nil)
    }
}
