import RegionKitConcurrency
import RegionKitStore

/// Fans each durably logged event out to the live subscribers (the SSE streams).
///
/// Pass ``publish(_:)`` as (part of) ``MonitoringService``'s `onLogged`. A subscriber that falls
/// behind loses the oldest notifications, never events: a stream that sees a gap in the ids reads
/// the missing ones back from the store.
///
/// ```swift
/// let events = EventBroadcaster()
/// let service = MonitoringService(store: store, sources: sources, onLogged: events.publish)
/// ```
public final class EventBroadcaster: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<StoredEvent>.Continuation] = [:]
        var next = 0
        /// Set by ``finishAll()``: later subscriptions end at once.
        var finished = false
    }
    private let state = LockedBox(State())
    /// Notifications buffered per subscriber before the oldest are dropped.
    public let bufferSize: Int

    public init(bufferSize: Int = 1_024) {
        self.bufferSize = bufferSize
    }

    /// The number of live subscribers.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    public func publish(_ event: StoredEvent) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(event) }
    }

    /// A stream of the events logged from now on; it ends when the caller stops iterating, at
    /// ``finishAll()``, or at once when that was called before (a request that subscribes while
    /// the server stops must not hold the graceful shutdown open).
    public func subscribe() -> AsyncStream<StoredEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: StoredEvent.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let id = state.withLock { state -> Int? in
            guard !state.finished else { return nil }
            state.next += 1
            state.subscribers[state.next] = continuation
            return state.next
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every subscription, and every later one at once (server shutdown).
    public func finishAll() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
