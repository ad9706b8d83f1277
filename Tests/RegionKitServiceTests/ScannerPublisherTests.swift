import Foundation
import Logging
import Testing
import RegionKitCore
@testable import RegionKitService

/// What `regionkit scan --publish` queues for the hub: nothing the hub's batch decoder refuses.
@Suite("Scanner publisher: what it queues")
struct ScannerPublisherTests {
    static let identity = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)

    @Test("A measured power no radio could report is queued as not set, and a sighting with an invalid RSSI is not queued: one such beacon made the hub refuse the whole batch")
    func implausibleValues() throws {
        let publisher = try ScannerPublisher(url: "mqtt://127.0.0.1:1", scanner: "hall", logger: Logger(label: "test"), environment: [:])
        publisher.add(Self.identity, rssi: -60, measuredPower: 30, at: 1)     // a battery voltage in the power byte
        publisher.add(Self.identity, rssi: -61, measuredPower: -59, at: 2)
        publisher.add(Self.identity, rssi: 50, measuredPower: -59, at: 3)     // no radio reports +50 dBm
        publisher.add(Self.identity, rssi: -62, measuredPower: nil, at: 4)
        let pending = publisher.state.withLock { $0.pending }
        #expect(pending.map(\.rssi) == [-60, -61, -62])
        #expect(pending.map(\.power) == [nil, -59, nil])
    }
}
