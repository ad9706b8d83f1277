import Foundation
import Testing
@testable import RegionKitEngine

/// `startMonitoring(contentsOf:at:)` grows the engine's tables once and registers the regions in
/// order; it must be indistinguishable from one `startMonitoring(_:at:)` per region: the same
/// events at registration (replacements, failures, requested states, circles evaluated against
/// the last fix) and the same behaviour afterwards.
@Suite("Bulk registration: identical to one call per region")
struct BulkRegistrationTests {
    static let centre = (latitude: 48.8566, longitude: 2.3522)

    /// A seeded mix of beacon and circular regions with repeated identifiers (a later region
    /// replaces an earlier one, also across kinds) and radii beyond the profile's maximum (fails).
    static func regions(count: Int, seed: UInt64) -> [Region] {
        var rng = SeededRandom(seed: seed)
        return (0..<count).map { _ in
            let id = "r\(Int.random(in: 0..<(count * 3 / 4), using: &rng))"   // about a quarter repeat
            if Bool.random(using: &rng) {
                let minor = UInt16.random(in: 1...4, using: &rng)
                return Fixture.region(id, major: 0, minor: Int.random(in: 0..<4, using: &rng) == 0 ? nil : minor)
            }
            let point = Geodesy.destination(latitude: centre.latitude, longitude: centre.longitude,
                                            distance: Double.random(in: 0...2_000, using: &rng), bearing: Double.random(in: 0..<360, using: &rng))
            let radius = Int.random(in: 0..<20, using: &rng) == 0 ? 2e7 : Double.random(in: 50...600, using: &rng)
            return .circular(try! CircularRegion(identifier: id, latitude: point.latitude, longitude: point.longitude, radius: radius))
        }
    }

    static func fix(at t: Double, _ rng: inout SeededRandom) -> LocationFix {
        let point = Geodesy.destination(latitude: centre.latitude, longitude: centre.longitude,
                                        distance: Double.random(in: 0...1_500, using: &rng), bearing: Double.random(in: 0..<360, using: &rng))
        return LocationFix(timestamp: Timestamp(seconds: t), latitude: point.latitude, longitude: point.longitude, horizontalAccuracy: 10)
    }

    @Test("small batches, one after another (a daemon's fresh regions between restored ones): the same as one call per region")
    func smallBatches() {
        var batched = Fixture.engine(.responsive, automation: Automation(requestStateOnStart: true))
        var single = Fixture.engine(.responsive, automation: Automation(requestStateOnStart: true))
        let regions = Self.regions(count: 300, seed: 9)
        var start = 0, size = 1
        while start < regions.count {
            let batch = regions[start..<min(start + size, regions.count)]
            let time = Timestamp(seconds: Double(start))
            #expect(batched.startMonitoring(contentsOf: batch, at: time) == batch.flatMap { single.startMonitoring($0, at: time) })
            start += size
            size = size % 3 + 1
        }
        #expect(batched.monitoredRegions == single.monitoredRegions)
        #expect(batched.monitoredRegions.map { batched.monitoredRegion($0.identifier) } == single.monitoredRegions.map { single.monitoredRegion($0.identifier) })
    }

    @Test("growCapacity grows geometrically: reserving one more each time reallocates O(log n) times, not n")
    func geometricGrowth() {
        var array: [Int] = []
        var capacities = Set<Int>()
        for value in 0..<10_000 {
            array.growCapacity(toAtLeast: array.count + 1)
            array.append(value)
            capacities.insert(array.capacity)
        }
        #expect(capacities.count <= 20, "\(capacities.count) reallocations for 10,000 one-at-a-time reservations")
        #expect(array.count == 10_000 && array.last == 9_999)
    }

    @Test("200 mixed regions, with and without requested states, before and after a fix: same events, same records, same behaviour",
          arguments: [(false, UInt64(1)), (true, UInt64(2)), (true, UInt64(3))])
    func sameAsOneByOne(requestState: Bool, seed: UInt64) {
        let automation = Automation(requestStateOnStart: requestState)
        var bulk = Fixture.engine(.responsive, automation: automation)
        var single = Fixture.engine(.responsive, automation: automation)
        var rng = SeededRandom(seed: seed &+ 100)
        // Some state before: a registered region, a fix (circles registered later are evaluated
        // against it), a beacon heard.
        let first = Fixture.region("early", major: 0)
        let before = Self.fix(at: 1, &rng)
        #expect(bulk.startMonitoring(first, at: .zero) == single.startMonitoring(first, at: .zero))
        #expect(bulk.ingest(before) == single.ingest(before))
        #expect(bulk.ingest(Fixture.seen(Fixture.a, at: 1.5)) == single.ingest(Fixture.seen(Fixture.a, at: 1.5)))

        let regions = Self.regions(count: 200, seed: seed)
        let time = Timestamp(seconds: 2)
        let bulkEvents = bulk.startMonitoring(contentsOf: regions, at: time)
        let singleEvents = regions.flatMap { single.startMonitoring($0, at: time) }
        #expect(bulkEvents == singleEvents)
        #expect(bulkEvents.of("didStartMonitoring").count > 100)
        #expect(!bulkEvents.of("monitoringDidFail").isEmpty, "some radii exceed the maximum: the failures come in order too")
        #expect(bulk.monitoredRegions == single.monitoredRegions)
        #expect(bulk.monitoredRegions.map { bulk.monitoredRegion($0.identifier) } == single.monitoredRegions.map { single.monitoredRegion($0.identifier) })
        #expect(bulk.nextDeadline == single.nextDeadline)

        // Afterwards: fixes, a beacon heard for 20 s and then not, time passing, a region stopped.
        var events: [LocationEvent] = []
        for step in 0..<120 {
            let t = 3 + Double(step) * 0.5
            let fix = Self.fix(at: t, &rng)
            let fromBulk = bulk.ingest(fix)
            #expect(fromBulk == single.ingest(fix), "fix at \(t) s")
            events += fromBulk
            if step < 40 {
                let sighting = Fixture.seen(Fixture.b, at: t + 0.1)
                let fromBulk = bulk.ingest(sighting)
                #expect(fromBulk == single.ingest(sighting), "sighting at \(t + 0.1) s")
                events += fromBulk
            }
            if step == 60, let region = regions.last {
                #expect(bulk.stopMonitoring(identifier: region.identifier, at: Timestamp(seconds: t))
                        == single.stopMonitoring(identifier: region.identifier, at: Timestamp(seconds: t)))
            }
        }
        let end = Timestamp(seconds: 200)
        let fromBulk = bulk.advance(to: end)
        #expect(fromBulk == single.advance(to: end))
        events += fromBulk
        #expect(bulk.monitoredRegions.map { bulk.monitoredRegion($0.identifier) } == single.monitoredRegions.map { single.monitoredRegion($0.identifier) })
        // The comparison saw the engines decide something: circles entered and left, the beacon's regions exited.
        #expect(events.of("didEnterRegion").count + events.of("didExitRegion").count >= 10)
        #expect(!events.of("didExitRegion").filter { event in
            if case .didExitRegion(.beacon) = event.kind { return true } else { return false }
        }.isEmpty)
    }
}
