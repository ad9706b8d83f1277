import Foundation
import Testing
@testable import RegionKitEngine

/// ``RegistrationOrder`` against a plain array model: the same slots in the same order
/// after every random append and removal (removals of present, absent and already removed
/// sequence numbers; long runs of removals that trigger the compaction), and through the engine:
/// `monitoredRegions` keeps registration order across stops, replacements and a source outage.
@Suite("Registration order: identical to an array")
struct RegistrationOrderTests {
    @Test func randomAppendsAndRemovalsMatchAnArray() {
        var random = SystemRandomNumberGenerator()
        for round in 0..<20 {
            var order = RegistrationOrder()
            var model: [RegistrationOrder.Entry] = []
            var next = 0
            for step in 0..<3_000 {
                // Phases: mostly appends, then mostly removals (compaction), then mixed.
                let removeChance = step < 1_000 ? 0.2 : step < 2_000 ? 0.9 : 0.5
                if Double.random(in: 0..<1, using: &random) < removeChance, next > 0 {
                    // Three times in four a present entry; otherwise any number (absent, removed or present).
                    let present = !model.isEmpty && Double.random(in: 0..<1, using: &random) < 0.75
                    let sequence = present ? model.randomElement(using: &random)!.sequence : Int.random(in: 0..<(next + 3), using: &random)
                    order.remove(sequence: sequence)
                    model.removeAll { $0.sequence == sequence }
                } else {
                    // Gaps in the numbers, as when the schedule numbered other registrations.
                    next += Int.random(in: 1...3, using: &random)
                    // Slots are reused in any order: one from a small range, not the sequence.
                    let slot = Int.random(in: 0..<64, using: &random)
                    order.append(slot: slot, sequence: next)
                    model.append(RegistrationOrder.Entry(slot: slot, sequence: next))
                }
                #expect(order.count == model.count, "round \(round), step \(step)")
                if step % 97 == 0 || step == 2_999 {
                    #expect(Array(order) == model, "round \(round), step \(step)")
                }
            }
        }
    }

    @Test func everythingRemovedThenAppendedAgain() {
        var order = RegistrationOrder()
        for sequence in 0..<100 { order.append(slot: 99 - sequence, sequence: sequence) }
        // Every other one from the front (the compaction moves the survivors down), then the rest.
        for sequence in stride(from: 0, to: 100, by: 2) { order.remove(sequence: sequence) }
        #expect(Array(order) == stride(from: 1, to: 100, by: 2).map { RegistrationOrder.Entry(slot: 99 - $0, sequence: $0) })
        for sequence in stride(from: 1, to: 100, by: 2) { order.remove(sequence: sequence) }
        #expect(order.count == 0)
        #expect(Array(order).isEmpty)
        order.remove(sequence: 5)   // nothing there: no effect
        order.append(slot: 7, sequence: 100)
        #expect(Array(order) == [RegistrationOrder.Entry(slot: 7, sequence: 100)])
    }

    @Test func theEngineListsRegionsInRegistrationOrderAcrossStopsReplacementsAndAnOutage() throws {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        var engine = MonitoringEngine(profile: .responsive, sources: [.beacon: .authorized, .circular: .authorized])
        for index in 0..<200 {
            let region: Region = index % 3 == 0
                ? .circular(try CircularRegion(identifier: "c\(index)", latitude: 35, longitude: 139 + Double(index) * 1e-3, radius: 100))
                : .beacon(try BeaconRegion(identifier: "b\(index)", uuid: uuid, major: UInt16(index)))
            _ = engine.startMonitoring(region, at: .zero)
        }
        var expected = engine.monitoredRegions.map(\.identifier)
        for index in stride(from: 1, to: 200, by: 7) {
            let id = index % 3 == 0 ? "c\(index)" : "b\(index)"
            _ = engine.stopMonitoring(identifier: id, at: .zero)
            expected.removeAll { $0 == id }
        }
        #expect(engine.monitoredRegions.map(\.identifier) == expected)
        // Registering an identifier again moves it to the end (Core Location's replace).
        _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "b2", uuid: uuid, major: 9_999)), at: .zero)
        expected.removeAll { $0 == "b2" }
        expected.append("b2")
        #expect(engine.monitoredRegions.map(\.identifier) == expected)
        // A location outage removes (and fails) every circular region; the beacon regions keep their order.
        _ = engine.setSourceStatus(.denied(reason: "location off"), for: .circular, at: Timestamp(seconds: 1))
        #expect(engine.monitoredRegions.map(\.identifier) == expected.filter { $0.hasPrefix("b") })
    }
}
