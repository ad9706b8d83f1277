import Foundation
import GRDB
import Testing
import RegionKit
import RegionKitConcurrency
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// What the service does when the store refuses a write: nothing already accepted is lost, and
/// nothing is written that would hide a lost write after the restart (audit findings).
@Suite("Store refusals: removals and events")
struct StoreRefusalTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let lobby = Region.beacon(try! BeaconRegion(identifier: "lobby", uuid: uuid))

    /// Puts `trigger` (SQL) into the store at `path` through a second connection.
    static func install(_ trigger: String, at path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: trigger) }
        try queue.close()
    }

    @Test("A removal the store refuses leaves the region monitored and stored; repeated once the store accepts, it is removed")
    func refusedRemovalCanBeRepeated() async throws {
        let path = temporaryStorePath()
        let service = try MonitoringService(store: RegionStore(path: path), clock: VirtualClock(), sources: [.beacon: .authorized])
        try await service.start(regions: [])
        #expect(try await service.putRegion(Self.lobby) == false)
        try Self.install("CREATE TRIGGER refuse_removal BEFORE DELETE ON monitored_region BEGIN SELECT RAISE(ABORT, 'refused by the test'); END", at: path)
        await #expect(throws: (any Error).self) { try await service.removeRegion("lobby", reason: "deleted") }
        #expect(service.manager.monitoredRegion("lobby") != nil, "the engine let the region go although the store kept it")
        #expect(try service.sqlite.storedRegions().map(\.region.identifier) == ["lobby"])
        try Self.install("DROP TRIGGER refuse_removal", at: path)
        #expect(try await service.removeRegion("lobby", reason: "deleted again"))
        #expect(service.manager.monitoredRegion("lobby") == nil)
        #expect(try service.sqlite.storedRegions().isEmpty)
    }

    @Test("After an event the store refused (an enter), no later write is made: the state row would keep the enter from being decided again after the restart")
    func noWriteAfterARefusedEvent() async throws {
        let path = temporaryStorePath()
        let clock = VirtualClock()
        let failures = LockedBox(0)
        let service = try MonitoringService(store: RegionStore(path: path), profile: .responsive, automation: Automation(), clock: clock,
                                            sources: [.beacon: .authorized], onStoreFailure: { _ in failures.withLock { $0 += 1 } })
        try await service.start(regions: [Self.lobby])
        try Self.install("CREATE TRIGGER refuse_enter BEFORE INSERT ON event_log WHEN NEW.type = 'didEnterRegion' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END", at: path)
        clock.advance(by: 4)
        for t in stride(from: 4.0, to: 6, by: 0.1) {
            clock.advance(to: Timestamp(seconds: t))
            service.manager.ingest(BeaconObservation(identity: BeaconIdentity(uuid: Self.uuid, major: 1, minor: 1), rssi: -60, timestamp: Timestamp(seconds: t)))
        }
        #expect(service.manager.monitoredRegion("lobby")?.state == .inside)
        #expect(failures.withLock { $0 } >= 1, "the refused enter was reported")
        #expect(try service.sqlite.states()["lobby"]?.state != .inside, "the state row was written after the refused enter")
        #expect(try service.sqlite.events(region: "lobby", type: "didDetermineState").allSatisfy { $0.state != "inside" })
    }
}
