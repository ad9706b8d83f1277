import RegionKitCore

/// The engine's timer bookkeeping, apart from the state machine: registration sequence numbers,
/// the lazy queue of region timers, the many-stream exit cache and the stream-pruning watermarks.
///
/// It knows nothing of regions' states: the engine computes a region's real deadline and tells
/// the schedule (``lower(_:to:)``, ``invalidate()``); ``MonitoringEngine/settleTimers()`` walks
/// the queue's minimum with ``earliest`` / ``dropEarliest()`` / ``cancelEarliest()`` /
/// ``moveEarliest(to:)`` until it is exact.
///
/// The queue is lazy: each region's live entry is the one whose time equals
/// `scheduled[sequence]`, never later than the region's real deadline; an entry may be stale (its
/// region gone, or superseded by an earlier entry) or early (the deadline moved later since). That
/// keeps the hot path — a sighting that pushes an exit deadline later — free of heap operations.
///
/// ```swift
/// var schedule = RegionSchedule()
/// let number = schedule.register("lobby", slot: 0) // 0
/// schedule.lower(number, to: Timestamp(seconds: 30))
/// schedule.earliest?.sequence                      // 0
/// ```
struct RegionSchedule: Sendable {
    /// Registration sequence number of every monitored region: sorting by it gives the
    /// engine's registration order, and ties between equal deadlines go to the smaller one.
    private(set) var sequence: [String: Int] = [:]
    /// The ``MonitoringEngine/regions`` slot of each registration number (the timer path reaches
    /// a record without hashing its identifier).
    private var slotBySequence: [Int: Int32] = [:]
    private var nextSequence = 0
    /// Region timers by due time (see the type's discussion: lazy).
    private(set) var timers = RegionTimerQueue()
    /// The live entry's time of each region with a timer.
    private(set) var scheduled: [Int: Timestamp] = [:]
    /// The queue's minimum may be stale or early: the engine's `settleTimers()` has work to do.
    var isDirty = false
    /// Beacon regions with many streams are pruned of gone streams when their count doubles.
    private var pruneWatermarks: [Int: Int] = [:]
    /// Beacon regions with more than ``exitCacheThreshold`` streams (a UUID-wide region tracking
    /// many beacons): the stream with the latest gone-deadline, kept up to date by sightings so
    /// the region's exit deadline costs O(1) instead of a visit of every stream. Absent = unknown.
    private var exitCache: [Int: ExitLeader] = [:]
    static let exitCacheThreshold = 8

    /// The stream of a many-stream region that goes silent last, and when.
    struct ExitLeader: Sendable {
        var time: Timestamp
        var key: MonitoredRegion.StreamKey
        var lastSighting: Timestamp
    }

    // MARK: - Sequence numbers

    /// Gives `id` the next registration sequence number.
    mutating func register(_ id: String, slot: Int) -> Int {
        let number = nextSequence
        nextSequence += 1
        sequence[id] = number
        slotBySequence[number] = Int32(truncatingIfNeeded: slot)
        return number
    }

    /// Forgets `id`: its number, cache and watermark; its queue entry is dropped lazily.
    mutating func unregister(_ id: String) {
        guard let number = sequence.removeValue(forKey: id) else { return }
        slotBySequence[number] = nil
        pruneWatermarks[number] = nil
        exitCache[number] = nil
        if scheduled.removeValue(forKey: number) != nil { isDirty = true }
    }

    func number(of id: String) -> Int? { sequence[id] }

    /// The ``MonitoringEngine/regions`` slot of registration `number`.
    func slot(of number: Int) -> Int? { slotBySequence[number].map(Int.init) }

    // MARK: - Timers

    /// The queue's minimum (exact once the engine has settled the queue).
    var earliest: RegionTimer? { timers.min }

    /// The live entry's time of region `number`, if it has one.
    func scheduledTime(of number: Int) -> Timestamp? { scheduled[number] }

    /// Whether `timer` is its region's live entry (not a stale one).
    func isLive(_ timer: RegionTimer) -> Bool { scheduled[timer.sequence] == timer.time }

    /// The minimum may no longer be exact (a deadline moved later or vanished).
    mutating func invalidate() { isDirty = true }

    /// Records that region `number` may be due as early as `time` (a lower bound is enough).
    mutating func lower(_ number: Int, to time: Timestamp) {
        scheduled[number] = time
        timers.push(RegionTimer(time: time, sequence: number))
        isDirty = true
    }

    /// Drops a stale minimum.
    mutating func dropEarliest() { timers.popMin() }

    /// Drops the minimum and its region's timer (the region has nothing left to wait for).
    mutating func cancelEarliest() {
        guard let first = timers.popMin() else { return }
        scheduled[first.sequence] = nil
    }

    /// Moves the minimum (an early entry) to its region's real deadline `time`.
    mutating func moveEarliest(to time: Timestamp) {
        guard let first = timers.popMin() else { return }
        scheduled[first.sequence] = time
        timers.push(RegionTimer(time: time, sequence: first.sequence))
    }

    /// Rebuilds the queue from the live entries when stale ones outnumber them.
    mutating func compactIfSparse() {
        if timers.count > 1_024 && timers.count > 4 * scheduled.count {
            timers.rebuild(scheduled.map { RegionTimer(time: $0.value, sequence: $0.key) })
        }
    }

    /// Replaces every timer with exact `deadlines` (after a profile change) and forgets the caches.
    mutating func replaceAll(with deadlines: [Int: Timestamp]) {
        scheduled = deadlines
        exitCache = [:]
        timers.rebuild(scheduled.map { RegionTimer(time: $0.value, sequence: $0.key) })
        isDirty = false
    }

    // MARK: - Exit cache

    /// The cached latest-deadline stream of region `number`, if known.
    func exitLeader(of number: Int) -> ExitLeader? { exitCache[number] }

    /// Sets (or, with `nil`, forgets) the cached latest-deadline stream of region `number`.
    mutating func setExitLeader(_ leader: ExitLeader?, of number: Int) { exitCache[number] = leader }

    /// Keeps region `number`'s cached leader current after stream `key` was heard at `time` (its
    /// deadline now `deadline`), with the engine's tie rule: the later deadline, then the stream
    /// heard last, then the smaller key. The caller has checked a leader is cached.
    mutating func updateExitLeader(of number: Int, cached: ExitLeader, key: MonitoredRegion.StreamKey,
                                   deadline: Timestamp, at time: Timestamp) {
        let sighting = time   // the engine's clock never goes back: the stream was just heard now
        if cached.key == key {
            // The leader itself: still the leader unless its deadline came earlier.
            exitCache[number] = deadline >= cached.time ? ExitLeader(time: deadline, key: key, lastSighting: sighting) : nil
        } else if deadline > cached.time || (deadline == cached.time && (sighting > cached.lastSighting
                    || (sighting == cached.lastSighting && key < cached.key))) {
            exitCache[number] = ExitLeader(time: deadline, key: key, lastSighting: sighting)
        }
    }

    // MARK: - Pruning

    /// Whether region `number`, now with `streamCount` streams, is due for pruning (its count has
    /// doubled since the last prune): amortised O(1) per new stream.
    func needsPruning(_ number: Int, streamCount: Int) -> Bool {
        streamCount > 4 && streamCount > pruneWatermarks[number, default: 0]
    }

    /// Region `number` was pruned down to `remaining` streams: prune again when that doubles.
    mutating func pruned(_ number: Int, remaining: Int) {
        exitCache[number] = nil
        pruneWatermarks[number] = 2 * remaining
        isDirty = true
    }
}
