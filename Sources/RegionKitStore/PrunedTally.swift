/// What pruning took out of the event log, kept so the log's running totals never go back: the
/// events of each type and the failed hook-delivery attempts that the retention deleted. Stored
/// in the table `pruned_tally` (`counter` text primary key, `count` integer) of both stores, updated
/// in the same transaction as the deletion, so `what the log holds + what was pruned` is exact at
/// every moment a reader can see.
///
/// ```swift
/// PrunedTally.counter(forEventType: "didEnterRegion")   // "events:didEnterRegion"
/// ```
public enum PrunedTally {
    /// The table's name (the same in SQLite and PostgreSQL).
    public static let table = "pruned_tally"
    /// The prefix of the counters that count pruned events, one per event type.
    public static let eventPrefix = "events:"
    /// The counter of failed attempts of deliveries that went with their pruned event.
    public static let failedAttempts = "hook_delivery_failed_attempts"

    /// The counter of pruned events of `type`.
    public static func counter(forEventType type: String) -> String { eventPrefix + type }
}
