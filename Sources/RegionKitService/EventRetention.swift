import RegionKitStore

/// How long the event log keeps its events (`retention:` in the daemon's configuration): by age,
/// by count, or both (an event goes when either says so). Without it the log keeps everything
/// (≈ 370 bytes an event; a flood of new beacons logs two events each).
///
/// ```yaml
/// retention: {maxAgeDays: 90, maxEvents: 5000000}
/// ```
///
/// Whatever the limits, the newest event and every event with a pending hook delivery are kept
/// (`RegionStoring.pruneEvents(olderThan:keepingNewest:limit:)`); an output further behind than
/// the retention (the MQTT events topic after a long outage) goes on from the next event left.
/// Regions and their states are not events: they are never pruned.
public struct EventRetention: Codable, Hashable, Sendable {
    /// Events older than this many days (event time) are deleted.
    public var maxAgeDays: Double?
    /// At most this many events are kept (the newest).
    public var maxEvents: Int?

    public init(maxAgeDays: Double? = nil, maxEvents: Int? = nil) {
        self.maxAgeDays = maxAgeDays
        self.maxEvents = maxEvents
    }

    /// The longest age accepted, days (100 years).
    public static let largestAgeDays = 36_500.0
    /// Events deleted per transaction: a chunk keeps each write short (≈ 10–50 ms on SQLite), so
    /// the engine's writes go on between chunks.
    public static let chunk = 5_000
    /// How often the daemon prunes (and once at its start).
    public static let interval: Duration = .seconds(600)

    /// What is wrong with the block (named after its field), or nil.
    public var problem: String? {
        if maxAgeDays == nil && maxEvents == nil { return "give maxAgeDays, maxEvents or both (without retention: the log keeps everything)" }
        if let days = maxAgeDays, !(days.isFinite && days > 0 && days <= Self.largestAgeDays) {
            return "maxAgeDays \(days) must be more than 0 and at most \(Int(Self.largestAgeDays))"
        }
        if let events = maxEvents, !(1...Int(Int32.max)).contains(events) {
            return "maxEvents \(events) must be within 1...\(Int32.max)"
        }
        return nil
    }

    /// Deletes what the retention says, one chunk per transaction, until a chunk finds less than
    /// a full one (or the task is cancelled); returns how many events were deleted.
    /// - Parameter now: the time events are aged against (Unix seconds, the manager's clock).
    public func prune(_ store: any RegionStoring, now: Double) async throws -> Int {
        let before = maxAgeDays.map { now - $0 * 86_400 }
        var total = 0
        while !Task.isCancelled {
            let pruned = try await store.pruneEvents(olderThan: before, keepingNewest: maxEvents, limit: Self.chunk)
            total = total.addingReportingOverflow(pruned).partialValue
            guard pruned >= Self.chunk else { break }
            await Task.yield()
        }
        return total
    }
}
