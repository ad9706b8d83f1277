import Testing
@testable import RegionKitEngine
import RegionKitCore

/// ``RegionTable``'s identifier index replaced a `[String: Int32]`: every identifier must keep
/// finding its slot through inserts, replacements, removals (by identifier, by setting `nil`,
/// through `_modify`) and growth, as the dictionary did.
@Suite("RegionTable: identifier → slot, against a dictionary")
struct RegionTableTests {
    /// A record whose registration time tells one registration of `id` from the next.
    private func record(_ id: String, _ mark: Int) -> RegionRecord {
        RegionRecord(region: .circular(try! CircularRegion(identifier: id, latitude: 48, longitude: 2, radius: 100)),
                        registeredAt: Timestamp(seconds: Double(mark)))
    }

    @Test("random registrations, replacements and removals agree with a dictionary",
          arguments: [(live: 40, steps: 6_000, reserved: false), (live: 3_000, steps: 9_000, reserved: false),
                      (live: 3_000, steps: 9_000, reserved: true)])
    func agreesWithADictionary(live: Int, steps: Int, reserved: Bool) {
        var random = SeededRandom(seed: UInt64(live) &+ (reserved ? 1 : 0))
        var table = RegionTable()
        if reserved { table.reserveCapacity(live) }
        // id → (slot, mark of the stored record)
        var model: [String: (slot: Int, mark: Int)] = [:]
        let stems = ["lobby-", "b", "room/esp32-", "Wohnzimmer-Küche-", "🛰️", ""]
        func name() -> String { stems[Int(random.next() % UInt64(stems.count))] + String(random.next() % UInt64(live * 2)) }
        func check(_ id: String) {
            #expect(table.slot(of: id) == model[id]?.slot, "\(id)")
            #expect(table[id]?.registeredAt.seconds == model[id].map { Double($0.mark) }, "\(id)")
        }
        for step in 0..<steps {
            let id = name()
            switch random.next() % 6 {
            case 0, 1, 2:   // register (a new region, or a replacement in the same slot)
                var replaced: RegionRecord?
                let slot = table.insert(record(id, step), replaced: &replaced)
                #expect(replaced?.registeredAt.seconds == model[id].map { Double($0.mark) })
                if let old = model[id] { #expect(slot == old.slot) }
                #expect(!model.values.contains { $0.slot == slot && model[id]?.slot != slot }, "slot \(slot) handed out twice")
                model[id] = (slot, step)
            case 3:   // remove by identifier
                #expect(table.removeValue(forKey: id)?.registeredAt.seconds == model[id].map { Double($0.mark) })
                model[id] = nil
            case 4:   // remove through `_modify` (the slot holds the vacant record meanwhile)
                table[id]?.state = .inside
                if random.next() % 2 == 0 {
                    modify(&table[id]) { $0 = nil }
                } else {
                    table[id] = nil
                }
                model[id] = nil
            default:   // change a record in place, and try to change its identifier (refused)
                table[id]?.registeredAt = Timestamp(seconds: Double(step))
                table[id]?.region = .circular(try! CircularRegion(identifier: id + "-renamed", latitude: 0, longitude: 0, radius: 1))
                if model[id] != nil { model[id]!.mark = step }
                #expect(table[id]?.region.identifier == model[id].map { _ in id })
                #expect(table.slot(of: id + "-renamed") == model[id + "-renamed"]?.slot)
            }
            #expect(table.count == model.count)
            check(id)
            check(name())
        }
        for id in model.keys { check(id) }
        #expect(Set(table.all.map(\.id)).symmetricDifference(model.keys).isEmpty)
        #expect(RegionTable().slot(of: "lobby") == nil)   // empty: no buckets yet
    }

    /// `==` on `String` is canonical equivalence (a dictionary's keys are too): "Café"
    /// precomposed and with a combining accent are one identifier, as are the Kelvin sign and "K".
    @Test("Canonically equivalent identifiers are one region")
    func equivalentIdentifiers() {
        var table = RegionTable()
        for index in 0..<200 {
            var replaced: RegionRecord?
            table.insert(record("lobby-\(index)", index), replaced: &replaced)
        }
        for (first, second) in [("Caf\u{E9}", "Cafe\u{301}"), ("\u{212A}iosk", "Kiosk")] {
            var replaced: RegionRecord?
            let slot = table.insert(record(first, 1_000), replaced: &replaced)
            #expect(table.slot(of: second) == slot)
            let again = table.insert(record(second, 1_001), replaced: &replaced)
            #expect(again == slot)
            #expect(replaced?.registeredAt.seconds == 1_000)
            #expect(table.removeValue(forKey: second) != nil)
            #expect(table.slot(of: first) == nil)
        }
        #expect(table.count == 200)
    }

    private func modify(_ value: inout RegionRecord?, _ body: (inout RegionRecord?) -> Void) { body(&value) }
}
