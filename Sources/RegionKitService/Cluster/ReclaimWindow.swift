/// When a member's lease rounds only take back its own partitions: for `length` (two lease
/// times) from its first successful round after it was away from the store (its rounds failed, or
/// the store says its heartbeat had expired). Every member comes back from the same outage at its
/// own pace (connection pools retry with backoff); each reclaims its own, and the ordinary rounds
/// after the window balance the rest, instead of the first member back taking every partition and
/// handing most back a round later.
///
/// The window runs from when the member is back, not from when its first round after a failure
/// started: that round may have waited out the whole outage for a connection, and a window
/// counted from its start could be over by the time it returns (the member then took the
/// partitions of others still on their way back).
///
/// ```swift
/// var window = ReclaimWindow(length: .seconds(6))
/// let reclaimOnly = window.begin(at: .now)
/// do {
///     let round = try await store.balanceLeases(member: m, partitions: 16, ttl: 3, reclaimOnly: reclaimOnly)
///     window.succeeded(reclaimed: round.reclaimed, at: .now)
/// } catch {
///     window.failed()
/// }
/// ```
struct ReclaimWindow: Sendable {
    let length: Duration
    private var failedBefore = false
    private var until: ContinuousClock.Instant?
    /// What ``begin(at:)`` found: a window open, and a failure before this round.
    private var began = (open: false, afterFailure: false)

    init(length: Duration) {
        self.length = length
    }

    /// A round starts at `now`: whether it only reclaims (after a failure, or in the window).
    mutating func begin(at now: ContinuousClock.Instant) -> Bool {
        let open = until.map { now < $0 } ?? false
        began = (open, failedBefore)
        return open || failedBefore
    }

    /// The round that ``begin(at:)`` started succeeded at `now`; `reclaimed`: it only reclaimed
    /// (asked to, or the store found the member away).
    mutating func succeeded(reclaimed: Bool, at now: ContinuousClock.Instant) {
        if !reclaimed {
            until = nil
        } else if began.afterFailure || !began.open {
            // Back from being away: the window starts now. (A round in an open window keeps it.)
            until = now + length
        }
        failedBefore = false
    }

    /// The round failed: the next one only reclaims, and so do those in the window after it succeeds.
    mutating func failed() {
        failedBefore = true
    }
}
