import Foundation
import Testing
@testable import RegionKitCore

/// Spec §1: region values and their validation.
@Suite("Regions and identities (spec §1)")
struct RegionTests {
    static let uuidString = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    @Test func beaconRegionDefaults() throws {
        let region = try BeaconRegion(identifier: "lobby", uuidString: Self.uuidString)
        #expect(region.notifyOnEntry)
        #expect(region.notifyOnExit)
        #expect(!region.notifyEntryStateOnDisplay)
        #expect(region.major == nil && region.minor == nil)
    }

    @Test func badUUIDIsRejectedNamingTheRegion() {
        #expect {
            try BeaconRegion(identifier: "door", uuidString: "not-a-uuid")
        } throws: { error in
            let error = error as? RegionKitError
            return error?.code == .invalidRegion && error!.message.contains("door") && error!.message.contains("not-a-uuid")
        }
    }

    @Test func minorWithoutMajorIsRejected() {
        #expect {
            try BeaconRegion(identifier: "x", uuidString: Self.uuidString, major: nil, minor: 3)
        } throws: { ($0 as? RegionKitError)?.message.contains("minor") == true }
    }

    @Test func emptyIdentifierIsRejected() {
        #expect(throws: RegionKitError.self) { try BeaconRegion(identifier: "", uuidString: Self.uuidString) }
    }

    /// The stores keep identifiers as C strings: "a\0b" was stored as region "a" (audit finding).
    @Test func identifierWithNULIsRejected() throws {
        #expect {
            try BeaconRegion(identifier: "a\u{0}b", uuidString: Self.uuidString)
        } throws: { ($0 as? RegionKitError)?.message.contains("U+0000") == true }
        #expect(throws: RegionKitError.self) { try CircularRegion(identifier: "\u{0}", latitude: 0, longitude: 0, radius: 10) }
        _ = try BeaconRegion(identifier: "a\tb", uuidString: Self.uuidString)   // other characters stay allowed
    }

    @Test(arguments: [-1.0, .nan, .infinity, -.infinity])
    func invalidRadiusIsRejected(radius: Double) {
        #expect {
            try CircularRegion(identifier: "park", latitude: 0, longitude: 0, radius: radius)
        } throws: { ($0 as? RegionKitError)?.message.contains("radius") == true }
    }

    @Test(arguments: [(90.5, 0.0), (-91, 0), (0, 180.01), (0, -181), (.nan, 0)])
    func invalidCoordinatesAreRejected(latitude: Double, longitude: Double) {
        #expect(throws: RegionKitError.self) { try CircularRegion(identifier: "p", latitude: latitude, longitude: longitude, radius: 10) }
    }

    @Test func boundaryCoordinatesAndZeroRadiusAreValid() throws {
        _ = try CircularRegion(identifier: "pole", latitude: 90, longitude: 180, radius: 0)
        _ = try CircularRegion(identifier: "pole", latitude: -90, longitude: -180, radius: 0)
    }

    @Test func uuidsAreAcceptedWithOrWithoutDashes() throws {
        let dashed = try BeaconIdentityConstraint(uuidString: "DAF246CE-8363-11E4-B116-123B93F75CBA")
        let bare = try BeaconIdentityConstraint(uuidString: "daf246ce836311e4b116123b93f75cba")
        #expect(dashed == bare)
        #expect(UUID(flexibleString: "DAF246CE836311E4B116123B93F75CB") == nil)   // 31 digits
        #expect(UUID(flexibleString: "DAF246CE836311E4B116123B93F75CBG") == nil)  // not hex
    }

    /// Spec §1: UUID only matches every major/minor; UUID+major that major; all three one beacon.
    @Test func constraintMatching() throws {
        let uuid = UUID(uuidString: Self.uuidString)!
        let other = UUID()
        let beacon = BeaconIdentity(uuid: uuid, major: 7, minor: 3)
        #expect(try BeaconIdentityConstraint(uuid: uuid).matches(beacon))
        #expect(try BeaconIdentityConstraint(uuid: uuid, major: 7).matches(beacon))
        #expect(!(try BeaconIdentityConstraint(uuid: uuid, major: 8).matches(beacon)))
        #expect(try BeaconIdentityConstraint(uuid: uuid, major: 7, minor: 3).matches(beacon))
        #expect(!(try BeaconIdentityConstraint(uuid: uuid, major: 7, minor: 4).matches(beacon)))
        #expect(!(try BeaconIdentityConstraint(uuid: other).matches(beacon)))
    }

    @Test func scannerBoundRegionsOnlyMatchTheirScanner() throws {
        var region = try BeaconRegion(identifier: "room201", uuidString: Self.uuidString)
        region.scannerID = "Room201"
        let beacon = BeaconIdentity(uuid: region.uuid, major: 1, minor: 1)
        #expect(region.matches(beacon, scanner: "Room201"))
        #expect(!region.matches(beacon, scanner: "Room202"))
        #expect(!region.matches(beacon, scanner: nil))
    }

    @Test func greatCircleDistances() {
        // One degree of longitude on the equator: 2πR/360 with R = 6,371,008.8 m.
        let degree = Geodesy.distance(latitude1: 0, longitude1: 0, latitude2: 0, longitude2: 1)
        #expect(abs(degree - 111_195.08) < 0.5)
        // Across the antimeridian is short, not half the globe.
        #expect(Geodesy.distance(latitude1: 0, longitude1: 179.9, latitude2: 0, longitude2: -179.9) < 23_000)
        // destination() inverts distance().
        let p = Geodesy.destination(latitude: 35.6812, longitude: 139.7671, distance: 250, bearing: 90)
        #expect(abs(Geodesy.distance(latitude1: 35.6812, longitude1: 139.7671, latitude2: p.latitude, longitude2: p.longitude) - 250) < 0.01)
    }

    @Test func circularRegionContainment() throws {
        let region = try CircularRegion(identifier: "station", latitude: 35.6812, longitude: 139.7671, radius: 100)
        let inside = Geodesy.destination(latitude: 35.6812, longitude: 139.7671, distance: 99, bearing: 10)
        let outside = Geodesy.destination(latitude: 35.6812, longitude: 139.7671, distance: 101, bearing: 10)
        #expect(region.contains(latitude: inside.latitude, longitude: inside.longitude))
        #expect(!region.contains(latitude: outside.latitude, longitude: outside.longitude))
    }

    @Test func observationsFallBackToTheDefaultMeasuredPower() {
        let id = BeaconIdentity(uuid: UUID(), major: 1, minor: 1)
        #expect(BeaconObservation(identity: id, rssi: -70, measuredPower: nil, timestamp: .zero).effectiveMeasuredPower == -59)
        #expect(BeaconObservation(identity: id, rssi: -70, measuredPower: 0, timestamp: .zero).effectiveMeasuredPower == -59)
        #expect(BeaconObservation(identity: id, rssi: -70, measuredPower: -65, timestamp: .zero).effectiveMeasuredPower == -65)
    }

    @Test("Identifiers as the stores key them: NFC, each once, in their order")
    func canonicalIdentifiers() {
        let keys = Region.canonical(identifiers: ["cafe\u{301}", "lobby", "caf\u{E9}", "lobby", "Zebra"])
        #expect(keys.map { Array($0.utf8) } == ["caf\u{E9}", "lobby", "Zebra"].map { Array($0.utf8) })
        #expect(Region.canonical(identifiers: []).isEmpty)
    }
}
