/// Runs `body` in a task of its own, which the caller's cancellation does not reach, and waits
/// for it: for bookkeeping that must follow an action already taken (recording that a hook ran,
/// saving an output's cursor after the broker acknowledged), which a store that refuses work
/// on a cancelled task (PostgreSQL's bounded operations) would otherwise drop at a stop — and
/// the action would be repeated at the next start.
///
/// The body should be bounded by itself (a store's operation timeout): the caller waits for it.
///
/// ```swift
/// try await uncancelled { try await store.markDelivered(id, at: now) }
/// ```
public func uncancelled<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await Task { try await body() }.value
}
