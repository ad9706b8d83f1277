import Synchronization

/// Fans each element out to every live subscriber, each an `AsyncStream` of its own: the one
/// fan-out behind a location manager's, a Bluetooth scanner's and the HTTP server's event streams.
///
/// A subscription ends when its consumer stops iterating, or for all at ``finish(last:)``
/// (after which a new subscription ends at once), or when the broadcast is deallocated.
/// ``subscriberCount`` is an atomic read, cheap enough for a hot path that skips work nobody
/// listens for.
///
/// ```swift
/// let events = Broadcast<String>()
/// let stream = events.subscribe(bufferingPolicy: .bufferingNewest(64))
/// events.yield("hello")          // every subscriber's stream gets it
/// events.finish(last: "bye")     // streams end after "bye"; later subscriptions end at once
/// ```
public final class Broadcast<Element: Sendable>: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<Element>.Continuation] = [:]
        var nextID = 0
        var finished = false
    }

    /// The subscribers at one moment: several elements yielded to them without taking the lock for
    /// each (``snapshot()``).
    public struct Subscribers: Sendable {
        fileprivate let continuations: [AsyncStream<Element>.Continuation]

        public var isEmpty: Bool { continuations.isEmpty }

        public func yield(_ element: Element) {
            for continuation in continuations { continuation.yield(element) }
        }
    }

    private let state = LockedBox(State())
    private let count = Atomic<Int>(0)

    public init() {}

    deinit {
        finish()
    }

    /// The number of live subscribers (an atomic read: it may be stale by the time it is used).
    public var subscriberCount: Int { count.load(ordering: .relaxed) }

    /// A stream of the elements yielded from now on.
    public func subscribe(bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        let id = state.withLock { state -> Int? in
            guard !state.finished else { return nil }
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            count.store(state.subscribers.count, ordering: .relaxed)
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return stream
    }

    /// Every live subscriber gets `element`.
    public func yield(_ element: Element) {
        snapshot().yield(element)
    }

    /// The live subscribers now.
    public func snapshot() -> Subscribers {
        Subscribers(continuations: state.withLock { Array($0.subscribers.values) })
    }

    /// Ends every subscription, after `last` when given, and every later one at once. Returns
    /// false (and yields nothing) when the broadcast had finished already.
    @discardableResult
    public func finish(last: Element? = nil) -> Bool {
        let subscribers = state.withLock { state -> [AsyncStream<Element>.Continuation]? in
            guard !state.finished else { return nil }
            state.finished = true
            defer {
                state.subscribers.removeAll()
                count.store(0, ordering: .relaxed)
            }
            return Array(state.subscribers.values)
        }
        guard let subscribers else { return false }
        for continuation in subscribers {
            if let last { continuation.yield(last) }
            continuation.finish()
        }
        return true
    }

    private func remove(_ id: Int) {
        state.withLock { state in
            state.subscribers.removeValue(forKey: id)
            count.store(state.subscribers.count, ordering: .relaxed)
        }
    }
}
