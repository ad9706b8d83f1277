/// A pending or finished delivery of one logged event to one hook (command or webhook).
///
/// Deliveries are created in the same transaction as their event, so an event is never logged
/// without its deliveries, and the unique (event, hook) pair means a hook fires once per event —
/// across restarts too.
///
/// ```swift
/// for delivery in try store.dueDeliveries(now: now, limit: 10) { ... try store.markDelivered(delivery.id, at: now) }
/// ```
public struct HookDelivery: Hashable, Sendable {
    public enum Status: String, Hashable, Sendable {
        case pending
        case delivered
        /// Gave up after the maximum attempts.
        case failed
        /// Dropped because the queue was full.
        case dropped
    }

    public var id: Int64
    public var eventID: Int64
    /// The hook's name in the configuration (`on-enter[0]`, `webhook:http://...`).
    public var hook: String
    public var status: Status
    public var attempts: Int
    /// When the next attempt is due (seconds, same clock as events).
    public var nextAttemptAt: Double
    public var lastError: String?
    public var deliveredAt: Double?
}
