import Foundation
import Testing
@testable import RegionKit

/// The manager's clock is the authority on what time it is: a sighting or fix stamped ahead of
/// it cannot move the engine's time forward (app-developer review, high: one sighting stamped 10
/// minutes ahead put every later exit 10 minutes late).
@Suite("LocationManager: inputs stamped ahead of its clock")
struct LocationManagerClockTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let beacon = BeaconIdentity(uuid: uuid, major: 1, minor: 1)

    @Test("A sighting stamped 600 s ahead is taken at the clock's time and counted; the exit after the silence comes as without it")
    func sightingAhead() throws {
        let clock = VirtualClock()
        let manager = LocationManager(profile: .coreLocation, clock: clock, sources: [.beacon: .authorized])
        let delegate = RecordingDelegate()
        manager.delegate = delegate
        let lobby = try BeaconRegion(identifier: "lobby", uuid: Self.uuid)
        manager.startMonitoring(for: lobby)
        for second in 0..<10 {
            clock.advance(to: Timestamp(seconds: Double(second)))
            // The fifth from a gateway whose clock runs 10 minutes fast.
            let stamp = second == 5 ? clock.now.seconds + 600 : clock.now.seconds
            manager.ingest(BeaconObservation(identity: Self.beacon, rssi: -60, measuredPower: -59, timestamp: Timestamp(seconds: stamp)))
        }
        #expect(manager.engineSnapshot.now == clock.now, "the engine's time stays the clock's")
        #expect(manager.sightingsAheadOfClock == 1)
        clock.advance(to: Timestamp(seconds: 200))
        let exits = delegate.events.withLock { $0 }.filter { $0.typeName == "didExitRegion" }.map(\.timestamp.seconds)
        // coreLocation: an exit 30–40 s after the last sighting (9 s), and only one.
        #expect(exits.count == 1 && exits.allSatisfy { $0 > 9 + 25 && $0 < 9 + 45 }, "\(exits)")
    }

    @Test("A batch with sightings ahead: those are taken at the clock's time; a fix ahead too")
    func batchAndFixAhead() throws {
        let clock = VirtualClock()
        let manager = LocationManager(profile: .responsive, clock: clock, sources: [.beacon: .authorized, .circular: .authorized])
        clock.advance(to: Timestamp(seconds: 10))
        manager.ingest(contentsOf: [
            BeaconObservation(identity: Self.beacon, rssi: -60, timestamp: Timestamp(seconds: 9)),
            BeaconObservation(identity: Self.beacon, rssi: -60, timestamp: Timestamp(seconds: 3_600)),
            BeaconObservation(identity: Self.beacon, rssi: -60, timestamp: Timestamp(seconds: 7_200)),
        ])
        manager.ingest(LocationFix(timestamp: Timestamp(seconds: 99_999), latitude: 35, longitude: 139, horizontalAccuracy: 5))
        #expect(manager.engineSnapshot.now == Timestamp(seconds: 10))
        #expect(manager.sightingsAheadOfClock == 3)
    }
}
