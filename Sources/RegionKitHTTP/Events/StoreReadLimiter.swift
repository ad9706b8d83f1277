/// Lets at most a few event-stream catch-ups read the store at once, the others waiting their
/// turn in order. The SQLite store reads synchronously on the task's thread, and the cooperative
/// pool has one thread per core: a hundred streams opened with a backlog (dashboards reconnecting
/// together after a restart) kept every thread reading pages, and `GET /v1/regions` waited 19 s
/// behind them. Held for one page at a time, so streams take turns and other requests get through.
///
/// ```swift
/// let page = try await StoreReadLimiter.eventStreams.withPermit { try await store.events(afterID: last, limit: 256) }
/// ```
actor StoreReadLimiter {
    /// The catch-ups' limiter: one permit (one page read at a time across every stream).
    static let eventStreams = StoreReadLimiter(permits: 1)

    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// The most permits ever held at once (tests).
    private(set) var mostHeld = 0
    private let permits: Int

    init(permits: Int) {
        self.permits = max(1, permits)
        available = max(1, permits)
    }

    func acquire() async {
        if available > 0 {
            available -= 1
        } else {
            await withCheckedContinuation { waiters.append($0) }
        }
        mostHeld = max(mostHeld, permits - available)
    }

    func release() {
        if waiters.isEmpty {
            available = min(permits, available + 1)
        } else {
            waiters.removeFirst().resume()   // the permit passes straight to the next in line
        }
    }

    /// Runs `body` holding a permit; a task cancelled while it waited (its client gone, the
    /// server stopping) gives the permit back at once instead of reading a page for nobody.
    nonisolated func withPermit<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await acquire()
        if Task.isCancelled {
            await release()
            throw CancellationError()
        }
        do {
            let result = try await body()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }
}
