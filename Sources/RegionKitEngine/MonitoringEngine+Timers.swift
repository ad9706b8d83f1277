import RegionKitCore

/// When the engine is next due, and the region timers kept in its ``RegionSchedule``.
extension MonitoringEngine {
    enum DueItem: Sendable {
        case initialWindow(String)
        case exit(String)
        /// A circular region's crossing has held its dwell: the region's slot in ``regions``.
        case geoDwell(Int)
        case ranging(Int)
        case retry(String)
        case wake
        /// A tracked beacon may be heard by no scanner any more (``NearestAbsence``).
        case nearestAbsent(BeaconIdentity)
    }

    /// The time of ``nextDue()``, cheaply: with the timer queue settled its minimum is exact,
    /// so no region record is read (the common case on every sighting: nothing is due).
    func nextDueTime() -> Timestamp? {
        guard usesSpatialIndex else { return nextDue()?.time }
        var best = schedule.earliest?.time
        func consider(_ time: Timestamp) {
            if best == nil || time < best! { best = time }
        }
        if let delivery = sessions.next { consider(delivery.time) }
        if let retry = retries.next { consider(retry.time) }
        if let wakeRequestAt { consider(wakeRequestAt) }
        if let absence = nearestAbsences.min { consider(absence.time) }
        return best
    }

    func nextDue() -> (time: Timestamp, item: DueItem)? {
        var best: (time: Timestamp, item: DueItem)?
        func consider(_ time: Timestamp, _ item: DueItem) {
            if best == nil || time < best!.time { best = (time, item) }
        }
        if usesSpatialIndex {
            // The earliest region timer, ties going to the earliest registered region: exactly
            // what the scan of `order` below picks, without visiting idle circular regions.
            // (The queue's minimum is exact: every mutation ends with settleTimers().)
            if let first = schedule.earliest, first.slot >= 0,
               let due = regions.readStreams(slot: Int(first.slot), { dueItem(of: $0, streams: $1, id: $0.region.identifier, slot: Int(first.slot)) }) ?? nil {
                best = due
            }
        } else {
            for entry in order {
                guard let due = regions.readStreams(slot: entry.slot, { dueItem(of: $0, streams: $1, id: $0.region.identifier, slot: entry.slot) }) ?? nil else { continue }
                consider(due.time, due.item)
            }
        }
        if let delivery = sessions.next { consider(delivery.time, .ranging(delivery.slot)) }
        if let retry = retries.next { consider(retry.time, .retry(retry.id)) }
        if let wakeRequestAt { consider(wakeRequestAt, .wake) }
        if let absence = nearestAbsences.min { consider(absence.time, .nearestAbsent(absence.identity)) }
        return best
    }

    /// The timer a monitored region is waiting for, if any.
    /// `slot`: the region's slot when the caller has it (saves a lookup by identifier).
    func dueItem(of monitored: RegionRecord, streams: RegionStreams, id: String, slot: Int? = nil) -> (time: Timestamp, item: DueItem)? {
        guard let slot = slot ?? regions.slot(of: id), let time = Self.dueTime(of: monitored, streams: streams, context: dueContext(slot: slot)) else { return nil }
        switch monitored.region {
        case .beacon: return (time, monitored.state == .inside ? .exit(id) : .initialWindow(id))
        case .circular: return (time, .geoDwell(slot))
        }
    }

    /// What ``dueTime(of:streams:context:)`` needs from the engine besides the record: gathered
    /// first, so the record can then be reached in place (``RegionTable/update(slot:_:)``) without
    /// a copy.
    struct DueContext {
        var initialWindow: Double
        var dwell: Double
        var detector: ExitDetector
        /// The region's cached exit leader (many-stream regions; with the spatial index only).
        var leader: RegionSchedule.ExitLeader?
    }

    func dueContext(slot: Int) -> DueContext {
        DueContext(initialWindow: profile.initialDeterminationWindow, dwell: profile.geoHysteresis.dwell,
                   detector: profile.exitDetector, leader: usesSpatialIndex ? schedule.exitLeader(slot: slot) : nil)
    }

    /// The time of ``dueItem(of:streams:id:slot:)`` without building the item (no identifier is
    /// copied).
    static func dueTime(of monitored: RegionRecord, streams: RegionStreams, context: DueContext) -> Timestamp? {
        switch monitored.region {
        case .beacon:
            if monitored.state == .unknown && streams.isEmpty {
                return monitored.registeredAt + context.initialWindow
            } else if monitored.state == .inside {
                if streams.count > RegionSchedule.exitCacheThreshold, let cached = context.leader,
                   streams.index(forKey: cached.key) != nil {
                    return cached.time
                }
                return scanExitDeadlineTime(of: monitored, streams: streams, detector: context.detector)
                    ?? restoredExitDeadline(of: monitored, streams: streams, detector: context.detector)
            }
        case .circular:
            if let candidate = monitored.candidate, candidate != monitored.state, let since = monitored.candidateSince {
                return since + context.dwell
            }
        }
        return nil
    }

    /// ``scanExitDeadline(of:streams:detector:)``'s time: the latest gone-deadline of the region's
    /// streams.
    static func scanExitDeadlineTime(of monitored: RegionRecord, streams: RegionStreams, detector: ExitDetector) -> Timestamp? {
        var latest: Timestamp?
        let origin = monitored.registeredAt
        streams.forEachStream { _, stream, known in
            let deadline = known ?? detector.goneDeadline(for: stream, gridOrigin: origin)
            if latest == nil || deadline > latest! { latest = deadline }
        }
        return latest
    }

    /// A restored "inside" beacon region not heard since the restart exits as if last seen then.
    static func restoredExitDeadline(of monitored: RegionRecord, streams: RegionStreams, detector: ExitDetector) -> Timestamp? {
        guard let restoredAt = monitored.restoredAt, streams.isEmpty else { return nil }
        let stream = ReceptionEstimator(firstSighting: restoredAt, priorInterval: detector.priorInterval, tracksEvidence: false)
        return detector.goneDeadline(for: stream, gridOrigin: monitored.registeredAt)
    }

    /// When the last present stream of a beacon region counts as gone, with that stream. Ties
    /// (common on Core Location's 10 s grid) go to the stream heard last, then to the smallest
    /// stream key, so the evidence does not depend on dictionary iteration order.
    /// `leader`: the region's cached latest-deadline stream (``RegionSchedule/exitLeader(slot:)``,
    /// `nil` when the engine keeps none), used when the region has enough streams to keep one.
    /// Static, with the leader read by the caller: called on the engine inside a closure over
    /// its regions, it made the compiler copy the whole engine for every exit.
    static func exitDeadline(of monitored: RegionRecord, streams: RegionStreams, leader: RegionSchedule.ExitLeader?,
                             detector: ExitDetector) -> (time: Timestamp, stream: ReceptionEstimator)? {
        if streams.count > RegionSchedule.exitCacheThreshold, let leader, let stream = streams[leader.key] {
            return (leader.time, stream)
        }
        return scanExitDeadline(of: monitored, streams: streams, detector: detector).map { ($0.time, $0.stream) }
    }

    /// ``exitDeadline(of:streams:leader:detector:)`` by visiting every stream, with the winning stream's key.
    static func scanExitDeadline(of monitored: RegionRecord, streams: RegionStreams, detector: ExitDetector)
        -> (time: Timestamp, key: MonitoredRegion.StreamKey, stream: ReceptionEstimator)? {
        var latest: (time: Timestamp, key: MonitoredRegion.StreamKey, stream: ReceptionEstimator)?
        let origin = monitored.registeredAt
        streams.forEachStream { key, stream, known in
            let deadline = known ?? detector.goneDeadline(for: stream, gridOrigin: origin)
            if let current = latest {
                guard deadline > current.time || (deadline == current.time && (stream.lastSighting > current.stream.lastSighting
                    || (stream.lastSighting == current.stream.lastSighting && key < current.key))) else { return }
            }
            latest = (deadline, key, stream)
        }
        return latest
    }

    // MARK: - Timer queue

    /// Brings region `id`'s timer entry in line with its record after a change: pushes the exact
    /// deadline when it is earlier than the scheduled one; a later or vanished deadline is left
    /// to ``settleTimers()`` (lazy), so moving a deadline later costs no heap operation.
    mutating func reschedule(_ id: String) {
        guard let slot = regions.slot(of: id) else { return }
        reschedule(slot: slot)
    }

    /// ``reschedule(_:)`` for the region in `slot`. The record is reached in place (reading it
    /// through the table's getter copied it) and only its deadline is computed.
    mutating func reschedule(slot: Int) {
        guard let deadline = dueTime(slot: slot) else { return }
        let current = schedule.scheduledTime(slot: slot)
        guard let due = deadline else {
            if current != nil { schedule.invalidate() }
            return
        }
        if let current, current <= due {
            if current < due { schedule.invalidate() }
            return
        }
        schedule.lower(slot, to: due)
    }

    /// The deadline of the region in `slot`, computed with its record reached in place (an inout
    /// access: a read through the table's getter copied it): `nil` when the slot holds no region,
    /// `.some(nil)` when the region has no deadline.
    mutating func dueTime(slot: Int) -> Timestamp?? {
        let context = dueContext(slot: slot)
        return regions.updateStreams(slot: slot) { Self.dueTime(of: $0, streams: $1, context: context) }
    }

    /// Makes the queue's minimum exact: drops stale entries and moves early ones to their
    /// region's real deadline, until the minimum is a live, exact entry.
    mutating func settleTimers() {
        if !nearestAbsences.isEmpty { settleNearestAbsences() }
        guard schedule.isDirty else { return }
        schedule.isDirty = false
        while let first = schedule.earliest {
            // Only the deadline, not the item with its identifier (``dueTime(slot:)``).
            guard schedule.isLive(first), let deadline = dueTime(slot: Int(first.slot)) else {
                schedule.dropEarliest()
                continue
            }
            guard let due = deadline else {
                schedule.cancelEarliest()
                continue
            }
            if due == first.time { break }
            schedule.moveEarliest(to: due)
        }
        schedule.compactIfSparse()
    }

    /// Recomputes every region's timer (after a profile change).
    mutating func rebuildTimers() {
        schedule.replaceAll(with: [:])   // forgets the exit cache before deadlines are computed
        regions.forgetStreamDeadlines()   // computed by the previous detector
        var deadlines: [Int: Timestamp] = [:]
        for entry in order {
            guard let due = regions.readStreams(slot: entry.slot, { dueItem(of: $0, streams: $1, id: $0.region.identifier, slot: entry.slot) }) ?? nil else { continue }
            deadlines[entry.slot] = due.time
        }
        schedule.replaceAll(with: deadlines)
        // The absence times too: the new exit detector may call a stream gone sooner than filed.
        var absences: [NearestAbsence] = []
        let detector = profile.exitDetector
        for identity in nearest.keys {
            guard var state = nearest[identity] else { continue }
            state.absentAt = state.absentDeadline(detector: detector)
            nearest[identity] = state
            if let time = state.absentAt { absences.append(NearestAbsence(time: time, identity: identity)) }
        }
        nearestAbsences.rebuild(absences)
    }
}
