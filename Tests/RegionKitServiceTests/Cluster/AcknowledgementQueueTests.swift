import Foundation
import RegionKit
import RegionKitEngine
import Testing
@testable import RegionKitService

/// The order and the conditions in which a partition's QoS 1 acknowledgements are released,
/// without a broker: tokens are numbers, the engine a `LocationManager` on a virtual clock, the
/// writer two counts.
@Suite("Cluster partition: QoS 1 acknowledgements released once durable")
struct AcknowledgementQueueTests {
    /// An engine with one beacon region whose first sighting enters it (an event to write).
    static func engine() throws -> (LocationManager, BeaconIdentity) {
        let manager = LocationManager(profile: .responsive, clock: VirtualClock(), sources: [.beacon: .authorized])
        manager.startMonitoring(for: try ClusterModeTests.region("hall", major: 1))
        return (manager, BeaconIdentity(uuid: try #require(UUID(uuidString: ClusterModeTests.uuid)), major: 1, minor: 1))
    }

    final class Writer: @unchecked Sendable {
        var submitted = 0
        var committed = 0
    }

    @Test("Released in arrival order once the engine delivered the message's events and the writes submitted by then are committed; the first one waiting holds back the rest")
    func releasedWhenDurable() throws {
        let (manager, beacon) = try Self.engine()
        let writer = Writer()
        let queue = AcknowledgementQueue<Int>(maximumWait: .seconds(10))
        var sent: [Int] = []
        func release() { queue.release(submitted: { writer.submitted }, committed: { writer.committed }) { sent += $0 } }

        // Two writes before the first message (earlier decisions), one of them committed.
        writer.submitted = 2
        writer.committed = 1
        manager.ingest(BeaconObservation(identity: beacon, rssi: -60, timestamp: manager.clock.now))
        queue.received(1, fedTo: manager)
        release()
        #expect(sent == [], "its events are delivered, but a write submitted before them is not committed")
        // The second message's decision is the third write (the delegate submitted it as it was delivered).
        manager.ingest(BeaconObservation(identity: beacon, rssi: -61, timestamp: manager.clock.now))
        writer.submitted = 3
        queue.received(2, fedTo: manager)
        release()
        #expect(sent == [])
        writer.committed = 2
        release()
        #expect(sent == [1], "the first is durable; the second waits for its own write")
        writer.committed = 3
        release()
        #expect(sent == [1, 2] && queue.waiting == 0 && queue.released == 2 && queue.late == 0)
    }

    @Test("A message held while the engine is set aside waits for the resumption, then for its decisions; one never fed waits its longest and is counted late")
    func heldAndLate() throws {
        let (manager, _) = try Self.engine()
        let writer = Writer()
        let queue = AcknowledgementQueue<Int>(maximumWait: .seconds(10))
        var sent: [Int] = []
        let start = ContinuousClock.now
        func release(after seconds: Int) {
            queue.release(submitted: { writer.submitted }, committed: { writer.committed }, now: start + .seconds(seconds)) { sent += $0 }
        }
        queue.received(1, fedTo: nil, now: start)
        queue.received(2, fedTo: nil, now: start + .seconds(1))
        release(after: 5)
        #expect(sent == [], "held: not fed to any engine yet")
        queue.fedHeld(to: manager)
        release(after: 5)
        #expect(sent == [1, 2], "fed, nothing to write")

        writer.submitted = 1   // a write that the store does not commit (a slow store, the lease still held)
        queue.received(3, fedTo: manager, now: start + .seconds(6))
        queue.received(4, fedTo: manager, now: start + .seconds(8))
        release(after: 15)
        #expect(sent == [1, 2], "9 s: still waiting")
        release(after: 16)
        #expect(sent == [1, 2, 3] && queue.late == 1, "10 s: acknowledged anyway, counted")
        release(after: 18)
        #expect(sent == [1, 2, 3, 4] && queue.late == 2)

        queue.received(5, fedTo: manager, now: start + .seconds(20))
        queue.removeAll()
        release(after: 40)
        #expect(sent == [1, 2, 3, 4], "its connection closed: the broker delivers it again")
    }

    @Test("Thousands released one by one stay in order (the queue's storage compacted on the way)")
    func manyInOrder() throws {
        let (manager, _) = try Self.engine()
        let writer = Writer()
        let queue = AcknowledgementQueue<Int>(maximumWait: .seconds(10))
        var sent: [Int] = []
        for index in 0..<5_000 {
            queue.received(index, fedTo: manager)
            if index % 3 == 0 { queue.release(submitted: { writer.submitted }, committed: { writer.committed }) { sent += $0 } }
        }
        queue.release(submitted: { writer.submitted }, committed: { writer.committed }) { sent += $0 }
        #expect(sent == Array(0..<5_000) && queue.waiting == 0)
    }
}
