import Foundation
import Testing
@testable import RegionKitEngine

/// ``KeyedList`` against the array it replaced (`removeAll { key }` then `append`), through random
/// appends, replacements, removals by key and by predicate, across its compactions.
@Suite("Keyed list: identical to an array")
struct KeyedListTests {
    @Test func randomOperationsMatchAnArray() {
        var random = SystemRandomNumberGenerator()
        for round in 0..<20 {
            var list = KeyedList<Int>()
            var model: [(key: String, value: Int)] = []
            for step in 0..<3_000 {
                let context = "round \(round), step \(step)"
                // Phases: mostly appends, then mostly removals (compaction), then mixed.
                let removeChance = step < 1_000 ? 0.2 : step < 2_000 ? 0.85 : 0.5
                let key = "r\(Int.random(in: 0..<400, using: &random))"
                let roll = Double.random(in: 0..<1, using: &random)
                if roll < removeChance * 0.95 {
                    let expected = model.first { $0.key == key }?.value
                    model.removeAll { $0.key == key }
                    #expect(list.removeValue(forKey: key) == expected, "\(context)")
                } else if roll < removeChance {
                    let residue = Int.random(in: 0..<7, using: &random)
                    let expected = model.filter { $0.value % 7 == residue }.map(\.value)
                    model.removeAll { $0.value % 7 == residue }
                    #expect(list.removeAll { $0 % 7 == residue } == expected, "\(context)")
                } else {
                    model.removeAll { $0.key == key }
                    model.append((key, step))
                    list.append(step, for: key)
                }
                #expect(list.count == model.count, "\(context)")
                #expect(list[key] == model.first { $0.key == key }?.value, "\(context)")
                if step % 97 == 0 || step == 2_999 {
                    #expect(list.values == model.map(\.value), "\(context)")
                }
            }
        }
    }
}
