import Foundation
import Logging
import Testing
import RegionKit
import RegionKitCore
import RegionKitGateway
@testable import RegionKitService

/// A sighting timed well before its message arrived (a RegionKit batch's `dt`) says where a
/// beacon was, not where it is: the engine would take it as current.
@Suite("MQTT ingest: late sightings are dropped and counted")
struct MQTTLateSightingTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test("Of one batch, the sighting 0.1 s old reaches the engine, the one 20 s old does not; counted as late, once logged")
    func lateSightingsDropped() throws {
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        let manager = LocationManager(profile: profile, clock: VirtualClock(), sources: [.beacon: .authorized])
        let ingest = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .regionkit)], manager: manager, logger: Logger(label: "test"))
        var batch = ScannerBatch(scanner: "pi", time: 1_763_884_800)
        batch.sightings = [
            .init(identity: BeaconIdentity(uuid: Self.uuid, major: 6, minor: 1), rssi: -60, measuredPower: nil, offset: -0.1),
            .init(identity: BeaconIdentity(uuid: Self.uuid, major: 6, minor: 2), rssi: -60, measuredPower: nil, offset: -20),
            // At the limit: still taken.
            .init(identity: BeaconIdentity(uuid: Self.uuid, major: 6, minor: 3), rssi: -60, measuredPower: nil, offset: -MQTTSightingIngest.lateSightingLimit),
        ]
        ingest.handle(topic: "regionkit/scanners/pi", payload: batch.json())
        #expect(Set(manager.nearestScanners.keys.map(\.minor)) == [1, 3], "only the current sightings placed their beacon")
        let statistics = ingest.statistics
        #expect(statistics.sightings == 2 && statistics.late == 1 && statistics.messages == 1, "\(statistics)")
        #expect(statistics.decodeErrors == ["late": 1])
    }
}
