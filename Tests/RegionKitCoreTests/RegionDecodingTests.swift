import Foundation
import Testing
import RegionKitCore

/// A region decoded (from a store, a message) is checked as one built by its initializer.
@Suite("Region decoding checks the definition")
struct RegionDecodingTests {
    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    @Test("A circle with an empty identifier, a latitude of 500 or a negative radius is refused, naming what was wrong; a valid one round-trips")
    func circles() throws {
        let bad = [
            #"{"identifier":"","latitude":35,"longitude":139,"radius":50,"notifyOnEntry":true,"notifyOnExit":true}"#: "empty",
            #"{"identifier":"a","latitude":500,"longitude":139,"radius":50,"notifyOnEntry":true,"notifyOnExit":true}"#: "latitude 500",
            #"{"identifier":"a","latitude":35,"longitude":-181,"radius":50,"notifyOnEntry":true,"notifyOnExit":true}"#: "longitude -181",
            #"{"identifier":"a","latitude":35,"longitude":139,"radius":-100,"notifyOnEntry":true,"notifyOnExit":true}"#: "radius -100",
        ]
        for (json, words) in bad {
            do {
                _ = try Self.decode(CircularRegion.self, json)
                Issue.record("accepted \(json)")
            } catch DecodingError.dataCorrupted(let context) {
                #expect(context.debugDescription.contains(words), "\(context.debugDescription)")
            }
        }
        let station = try CircularRegion(identifier: "station", latitude: 35.6812, longitude: 139.7671, radius: 150, notifyOnExit: false)
        #expect(try Self.decode(CircularRegion.self, String(decoding: JSONEncoder().encode(station), as: UTF8.self)) == station)
        #expect(try Self.decode(Region.self, String(decoding: JSONEncoder().encode(Region.circular(station)), as: UTF8.self)) == .circular(station))
    }

    @Test("A beacon region with an empty identifier or a NUL in it is refused; a valid one (scanner-bound too) round-trips")
    func beacons() throws {
        let constraint = #"{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":3}"#
        for identifier in ["", "a\\u0000b"] {
            let json = #"{"identifier":"\#(identifier)","constraint":\#(constraint),"notifyOnEntry":true,"notifyOnExit":true,"notifyEntryStateOnDisplay":false}"#
            #expect(throws: DecodingError.self, "\(json)") { try Self.decode(BeaconRegion.self, json) }
        }
        var room = try BeaconRegion(identifier: "kitchen", uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 3)
        room.scannerID = "kitchen-node"
        #expect(try Self.decode(BeaconRegion.self, String(decoding: JSONEncoder().encode(room), as: UTF8.self)) == room)
        let unbound = try BeaconRegion(identifier: "hall", uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        let encoded = String(decoding: try JSONEncoder().encode(unbound), as: UTF8.self)
        #expect(!encoded.contains("scannerID"), "an unbound region encodes as before: \(encoded)")
        #expect(try Self.decode(BeaconRegion.self, encoded) == unbound)
    }
}
