/// The first of several racing outcomes, awaited once: whoever calls ``finish(_:)`` first decides
/// the result, later calls are ignored. For bounding work that may not end when cancelled (a
/// reply that never comes): the timer and the work both finish the race, and the caller returns
/// with the first, without waiting for the other.
///
/// ```swift
/// let race = FirstResult<Int>()
/// let work = Task { race.finish(.success(try await slowAnswer())) }
/// Task { try? await Task.sleep(for: .seconds(1)); race.finish(.failure(TimeoutError())) }
/// let answer = try await race.value   // after at most about a second
/// work.cancel()
/// ```
public final class FirstResult<Value: Sendable>: Sendable {
    private struct State: ~Copyable {
        var result: Result<Value, any Error>?
        var waiters: [CheckedContinuation<Value, any Error>] = []
    }

    private let state = LockedBox(State())

    public init() {}

    /// Sets the result if none is set yet and resumes whoever waits; returns whether this call set it.
    @discardableResult
    public func finish(_ result: Result<Value, any Error>) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>]? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(with: result) }
        return true
    }

    /// The first result: returns (or throws) at once when it is set, else when it is.
    public var value: Value {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Result<Value, any Error>? in
                    if let result = state.result { return result }
                    state.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        }
    }
}
