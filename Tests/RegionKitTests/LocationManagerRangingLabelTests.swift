import Foundation
import RegionKitConcurrency
import Testing
@testable import RegionKit

/// Two regions ranging one UUID: each delivery names its region (app-developer review: the
/// delegate got two identical `didRange(_:satisfying:)` calls a second and could not tell them apart).
@Suite("LocationManager: ranging deliveries with their label")
struct LocationManagerRangingLabelTests {
    final class LabelDelegate: LocationManagerDelegate {
        let labels = LockedBox<[String]>([])
        func locationManager(_ manager: LocationManager, didRange beacons: [Beacon], satisfying constraint: BeaconIdentityConstraint, label: String) {
            labels.withLock { $0.append("\(label) \(beacons.count)") }
        }
    }

    @Test("The label variant names each region; a delegate with only the older callback still gets every delivery")
    func labels() throws {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let front = try BeaconRegion(identifier: "front-door", uuid: uuid)
        let back = try BeaconRegion(identifier: "back-door", uuid: uuid)
        let clock = VirtualClock()
        let manager = LocationManager(profile: .responsive, clock: clock, sources: [.beacon: .authorized])
        let labelled = LabelDelegate()
        manager.delegate = labelled
        manager.startRangingBeacons(in: front)
        manager.startRangingBeacons(in: back)
        manager.ingest(BeaconObservation(identity: BeaconIdentity(uuid: uuid, major: 1, minor: 1), rssi: -60, measuredPower: -59, timestamp: clock.now))
        clock.advance(by: 1)
        let seen = labelled.labels.withLock { $0 }
        #expect(seen.contains("front-door 1") && seen.contains("back-door 1"), "\(seen)")

        let older = RecordingDelegate()   // implements only didRange(_:satisfying:)
        manager.delegate = older
        manager.ingest(BeaconObservation(identity: BeaconIdentity(uuid: uuid, major: 1, minor: 1), rssi: -60, measuredPower: -59, timestamp: clock.now))
        clock.advance(by: 1)
        #expect(older.lines.filter { $0 == "range 1" }.count == 2, "\(older.lines)")
    }
}
