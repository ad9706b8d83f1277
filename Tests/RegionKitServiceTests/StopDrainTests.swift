import Foundation
import RegionKitTestSupport
import Testing
import RegionKit
import RegionKitStore
import RegionKitConcurrency
@testable import RegionKitService

/// A stop while the engine's events are still being delivered (a backlog behind a flood of new
/// beacons, delivered on a source's thread): they are logged before "process stopped", not
/// dropped behind it (audit, session 47: ≈ 500 k events were lost at a SIGTERM).
@Suite("Events queued at a stop are logged before it")
struct StopDrainTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    /// A gate the delivering thread waits at (inside `onLogged`, after its first event is written),
    /// so that the test holds a backlog in the manager's queue for as long as it likes.
    final class Gate: Sendable {
        private let held = LockedBox(false)
        private let release = DispatchSemaphore(value: 0)
        private let reached = DispatchSemaphore(value: 0)
        /// Holds the first caller until ``open()``.
        func pass() {
            let first = held.withLock { held in defer { held = true }; return !held }
            guard first else { return }
            reached.signal()
            release.wait()
        }
        func waitUntilHeld() { reached.wait() }
        func open() { release.signal() }
    }

    /// A service whose delivering thread stops at the gate after its first logged event, with
    /// `count` regions started behind it from the test's thread (their events queue up).
    static func heldService(count: Int) async throws -> (MonitoringService, Gate, Thread) {
        let gate = Gate()
        let service = try MonitoringService(store: RegionStore(path: temporaryStorePath()), automation: Automation(), clock: VirtualClock(),
                                            sources: [.beacon: .authorized], onLogged: { event in
                                                if event.type == "didStartMonitoring" { gate.pass() }
                                            })
        try await service.start(regions: [])
        // The first region's didStartMonitoring is delivered on this thread, which then waits at the gate.
        let deliverer = Thread {
            service.startMonitoring(.beacon(try! BeaconRegion(identifier: "first", uuid: uuid)))
        }
        deliverer.start()
        await Task.detached { gate.waitUntilHeld() }.value
        // Delivered by the held thread later: queued now.
        for index in 0..<count {
            service.startMonitoring(.beacon(try BeaconRegion(identifier: "queued-\(index)", uuid: uuid, major: UInt16(index))))
        }
        return (service, gate, deliverer)
    }

    @Test("A stop waits for the queued events: every one is logged before \"process stopped\"")
    func queuedEventsLoggedFirst() async throws {
        let (service, gate, _) = try await Self.heldService(count: 50)
        #expect(service.manager.undeliveredCount == 50)
        // The gate opens a moment after the stop began: without the wait, "process stopped" was
        // logged at once and the 50 queued didStartMonitoring were refused behind it.
        let opener = Thread {
            Thread.sleep(forTimeInterval: 0.3)
            gate.open()
        }
        opener.start()
        try await service.stop(reason: "SIGTERM")
        let types = try service.sqlite.events().map(\.type)
        #expect(types.last == "processStopped")
        #expect(types.filter { $0 == "didStartMonitoring" }.count == 51)
        #expect(try service.sqlite.events(type: "processStopped").first?.reason == "SIGTERM")
        #expect(service.manager.undeliveredCount == 0)
    }

    @Test("A queue not delivered within the stop's wait: \"process stopped\" says how many events were not logged")
    func waitIsBounded() async throws {
        let (service, gate, _) = try await Self.heldService(count: 7)
        defer { gate.open() }
        try await service.stop(reason: "SIGTERM", drainTimeout: .milliseconds(100))
        let stopped = try #require(try service.sqlite.events(type: "processStopped").first)
        #expect(stopped.reason == "SIGTERM (7 queued events not logged)")
        #expect(try service.sqlite.events().filter { $0.type == "didStartMonitoring" }.count == 1)
    }
}
