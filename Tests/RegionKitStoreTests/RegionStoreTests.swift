import Foundation
import Testing
import RegionKit
@testable import RegionKitStore

func temporaryStorePath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("rk-store-\(UUID().uuidString)/regionkit.sqlite").path
}

@Suite("RegionStore (SQLite via GRDB)")
struct RegionStoreTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test func createsTheSchemaInWALModeAndReopens() throws {
        let path = temporaryStorePath()
        let store = try RegionStore(path: path)
        #expect(try store.journalMode() == "wal")
        #expect(try store.integrityCheck() == "ok")
        var lobby = try BeaconRegion(identifier: "lobby", uuid: Self.uuid, major: 3)
        lobby.notifyEntryStateOnDisplay = true
        lobby.notifyOnExit = false
        try store.saveRegion(.beacon(lobby), at: 10)
        try store.saveRegion(.circular(try CircularRegion(identifier: "park", latitude: 1, longitude: 2, radius: 30)), at: 11)
        try store.saveState("lobby", state: .inside, since: 12, evidence: EventEvidence(rssi: -60, reason: "first sighting"), at: 12)
        let reopened = try RegionStore(path: path)
        #expect(try reopened.regions().map(\.identifier) == ["lobby", "park"])
        #expect(try reopened.regions().first == .beacon(lobby), "flags survive")
        let state = try #require(try reopened.states()["lobby"])
        #expect(state.state == .inside && state.since == 12 && state.evidence?.rssi == -60)
    }

    @Test func replacingARegionKeepsItsPlaceAndForgetsItsState() throws {
        let store = try RegionStore(path: temporaryStorePath())
        try store.saveRegion(.beacon(try BeaconRegion(identifier: "a", uuid: Self.uuid)), at: 1)
        try store.saveRegion(.beacon(try BeaconRegion(identifier: "b", uuid: Self.uuid)), at: 1)
        try store.saveState("a", state: .inside, since: 1, evidence: nil, at: 1)
        try store.saveRegion(.beacon(try BeaconRegion(identifier: "a", uuid: Self.uuid, major: 9)), at: 2)
        #expect(try store.regions().map(\.identifier) == ["a", "b"])
        #expect(try store.regions()[0].beaconRegion?.major == 9)
        #expect(try store.states()["a"] == nil)
        try store.removeRegion("b")
        #expect(try store.regions().map(\.identifier) == ["a"])
    }

    @Test func appendsEventsWithTheirDeliveriesAndFilters() throws {
        let store = try RegionStore(path: temporaryStorePath())
        let first = try store.append(time: 100, type: "didEnterRegion", region: "lobby", state: "inside", reason: "sighting", json: "{}", hooks: ["command:a", "webhook:b"])
        let second = try store.append(time: 200, type: "didExitRegion", region: "park", state: "outside", reason: "silence", json: "{}")
        #expect(second == first + 1)
        #expect(try store.events().map(\.id) == [first, second])
        #expect(try store.events(since: 150).map(\.id) == [second])
        #expect(try store.events(region: "lobby").map(\.type) == ["didEnterRegion"])
        #expect(try store.events(afterID: first).map(\.id) == [second])
        let due = try store.dueDeliveries(now: 100, limit: 10)
        #expect(due.map(\.hook) == ["command:a", "webhook:b"])
        try store.markDelivered(due[0].id, at: 101)
        try store.markAttemptFailed(due[1].id, error: "refused", retryAt: 130)
        #expect(try store.dueDeliveries(now: 120, limit: 10).isEmpty)
        #expect(try store.dueDeliveries(now: 130, limit: 10).map(\.attempts) == [1])
        try store.markAttemptFailed(due[1].id, error: "refused", retryAt: nil)
        #expect(try store.deliveries(status: .failed).count == 1)
        #expect(try store.deliveries(status: .delivered).first?.deliveredAt == 101)
        #expect(try store.nextDeliveryTime() == nil)
    }

    @Test func theQueueIsBounded() throws {
        let store = try RegionStore(path: temporaryStorePath())
        for index in 0..<25 { try store.append(time: Double(index), type: "didEnterRegion", region: "r", state: nil, reason: nil, json: "{}", hooks: ["webhook:x"]) }
        #expect(try store.trimPendingDeliveries(toAtMost: 10) == 15)
        let pending = try store.deliveries(status: .pending)
        #expect(pending.count == 10)
        #expect(pending.first?.eventID == 16, "the newest are kept")
        #expect(try store.deliveries(status: .dropped).count == 15)
    }

    @Test func defaultPathFollowsTheEnvironment() {
        #expect(RegionStore.defaultPath(environment: ["REGIONKIT_STORE": "/tmp/x.sqlite"]) == "/tmp/x.sqlite")
        #expect(RegionStore.defaultPath(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]) == "/data/regionkit/regionkit.sqlite")
        #expect(RegionStore.defaultPath(environment: ["HOME": "/home/u"]) == "/home/u/.local/share/regionkit/regionkit.sqlite")
    }

    @Test func aFileThatIsNotADatabaseGivesAClearError() throws {
        let path = temporaryStorePath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data("this is not sqlite, just text that is long enough to be read as a header".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try RegionStore(path: path)
        } throws: { error in
            // A store failure has its own code (not malformedInput) and keeps SQLite's error as its cause.
            guard let error = error as? RegionKitError else { return false }
            return error.code == .storeFailed && error.message.contains("cannot open the database") && error.cause != nil
        }
    }
}
