import Foundation
import RegionKit
import RegionKitConcurrency
import RegionKitEngine
import RegionKitTestSupport
import Testing
@testable import RegionKitService

/// The order and the conditions in which a partition's QoS 1 acknowledgements are released,
/// without a broker: tokens are numbers, the engine a `LocationManager` on a virtual clock, the
/// writer two counts.
@Suite("Cluster partition: QoS 1 acknowledgements released once durable", .timeLimit(.inProcess))
struct AcknowledgementQueueTests {
    /// An engine with one beacon region whose first sighting enters it (an event to write).
    static func engine() throws -> (LocationManager, BeaconIdentity) {
        let manager = LocationManager(profile: .responsive, clock: VirtualClock(), sources: [.beacon: .authorized])
        manager.startMonitoring(for: try ClusterModeTests.region("hall", major: 1))
        return (manager, BeaconIdentity(uuid: try #require(UUID(uuidString: ClusterModeTests.uuid)), major: 1, minor: 1))
    }

    /// The writer's two counts, set by the test.
    final class Writer: Sendable {
        let counts = LockedBox((submitted: 0, committed: 0))
        func set(submitted: Int? = nil, committed: Int? = nil) {
            counts.withLock { counts in
                if let submitted { counts.submitted = submitted }
                if let committed { counts.committed = committed }
            }
        }
        func queue(maximumWait: Duration = .seconds(10)) -> AcknowledgementQueue<Int> {
            AcknowledgementQueue(maximumWait: maximumWait, submitted: { self.counts.withLock { $0.submitted } },
                                 committed: { self.counts.withLock { $0.committed } })
        }
    }

    @Test("Released in arrival order once the engine delivered the message's events and the writes submitted by then are committed; the first one waiting holds back the rest")
    func releasedWhenDurable() throws {
        let (manager, beacon) = try Self.engine()
        let writer = Writer()
        let queue = writer.queue()
        var sent: [Int] = []
        func release() { queue.release { sent += $0 } }

        // Two writes before the first message (earlier decisions), one of them committed.
        writer.set(submitted: 2, committed: 1)
        manager.ingest(BeaconObservation(identity: beacon, rssi: -60, timestamp: manager.clock.now))
        queue.received(1, fedTo: manager, generation: 0)
        release()
        #expect(sent == [], "its events are delivered, but a write submitted before them is not committed")
        // The second message's decision is the third write (the delegate submitted it as it was delivered).
        manager.ingest(BeaconObservation(identity: beacon, rssi: -61, timestamp: manager.clock.now))
        writer.set(submitted: 3)
        queue.received(2, fedTo: manager, generation: 0)
        release()
        #expect(sent == [])
        writer.set(committed: 2)
        release()
        #expect(sent == [1], "the first is durable; the second waits for its own write")
        writer.set(committed: 3)
        release()
        #expect(sent == [1, 2] && queue.waiting == 0 && queue.released == 2 && queue.late == 0)
    }

    /// Delivers the engine's events on another thread, the first one held until `release`.
    final class HeldDelegate: LocationManagerDelegate, @unchecked Sendable {
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let held = LockedBox(true)
        func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {
            guard held.withLock({ held in defer { held = false }; return held }) else { return }
            entered.signal()
            _ = proceed.wait(timeout: .now() + 30)   // (bounded: a test that failed before its signal must not hang)
        }
    }

    /// An engine whose delivery is under way on another thread, held in its delegate at its first
    /// event (a region started), with a sighting and another region fed meanwhile: their events
    /// are produced and not delivered until `delegate.proceed` is signalled.
    static func engineBehind() throws -> (manager: LocationManager, delegate: HeldDelegate) {
        let (manager, beacon) = try engine()
        let delegate = HeldDelegate()
        manager.delegate = delegate
        let first = Thread { manager.startMonitoring(for: try! ClusterModeTests.region("a", major: 2)) }
        first.start()
        #expect(delegate.entered.wait(timeout: .now() + 10) == .success)
        manager.ingest(BeaconObservation(identity: beacon, rssi: -61, timestamp: manager.clock.now))
        manager.startMonitoring(for: try ClusterModeTests.region("b", major: 3))
        return (manager, delegate)
    }

    @Test("A message whose events the engine has not delivered yet (another thread is delivering) waits for them, though nothing is written")
    func waitsForDelivery() async throws {
        let (manager, delegate) = try Self.engineBehind()
        let writer = Writer()
        let queue = writer.queue()
        let sent = LockedBox<[Int]>([])
        queue.received(1, fedTo: manager, generation: 0)
        #expect(manager.eventsDelivered < manager.eventsProduced)
        queue.release { tokens in sent.withLock { $0 += tokens } }
        #expect(sent.withLock { $0 } == [], "not delivered yet")
        delegate.proceed.signal()
        let deadline = ContinuousClock.now + .seconds(10)
        while manager.eventsDelivered < manager.eventsProduced, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        queue.release { tokens in sent.withLock { $0 += tokens } }
        #expect(sent.withLock { $0 } == [1])
    }

    @Test("An engine retired (set aside, stopped): its messages delivered keep their place and go once committed; the others, and any fed to it later, are withheld; a held one waits for the next engine")
    func retired() throws {
        let (manager, _) = try Self.engine()
        let writer = Writer()
        let queue = writer.queue()
        var sent: [Int] = []
        writer.set(submitted: 1)
        queue.received(1, fedTo: manager, generation: 0)        // delivered: marked at the retirement
        queue.retire(through: 0)
        queue.received(2, fedTo: manager, generation: 0)        // fed to the retired engine
        queue.received(3, fedTo: nil, generation: 0)            // held for the next engine
        #expect(queue.withheld == 1 && queue.waiting == 2)
        queue.release { sent += $0 }
        #expect(sent == [], "the write of the first is not committed")
        writer.set(committed: 1)
        queue.release { sent += $0 }
        #expect(sent == [1], "committed: acknowledged; the held one waits for an engine")
        let (next, _) = try Self.engine()
        queue.fedHeld(to: next, generation: 1)
        queue.release { sent += $0 }
        #expect(sent == [1, 3])
    }

    @Test("A message not fed to an engine that is still delivering when it is retired is withheld, not released late; late ones only when allowed")
    func retiredUndeliveredAndLate() async throws {
        let (manager, delegate) = try Self.engineBehind()
        let writer = Writer()
        let queue = writer.queue()
        let start = ContinuousClock.now
        var sent: [Int] = []
        queue.received(1, fedTo: manager, generation: 0, now: start)
        queue.retire(through: 0)
        delegate.proceed.signal()
        queue.release(now: start + .seconds(60)) { sent += $0 }
        #expect(sent == [] && queue.withheld == 1 && queue.waiting == 0, "its events were not delivered before the retirement")

        // A message of the next engine behind a write that is never committed: late only when allowed.
        let (next, _) = try Self.engine()
        writer.set(submitted: 1)
        queue.received(2, fedTo: next, generation: 1, now: start)
        queue.release(lateAllowed: false, now: start + .seconds(60)) { sent += $0 }
        #expect(sent == [], "fenced or stopping: the decision will not be written")
        queue.release(now: start + .seconds(9)) { sent += $0 }
        #expect(sent == [])
        queue.release(now: start + .seconds(10)) { sent += $0 }
        #expect(sent == [2] && queue.late == 1)
        // The partition's status says so (`GET /v1/sources`).
        #expect(PartitionWorker.acknowledgementDetail(late: queue.late, withheld: queue.withheld)
                == "; 1 QoS 1 sightings acknowledged late (before their decisions were committed); 1 QoS 1 sightings withheld from an engine set aside (delivered again by the broker)")
        #expect(PartitionWorker.acknowledgementDetail(late: 0, withheld: 0) == "")
    }

    @Test("A message held while the engine is set aside waits for the resumption; a connection closed forgets them all")
    func heldAndForgotten() throws {
        let (manager, _) = try Self.engine()
        let writer = Writer()
        let queue = writer.queue()
        var sent: [Int] = []
        queue.received(1, fedTo: nil, generation: 0)
        queue.received(2, fedTo: nil, generation: 0)
        queue.release { sent += $0 }
        #expect(sent == [], "held: not fed to any engine yet")
        queue.fedHeld(to: manager, generation: 1)
        queue.release { sent += $0 }
        #expect(sent == [1, 2], "fed, nothing to write")
        writer.set(submitted: 1)
        queue.received(3, fedTo: manager, generation: 1)
        queue.removeAll()
        writer.set(committed: 1)
        queue.release { sent += $0 }
        #expect(sent == [1, 2] && queue.waiting == 0, "its connection closed: the broker delivers it again")
    }

    @Test("A held message never goes late; the engine set aside (retired) withholds it, and so does a resumption whose engine was set aside again before it fed them")
    func heldWithheld() throws {
        let (manager, _) = try Self.engine()
        let queue = Writer().queue()
        let start = ContinuousClock.now
        var sent: [Int] = []
        queue.received(1, fedTo: nil, generation: 0, now: start)
        queue.release(now: start + .seconds(60)) { sent += $0 }
        #expect(sent == [] && queue.late == 0, "held: fed at the resumption, not acknowledged before")
        // Set aside while it was held (a resumption raced by a refusal): its routing is replaced, it is never fed.
        queue.retire(through: 0)
        #expect(queue.withheld == 1 && queue.waiting == 0)
        // Held again, then the resuming engine (generation 1) is set aside before it fed them.
        queue.received(2, fedTo: nil, generation: 0, now: start)
        queue.retire(through: 1)
        queue.received(3, fedTo: nil, generation: 1, now: start)
        queue.fedHeld(to: manager, generation: 1)
        #expect(queue.withheld == 3 && queue.waiting == 0)
        queue.release(now: start + .seconds(60)) { sent += $0 }
        #expect(sent == [])
    }

    @Test("Thousands released as they come stay in order (the queue's storage compacted on the way)")
    func manyInOrder() throws {
        let (manager, _) = try Self.engine()
        let writer = Writer()
        let queue = writer.queue()
        var sent: [Int] = []
        for index in 0..<5_000 {
            queue.received(index, fedTo: manager, generation: 0)
            if index % 3 == 0 { queue.release { sent += $0 } }
        }
        queue.release { sent += $0 }
        #expect(sent == Array(0..<5_000) && queue.waiting == 0)
    }
}
