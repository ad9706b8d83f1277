/// A counting semaphore held across suspension points, granted in request order. With one permit
/// it is a lock for work that awaits (one lease round at a time, one region write at a time); with
/// more it bounds how many do something at once (store reads for event-stream catch-ups).
///
/// ```swift
/// let rounds = AsyncSemaphore()                  // one permit: a lock
/// try await rounds.withPermit { try await renewAndTake() }
///
/// let reads = AsyncSemaphore(permits: 2)
/// let page = try await reads.withPermitUnlessCancelled { try await store.events(afterID: last, limit: 256) }
/// ```
public actor AsyncSemaphore {
    private let permits: Int
    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// The most permits ever held at once (tests check the bound).
    public private(set) var mostHeld = 0

    /// How many wait for a permit (tests that hold it wait for contenders to queue up).
    public var waiting: Int { waiters.count }

    /// - Parameter permits: how many may hold a permit at once (at least one).
    public init(permits: Int = 1) {
        self.permits = max(1, permits)
        available = max(1, permits)
    }

    /// Takes a permit, waiting in line when none is free. Not cancellable: a waiter keeps its place.
    public func acquire() async {
        if available > 0 {
            available -= 1
        } else {
            await withCheckedContinuation { waiters.append($0) }
        }
        mostHeld = max(mostHeld, permits - available)
    }

    /// Gives a permit back; it passes straight to the first in line, if any. Give back only what
    /// was taken (a debug build stops at an extra release).
    public func release() {
        if waiters.isEmpty {
            assert(available < permits, "AsyncSemaphore: released more permits than were taken")
            available = min(permits, available + 1)
        } else {
            waiters.removeFirst().resume()
        }
    }

    /// Runs `body` holding a permit, and gives it back however `body` ends.
    public nonisolated func withPermit<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await acquire()
        do {
            let result = try await body()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }

    /// As ``withPermit(_:)``, but a task cancelled while it waited (its client gone, the server
    /// stopping) gives the permit back at once and throws `CancellationError` instead of running
    /// `body` for nobody.
    public nonisolated func withPermitUnlessCancelled<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await withPermit {
            try Task.checkCancellation()
            return try await body()
        }
    }
}
