import Foundation
import Logging
import RegionKitConcurrency
import Testing
import RegionKit
import RegionKitCore
import RegionKitStore
@testable import RegionKitService

/// The per-partition writer: in order, off the engine's thread; kept and retried while the store
/// fails; ended by fencing; flushed at hand-over or dropped when the lease is gone.
///
/// The writer's task needs a cooperative thread for every retry's wake-up. In the parallel phase
/// CPU-bound suites hold both of this machine's cooperative threads for tens of seconds at a time,
/// and a run with 25 retries did not finish within 120 s of wall-clock time (CI); hence few retries
/// and a bound that only a hang reaches.
@Suite("Cluster mode: the contribution writer")
struct ContributionWriterTests {
    static let region = Region.beacon(try! BeaconRegion(identifier: "lobby", uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 1))

    static func write(_ time: Double, _ state: RegionState) -> ContributionWriter.Write {
        .init(region: region, state: state, since: time, time: time, evidence: nil)
    }

    /// A store stand-in: records what it applied; fails while `failing` > 0 (counting down); fences from `fenceAt` on.
    final class Store: Sendable {
        let applied = LockedBox<[Double]>([])
        let attempts = LockedBox(0)
        let failing = LockedBox(0)
        let fenceAt = LockedBox<Double?>(nil)
        let gate = LockedBox(true)
        /// The identity of every attempt, in order.
        let ids = LockedBox<[ClusterWriteID]>([])

        func apply(_ write: ContributionWriter.Write, _ id: ClusterWriteID) async throws -> ContributionOutcome {
            while !gate.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
            attempts.withLock { $0 += 1 }
            ids.withLock { $0.append(id) }
            if failing.withLock({ count in defer { count = max(0, count - 1) }; return count > 0 }) {
                throw RegionKitError(.storeFailed, "store down")
            }
            if let fence = fenceAt.withLock({ $0 }), write.time >= fence { return .fenced }
            applied.withLock { $0.append(write.time) }
            return write.state == .inside
                ? .changed([StoredEvent(id: Int64(write.time), time: write.time, type: "didDetermineState", region: "lobby", state: "inside", reason: nil, json: "{}")])
                : .unchanged
        }
    }

    static func writer(_ store: Store, acknowledged: LockedBox<[Int64]> = LockedBox([]), fenced: LockedBox<Int> = LockedBox(0)) -> ContributionWriter {
        ContributionWriter(partition: 3, logger: Logger(label: "test"), apply: { try await store.apply($0, $1) },
                           onEvents: { events in acknowledged.withLock { $0 += events.map(\.id) } },
                           onFenced: { fenced.withLock { $0 += 1 } }, retryDelay: { _ in .milliseconds(1) })
    }

    @Test("Writes in submission order; events acknowledged once committed; flush returns when all are written")
    func order() async {
        let store = Store()
        let acknowledged = LockedBox<[Int64]>([])
        let writer = Self.writer(store, acknowledged: acknowledged)
        for time in 1...50 { writer.submit(Self.write(Double(time), time % 2 == 0 ? .inside : .outside)) }
        #expect(await writer.flush(timeout: .seconds(900)))  // returns as soon as done (see the suite's note)
        let applied: [Double] = (1...50).map { Double($0) }
        #expect(store.applied.withLock { $0 } == applied)
        let everySecond: [Int64] = stride(from: 2, through: 50, by: 2).map { Int64($0) }
        #expect(acknowledged.withLock { $0 } == everySecond)
        #expect(writer.queued == 0)
        await writer.close()
    }

    @Test("While the store fails, writes wait in memory in order and are retried; none lost or reordered")
    func retriesInOrder() async {
        let store = Store()
        store.failing.withLock { $0 = 3 }
        let writer = Self.writer(store)
        for time in 1...10 { writer.submit(Self.write(Double(time), .outside)) }
        #expect(await writer.flush(timeout: .seconds(900)))  // returns as soon as done (see the suite's note)
        let applied: [Double] = (1...10).map { Double($0) }
        #expect(store.applied.withLock { $0 } == applied)
        #expect(store.attempts.withLock { $0 } == 13, "3 failed attempts, then one each")
        // Each retry is the same write to the store (a reply lost after the commit is not written
        // twice): the first write's four attempts carry one identity, the next writes the next numbers.
        let ids = store.ids.withLock { $0 }
        #expect(ids.map(\.sequence) == [1, 1, 1, 1] + Array(2...10))
        #expect(Set(ids.map(\.writer)).count == 1)
        await writer.close()
        // Another writer (the partition's next holder, or this one's again): another identity.
        let next = Self.writer(store)
        next.submit(Self.write(11, .outside))
        #expect(await next.flush(timeout: .seconds(900)))
        #expect(store.ids.withLock { $0.last?.sequence } == 1 && store.ids.withLock { $0.last?.writer } != ids[0].writer)
        await next.close()
    }

    @Test("Int.isPowerOfTen: the attempts at which the writer logs a failing write again (1st, 10th, 100th, …; it logged the first only)")
    func failuresLoggedByPowersOfTen() {
        #expect((1...1_000).filter(\.isPowerOfTen) == [1, 10, 100, 1_000])
        #expect(!0.isPowerOfTen && !20.isPowerOfTen && !(-10).isPowerOfTen && 1_000_000.isPowerOfTen)
    }

    @Test("Fenced: reported once, and nothing after it is written")
    func fencing() async {
        let store = Store()
        store.fenceAt.withLock { $0 = 5 }
        let fenced = LockedBox(0)
        let writer = Self.writer(store, fenced: fenced)
        for time in 1...10 { writer.submit(Self.write(Double(time), .inside)) }
        #expect(await writer.flush(timeout: .seconds(900)))  // returns as soon as done (see the suite's note)
        #expect(store.applied.withLock { $0 } == [1, 2, 3, 4])
        #expect(store.attempts.withLock { $0 } == 5, "the writes after the fenced one are not even tried")
        #expect(fenced.withLock { $0 } == 1 && writer.isFenced)
        await writer.close()
    }

    @Test("A flush that cannot finish times out (false); close drops what is queued and later submissions")
    func flushTimeoutAndClose() async {
        let store = Store()
        store.gate.withLock { $0 = false }   // the store hangs
        let writer = Self.writer(store)
        for time in 1...3 { writer.submit(Self.write(Double(time), .inside)) }
        #expect(await writer.flush(timeout: .milliseconds(100)) == false)
        #expect(writer.queued == 3)
        await writer.close()
        store.gate.withLock { $0 = true }
        writer.submit(Self.write(9, .inside))
        try? await Task.sleep(for: .milliseconds(50))
        #expect(store.applied.withLock { $0 }.isEmpty, "the queued writes were dropped, the later one refused")
    }
}
