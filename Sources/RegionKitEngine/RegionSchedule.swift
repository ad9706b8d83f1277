import RegionKitCore

/// The engine's timer bookkeeping, apart from the state machine: registration sequence numbers,
/// the lazy queue of region timers, the many-stream exit cache and the stream-pruning watermarks.
///
/// It knows nothing of regions' states: the engine computes a region's real deadline and tells
/// the schedule (``lower(_:to:)``, ``invalidate()``); ``MonitoringEngine/settleTimers()`` walks
/// the queue's minimum with ``earliest`` / ``dropEarliest()`` / ``cancelEarliest()`` /
/// ``moveEarliest(to:)`` until it is exact.
///
/// Per-region state is kept in arrays by the region's slot in the engine's ``RegionTable``
/// (dense, reused after a removal), so the per-sighting path does no hashing (issue 13: the
/// `[Int: …]` dictionaries it replaced cost a SipHash per lookup, five per sighting).
///
/// The queue is lazy: each region's live entry is the one whose time equals its slot's
/// scheduled time (and whose registration number is the slot's), never later than the region's
/// real deadline; an entry may be stale (its region gone, or superseded by an earlier entry) or
/// early (the deadline moved later since). That keeps the hot path — a sighting that pushes an
/// exit deadline later — free of heap operations.
///
/// ```swift
/// var schedule = RegionSchedule()
/// let number = schedule.register(slot: 0)         // 0
/// schedule.lower(0, to: Timestamp(seconds: 30))    // by slot
/// schedule.earliest?.has(sequence: 0)             // true
/// ```
struct RegionSchedule: Sendable {
    /// The next registration sequence number. A region's number (``number(slot:)``) sorts the
    /// engine's registration order, and ties between equal deadlines go to the smaller one.
    private var nextSequence = 0
    /// Region timers by due time (see the type's discussion: lazy).
    private(set) var timers = RegionTimerQueue()
    /// By slot: the registration sequence number of the region in it (−1: free).
    private var numberBySlot: [Int] = []
    /// By slot: the live entry's time in seconds (NaN: no timer).
    private var scheduledBySlot: [Double] = []
    /// Regions with a timer.
    private var scheduledCount = 0
    /// By slot: the stream count above which the region is pruned next (when its count doubles).
    private var pruneWatermarks: [Int32] = []
    /// By slot: the position + 1 of the region's ``ExitLeader`` in `leaders` (0: none known).
    private var leaderPositions: [Int32] = []
    private var leaders: [ExitLeader] = []
    private var freeLeaders: [Int32] = []
    /// The queue's minimum may be stale or early: the engine's `settleTimers()` has work to do.
    var isDirty = false
    /// Beacon regions with more than ``exitCacheThreshold`` streams (a UUID-wide region tracking
    /// many beacons) keep the stream with the latest gone-deadline, kept up to date by sightings,
    /// so the region's exit deadline costs O(1) instead of a visit of every stream.
    static let exitCacheThreshold = 8

    /// The stream of a many-stream region that goes silent last, and when.
    struct ExitLeader: Sendable {
        var time: Timestamp
        var key: MonitoredRegion.StreamKey
        var lastSighting: Timestamp
    }

    // MARK: - Sequence numbers

    /// Makes room for slots up to `slotCount` (the per-slot arrays grow once).
    mutating func reserveCapacity(slots slotCount: Int) {
        numberBySlot.growCapacity(toAtLeast: slotCount)
        scheduledBySlot.growCapacity(toAtLeast: slotCount)
        pruneWatermarks.growCapacity(toAtLeast: slotCount)
        leaderPositions.growCapacity(toAtLeast: slotCount)
    }

    /// Gives the region stored in `slot` the next registration sequence number.
    mutating func register(slot: Int) -> Int {
        let number = nextSequence
        nextSequence += 1
        while numberBySlot.count <= slot {
            numberBySlot.append(-1)
            scheduledBySlot.append(.nan)
            pruneWatermarks.append(0)
            leaderPositions.append(0)
        }
        numberBySlot[slot] = number
        return number
    }

    /// Forgets the region in `slot`: its number, cache and watermark; its queue entry is dropped lazily.
    mutating func unregister(slot: Int) {
        guard slot >= 0, slot < numberBySlot.count, numberBySlot[slot] >= 0 else { return }
        numberBySlot[slot] = -1
        pruneWatermarks[slot] = 0
        setExitLeader(nil, slot: slot)
        if !scheduledBySlot[slot].isNaN {
            scheduledBySlot[slot] = .nan
            scheduledCount -= 1
            isDirty = true
        }
    }

    /// The registration sequence number of the region in `slot`, if one is there.
    func number(slot: Int) -> Int? {
        guard slot >= 0, slot < numberBySlot.count, numberBySlot[slot] >= 0 else { return nil }
        return numberBySlot[slot]
    }

    // MARK: - Timers

    /// The queue's minimum (exact once the engine has settled the queue).
    var earliest: RegionTimer? { timers.min }

    /// The live entry's time of the region in `slot`, if it has one.
    func scheduledTime(slot: Int) -> Timestamp? {
        let seconds = scheduledBySlot[slot]
        return seconds.isNaN ? nil : Timestamp(seconds: seconds)
    }

    /// Whether `timer` is its region's live entry (not a stale one).
    func isLive(_ timer: RegionTimer) -> Bool {
        let slot = Int(timer.slot)
        return slot >= 0 && slot < numberBySlot.count && timer.has(sequence: numberBySlot[slot]) && scheduledBySlot[slot] == timer.time.seconds
    }

    /// The minimum may no longer be exact (a deadline moved later or vanished).
    mutating func invalidate() { isDirty = true }

    /// Records that the region in `slot` may be due as early as `time` (a lower bound is enough).
    mutating func lower(_ slot: Int, to time: Timestamp) {
        setScheduled(slot, time.seconds)
        timers.push(RegionTimer(time: time, sequence: numberBySlot[slot], slot: Int32(truncatingIfNeeded: slot)))
        isDirty = true
    }

    private mutating func setScheduled(_ slot: Int, _ seconds: Double) {
        if scheduledBySlot[slot].isNaN { scheduledCount += 1 }
        scheduledBySlot[slot] = seconds
    }

    /// Drops a stale minimum.
    mutating func dropEarliest() { timers.popMin() }

    /// Drops the minimum and its region's timer (the region has nothing left to wait for).
    mutating func cancelEarliest() {
        guard let first = timers.popMin(), isLive(first) else { return }
        scheduledBySlot[Int(first.slot)] = .nan
        scheduledCount -= 1
    }

    /// Moves the minimum (an early, live entry) to its region's real deadline `time`.
    mutating func moveEarliest(to time: Timestamp) {
        guard var first = timers.min else { return }
        setScheduled(Int(first.slot), time.seconds)
        first.time = time
        timers.replaceMin(with: first)
    }

    /// Rebuilds the queue from the live entries when stale ones outnumber them.
    mutating func compactIfSparse() {
        if timers.count > 1_024 && timers.count > 4 * scheduledCount {
            timers.rebuild(liveTimers())
        }
    }

    private func liveTimers() -> [RegionTimer] {
        var live: [RegionTimer] = []
        live.reserveCapacity(scheduledCount)
        for slot in scheduledBySlot.indices where !scheduledBySlot[slot].isNaN {
            live.append(RegionTimer(time: Timestamp(seconds: scheduledBySlot[slot]), sequence: numberBySlot[slot], slot: Int32(truncatingIfNeeded: slot)))
        }
        return live
    }

    /// Replaces every timer with exact `deadlines` (by slot, after a profile change) and forgets the caches.
    mutating func replaceAll(with deadlines: [Int: Timestamp]) {
        for slot in scheduledBySlot.indices { scheduledBySlot[slot] = .nan }
        scheduledCount = 0
        for (slot, time) in deadlines { setScheduled(slot, time.seconds) }
        for slot in leaderPositions.indices { leaderPositions[slot] = 0 }
        leaders = []
        freeLeaders = []
        timers.rebuild(liveTimers())
        isDirty = false
    }

    // MARK: - Exit cache

    /// Whether any region has a cached leader. Without one every position is 0, and the lookups
    /// below answer without reading `leaderPositions`: an engine of circular regions only keeps
    /// no leaders, yet read a region's position at each timer it settled (`dueContext(slot:)`),
    /// at 1 M regions one random line of a 4 MB array — 1.8 % of a `perf` sample of the fix
    /// path, nearly all of it that load. Removed, part of the wait moved to the next miss
    /// (`trackGeo`): ≈ 0.4 % of the samples net.
    private var holdsLeaders: Bool { leaders.count != freeLeaders.count }

    /// The cached latest-deadline stream of the region in `slot`, if known.
    func exitLeader(slot: Int) -> ExitLeader? {
        guard holdsLeaders else { return nil }
        let position = Int(leaderPositions[slot])
        return position == 0 ? nil : leaders[position - 1]
    }

    /// Sets (or, with `nil`, forgets) the cached latest-deadline stream of the region in `slot`.
    mutating func setExitLeader(_ leader: ExitLeader?, slot: Int) {
        if leader == nil && !holdsLeaders { return }
        let position = Int(leaderPositions[slot])
        switch (leader, position) {
        case (nil, 0):
            return
        case (nil, _):
            freeLeaders.append(Int32(truncatingIfNeeded: position - 1))
            leaderPositions[slot] = 0
        case (let leader?, 0):
            if let reused = freeLeaders.popLast() {
                leaders[Int(reused)] = leader
                leaderPositions[slot] = reused + 1
            } else {
                leaders.append(leader)
                leaderPositions[slot] = Int32(truncatingIfNeeded: leaders.count)
            }
        case (let leader?, _):
            leaders[position - 1] = leader
        }
    }

    /// Keeps the cached leader of the region in `slot` current after the stream of `identity` by
    /// `scannerID` was heard at `time` (its deadline now `deadline`), with the engine's tie rule:
    /// the later deadline, then the stream heard last, then the smaller key. In place: the
    /// leader is neither copied out nor its key rebuilt unless another stream takes the lead.
    /// False, changing nothing, when no leader is cached (the caller finds it).
    mutating func updateExitLeader(slot: Int, identity: BeaconIdentity, scannerID: String?,
                                   deadline: Timestamp, at time: Timestamp) -> Bool {
        let position = Int(leaderPositions[slot])
        guard position > 0 else { return false }
        let index = position - 1
        let sighting = time   // the engine's clock never goes back: the stream was just heard now
        if leaders[index].key.matches(identity: identity, scannerID: scannerID) {
            // The leader itself: still the leader unless its deadline came earlier.
            if deadline >= leaders[index].time {
                leaders[index].time = deadline
                leaders[index].lastSighting = sighting
            } else {
                setExitLeader(nil, slot: slot)
            }
            return true
        }
        let cachedTime = leaders[index].time
        if deadline > cachedTime || (deadline == cachedTime && (sighting > leaders[index].lastSighting
            || (sighting == leaders[index].lastSighting && MonitoredRegion.StreamKey(identity: identity, scannerID: scannerID) < leaders[index].key))) {
            leaders[index] = ExitLeader(time: deadline, key: MonitoredRegion.StreamKey(identity: identity, scannerID: scannerID), lastSighting: sighting)
        }
        return true
    }

    // MARK: - Pruning

    /// Whether the region in `slot`, now with `streamCount` streams, is due for pruning (its
    /// count has doubled since the last prune): amortised O(1) per new stream.
    func needsPruning(slot: Int, streamCount: Int) -> Bool {
        streamCount > 4 && streamCount > Int(pruneWatermarks[slot])
    }

    /// The region in `slot` was pruned down to `remaining` streams: prune again when that doubles.
    mutating func pruned(slot: Int, remaining: Int) {
        setExitLeader(nil, slot: slot)
        pruneWatermarks[slot] = Int32(clamping: 2 * remaining)
        isDirty = true
    }
}
