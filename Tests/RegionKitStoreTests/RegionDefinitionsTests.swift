import Foundation
import Testing
import RegionKit
import RegionKitStore

/// The fingerprint cluster members record of their configured regions: equal for the same
/// definitions in any order, different when any definition differs.
@Suite("Region definitions' digest")
struct RegionDefinitionsTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test("The digest names the count, does not depend on the order, and changes with any field of any definition")
    func digest() throws {
        let lobby = Region.beacon(try BeaconRegion(identifier: "lobby", uuid: Self.uuid, major: 3))
        let park = Region.circular(try CircularRegion(identifier: "park", latitude: 1, longitude: 2, radius: 30))
        let both = try RegionDefinitions.digest(of: [lobby, park])
        #expect(both == (try RegionDefinitions.digest(of: [park, lobby])), "the order changed the digest")
        #expect(both.hasPrefix("2 regions "), "\(both)")
        #expect(both.count == "2 regions ".count + 16, "\(both)")
        #expect(try RegionDefinitions.digest(of: [lobby]).hasPrefix("1 region "))
        #expect(try RegionDefinitions.digest(of: []) == "0 regions cbf29ce484222325", "FNV-1a's offset basis for no definition")
        // One field of one region: the major, the radius, the identifier, the event flags.
        let changed: [Region] = [
            .beacon(try BeaconRegion(identifier: "lobby", uuid: Self.uuid, major: 4)),
            .beacon(try BeaconRegion(identifier: "Lobby", uuid: Self.uuid, major: 3)),
        ]
        for other in changed {
            #expect(try RegionDefinitions.digest(of: [other, park]) != both, "\(other)")
        }
        var quiet = try BeaconRegion(identifier: "lobby", uuid: Self.uuid, major: 3)
        quiet.notifyOnEntry = false
        #expect(try RegionDefinitions.digest(of: [.beacon(quiet), park]) != both)
        let wider = Region.circular(try CircularRegion(identifier: "park", latitude: 1, longitude: 2, radius: 31))
        #expect(try RegionDefinitions.digest(of: [lobby, wider]) != both)
        // The same region twice is not the same as once.
        #expect(try RegionDefinitions.digest(of: [lobby, lobby]) != (try RegionDefinitions.digest(of: [lobby])))
    }
}
