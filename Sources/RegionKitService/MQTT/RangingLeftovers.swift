import RegionKitCore

/// Beacons whose distance this run did not publish but that the broker may still keep retained:
/// an earlier run's (``RetainedDistanceScan``), and those whose ranging stopped for want of a
/// source (``PresenceRangingTracker/rangingSuspended(where:)``). They are cleared at ``due``
/// (``PresenceRangingTracker/leftoverDepartures(of:room:kept:)``) unless ranged again by then;
/// the deadline is pushed back while the source or the broker is away, so the grace period
/// counts from their return. Used by the hub's ranging loop and by each cluster partition.
///
/// ```swift
/// leftovers.add(tracker.rangingSuspended(where: { $1 == label }), grace: .seconds(30))
/// // every second:
/// if sourceAway { leftovers.postpone(by: .seconds(30)) }
/// else if leftovers.isDue() { publish(tracker.leftoverDepartures(of: leftovers.beacons, …)); leftovers.clear() }
/// ```
struct RangingLeftovers: Sendable {
    private(set) var beacons: Set<BeaconIdentity> = []
    /// When they are cleared; nil while there are none.
    private(set) var due: ContinuousClock.Instant?

    /// Adds `found` (cleared `grace` from now at the earliest, with those already waiting).
    mutating func add(_ found: some Sequence<BeaconIdentity>, grace: Duration, now: ContinuousClock.Instant = .now) {
        beacons.formUnion(found)
        postpone(by: grace, now: now)
    }

    /// Clears the leftovers `grace` from now at the earliest (again while the source is away).
    mutating func postpone(by grace: Duration, now: ContinuousClock.Instant = .now) {
        guard !beacons.isEmpty else { return }
        due = max(due ?? now, now + grace)
    }

    /// Whether their deadline has passed.
    func isDue(now: ContinuousClock.Instant = .now) -> Bool {
        due.map { $0 <= now } ?? false
    }

    /// Forgets them (their departures went out).
    mutating func clear() {
        beacons = []
        due = nil
    }
}
