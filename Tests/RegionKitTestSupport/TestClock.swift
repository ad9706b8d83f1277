import RegionKitConcurrency

/// A `Clock` whose time moves only when a test calls ``advance(by:)``: code that takes an injected
/// `any Clock<Duration>` (command timeouts, reconnect delays, retry backoff) is tested in virtual
/// time instead of waiting real ones.
///
/// ``waitForSleepers(_:)`` makes a test deterministic: it returns once the code under test is
/// actually suspended in ``sleep(until:tolerance:)``, so an advance is never lost to a sleeper
/// that had not arrived yet. A cancelled sleeper throws `CancellationError` at once.
///
/// ```swift
/// let clock = TestClock()
/// let task = Task { try await clock.sleep(for: .seconds(2)) }
/// try await clock.waitForSleepers(1)
/// clock.advance(by: .seconds(2))   // the task's sleep returns
/// ```
public final class TestClock: Clock {
    public struct Instant: InstantProtocol, Hashable, Sendable {
        /// Time since the clock was made.
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>?
        var cancelled = false
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
    }

    private let state = LockedBox(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// Sleepers currently suspended.
    public var sleepers: Int { state.withLock { state in state.sleepers.values.count { $0.continuation != nil } } }

    /// The earliest deadline of a suspended sleeper.
    public var nextDeadline: Instant? { state.withLock { $0.sleepers.values.filter { $0.continuation != nil }.map(\.deadline).min() } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> Int in
            state.nextID += 1
            state.sleepers[state.nextID] = Sleeper(deadline: deadline)
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    guard let sleeper = state.sleepers[id] else { return .success(()) }
                    if sleeper.cancelled {
                        state.sleepers[id] = nil
                        return .failure(CancellationError())
                    }
                    if deadline <= state.now {
                        state.sleepers[id] = nil
                        return .success(())
                    }
                    state.sleepers[id]?.continuation = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let sleeper = state.sleepers[id] else { return nil }
                if let continuation = sleeper.continuation {
                    state.sleepers[id] = nil
                    return continuation
                }
                state.sleepers[id]?.cancelled = true
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and resumes every sleeper whose deadline has come, earliest first.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let ready = state.sleepers.filter { $0.value.continuation != nil && $0.value.deadline <= now }
                .sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
            for (id, _) in ready { state.sleepers[id] = nil }
            return ready.compactMap(\.value.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// Waits (in real time, bounded) until at least `count` sleepers are suspended on this clock.
    public func waitForSleepers(_ count: Int = 1, timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while sleepers < count {
            guard ContinuousClock.now < deadline else {
                throw TestFailure("timed out after \(timeout) waiting for \(count) sleeper(s) on the test clock (\(sleepers) suspended)")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}
