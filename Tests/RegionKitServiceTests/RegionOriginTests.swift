import Foundation
import Testing
import RegionKit
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// Configured regions are the initial set; regions put on request (the HTTP API) survive restarts.
@Suite("Region origins: configuration vs API")
struct RegionOriginTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static func beacon(_ id: String, major: UInt16) -> Region { .beacon(try! BeaconRegion(identifier: id, uuid: uuid, major: major)) }

    static func service(_ path: String) throws -> MonitoringService {
        try MonitoringService(store: RegionStore(path: path), clock: VirtualClock(), sources: [.beacon: .authorized])
    }

    @Test("A region put through the API is stored with origin api before putRegion returns, and restored after a restart the configuration does not name it in")
    func apiRegionSurvives() async throws {
        let path = temporaryStorePath()
        let first = try Self.service(path)
        try await first.start(regions: [Self.beacon("lobby", major: 1)])
        #expect(try await first.putRegion(Self.beacon("shop", major: 2)) == false)
        #expect(try first.sqlite.storedRegions().map { "\($0.region.identifier):\($0.origin.rawValue)" } == ["lobby:config", "shop:api"])
        try await first.stop()
        let second = try Self.service(path)
        try await second.start(regions: [Self.beacon("lobby", major: 1)])
        #expect(second.manager.monitoredRegions.map(\.identifier) == ["lobby", "shop"])
        #expect(try second.sqlite.storedRegions().first { $0.region.identifier == "shop" }?.origin == .api)
    }

    @Test("A DELETE made while the daemon starts (before the restore) waits for it and removes the restored region; let go without a restore, it finds none",
          .timeLimit(.inProcess))
    func writesWaitForTheRestore() async throws {
        let path = temporaryStorePath()
        let first = try Self.service(path)
        try await first.start(regions: [Self.beacon("lobby", major: 1)])
        try await first.putRegion(Self.beacon("shop", major: 2))
        try await first.stop()

        // As the daemon does: the hold before the API serves, the restore a few seconds later.
        let second = try Self.service(path)
        try await second.logProcessStarted()
        await second.holdRegionWritesUntilRestore()
        let delete = Task { try await second.removeRegion("shop", reason: "deleted through the HTTP API") }
        for _ in 0..<10_000 where await second.regionWritesWaiting < 1 { await Task.yield() }   // queued (or, without the hold, done)
        try await second.restoreRegions([Self.beacon("lobby", major: 1)])
        // Without the hold the DELETE ran first, found nothing monitored (404), and the restore
        // brought "shop" back.
        #expect(try await delete.value == true)
        #expect(second.manager.monitoredRegions.map(\.identifier) == ["lobby"])
        #expect(try second.sqlite.storedRegions().map(\.region.identifier) == ["lobby"])
        try await second.stop()

        // A daemon stopping before its restore lets the waiting writes go, refused as "stopping"
        // (the API's 503): the DELETE used to answer 404 for a stored region it could not see.
        let third = try Self.service(path)
        try await third.logProcessStarted()
        await third.holdRegionWritesUntilRestore()
        await third.holdRegionWritesUntilRestore()   // a second hold changes nothing (it used to wait for itself)
        let late = Task { try await third.removeRegion("lobby", reason: "deleted through the HTTP API") }
        for _ in 0..<10_000 where await third.regionWritesWaiting < 1 { await Task.yield() }
        await third.releaseRegionWriteHold()
        func code(_ body: () async throws -> Bool) async -> RegionKitError.Code? {
            do { _ = try await body(); return nil } catch { return (error as? RegionKitError)?.code }
        }
        #expect(await code { try await late.value } == .stopping)
        #expect(await code { try await third.putRegion(Self.beacon("hall", major: 3)) } == .stopping, "and every later write")
        try await third.stop()
        #expect(try third.sqlite.storedRegions().map(\.region.identifier) == ["lobby"], "the store unchanged")
    }

    @Test("A DELETE during a source outage removes the stored region waiting for its source: not 'not monitored', and it does not come back with the retry or the source's return")
    func deleteDuringOutage() async throws {
        let sqlite = try RegionStore(path: temporaryStorePath())
        let clock = VirtualClock()
        let service = MonitoringService(store: sqlite, clock: clock, sources: [.beacon: .authorized])
        try await service.start(regions: [Self.beacon("lobby", major: 1)])
        try await service.putRegion(Self.beacon("shop", major: 2))
        let manager = service.manager
        manager.setSourceStatus(.restricted(reason: "adapter unplugged"), for: .beacon)
        #expect(manager.monitoredRegion("shop") == nil, "the outage takes the region out of the engine's tables")
        // Before: false (the API's 404), the row kept, and the region monitored again below.
        #expect(try await service.removeRegion("shop", reason: "deleted through the HTTP API") == true)
        #expect(try await service.removeRegion("shop", reason: "deleted through the HTTP API") == false, "gone: a second DELETE finds nothing")
        #expect(try await service.removeRegion("nowhere", reason: "deleted through the HTTP API") == false)
        #expect(try sqlite.storedRegions().map(\.region.identifier) == ["lobby"])
        #expect(try sqlite.events(region: "shop", type: "monitoringStopped").first?.reason == "deleted through the HTTP API")
        clock.advance(by: 5)   // past the retries' delay, while the source is still away
        manager.setSourceStatus(.authorized, for: .beacon)
        clock.advance(by: 5)
        #expect(manager.monitoredRegions.map(\.identifier) == ["lobby"], "the deleted region came back")
        #expect(try sqlite.storedRegions().map(\.region.identifier) == ["lobby"])
        try await service.stop()
    }

    @Test("A DELETE of a configured region refused at the start for want of its source (never stored) removes it: it is not registered when the source is back")
    func deleteNeverStored() async throws {
        let sqlite = try RegionStore(path: temporaryStorePath())
        let clock = VirtualClock()
        let service = MonitoringService(store: sqlite, clock: clock, sources: [.beacon: .restricted(reason: "adapter unplugged")])
        try await service.start(regions: [Self.beacon("lobby", major: 1), Self.beacon("hall", major: 3)])
        let manager = service.manager
        #expect(try sqlite.storedRegion("hall") == nil && manager.waitingRegion("hall") != nil, "the case: waiting, never stored")
        #expect(try await service.removeRegion("hall", reason: "deleted through the HTTP API") == true)
        #expect(manager.waitingRegion("hall") == nil)
        manager.setSourceStatus(.authorized, for: .beacon)
        clock.advance(by: 10)
        #expect(manager.monitoredRegions.map(\.identifier) == ["lobby"], "the deleted region came back")
        try await service.stop()
    }

    @Test("A PUT while the source has not reported yet (a broker still connecting), with no retry helper configured, is accepted and stored: the region waits and starts when the source reports (it was refused with 'notDetermined')")
    func putBeforeTheSourceReported() async throws {
        let sqlite = try RegionStore(path: temporaryStorePath())
        let clock = VirtualClock()
        let service = MonitoringService(store: sqlite, automation: Automation(requestStateOnStart: true), clock: clock, sources: [.beacon: .notDetermined])
        try await service.start(regions: [Self.beacon("lobby", major: 1)])
        #expect(try await service.putRegion(Self.beacon("shop", major: 2)) == false, "created (the API's 201)")
        let manager = service.manager
        #expect(manager.waitingRegion("lobby") != nil && manager.waitingRegion("shop") != nil)
        #expect(try sqlite.storedRegion("shop")?.origin == .api, "stored before the PUT answers")
        manager.setSourceStatus(.authorized, for: .beacon)
        #expect(manager.monitoredRegions.map(\.identifier) == ["lobby", "shop"])
        #expect(try sqlite.events(region: "shop", type: "monitoringDidFail").isEmpty)
        try await service.stop()
    }

    @Test("A PUT accepted while the region it replaces waits for a retry (the source back, the retry not yet due) stays: the retry does not bring the old definition back, in the engine or in the store; it answers 'replaced'")
    func putWhileTheOldWaitsForARetry() async throws {
        let sqlite = try RegionStore(path: temporaryStorePath())
        let clock = VirtualClock()
        let service = MonitoringService(store: sqlite, clock: clock, sources: [.beacon: .authorized])
        try await service.start(regions: [Self.beacon("lobby", major: 1)])
        let manager = service.manager
        manager.setSourceStatus(.restricted(reason: "adapter unplugged"), for: .beacon)   // the lobby's retry is due in 1 s
        clock.advance(by: 0.3)
        manager.setSourceStatus(.authorized, for: .beacon)   // back: parked regions resume, the lobby's retry is still due
        #expect(manager.waitingRegion("lobby") != nil, "the case: a retry pending while the source works")
        #expect(try await service.putRegion(Self.beacon("lobby", major: 9)) == true, "it replaced the stored lobby (the API's 200, not 201)")
        clock.advance(by: 5)
        #expect(manager.monitoredRegion("lobby")?.region.beaconRegion?.major == 9, "the retry registered major 1 over it")
        #expect(try sqlite.storedRegions().map { $0.region.beaconRegion?.major } == [9])
        try await service.stop()
    }

    @Test("A configured region replaced through the API keeps the API's definition; a configured one dropped from the configuration is stopped")
    func replacedConfiguredRegion() async throws {
        let path = temporaryStorePath()
        let first = try Self.service(path)
        try await first.start(regions: [Self.beacon("lobby", major: 1), Self.beacon("hall", major: 3)])
        #expect(try await first.putRegion(Self.beacon("lobby", major: 9)) == true)
        try await first.stop()
        let second = try Self.service(path)
        try await second.start(regions: [Self.beacon("lobby", major: 1)])
        #expect(second.manager.monitoredRegions.map(\.identifier) == ["lobby"])
        #expect(second.manager.monitoredRegions.first?.beaconRegion?.major == 9)
        #expect(try second.sqlite.events(region: "hall", type: "monitoringStopped").first?.reason == "no longer in the configuration")
    }

    @Test("A PUT during an outage of its kind's source is saved and waits for it (it was refused, and lost): listed as waiting, monitored when the source is back, still there after a restart during the outage")
    func putDuringOutage() async throws {
        let path = temporaryStorePath()
        let sqlite = try RegionStore(path: path)
        let clock = VirtualClock()
        let service = MonitoringService(store: sqlite, clock: clock, sources: [.beacon: .authorized])
        try await service.start(regions: [Self.beacon("lobby", major: 1)])
        let manager = service.manager
        manager.setSourceStatus(.restricted(reason: "broker unreachable"), for: .beacon)
        #expect(try await service.putRegion(Self.beacon("shop", major: 2)) == false, "a new region")
        #expect(manager.waitingRegion("shop") == Self.beacon("shop", major: 2) && manager.monitoredRegion("shop") == nil)
        #expect(try sqlite.storedRegions().map { "\($0.region.identifier):\($0.origin.rawValue)" } == ["lobby:config", "shop:api"])
        #expect(try sqlite.events(region: "shop", type: "monitoringDidFail").first?.reason?.contains("broker unreachable") == true,
                "the engine said why it waits")
        clock.advance(by: 600)   // past every retry: parked until the source is back
        #expect(manager.waitingRegion("shop") != nil)
        manager.setSourceStatus(.authorized, for: .beacon)
        #expect(Set(manager.monitoredRegions.map(\.identifier)) == ["lobby", "shop"])
        try await service.stop()

        // A restart while the source is down again: the region is restored, waiting.
        let second = MonitoringService(store: try RegionStore(path: path), clock: VirtualClock(), sources: [.beacon: .restricted(reason: "broker unreachable")])
        try await second.start(regions: [Self.beacon("lobby", major: 1)])
        #expect(second.manager.waitingRegion("shop") == Self.beacon("shop", major: 2))
        try await second.stop()
    }

    @Test("A PUT whose source went away during the write is saved and waits for the source: its definition, not the one it replaced, is monitored when the source is back")
    func sourceLostMidWrite() async throws {
        let sqlite = try RegionStore(path: temporaryStorePath())
        let store = InterposingStore(sqlite)
        let clock = VirtualClock()
        let service = MonitoringService(store: store, clock: clock, sources: [.beacon: .authorized])
        try await service.start(regions: [Self.beacon("lobby", major: 1)])
        try sqlite.saveState("lobby", state: .inside, since: 0, evidence: nil, at: 0)
        let manager = service.manager
        // Past the service's check of the engine, before its write: the only scanner goes away.
        store.beforeStoredRegions.withLock { $0 = { manager.setSourceStatus(.restricted(reason: "adapter unplugged"), for: .beacon) } }
        #expect(try await service.putRegion(Self.beacon("lobby", major: 9)) == true, "it replaced the lobby (the API's 200)")
        #expect(manager.waitingRegion("lobby") == Self.beacon("lobby", major: 9))
        #expect(try sqlite.storedRegions().map { "\($0.region.identifier):\($0.region.beaconRegion?.major ?? 0):\($0.origin.rawValue)" } == ["lobby:9:api"])
        #expect(manager.engineSnapshot.carriedState(of: "lobby") == nil, "a new definition carries no state over")
        manager.setSourceStatus(.authorized, for: .beacon)
        clock.advance(by: 5)
        #expect(manager.monitoredRegion("lobby")?.region.beaconRegion?.major == 9, "the retry brought the replaced major 1 back")
        try await service.stop()
    }

    @Test("A PUT changing a circle into a beacon region while the scanner is away replaces it: the circle is no longer monitored, the beacon region waits and is monitored when the scanner is back")
    func kindChangeDuringOutage() async throws {
        let sqlite = try RegionStore(path: temporaryStorePath())
        let clock = VirtualClock()
        let service = MonitoringService(store: sqlite, clock: clock, sources: [.beacon: .authorized, .circular: .authorized])
        let circle = Region.circular(try CircularRegion(identifier: "lobby", latitude: 35.68, longitude: 139.76, radius: 50))
        try await service.start(regions: [circle])
        let manager = service.manager
        manager.setSourceStatus(.restricted(reason: "adapter unplugged"), for: .beacon)
        #expect(try await service.putRegion(Self.beacon("lobby", major: 9)) == true)
        #expect(manager.monitoredRegion("lobby") == nil && manager.waitingRegion("lobby") == Self.beacon("lobby", major: 9))
        #expect(try sqlite.storedRegions().map(\.region) == [Self.beacon("lobby", major: 9)])
        manager.setSourceStatus(.authorized, for: .beacon)
        clock.advance(by: 5)
        #expect(manager.monitoredRegion("lobby")?.region == Self.beacon("lobby", major: 9))
        try await service.stop()
    }

    @Test("Without a retry to wait with (automation without retry) a PUT during an outage is refused as before, naming the source, and the store is left as it was")
    func putDuringOutageWithoutRetry() async throws {
        let sqlite = try RegionStore(path: temporaryStorePath())
        let clock = VirtualClock()
        let service = MonitoringService(store: sqlite, automation: Automation(requestStateOnStart: true), clock: clock,
                                        sources: [.beacon: .authorized])
        try await service.start(regions: [Self.beacon("lobby", major: 1)])
        let manager = service.manager
        manager.setSourceStatus(.restricted(reason: "adapter unplugged"), for: .beacon)
        let error = await #expect(throws: RegionKitError.self) { try await service.putRegion(Self.beacon("shop", major: 2)) }
        #expect(error?.code == .regionMonitoringFailure && error?.message.contains("adapter unplugged") == true, "\(String(describing: error))")
        #expect(try sqlite.storedRegions().map(\.region.identifier) == ["lobby"])
        #expect(manager.waitingRegion("shop") == nil)
        try await service.stop()
    }

    @Test("During an outage the region limit counts the regions waiting for their source: a PUT beyond it is refused (it was accepted, and one region refused for good when the source came back)")
    func limitCountsTheWaiting() async throws {
        let sqlite = try RegionStore(path: temporaryStorePath())
        var profile = MonitoringProfile.responsive
        profile.regionLimit = 2
        let service = MonitoringService(store: sqlite, profile: profile, clock: VirtualClock(), sources: [.beacon: .authorized])
        try await service.start(regions: [Self.beacon("lobby", major: 1), Self.beacon("hall", major: 3)])
        service.manager.setSourceStatus(.restricted(reason: "broker unreachable"), for: .beacon)
        let error = await #expect(throws: RegionKitError.self) { try await service.putRegion(Self.beacon("shop", major: 2)) }
        #expect(error?.message.contains("the limit of 2 monitored regions is reached") == true, "\(String(describing: error))")
        #expect((error?.cause as? RegionKitError)?.code == .regionMonitoringFailure, "the API names no field of the body")
        #expect(try await service.putRegion(Self.beacon("hall", major: 4)) == true, "a replacement is no new region")
        #expect(try sqlite.storedRegions().map(\.region.identifier).sorted() == ["hall", "lobby"])
        try await service.stop()
    }

    @Test("A source whose use is denied (permissions), or an outage without the retry helper, refuses the PUT before anything is written: no region to wait, no monitoringDidFail logged")
    func refusedOutages() async throws {
        let sqlite = try RegionStore(path: temporaryStorePath())
        let denied = MonitoringService(store: sqlite, clock: VirtualClock(), sources: [.beacon: .denied(reason: "no CAP_NET_RAW")])
        try await denied.start(regions: [])
        let error = await #expect(throws: RegionKitError.self) { try await denied.putRegion(Self.beacon("shop", major: 2)) }
        #expect(error?.message.contains("no CAP_NET_RAW") == true, "\(String(describing: error))")
        #expect(try sqlite.storedRegions().isEmpty && denied.manager.waitingRegion("shop") == nil)
        try await denied.stop()

        let other = try RegionStore(path: temporaryStorePath())
        let noRetry = MonitoringService(store: other, automation: Automation(requestStateOnStart: true), clock: VirtualClock(),
                                        sources: [.beacon: .restricted(reason: "broker unreachable")])
        try await noRetry.start(regions: [])
        await #expect(throws: RegionKitError.self) { try await noRetry.putRegion(Self.beacon("shop", major: 2)) }
        #expect(try other.storedRegions().isEmpty)
        #expect(try other.events(region: "shop", type: "monitoringDidFail").isEmpty, "refused before it reached the engine")
        try await noRetry.stop()
    }

    @Test("Without the retry helper, a PUT whose source went away during the write is undone: the store as it was, with the state of the region it replaced")
    func sourceLostMidWriteWithoutRetry() async throws {
        let sqlite = try RegionStore(path: temporaryStorePath())
        let store = InterposingStore(sqlite)
        let service = MonitoringService(store: store, automation: Automation(requestStateOnStart: true), clock: VirtualClock(),
                                        sources: [.beacon: .authorized, .circular: .authorized])
        let circle = Region.circular(try CircularRegion(identifier: "lobby", latitude: 35.68, longitude: 139.76, radius: 50))
        try await service.start(regions: [circle])
        try sqlite.saveState("lobby", state: .inside, since: 0, evidence: nil, at: 0)
        let manager = service.manager
        // Past the service's check of the engine, before its write: the only scanner goes away.
        store.beforeStoredRegions.withLock { $0 = { manager.setSourceStatus(.restricted(reason: "adapter unplugged"), for: .beacon) } }
        let error = await #expect(throws: RegionKitError.self) { try await service.putRegion(Self.beacon("lobby", major: 9)) }
        #expect(error?.message.contains("adapter unplugged") == true, "\(String(describing: error))")
        #expect(try sqlite.storedRegions().map(\.region) == [circle])
        #expect(try sqlite.states()["lobby"]?.state == .inside, "saving the refused region had forgotten the stored state")
        #expect(manager.monitoredRegion("lobby")?.region == circle, "the circle (its source works) kept being monitored")
        try await service.stop()
    }

    @Test("A region of a kind no source feeds is refused before anything is written (no outage to wait out)")
    func putWithoutSourceOfItsKind() async throws {
        let sqlite = try RegionStore(path: temporaryStorePath())
        let service = MonitoringService(store: sqlite, clock: VirtualClock(), sources: [.beacon: .authorized])
        try await service.start(regions: [Self.beacon("lobby", major: 1)])
        let park = Region.circular(try CircularRegion(identifier: "park", latitude: 35.68, longitude: 139.76, radius: 50))
        let error = await #expect(throws: RegionKitError.self) { try await service.putRegion(park) }
        #expect(error?.message.contains("no location source is configured") == true, "\(String(describing: error))")
        #expect(try sqlite.storedRegions().map(\.region.identifier) == ["lobby"])
        #expect(service.manager.waitingRegion("park") == nil, "nothing filed for a retry")
        try await service.stop()
    }

    @Test("An existing store (before origins) migrates: its regions count as configured")
    func migration() throws {
        let path = temporaryStorePath()
        let store = try RegionStore(path: path)
        try store.saveRegion(Self.beacon("old", major: 1), at: 1)
        #expect(try store.storedRegions().first?.origin == .configuration)
        // Saving again without an origin keeps the stored one.
        try store.saveRegion(Self.beacon("api", major: 1), at: 2, origin: .api)
        try store.saveRegion(Self.beacon("api", major: 2), at: 3)
        #expect(try store.storedRegions().first { $0.region.identifier == "api" }?.origin == .api)
    }
}
