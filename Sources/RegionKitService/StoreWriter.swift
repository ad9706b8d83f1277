import Logging
import RegionKitCore
import RegionKitEngine
import RegionKitStore
import RegionKitConcurrency

/// One write the service makes to its store, in the order the engine produced it.
enum StoreWrite: Sendable {
    /// A region saved (or replaced): `origin` nil keeps a stored region's origin.
    case region(Region, at: Double, origin: RegionOrigin?)
    case removeRegion(String)
    case state(String, RegionState, since: Double?, evidence: EventEvidence?, at: Double)
    /// An event (and its hook deliveries); acknowledged once written.
    case event(time: Double, type: String, region: String?, state: String?, reason: String?, json: String, hooks: [String])

    /// Applies the write to `store`; returns the stored event of an `.event`.
    func apply(to store: any RegionStoring) async throws -> StoredEvent? {
        switch self {
        case .region(let region, let time, let origin):
            try await store.saveRegion(region, at: time, origin: origin)
        case .removeRegion(let identifier):
            try await store.removeRegion(identifier)
        case .state(let identifier, let state, let since, let evidence, let time):
            try await store.saveState(identifier, state: state, since: since, evidence: evidence, at: time)
        case .event(let time, let type, let region, let state, let reason, let json, let hooks):
            let id = try await store.append(time: time, type: type, region: region, state: state, reason: reason, json: json, hooks: hooks)
            return StoredEvent(id: id, time: time, type: type, region: region, state: state, reason: reason, json: json)
        }
        return nil
    }

    /// The same on the SQLite store, synchronously (on the engine's thread, as the daemon always did).
    func apply(to store: RegionStore) throws -> StoredEvent? {
        switch self {
        case .region(let region, let time, let origin):
            try store.saveRegion(region, at: time, origin: origin)
        case .removeRegion(let identifier):
            try store.removeRegion(identifier)
        case .state(let identifier, let state, let since, let evidence, let time):
            try store.saveState(identifier, state: state, since: since, evidence: evidence, at: time)
        case .event(let time, let type, let region, let state, let reason, let json, let hooks):
            let id = try store.append(time: time, type: type, region: region, state: state, reason: reason, json: json, hooks: hooks)
            return StoredEvent(id: id, time: time, type: type, region: region, state: state, reason: reason, json: json)
        }
        return nil
    }

    var typeName: String {
        switch self {
        case .region: "saveRegion"
        case .removeRegion: "removeRegion"
        case .state: "saveState"
        case .event(_, let type, _, _, _, _, _): type
        }
    }
}

/// Writes a networked store's share of the service in the engine's order, one write at a time,
/// off the engine's thread (the engine delivers events synchronously; a PostgreSQL round trip must
/// not block it). Each event is acknowledged (`acknowledge`: printed, published, streamed) only
/// after its commit, so what was acknowledged is durable; after the first failed write nothing
/// more is written or acknowledged (every later write is counted as a failure), so the log has no
/// gap before an acknowledged event. ``flush()`` waits until everything submitted before it is
/// written, and throws the failure if one happened.
///
/// The queue is unbounded: while the store is slower than the engine, writes wait in memory.
final class StoreWriter: Sendable {
    private enum Item: Sendable {
        case write(StoreWrite)
        case barrier(CheckedContinuation<Void, any Error>)
    }

    /// The first failed write's error (shared with the writing task).
    final class FirstFailure: Sendable {
        private let error = LockedBox<(any Error)?>(nil)
        var value: (any Error)? { error.withLock { $0 } }
        func record(_ failure: any Error) { error.withLock { $0 = $0 ?? failure } }
    }

    private let continuation: AsyncStream<Item>.Continuation
    private let task: Task<Void, Never>
    private let failure: FirstFailure

    /// - Parameters:
    ///   - acknowledge: called after each event is committed, in order.
    ///   - failed: called for every write that failed or was dropped after a failure.
    init(store: any RegionStoring, logger: Logger, acknowledge: @escaping @Sendable (StoredEvent) -> Void,
         failed: @escaping @Sendable (StoreWrite, any Error) -> Void) {
        let (stream, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .unbounded)
        self.continuation = continuation
        let failure = FirstFailure()
        self.failure = failure
        task = Task {
            for await item in stream {
                switch item {
                case .write(let write):
                    if let earlier = failure.value {
                        failed(write, earlier)
                        continue
                    }
                    do {
                        if let event = try await write.apply(to: store) { acknowledge(event) }
                    } catch {
                        failure.record(error)
                        logger.error("cannot write to the store", metadata: ["write": "\(write.typeName)", "error": "\(error)"])
                        failed(write, error)
                    }
                case .barrier(let waiter):
                    if let error = failure.value { waiter.resume(throwing: error) } else { waiter.resume() }
                }
            }
        }
    }

    deinit {
        continuation.finish()
    }

    /// Queues `write` after every write submitted before it.
    func submit(_ write: StoreWrite) {
        continuation.yield(.write(write))
    }

    /// The first failed write's error, if any.
    var firstFailure: (any Error)? { failure.value }

    /// Returns once every write submitted before the call is written; throws the first failure.
    func flush() async throws {
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            continuation.yield(.barrier(waiter))
        }
    }
}
