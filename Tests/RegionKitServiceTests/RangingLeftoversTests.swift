import Foundation
import RegionKitCore
import Testing
@testable import RegionKitService

/// The leftovers' deadline, on explicit instants (no waiting): what the hub's loop and each
/// partition rely on.
@Suite("Ranging leftovers: the grace deadline")
struct RangingLeftoversTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let (a, b) = (BeaconIdentity(uuid: uuid, major: 1, minor: 1), BeaconIdentity(uuid: uuid, major: 1, minor: 2))

    @Test("Added beacons are due a grace period after the last addition or postponement, never earlier; none: never due")
    func deadline() {
        let start = ContinuousClock.now
        var leftovers = RangingLeftovers()
        // Nothing to clear: no deadline, whatever is postponed.
        leftovers.postpone(by: .seconds(30), now: start)
        #expect(leftovers.due == nil && !leftovers.isDue(now: start + .seconds(3600)))
        leftovers.add([Self.a], grace: .seconds(30), now: start)
        #expect(leftovers.due == start + .seconds(30))
        #expect(!leftovers.isDue(now: start + .seconds(29)) && leftovers.isDue(now: start + .seconds(30)))
        // A later addition (or postponement) moves the deadline for all of them…
        leftovers.add([Self.b], grace: .seconds(30), now: start + .seconds(20))
        #expect(leftovers.beacons == [Self.a, Self.b] && leftovers.due == start + .seconds(50))
        // …never earlier: a shorter grace asked later leaves it.
        leftovers.postpone(by: .seconds(5), now: start + .seconds(21))
        #expect(leftovers.due == start + .seconds(50))
        // While the source is away the deadline moves with the time.
        leftovers.postpone(by: .seconds(30), now: start + .seconds(45))
        #expect(leftovers.due == start + .seconds(75) && !leftovers.isDue(now: start + .seconds(60)))
        // Adding nothing still counts the grace from now (a resumption with no ranging set aside).
        leftovers.add([], grace: .seconds(30), now: start + .seconds(70))
        #expect(leftovers.due == start + .seconds(100))
        leftovers.clear()
        #expect(leftovers.beacons.isEmpty && leftovers.due == nil && !leftovers.isDue(now: start + .seconds(3600)))
    }
}
