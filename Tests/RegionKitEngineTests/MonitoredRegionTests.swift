import Foundation
import Testing
@testable import RegionKitEngine

/// The engine's ``RegionRecord`` stores its optional times and distance as plain `Double`s with
/// presence bits, and ``MonitoredRegion`` shows them: its properties, equality, hashing and
/// coding must be those of the stored optionals they replaced.
@Suite("Monitored region: compact storage, same values and coding")
struct MonitoredRegionTests {
    static let region = Region.beacon(try! BeaconRegion(identifier: "door", uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1))

    static func filled() -> MonitoredRegion {
        var record = MonitoredRegion(region: region, registeredAt: Timestamp(seconds: 5))
        record.state = .inside
        record.stateSince = Timestamp(seconds: 6.25)
        record.stateRequested = true
        record.candidate = .outside
        record.candidateSince = Timestamp(seconds: -0.0)
        record.lastDistance = 12.5
        record.restoredAt = Timestamp(seconds: 0)
        return record
    }

    @Test("each optional reads back what was set, zero included, and nil when cleared")
    func optionals() {
        var record = Self.filled()
        #expect(record.stateSince == Timestamp(seconds: 6.25))
        #expect(record.candidateSince == Timestamp(seconds: 0))
        #expect(record.lastDistance == 12.5)
        #expect(record.restoredAt == Timestamp(seconds: 0), "a stored 0 is a value, not absence")
        #expect(record.isStale)
        record.restoredAt = nil
        #expect(record.restoredAt == nil && !record.isStale)
        #expect(record.stateSince != nil, "clearing one leaves the others")
        record.stateSince = nil
        record.candidateSince = nil
        record.lastDistance = nil
        #expect(record.stateSince == nil && record.candidateSince == nil && record.lastDistance == nil)
    }

    @Test("equality and hashing follow the values, not what a cleared field held")
    func equality() {
        var a = MonitoredRegion(region: Self.region, registeredAt: .zero)
        var b = a
        a.lastDistance = 3
        #expect(a != b)
        a.lastDistance = nil
        #expect(a == b, "a cleared distance equals one never set")
        #expect(a.hashValue == b.hashValue)
        a.stateSince = Timestamp(seconds: 0)
        #expect(a != b, "nil and 0 differ")
        b.stateSince = Timestamp(seconds: 0)
        #expect(a == b && a.hashValue == b.hashValue)
    }

    @Test("coded under the same keys as before, the optionals only when present; decoded back equal")
    func coding() throws {
        let encoder = JSONEncoder()
        let full = Self.filled()
        let data = try encoder.encode(full)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == ["region", "state", "registeredAt", "stateSince", "stateRequested", "streams",
                                     "departedStreams", "candidate", "candidateSince", "lastDistance", "restoredAt"])
        #expect(object["lastDistance"] as? Double == 12.5)
        #expect(object["restoredAt"] as? Double == 0)
        #expect(try JSONDecoder().decode(MonitoredRegion.self, from: data) == full)
        let empty = MonitoredRegion(region: Self.region, registeredAt: .zero)
        let emptyObject = try #require(try JSONSerialization.jsonObject(with: encoder.encode(empty)) as? [String: Any])
        #expect(Set(emptyObject.keys) == ["region", "state", "registeredAt", "stateRequested", "streams", "departedStreams"])
        #expect(try JSONDecoder().decode(MonitoredRegion.self, from: encoder.encode(empty)) == empty)
    }

    @Test("the engine's record is 112 bytes (200 with stored optionals, 160 with the departed streams in it, 136 with the present ones)")
    func size() {
        #expect(MemoryLayout<RegionRecord>.stride <= 112)
    }

    @Test("a circular record's distance and a beacon record's stream positions share their bytes, each kind keeping its own")
    func kindBytes() throws {
        var circle = RegionRecord(region: .circular(try CircularRegion(identifier: "c", latitude: 1, longitude: 2, radius: 50)), registeredAt: .zero)
        #expect(circle.lastDistance == nil && circle.departedPosition == -1 && circle.streamsHandle == RegionStreams.none)
        circle.lastDistance = -0.0
        circle.departedPosition = 7      // not a circular region's: changes nothing
        circle.streamsHandle = 9
        #expect(circle.lastDistance?.bitPattern == (-0.0).bitPattern)
        #expect(circle.departedPosition == -1 && circle.streamsHandle == RegionStreams.none)
        var beacon = RegionRecord(region: Self.region, registeredAt: .zero)
        #expect(beacon.departedPosition == -1 && beacon.streamsHandle == RegionStreams.none && beacon.lastDistance == nil)
        beacon.departedPosition = Int32.max
        beacon.streamsHandle = RegionStreams.tableHandle(Int32.max - 2)
        beacon.lastDistance = 3      // not a beacon region's: changes nothing
        #expect(beacon.departedPosition == Int32.max && beacon.streamsHandle == RegionStreams.tableHandle(Int32.max - 2))
        #expect(beacon.lastDistance == nil)
        beacon.departedPosition = -1
        #expect(beacon.departedPosition == -1 && beacon.streamsHandle == RegionStreams.tableHandle(Int32.max - 2), "each half on its own")
        // The public value keeps a distance whatever the region's kind, as it did.
        var shown = MonitoredRegion(region: Self.region, registeredAt: .zero)
        shown.lastDistance = 4
        #expect(shown.lastDistance == 4)
    }
}
