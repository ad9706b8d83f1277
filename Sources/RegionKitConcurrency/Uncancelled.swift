/// Runs `body` in a task of its own, which the caller's cancellation does not reach, and waits
/// for it: for bookkeeping that must follow an action already taken (recording that a hook ran,
/// saving an output's cursor after the broker acknowledged), which a store that refuses work
/// on a cancelled task (PostgreSQL's bounded operations) would otherwise drop at a stop — and
/// the action would be repeated at the next start.
///
/// Once the caller is cancelled it waits at most `grace` more (a stop has its own bounds: a store
/// that does not answer must not hold it for a whole operation timeout), then throws
/// `CancellationError`; the body goes on by itself and its result is dropped.
///
/// ```swift
/// try await uncancelled { try await store.markDelivered(id, at: now) }
/// ```
public func uncancelled<T: Sendable>(grace: Duration = .seconds(2), _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = FirstResult<T>()
    Task {
        do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
    }
    return try await withTaskCancellationHandler {
        try await race.value
    } onCancel: {
        Task {
            try? await Task.sleep(for: grace)
            race.finish(.failure(CancellationError()))
        }
    }
}
