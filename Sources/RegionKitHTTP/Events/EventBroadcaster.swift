import RegionKitConcurrency
import RegionKitStore

/// Fans each durably logged event out to the live subscribers (the SSE streams).
///
/// Pass ``publish(_:)`` as (part of) `MonitoringService`'s `onLogged`. A subscriber that falls
/// behind loses the oldest notifications, never events: a stream that sees a gap in the ids reads
/// the missing ones back from the store.
///
/// ```swift
/// let events = EventBroadcaster()
/// let service = MonitoringService(store: store, sources: sources, onLogged: events.publish)
/// ```
public final class EventBroadcaster: Sendable {
    private let broadcast = Broadcast<StoredEvent>()
    /// Notifications buffered per subscriber before the oldest are dropped.
    public let bufferSize: Int

    public init(bufferSize: Int = 1_024) {
        self.bufferSize = bufferSize
    }

    /// The number of live subscribers.
    public var subscriberCount: Int { broadcast.subscriberCount }

    public func publish(_ event: StoredEvent) {
        broadcast.yield(event)
    }

    /// A stream of the events logged from now on; it ends when the caller stops iterating, at
    /// ``finishAll()``, or at once when that was called before (a request that subscribes while
    /// the server stops must not hold the graceful shutdown open).
    public func subscribe() -> AsyncStream<StoredEvent> {
        broadcast.subscribe(bufferingPolicy: .bufferingNewest(bufferSize))
    }

    /// Ends every subscription, and every later one at once (server shutdown).
    public func finishAll() {
        broadcast.finish()
    }
}
