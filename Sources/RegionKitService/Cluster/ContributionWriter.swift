import Foundation
import Logging
import RegionKit
import RegionKitConcurrency
import RegionKitCore
import RegionKitStore

/// Writes one partition's contributions to the shared store in the order its engine decided them,
/// off the engine's thread. While the store cannot be reached (PostgreSQL restarting, a network
/// cut) the writes wait in memory, in order, and are retried with a growing delay (100 ms to 2 s),
/// so the engine goes on deciding; a write the store refuses because the lease has moved on
/// (`fenced`) ends the writer: the partition belongs to another engine now. They wait only while
/// the partition's lease lasts: when the member's leases run out unrenewed, the lease watch stops
/// the partition, which writes what it can in what is left of the lease and drops the rest
/// (logged, with the count). The next holder restores the stored contributions and decides anew
/// from the sightings that follow: a departure dropped here exits later, after the next holder's
/// own silence; a visit that began and ended inside the outage is not logged.
///
/// ```swift
/// let writer = ContributionWriter(partition: 5, logger: logger, apply: { write, id in
///     try await store.applyContribution(region: write.region.identifier, lease: lease, member: "engine-a", write: id,
///                                       state: write.state, since: write.since, time: write.time) { previous, merged, since in … }
/// }, onEvents: { print($0) }, onFenced: { stopPartition() })
/// writer.submit(.init(region: lobby, state: .inside, since: now, time: now, evidence: nil))
/// _ = await writer.flush(timeout: .seconds(5))
/// ```
final class ContributionWriter: Sendable {
    /// One write, in the partition's decision order: a region contribution, or events that are not
    /// region states (a beacon's nearest scanner), appended under the same fencing.
    enum Write: Sendable {
        case contribution(region: Region, state: RegionState, since: Double?, time: Double, evidence: EventEvidence?)
        case events(time: Double, rows: [ClusterEventRow])

        /// A contribution.
        init(region: Region, state: RegionState, since: Double?, time: Double, evidence: EventEvidence?) {
            self = .contribution(region: region, state: state, since: since, time: time, evidence: evidence)
        }

        var time: Double {
            switch self {
            case .contribution(_, _, _, let time, _), .events(let time, _): time
            }
        }

        /// The contribution's state (nil for events).
        var state: RegionState? {
            if case .contribution(_, let state, _, _, _) = self { return state }
            return nil
        }

        /// What it writes, for log lines: the region, or the events' types.
        var label: String {
            switch self {
            case .contribution(let region, _, _, _, _): region.identifier
            case .events(_, let rows): rows.map(\.type).joined(separator: ",")
            }
        }
    }

    private struct Progress {
        var queued = 0
        /// Writes accepted by ``submit(_:)`` since the start, and of those the first `committed`
        /// (in order) that the store committed: one fenced or dropped stops the count for good.
        var submitted = 0
        var committed = 0
        var fenced = false
        var closed = false
    }

    private let continuation: AsyncStream<Write>.Continuation
    private let task: Task<Void, Never>
    private let progress: LockedBox<Progress>

    /// - Parameters:
    ///   - apply: writes one contribution (`ClusterStoring.applyContribution(region:lease:member:write:state:since:time:events:)`)
    ///     or appends events (`ClusterStoring.appendEvents(_:lease:member:write:)`) with the write's
    ///     identity (this writer's own, sequence from 1; a retry passes the same one, so a write
    ///     whose reply was lost after it committed is not committed again); a thrown error is
    ///     retried, `fenced` ends the writer.
    ///   - onEvents: the events committed with a contribution (their acknowledgement).
    ///   - onFenced: called once when the store refuses a write because the lease moved on.
    ///   - onCommitted: called after each write the store committed (``committed`` counts it).
    ///   - retryDelay: the delay after the n-th consecutive failure (default 100 ms doubling to 2 s).
    init(partition: Int, logger: Logger, apply: @escaping @Sendable (Write, ClusterWriteID) async throws -> ContributionOutcome,
         onEvents: @escaping @Sendable ([StoredEvent]) -> Void, onFenced: @escaping @Sendable () -> Void,
         onCommitted: @escaping @Sendable () -> Void = {},
         retryDelay: @escaping @Sendable (Int) -> Duration = { .milliseconds(min(2_000, 100 << min($0 - 1, 5))) }) {
        let (stream, continuation) = AsyncStream.makeStream(of: Write.self)
        self.continuation = continuation
        let progress = LockedBox(Progress())
        self.progress = progress
        let writer = "\(UUID())"
        task = Task {
            var failures = 0
            var sequence: Int64 = 0
            for await write in stream {
                // Fenced (the lease moved on) or closed (dropped on purpose): not written.
                let skip = progress.withLock { $0.fenced || $0.closed }
                sequence += 1
                let id = ClusterWriteID(writer: writer, sequence: sequence)
                while !skip {
                    do {
                        let outcome = try await apply(write, id)
                        if failures > 0 {
                            logger.notice("store reachable again: contributions resume", metadata: ["partition": "\(partition)", "failed-attempts": "\(failures)"])
                            failures = 0
                        }
                        switch outcome {
                        case .fenced:
                            let first = progress.withLock { state -> Bool in
                                defer { state.fenced = true }
                                return !state.fenced
                            }
                            if first {
                                logger.warning("partition lease moved on: its contributions are no longer written",
                                               metadata: ["partition": "\(partition)"])
                                onFenced()
                            }
                        case .unchanged:
                            Self.countCommitted(sequence, in: progress)
                            onCommitted()
                        case .changed(let events):
                            Self.countCommitted(sequence, in: progress)
                            if !events.isEmpty { onEvents(events) }
                            onCommitted()
                        }
                        break
                    } catch {
                        if Task.isCancelled || progress.withLock({ $0.closed }) { break }
                        failures += 1
                        // The first failure, then the 10th, 100th, …: a write stuck for good is
                        // seen in the log (it logged once only), without a line a retry.
                        if failures.isPowerOfTen {
                            logger.warning("cannot write a contribution: kept in memory and retried",
                                           metadata: ["partition": "\(partition)", "write": "\(write.label)", "attempts": "\(failures)",
                                                      "error": "\((error as? RegionKitError)?.message ?? "\(error)")"])
                        }
                        try? await Task.sleep(for: retryDelay(failures))
                    }
                }
                progress.withLock { $0.queued -= 1 }
            }
        }
    }

    /// Queues a contribution (written in submission order).
    func submit(_ write: Write) {
        let accepted = progress.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.queued += 1
            state.submitted += 1
            return true
        }
        if accepted { continuation.yield(write) }
    }

    /// Counts write `sequence` as committed when every write before it was (the count stays where
    /// the first write that was not committed left it).
    private static func countCommitted(_ sequence: Int64, in progress: LockedBox<Progress>) {
        progress.withLock { state in
            if Int64(state.committed) + 1 == sequence { state.committed += 1 }
        }
    }

    /// Writes accepted since the start (``submit(_:)``).
    var submitted: Int { progress.withLock { $0.submitted } }

    /// How many of the writes accepted since the start, from the first on, the store committed:
    /// everything submitted before a moment when ``submitted`` was n is durable once this is n.
    /// It never reaches a write that was fenced or dropped, nor any after it.
    var committed: Int { progress.withLock { $0.committed } }

    /// Whether the store refused a write because the lease moved on.
    var isFenced: Bool { progress.withLock { $0.fenced } }

    /// Writes not yet committed (or refused).
    var queued: Int { progress.withLock { $0.queued } }

    /// Waits until every queued write is committed (or refused); false when `timeout` passed first.
    func flush(timeout: Duration) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while progress.withLock({ $0.queued > 0 && !$0.closed }) {
            guard clock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Stops writing: what is still queued is dropped (call ``flush(timeout:)`` first to keep it).
    func close() async {
        progress.withLock { $0.closed = true }
        continuation.finish()
        task.cancel()
        await task.value
    }
}
