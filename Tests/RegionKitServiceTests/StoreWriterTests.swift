import Foundation
import GRDB
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

        override func apply(_ writes: [StoreWrite]) async throws -> [StoredEvent] {
            started.withLock { $0 += 1 }
            let held = held
            await Task.detached {
                while held.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            }.value
            let stored = try await super.apply(writes)
            batches.withLock { $0.append(writes.count) }
            return stored
        }
    }

    static func event(_ index: Int) -> StoreWrite {
        .event(time: Double(index), type: "e\(index)", region: nil, state: nil, reason: nil, json: #"{"i":\#(index)}"#, hooks: [])
    }

    /// A writer whose batches are not cut short by time (the held store's waits would count as slow writes).
    static func writer(_ store: HeldStore, acknowledged: LockedBox<[StoredEvent]>, failed: LockedBox<[String]>) -> StoreWriter {
        StoreWriter(store: store, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                    acknowledge: { event in acknowledged.withLock { $0.append(event) } },
                    failed: { write, _ in failed.withLock { $0.append(write.typeName) } }, batchDuration: .seconds(3600))
    }

    /// A writer whose first transaction (event 0) waits in a held store: what is submitted next queues behind it.
    static func writerHeldInItsFirstTransaction() async throws -> (HeldStore, LockedBox<[StoredEvent]>, StoreWriter) {
        let store = HeldStore(try RegionStore(path: temporaryStorePath()))
        let acknowledged = LockedBox<[StoredEvent]>([])
        let writer = Self.writer(store, acknowledged: acknowledged, failed: LockedBox([]))
        store.held.withLock { $0 = true }
        writer.submit(Self.event(0))
        try await eventually(timeout: .seconds(60), "the first transaction waits in the store") { store.started.withLock { $0 } == 1 }
        return (store, acknowledged, writer)
    }

    @Test("A backlog is committed a batch at a time, in order, each event acknowledged after its commit", .timeLimit(.inProcess))
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
        try await eventually(timeout: .seconds(60), "the writer's transaction waits in the store") { store.started.withLock { $0 } == 2 }
        for index in 2...1000 { writer.submit(Self.event(index)) }
        #expect(acknowledged.withLock { $0.count } == 1, "nothing acknowledged before its commit")
        // Pending: the one in the held transaction (taken: no longer `waiting`) and the 999 queued.
        #expect(writer.pending == 1_000 && writer.waiting == 999)
        store.held.withLock { $0 = false }
        try await writer.flush()
        #expect(writer.pending == 0)
        let batches = store.batches.withLock { $0 }
        #expect(batches == [1, 1, 256, 256, 256, 231], "the backlog in \(batches.count - 2) transactions of at most 256")
        let events = acknowledged.withLock { $0 }
        let types: [String] = (0...1000).map { "e\($0)" }
        #expect(events.map(\.type) == types, "every event acknowledged once, in order")
        let ids: [Int64] = (1...1001).map { Int64($0) }
        #expect(events.map(\.id) == ids)
        #expect(try store.base.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil) == events, "what was acknowledged is what the log holds")
        #expect(failed.withLock { $0 }.isEmpty)
    }

    @Test("A group of writes (an event and the state it changes) is never split between two transactions: a group that would pass the limit starts the next one", .timeLimit(.inProcess))
    func groupsAreNotSplit() async throws {
        let (store, acknowledged, writer) = try await Self.writerHeldInItsFirstTransaction()
        // 255 single writes, then a group of 2 (state + event): 255 + 2 would pass 256.
        for index in 1...255 { writer.submit(Self.event(index)) }
        writer.submit([.state("lobby", .inside, since: 1, evidence: nil, at: 1), Self.event(256)])
        store.held.withLock { $0 = false }
        try await writer.flush()
        #expect(store.batches.withLock { $0 } == [1, 255, 2], "the group went whole into the next transaction")
        #expect(acknowledged.withLock { $0 }.count == 257)
        #expect(try store.base.states()["lobby"]?.state == .inside)
    }

    @Test("A barrier ends a batch: flush returns once what came before it is committed", .timeLimit(.inProcess))
    func flushEndsABatch() async throws {
        let (store, acknowledged, writer) = try await Self.writerHeldInItsFirstTransaction()
        for index in 1...10 { writer.submit(Self.event(index)) }
        let flushed = Task { try await writer.flush() }
        try await eventually(timeout: .seconds(60), "the flush is queued after the ten writes") { writer.waiting == 11 }
        for index in 11...20 { writer.submit(Self.event(index)) }
        store.held.withLock { $0 = false }
        try await flushed.value
        #expect(acknowledged.withLock { $0.count } >= 11, "flush returned before the writes submitted before it were acknowledged")
        try await writer.flush()
        #expect(store.batches.withLock { $0 } == [1, 10, 10])
        #expect(acknowledged.withLock { $0.map(\.type) } == (0...20).map { "e\($0)" })
    }

    @Test("A failed transaction writes none of its batch; it and every later write are reported, nothing more is acknowledged", .timeLimit(.inProcess))
    func failureStopsWriting() async throws {
        let path = temporaryStorePath()
        let store = HeldStore(try RegionStore(path: path))
        // The database itself refuses one event (a trigger added through a second connection).
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "CREATE TRIGGER refuse_e3 BEFORE INSERT ON event_log WHEN NEW.type = 'e3' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
        }
        try queue.close()
        let acknowledged = LockedBox<[StoredEvent]>([])
        let failed = LockedBox<[String]>([])
        let writer = Self.writer(store, acknowledged: acknowledged, failed: failed)
        writer.submit(Self.event(0))
        try await writer.flush()
        // e1 alone, then e2…e5 in one transaction, which the database fails at e3.
        store.held.withLock { $0 = true }
        writer.submit(Self.event(1))
        try await eventually(timeout: .seconds(60), "the second transaction waits in the store") { store.started.withLock { $0 } == 2 }
        for index in 2...5 { writer.submit(Self.event(index)) }
        store.held.withLock { $0 = false }
        do {
            try await writer.flush()
            Issue.record("flush did not throw the failure")
        } catch let error as RegionKitError {
            #expect(error.message.contains("write 2 of 4 (e3)"), "the failed write named: \(error.message)")
        }
        writer.submit(Self.event(6))
        await #expect(throws: RegionKitError.self) { try await writer.flush() }
        #expect(store.batches.withLock { $0 } == [1, 1], "the failed transaction committed nothing, and none was tried after it")
        #expect(acknowledged.withLock { $0.map(\.type) } == ["e0", "e1"])
        #expect(failed.withLock { $0 } == (2...6).map { "e\($0)" })
        #expect(try store.base.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil).map(\.type) == ["e0", "e1"],
                "e2, before the refused e3 in its transaction, was not written either")
        #expect(writer.firstFailure != nil)
    }

    @Test("A writer let go commits what was queued, then its task ends", .timeLimit(.inProcess))
    func releasedWriterDrains() async throws {
        let store = HeldStore(try RegionStore(path: temporaryStorePath()))
        let acknowledged = LockedBox<[StoredEvent]>([])
        var writer: StoreWriter? = Self.writer(store, acknowledged: acknowledged, failed: LockedBox([]))
        weak let released = writer
        for index in 0..<50 { writer?.submit(Self.event(index)) }
        writer = nil
        #expect(released == nil, "the writing task does not keep the writer alive")
        try await eventually(timeout: .seconds(60), "the queued writes are committed") { acknowledged.withLock { $0.count } == 50 }
        #expect(try store.base.lastEventID() == 50)
    }

    @Test("The batch follows the time per write: up to 256 for a fast store, about a second's worth for a slow one, at least one")
    func batchLimit() {
        let second = Duration.seconds(1)
        #expect(StoreWriter.batchLimit(after: .milliseconds(300), count: 256, duration: second) == 256)
        #expect(StoreWriter.batchLimit(after: .seconds(10), count: 256, duration: second) == 25, "a remote store at 40 ms a write")
        #expect(StoreWriter.batchLimit(after: .milliseconds(40), count: 1, duration: second) == 25)
        #expect(StoreWriter.batchLimit(after: .microseconds(1), count: 1, duration: second) == 256)
        #expect(StoreWriter.batchLimit(after: .seconds(3), count: 1, duration: second) == 1)
        #expect(StoreWriter.batchLimit(after: .zero, count: 0, duration: second) == 256)
    }

    @Test("A slow store gets smaller batches: a held transaction makes the next ones shorter", .timeLimit(.inProcess))
    func slowStoreGetsSmallerBatches() async throws {
        let store = HeldStore(try RegionStore(path: temporaryStorePath()))
        let acknowledged = LockedBox<[StoredEvent]>([])
        let writer = StoreWriter(store: store, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                                 acknowledge: { event in acknowledged.withLock { $0.append(event) } }, failed: { _, _ in },
                                 batchDuration: .milliseconds(1))
        // One write held for at least 50 ms: 50 ms a write, far over the 1 ms a batch may take.
        store.held.withLock { $0 = true }
        writer.submit(Self.event(0))
        try await eventually(timeout: .seconds(60), "the first transaction waits in the store") { store.started.withLock { $0 } == 1 }
        for index in 1...20 { writer.submit(Self.event(index)) }
        try await Task.sleep(for: .milliseconds(50))
        store.held.withLock { $0 = false }
        try await writer.flush()
        #expect(store.batches.withLock { $0 }.first == 1)
        #expect(store.batches.withLock { $0 }.dropFirst().first == 1, "the backlog after a slow write starts with a batch of one")
        #expect(acknowledged.withLock { $0.count } == 21)
    }
}
