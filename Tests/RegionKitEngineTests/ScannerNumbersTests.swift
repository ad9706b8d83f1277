import Testing
@testable import RegionKitEngine
import RegionKitCore

/// ``ScannerNumbers`` replaced a `[String: Int]` on the sighting path: it must answer as the
/// dictionary did, for short and long names, names sharing prefixes, and non-ASCII names.
@Suite("ScannerNumbers: scanner name → channel number, against a dictionary")
struct ScannerNumbersTests {
    @Test("random inserts and lookups agree with a dictionary, through growth and reserved capacity", arguments: [false, true])
    func agreesWithADictionary(reserved: Bool) {
        var random = SeededRandom(seed: reserved ? 5 : 6)
        var numbers = ScannerNumbers()
        if reserved { numbers.reserveCapacity(3_000) }
        var model: [String: Int] = [:]
        let stems = ["hall", "room-", "kitchen/esp32-", "Wohnzimmer-Küche-", "AA:BB:CC:DD:EE:", "🛰️", ""]
        for step in 0..<4_000 {
            let name = stems[Int(random.next() % UInt64(stems.count))] + String(random.next() % 2_500)
            if model[name] == nil {
                numbers.insert(name, number: step)
                model[name] = step
            }
            // A name stored and one that may not be, each time.
            #expect(numbers[name] == model[name])
            let probe = stems[Int(random.next() % UInt64(stems.count))] + String(random.next() % 5_000)
            #expect(numbers[probe] == model[probe], "\(probe)")
        }
        #expect(numbers.count == model.count)
        #expect(Set(numbers.values) == Set(model.values))
        #expect(Dictionary(uniqueKeysWithValues: numbers.map { ($0.key, $0.value) }) == model)
        #expect(ScannerNumbers()["hall"] == nil)   // empty: no slots yet
    }

    @Test("Canonically equivalent names are one scanner (String's == is canonical equivalence, as in a dictionary)")
    func equivalentNames() {
        var numbers = ScannerNumbers()
        for index in 0..<50 { numbers.insert("room-\(index)", number: index) }
        numbers.insert("Caf\u{E9}", number: 100)
        numbers.insert("\u{212A}itchen", number: 101)
        #expect(numbers["Cafe\u{301}"] == 100)
        #expect(numbers["Kitchen"] == 101)
        #expect(numbers["kitchen"] == nil)
    }
}
