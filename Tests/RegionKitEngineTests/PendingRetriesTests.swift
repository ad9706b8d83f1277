import Foundation
import Testing
@testable import RegionKitEngine

/// ``PendingRetries`` against the array it replaced: filing replaces a region's pending retry and
/// goes last; the retry due next is the earliest, ties to the one filed first; cancelled and
/// taken retries are gone — after every random step. And through the engine: an outage of
/// 3,000 regions under the default helpers retries, gives up and registers again as before.
@Suite("Pending retries: identical to an array")
struct PendingRetriesTests {
    @Test func randomOperationsMatchAnArray() throws {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let regions = try (0..<300).map { Region.beacon(try BeaconRegion(identifier: "r\($0)", uuid: uuid, major: UInt16($0))) }
        var random = SystemRandomNumberGenerator()
        for round in 0..<20 {
            var retries = PendingRetries()
            var model: [(region: Region, due: Timestamp)] = []
            for step in 0..<3_000 {
                let context = "round \(round), step \(step)"
                let region = regions.randomElement(using: &random)!
                let roll = Double.random(in: 0..<1, using: &random)
                if roll < 0.5 {
                    // Whole seconds in a small range: many ties.
                    let due = Timestamp(seconds: Double(Int.random(in: 0..<20, using: &random)))
                    model.removeAll { $0.region.identifier == region.identifier }
                    model.append((region, due))
                    retries.file(region, due: due)
                } else if roll < 0.7 {
                    model.removeAll { $0.region.identifier == region.identifier }
                    retries.cancel(id: region.identifier)
                } else {
                    // The array's scan: the earliest, the first filed among equals.
                    var first: Int?
                    for index in model.indices where first == nil || model[index].due < model[first!].due { first = index }
                    let next = retries.next
                    #expect((next == nil) == (first == nil), "\(context)")
                    if let first, let next {
                        #expect(next.time == model[first].due && next.id == model[first].region.identifier, "\(context)")
                        let expected = model.remove(at: first).region
                        #expect(retries.take(id: next.id) == expected, "\(context)")
                    }
                }
                #expect(retries.count == model.count, "\(context)")
            }
        }
    }

    /// A source outage under ``Automation/all``: every region fails, is retried every second
    /// until its five retries are spent, then waits; when the source is back every region starts
    /// again, in registration order.
    @Test func anOutageOfManyRegionsRetriesGivesUpAndResumes() throws {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let n = 3_000
        let regions = try (0..<n).map { Region.beacon(try BeaconRegion(identifier: "b\($0)", uuid: uuid, major: UInt16($0 / 1000), minor: UInt16($0 % 1000))) }
        var engine = MonitoringEngine(profile: .responsive, automation: .all, sources: [.beacon: .authorized])
        _ = engine.startMonitoring(contentsOf: regions, at: .zero)
        var events = engine.setSourceStatus(.restricted(reason: "controller unplugged"), for: .beacon, at: Timestamp(seconds: 1))
        events += engine.advance(to: Timestamp(seconds: 11))
        var failures: [String: [LocationEvent]] = [:]
        for event in events {
            if case .monitoringDidFail(let region, _) = event.kind { failures[region.identifier, default: []].append(event) }
        }
        #expect(failures.count == n)
        #expect(failures.values.allSatisfy { $0.count == 6 }, "the failure, then 5 retries a second apart")
        #expect(failures.values.allSatisfy { $0.map(\.timestamp.seconds) == [1, 2, 3, 4, 5, 6] })
        #expect(failures.values.allSatisfy { $0.last?.evidence?.reason?.contains("retries exhausted") == true })
        #expect(engine.monitoredRegions.isEmpty)
        let back = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 12))
        let started = back.compactMap { event -> String? in
            if case .didStartMonitoring(let region) = event.kind { return region.identifier } else { return nil }
        }
        #expect(started == regions.map(\.identifier), "registered again in the order they were given up")
        #expect(engine.monitoredRegions.map(\.identifier) == regions.map(\.identifier))
    }
}
