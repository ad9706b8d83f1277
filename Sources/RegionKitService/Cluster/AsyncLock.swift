/// A lock held across suspension points, granted in request order: one lease round (or the
/// hand-over) at a time, although each awaits the store and the broker.
///
/// ```swift
/// let rounds = AsyncLock()
/// try await rounds.withLock { try await renewAndTake() }
/// ```
actor AsyncLock {
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func lock() async {
        guard locked else {
            locked = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// How many wait for the lock (tests that hold it wait for contenders to queue up).
    var queued: Int { waiters.count }

    func unlock() {
        if waiters.isEmpty {
            locked = false
        } else {
            waiters.removeFirst().resume()   // ownership passes straight to the next in line
        }
    }

    nonisolated func withLock<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await lock()
        do {
            let result = try await body()
            await unlock()
            return result
        } catch {
            await unlock()
            throw error
        }
    }
}
