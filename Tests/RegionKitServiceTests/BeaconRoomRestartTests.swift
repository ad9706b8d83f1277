import Foundation
import GRDB
import Testing
import RegionKit
import RegionKitStore
@testable import RegionKitService

/// A beacon's room survives a restart of the daemon: the store keeps the room of every placed
/// beacon (written with its `didChangeNearestScanner`), and the next start places the beacons
/// there. Before, a beacon that left while the daemon was down kept its last room (its retained
/// room topic, its Home Assistant device tracker) until heard again, perhaps never.
@Suite("Beacon rooms across a restart")
struct BeaconRoomRestartTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let (stays, leaves) = (BeaconIdentity(uuid: uuid, major: 1, minor: 1), BeaconIdentity(uuid: uuid, major: 1, minor: 2))

    static func service(_ path: String, clock: VirtualClock) throws -> MonitoringService {
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        return try MonitoringService(store: RegionStore(path: path), profile: profile, clock: clock, sources: [.beacon: .authorized])
    }

    static func roomEvents(_ store: RegionStore) throws -> [String] {
        try store.events(since: nil, region: nil, type: "didChangeNearestScanner", afterID: nil, limit: nil).map { event in
            let object = try JSONSerialization.jsonObject(with: Data(event.json.utf8)) as? [String: Any]
            return "\(object?["beacon"] as? String ?? "?") \(object?["previous"] as? String ?? "-")→\(object?["scanner"] as? String ?? "-")"
        }
    }

    @Test("Placed before the stop: both in their rooms after the start, without events; the one heard again stays (no new event), the other leaves its room once, and the store forgets it")
    func roomsSurviveARestart() async throws {
        let path = temporaryStorePath()
        let clock = VirtualClock()
        let first = try Self.service(path, clock: clock)
        try await first.start(regions: [])
        for _ in 0..<20 {
            first.manager.ingest(BeaconObservation(identity: Self.stays, rssi: -60, timestamp: clock.now, scannerID: "kitchen"))
            first.manager.ingest(BeaconObservation(identity: Self.leaves, rssi: -60, timestamp: clock.now, scannerID: "hall"))
            clock.advance(by: 0.5)
        }
        try await first.stop()
        let store = try RegionStore(path: path)
        #expect(try store.beaconRooms() == [Self.stays.description: "kitchen", Self.leaves.description: "hall"])
        let before = try Self.roomEvents(store)
        #expect(before.count == 2, "\(before)")

        // Down for a minute; then only `stays` is heard, by the kitchen.
        clock.advance(by: 60)
        let second = try Self.service(path, clock: clock)
        try await second.start(regions: [])
        #expect(second.manager.nearestScanners == [Self.stays: "kitchen", Self.leaves: "hall"])
        for _ in 0..<240 {
            second.manager.ingest(BeaconObservation(identity: Self.stays, rssi: -60, timestamp: clock.now, scannerID: "kitchen"))
            clock.advance(by: 0.5)
        }
        #expect(second.manager.nearestScanners == [Self.stays: "kitchen"])
        try await second.stop()
        #expect(try Self.roomEvents(store) == before + ["\(Self.leaves.description) hall→-"])
        #expect(try store.beaconRooms() == [Self.stays.description: "kitchen"])
    }

    /// An event and the room (or state) it changes were two writes, which the group commit could
    /// put in two transactions: a crash between them left the store and the log disagreeing.
    @Test("A room is committed with its event, whatever the group commit limit (here 1: a transaction per delivered write before): an event the database refuses takes its room with it")
    func roomCommittedWithItsEvent() async throws {
        let path = temporaryStorePath()
        let clock = VirtualClock()
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        let service = MonitoringService(store: try RegionStore(path: path), profile: profile, clock: clock, sources: [.beacon: .authorized],
                                        groupCommitLimit: 1)
        try await service.start(regions: [])
        // A second connection makes the database refuse the room event (the store's own schema has no trigger).
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "CREATE TRIGGER refuse_room_events BEFORE INSERT ON event_log WHEN NEW.type = 'didChangeNearestScanner' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
        }
        try queue.close()
        service.manager.ingest(BeaconObservation(identity: Self.stays, rssi: -60, timestamp: clock.now, scannerID: "kitchen"))
        #expect(service.manager.nearestScanner(for: Self.stays) == "kitchen")
        try? await service.stop()
        #expect(try RegionStore(path: path).beaconRooms().isEmpty, "the room was committed alone, before its refused event")
    }

    /// The daemon restores the rooms before its sources start: a sighting that arrived first
    /// placed the beacon afresh (restoring skips a beacon the engine tracks), perhaps in the
    /// neighbouring room whose node heard it first, with a false room event.
    @Test("Rooms restored before the sources start (restoreRooms, once): a first sighting by the next room's node moves nothing; restoredRooms names them for the hub")
    func roomsBeforeTheSources() async throws {
        let path = temporaryStorePath()
        try RegionStore(path: path).saveRoom(Self.stays.description, scanner: "kitchen", at: 1)
        let clock = VirtualClock()
        let service = try Self.service(path, clock: clock)
        await service.restoreRooms()
        #expect(service.restoredRooms == [Self.stays: "kitchen"])
        service.manager.ingest(BeaconObservation(identity: Self.stays, rssi: -80, timestamp: clock.now, scannerID: "hall"))
        clock.advance(by: 0.5)
        service.manager.ingest(BeaconObservation(identity: Self.stays, rssi: -60, timestamp: clock.now, scannerID: "kitchen"))
        try await service.start(regions: [])
        #expect(service.manager.nearestScanners == [Self.stays: "kitchen"])
        try await service.stop()
        #expect(try Self.roomEvents(RegionStore(path: path)).isEmpty, "no room event")
    }

    @Test("A store row that names no beacon or no room is removed with a warning (nothing would remove it later); the others are restored and the start goes on")
    func unreadableRow() async throws {
        let path = temporaryStorePath()
        let store = try RegionStore(path: path)
        try store.saveRoom("not a beacon", scanner: "kitchen", at: 1)
        try store.saveRoom(Self.leaves.description, scanner: "", at: 1)
        try store.saveRoom(Self.stays.description, scanner: "kitchen", at: 1)
        let service = try Self.service(path, clock: VirtualClock())
        try await service.start(regions: [])
        #expect(service.manager.nearestScanners == [Self.stays: "kitchen"])
        try await service.stop()
        #expect(try store.beaconRooms() == [Self.stays.description: "kitchen"])
    }

    @Test("Without a nearest-scanner policy no room is written or restored")
    func offWithoutPolicy() async throws {
        let path = temporaryStorePath()
        let clock = VirtualClock()
        let service = try MonitoringService(store: RegionStore(path: path), clock: clock, sources: [.beacon: .authorized])
        try RegionStore(path: path).saveRoom(Self.stays.description, scanner: "kitchen", at: 1)
        try await service.start(regions: [])
        #expect(service.manager.nearestScanners.isEmpty)
        service.manager.ingest(BeaconObservation(identity: Self.leaves, rssi: -60, timestamp: clock.now, scannerID: "hall"))
        try await service.stop()
        #expect(try RegionStore(path: path).beaconRooms() == [Self.stays.description: "kitchen"], "nothing written")
    }
}
