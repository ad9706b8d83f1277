import Foundation
import Logging
import RegionKitConcurrency
import RegionKitCore
import RegionKitStore
import RegionKitTestSupport
import Testing
@testable import RegionKitService

/// A networked store's writer: one write per transaction while the store keeps up, the backlog
/// in a few transactions once it falls behind, acknowledgements only after the commit.
@Suite("StoreWriter: group commit")
struct StoreWriterTests {
    /// A store whose transactions (``apply(_:)``) wait while `held`, and that remembers how many
    /// writes each one held.
    final class HeldStore: InterposingStore, @unchecked Sendable {
        let held = LockedBox(false)
        let started = LockedBox(0)
        let batches = LockedBox<[Int]>([])
        /// Throws instead of writing once this many transactions have committed.
        let failAfter = LockedBox<Int?>(nil)

        override func apply(_ writes: [StoreWrite]) async throws -> [StoredEvent] {
            started.withLock { $0 += 1 }
            let held = held
            await Task.detached {
                while held.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            }.value
            if let limit = failAfter.withLock({ $0 }), batches.withLock({ $0.count }) >= limit {
                throw RegionKitError(.storeFailed, "refused by the test")
            }
            let stored = try await super.apply(writes)
            batches.withLock { $0.append(writes.count) }
            return stored
        }
    }

    static func event(_ index: Int) -> StoreWrite {
        .event(time: Double(index), type: "e\(index)", region: nil, state: nil, reason: nil, json: #"{"i":\#(index)}"#, hooks: [])
    }

    static func writer(_ store: HeldStore, acknowledged: LockedBox<[StoredEvent]>, failed: LockedBox<[String]>) -> StoreWriter {
        StoreWriter(store: store, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                    acknowledge: { event in acknowledged.withLock { $0.append(event) } },
                    failed: { write, _ in failed.withLock { $0.append(write.typeName) } })
    }

    @Test("A backlog is committed a batch at a time, in order, each event acknowledged after its commit", .timeLimit(.minutes(1)))
    func backlogIsBatched() async throws {
        let store = HeldStore(try RegionStore(path: temporaryStorePath()))
        let acknowledged = LockedBox<[StoredEvent]>([])
        let failed = LockedBox<[String]>([])
        let writer = Self.writer(store, acknowledged: acknowledged, failed: failed)
        // The first write alone: the store is keeping up.
        writer.submit(Self.event(0))
        try await writer.flush()
        #expect(store.batches.withLock { $0 } == [1])
        // The store falls behind: its next transaction waits while 1,000 more writes arrive.
        store.held.withLock { $0 = true }
        writer.submit(Self.event(1))
        try await eventually(timeout: .seconds(10), "the writer's transaction waits in the store") { store.started.withLock { $0 } == 2 }
        for index in 2...1000 { writer.submit(Self.event(index)) }
        #expect(acknowledged.withLock { $0.count } == 1, "nothing acknowledged before its commit")
        store.held.withLock { $0 = false }
        try await writer.flush()
        let batches = store.batches.withLock { $0 }
        #expect(batches == [1, 1, 256, 256, 256, 231], "the backlog in \(batches.count - 2) transactions of at most 256")
        let events = acknowledged.withLock { $0 }
        #expect(events.map(\.type) == (0...1000).map { "e\($0)" }, "every event acknowledged once, in order")
        #expect(events.map(\.id) == (1...1001).map(Int64.init))
        #expect(try store.base.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil) == events, "what was acknowledged is what the log holds")
        #expect(failed.withLock { $0 }.isEmpty)
    }

    @Test("A barrier ends a batch: flush returns once what came before it is committed", .timeLimit(.minutes(1)))
    func flushEndsABatch() async throws {
        let store = HeldStore(try RegionStore(path: temporaryStorePath()))
        let acknowledged = LockedBox<[StoredEvent]>([])
        let writer = Self.writer(store, acknowledged: acknowledged, failed: LockedBox([]))
        store.held.withLock { $0 = true }
        writer.submit(Self.event(0))
        try await eventually(timeout: .seconds(10), "the first transaction waits in the store") { store.started.withLock { $0 } == 1 }
        for index in 1...10 { writer.submit(Self.event(index)) }
        let flushed = Task { try await writer.flush() }
        try await eventually(timeout: .seconds(10), "the flush is queued after the ten writes") { writer.waiting == 11 }
        for index in 11...20 { writer.submit(Self.event(index)) }
        store.held.withLock { $0 = false }
        try await flushed.value
        #expect(acknowledged.withLock { $0.count } >= 11, "flush returned before the writes submitted before it were acknowledged")
        try await writer.flush()
        #expect(store.batches.withLock { $0 } == [1, 10, 10])
        #expect(acknowledged.withLock { $0.map(\.type) } == (0...20).map { "e\($0)" })
    }

    @Test("A failed transaction writes none of its batch; it and every later write are reported, nothing more is acknowledged", .timeLimit(.minutes(1)))
    func failureStopsWriting() async throws {
        let store = HeldStore(try RegionStore(path: temporaryStorePath()))
        let acknowledged = LockedBox<[StoredEvent]>([])
        let failed = LockedBox<[String]>([])
        let writer = Self.writer(store, acknowledged: acknowledged, failed: failed)
        store.failAfter.withLock { $0 = 1 }
        writer.submit(Self.event(0))
        try await writer.flush()
        store.held.withLock { $0 = true }
        writer.submit(Self.event(1))
        try await eventually(timeout: .seconds(10), "the second transaction waits in the store") { store.started.withLock { $0 } == 2 }
        for index in 2...5 { writer.submit(Self.event(index)) }
        store.held.withLock { $0 = false }
        await #expect(throws: RegionKitError.self) { try await writer.flush() }
        writer.submit(Self.event(6))
        await #expect(throws: RegionKitError.self) { try await writer.flush() }
        #expect(acknowledged.withLock { $0.map(\.type) } == ["e0"])
        #expect(failed.withLock { $0 } == (1...6).map { "e\($0)" })
        #expect(try store.base.lastEventID() == 1, "the failed batch wrote nothing")
        #expect(writer.firstFailure != nil)
    }
}
