import Logging
import Synchronization
import RegionKitCore
import RegionKitEngine
import RegionKitStore
import RegionKitConcurrency

/// Writes a networked store's share of the service in the engine's order, off the engine's thread
/// (the engine delivers events synchronously; a PostgreSQL round trip must not block it).
///
/// Group commit: while a transaction is in flight, the writes submitted meanwhile wait, and the
/// next transaction takes all of them at once through `RegionStoring.apply(_:)`. A store that
/// keeps up sees one write per transaction, as before; a backlog (a burst of events, a slow
/// database) is written up to ``maximumBatch`` at a time instead of paying a commit, a flush and
/// the append lock for each. A batch is also kept to about `batchDuration` (1 s) by the time the
/// last one took per write: a store with slow round trips (a remote database) gets smaller batches,
/// so transactions stay short (appends by other writers wait for the append lock they hold).
///
/// Each event is acknowledged (`acknowledge`: printed, published, streamed) only after its
/// transaction commits, so what was acknowledged is durable. After the first failed transaction
/// nothing more is written or acknowledged (its writes and every later one are reported to
/// `failed`): the log has no gap before an acknowledged event. A failed transaction writes none of
/// its batch. ``flush()`` waits until everything submitted before it is written, and throws the
/// failure if one happened.
///
/// The queue is unbounded: while the store is slower than the engine, writes wait in memory
/// (``pending`` counts them: the presence hub stops reading sightings while it is large).
final class StoreWriter: Sendable {
    /// The most writes one transaction takes.
    static let maximumBatch = 256
    /// How many writes the next transaction takes, after one of `count` writes took `elapsed`,
    /// for transactions of about `duration`.
    static func batchLimit(after elapsed: Duration, count: Int, duration: Duration) -> Int {
        guard count > 0, elapsed > .zero else { return maximumBatch }
        let perWrite = elapsed.inSeconds / Double(count)
        let fits = duration.inSeconds / perWrite
        return fits >= Double(maximumBatch) ? maximumBatch : max(1, Int(fits))
    }

    private enum Item: Sendable {
        /// Writes committed in one transaction (never split between two).
        case writes([StoreWrite])
        case barrier(CheckedContinuation<Void, any Error>)
    }

    /// The first failed write's error (shared with the writing task).
    final class FirstFailure: Sendable {
        private let error = LockedBox<(any Error)?>(nil)
        var value: (any Error)? { error.withLock { $0 } }
        func record(_ failure: any Error) { error.withLock { $0 = $0 ?? failure } }
    }

    /// The submitted items not yet taken by the writing task, and the task's wake-up when it waits
    /// for more (shared with the task, which must not keep the writer alive).
    private final class Queue: Sendable {
        private struct State {
            var items: [Item] = []
            var waiting: CheckedContinuation<Void, Never>?
            var finished = false
        }
        private let state = LockedBox(State())

        func append(_ item: Item) {
            let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.items.append(item)
                defer { state.waiting = nil }
                return state.waiting
            }
            waiting?.resume()
        }

        /// Items submitted and not yet taken by the writing task.
        var count: Int { state.withLock { $0.items.count } }

        func finish() {
            let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.finished = true
                defer { state.waiting = nil }
                return state.waiting
            }
            waiting?.resume()
        }

        /// Everything submitted so far, in order, once there is something; empty once finished and drained.
        func takeAll() async -> [Item] {
            while true {
                let taken = state.withLock { state -> [Item]? in
                    if !state.items.isEmpty {
                        defer { state.items = [] }
                        return state.items
                    }
                    return state.finished ? [] : nil
                }
                if let taken { return taken }
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state -> Bool in
                        if !state.items.isEmpty || state.finished { return true }
                        state.waiting = waiter
                        return false
                    }
                    if ready { waiter.resume() }
                }
            }
        }
    }

    private let queue: Queue
    private let task: Task<Void, Never>
    private let failure: FirstFailure
    /// Writes submitted and not yet committed (or reported failed), shared with the writing task.
    private let uncommitted: Counter

    /// An atomic count shared with the writing task (which must not keep the writer alive).
    final class Counter: Sendable {
        private let value = Atomic<Int>(0)
        func add(_ delta: Int) { value.wrappingAdd(delta, ordering: .relaxed) }
        var current: Int { max(0, value.load(ordering: .relaxed)) }
    }

    /// - Parameters:
    ///   - acknowledge: called after each event is committed, in order.
    ///   - failed: called for every write that failed or was dropped after a failure.
    ///   - batchDuration: about how long one transaction may take (the batch size follows from the
    ///     last one's time per write); well under the store's operation timeout.
    init(store: any RegionStoring, logger: Logger, acknowledge: @escaping @Sendable (StoredEvent) -> Void,
         failed: @escaping @Sendable (StoreWrite, any Error) -> Void, batchDuration: Duration = .seconds(1)) {
        let failure = FirstFailure()
        self.failure = failure
        let queue = Queue()
        self.queue = queue
        let uncommitted = Counter()
        self.uncommitted = uncommitted
        task = Task {
            var limit = Self.maximumBatch
            /// Writes `batch` in one transaction (or reports it failed after an earlier failure).
            func commit(_ batch: [StoreWrite]) async {
                guard !batch.isEmpty else { return }
                defer { uncommitted.add(-batch.count) }
                if let earlier = failure.value {
                    for write in batch { failed(write, earlier) }
                    return
                }
                do {
                    let started = ContinuousClock.now
                    let events = try await store.apply(batch)
                    limit = Self.batchLimit(after: started.duration(to: .now), count: batch.count, duration: batchDuration)
                    for event in events { acknowledge(event) }
                } catch {
                    failure.record(error)
                    logger.error("cannot write to the store", metadata: ["writes": "\(batch.count)", "error": "\(error)"])
                    for write in batch { failed(write, error) }
                }
            }
            while true {
                let items = await queue.takeAll()
                if items.isEmpty { return }
                var batch: [StoreWrite] = []
                batch.reserveCapacity(min(items.count, Self.maximumBatch))
                for item in items {
                    switch item {
                    case .writes(let group):
                        // A group that would take the batch past the limit starts the next one.
                        if !batch.isEmpty && batch.count + group.count > limit {
                            await commit(batch)
                            batch.removeAll(keepingCapacity: true)
                        }
                        batch += group
                        if batch.count >= limit {
                            await commit(batch)
                            batch.removeAll(keepingCapacity: true)
                        }
                    case .barrier(let waiter):
                        await commit(batch)
                        batch.removeAll(keepingCapacity: true)
                        if let error = failure.value { waiter.resume(throwing: error) } else { waiter.resume() }
                    }
                }
                await commit(batch)
            }
        }
    }

    deinit {
        queue.finish()
    }

    /// Queues `write` after every write submitted before it.
    func submit(_ write: StoreWrite) {
        submit([write])
    }

    /// Queues `writes` after every write submitted before them, to be committed in one
    /// transaction (an event and the state or room it changes).
    func submit(_ writes: [StoreWrite]) {
        guard !writes.isEmpty else { return }
        uncommitted.add(writes.count)
        queue.append(.writes(writes))
    }

    /// Writes submitted and not yet committed (nor reported failed): queued, taken by the writing
    /// task, or in the transaction in flight.
    var pending: Int { uncommitted.current }

    /// Submissions (writes, groups of writes, flushes) that the writing task has not taken yet. Once taken (all that
    /// was queued at once) they are not counted, though they may wait for several transactions.
    var waiting: Int { queue.count }

    /// The first failed write's error, if any.
    var firstFailure: (any Error)? { failure.value }

    /// Returns once every write submitted before the call is written; throws the first failure.
    func flush() async throws {
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            queue.append(.barrier(waiter))
        }
    }
}
