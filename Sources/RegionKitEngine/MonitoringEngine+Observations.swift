import RegionKitCore
/// Feeding sightings and fixes into the engine.
extension MonitoringEngine {
    /// A beacon was sighted: enters (or first determines) every matching region and feeds ranging.
    ///
    /// ```swift
    /// let events = engine.ingest(BeaconObservation(identity: id, rssi: -64, measuredPower: -59, timestamp: t))
    /// ```
    ///
    /// A sighting whose RSSI is outside `BeaconObservation.rssiRange` is no radio's reading (a
    /// library caller's bug or a forged message): only the clock advances. `Int.max` used to trap in
    /// the next ranging delivery.
    public mutating func ingest(_ observation: BeaconObservation) -> [LocationEvent] {
        var events = advance(to: observation.timestamp)
        guard BeaconObservation.rssiRange.contains(observation.rssi) else { return events }
        // A non-finite time counts as the engine's time (as for `advance`), also where the sighting
        // itself is kept: a ranged beacon stamped NaN would compare unequal to itself. (Copied only
        // then: each copy of an observation retains its scanner's name.)
        if observation.timestamp.seconds.isFinite {
            ingestNow(observation, into: &events)
        } else {
            var stamped = observation
            stamped.timestamp = now
            ingestNow(stamped, into: &events)
        }
        return events
    }

    /// ``ingest(_:)-(BeaconObservation)`` after the clock has advanced: the sighting at ``now``.
    private mutating func ingestNow(_ observation: BeaconObservation, into events: inout [LocationEvent]) {
        let time = now
        let identity = observation.identity
        // The scanner's channel first: a sighting that ends a silence of the whole scanner logs it.
        var channel: ChannelView?
        var gaps: [ScannerChannel.Gap] = []
        if profile.exitDetector.usesScannerPrior {
            (channel, gaps) = recordChannel(scannerID: observation.scannerID, at: time, sharing: profile.exitDetector.usesChannels)
        } else if let scanner = observation.scannerID {
            // This detector learns nothing from the channel: it is kept for what the engine tells
            // of its scanners (``scannerChannels``: `GET /v1/scanners`, the per-scanner metrics),
            // no view given to the streams. Heard, a scanner that said it was offline is back; the
            // last time it said so is not the streams' to learn.
            gaps = noteScannerHeard(scanner, at: time)
        }
        var prior: StreamPrior?
        // No gaps as nil, not an empty array: passed to every matching region, an array is
        // retained and released for each (even the empty one).
        let sharedGaps = gaps.isEmpty ? nil : gaps
        // Regions whose constraint can match: UUID only, UUID+major, UUID+major+minor, each list
        // in registration order; merged so events come in registration order across lists.
        // Eddystone-UID: namespace only (instance bytes zeroed), then namespace+instance.
        let (any, major, exact) = beaconIndex.candidates(for: identity, in: regions) ?? (.empty, .empty, .empty)
        var (a, b, c) = (0, 0, 0)
        while a < any.count || b < major.count || c < exact.count {
            var next = any.count > a ? any[a] : nil
            if b < major.count, next == nil || major[b].sequence < next!.sequence { next = major[b] }
            if c < exact.count, next == nil || exact[c].sequence < next!.sequence { next = exact[c] }
            guard let registered = next else { break }
            if a < any.count && any[a].sequence == registered.sequence { a += 1 }
            else if b < major.count && major[b].sequence == registered.sequence { b += 1 }
            else { c += 1 }
            let recorded = record(identity, scannerID: observation.scannerID, rssi: observation.rssi, in: registered, at: time,
                                  channel: channel, gaps: sharedGaps, prior: &prior)
            // Most sightings change no state: appending an empty array still reallocates.
            if !recorded.isEmpty { events += recorded }
        }
        if let prior, let channel { learnChannelPrior(number: channel.number, prior: prior, at: time) }
        if schedule.isDirty { settleTimers() }
        // A device that is no beacon gets a room only while a region names it: scanners report
        // every phone, tag and fingerprint they hear (ESPresense's `apple:…`, Theengs' random
        // addresses), and those are nobody's to place.
        if let policy = profile.nearestScanner, let scanner = observation.scannerID,
           identity.format != .device || !(any.isEmpty && major.isEmpty && exact.isEmpty) {
            // (A beacon heard while its room is set aside for a source outage: from that room.)
            var state = nearest[observation.identity]
                ?? (suspendedRooms.isEmpty ? nil : suspendedRooms.removeValue(forKey: observation.identity).map { NearestScannerState(restoring: $0, at: time) })
                ?? NearestScannerState()
            var stamped = observation
            stamped.timestamp = time
            if let change = state.record(stamped, scanner: scanner, policy: policy, otherScanners: profile.exitDetector.usesEvidence,
                                         offline: lastOffline(channel, gaps: sharedGaps)) {
                events.append(LocationEvent(timestamp: time, kind: .didChangeNearestScanner(observation.identity, scannerID: change.to, previous: change.from),
                                            evidence: EventEvidence(rssi: observation.rssi, scannerID: scanner, beacon: observation.identity)))
            }
            // Its absence entry: filed when it has none, or when the beacon may now be heard by no
            // scanner sooner than filed; a later time is found when the entry comes due (lazy).
            if let deadline = state.absentDeadline(detector: profile.exitDetector), state.absentAt.map({ deadline < $0 }) ?? true {
                state.absentAt = deadline
                nearestAbsences.push(NearestAbsence(time: deadline, identity: observation.identity))
            }
            nearest[observation.identity] = state
        }
        if !sessions.isEmpty { sessions.record(observation, filter: profile.rssiFilter) }
    }

    /// Sightings in order, as one call: the same events, in the same order, as calling
    /// ``ingest(_:)-(BeaconObservation)`` for each (a gateway batch, a scanner's buffer of
    /// reports, an MQTT message), with the per-call overhead paid once per batch.
    ///
    /// ```swift
    /// let events = engine.ingest(contentsOf: batch)   // batch: [BeaconObservation]
    /// ```
    public mutating func ingest(contentsOf observations: some Sequence<BeaconObservation>) -> [LocationEvent] {
        var events: [LocationEvent] = []
        for observation in observations {
            let produced = ingest(observation)
            if !produced.isEmpty { events += produced }
        }
        return events
    }

    /// Records a sighting in one candidate region.
    /// `channel`: the sighting's scanner channel (detectors that use one) and its `gaps`; `prior`
    /// is set to what the stream lends the channel's prior when it is settled and not set yet.
    /// Out of line: inlined into ``ingestNow(_:into:)`` it gave every sighting its larger frame,
    /// +57 instructions for one that matches no region (most traffic in a busy place), for 43
    /// fewer on one that does (`count.sh miss` / `ingest`, session 34).
    @inline(never)
    private mutating func record(_ identity: BeaconIdentity, scannerID: String?, rssi: Int, in registered: RegisteredID, at time: Timestamp,
                                 channel: ChannelView?, gaps: [ScannerChannel.Gap]?, prior: inout StreamPrior?) -> [LocationEvent] {
        // The record by slot: no identifier is hashed on this path.
        let slot = Int(registered.slot)
        guard slot >= 0 else { return [] }
        let detector = profile.exitDetector
        // Only the first settled stream's prior is lent (once per sighting): later regions skip it.
        let wantsPrior = channel != nil && prior == nil
        // A scanner-bound region hearing of its beacon from another scanner: evidence it moved.
        if detector.usesEvidence, regions.updateStreams(slot: slot, { Self.recordElsewhere(identity, scannerID: scannerID, rssi: rssi, in: $0, streams: &$1, at: time) }) == true {
            schedule.setExitLeader(nil, slot: slot)
            reschedule(slot: slot)
            return []
        }
        // One in-place access to the record (reading fields one by one would copy it each time).
        guard let recorded = regions.updateResuming(slot: slot, {
            Self.recordSighting(identity, scannerID: scannerID, rssi: rssi, in: &$0, streams: &$1, departed: &$2, at: time, detector: detector,
                                channel: channel, gaps: gaps, wantsPrior: wantsPrior)
        }),
              let sighting = recorded else { return [] }
        if channel != nil, prior == nil, let lent = sighting.prior { prior = lent }
        let number = registered.sequence
        if sighting.previous == .inside {
            if sighting.streamCount > RegionSchedule.exitCacheThreshold {
                updateExitCache(slot: slot, identity: identity, scannerID: scannerID, deadline: sighting.deadline, at: time)
            }
            // A sighting usually pushes the exit later (lazy: nothing to do unless this region's
            // entry is the queue's minimum); when it brings this stream's deadline before the
            // scheduled one (a faster learned rate), lower the entry — unless the stream's
            // deadline was before the scheduled time already: the region's exit, the latest of
            // its streams' deadlines and never before the scheduled time, was then another
            // stream's, which this sighting did not move (a region heard by two scanners in
            // turn: each sighting used to push an entry and settle it again).
            let scheduledTime = schedule.scheduledTime(slot: slot)
            if let scheduledTime, sighting.deadline >= scheduledTime {
                if schedule.earliest?.has(sequence: number) == true { schedule.invalidate() }
            } else if let scheduledTime, sighting.previousDeadline < scheduledTime.seconds {
                // Unchanged: the entry is still a lower bound, and exact if it was.
            } else {
                schedule.lower(slot, to: sighting.deadline)
            }
        }
        if sighting.newStream, schedule.needsPruning(slot: slot, streamCount: sighting.streamCount) {
            let remaining = regions.updateStreams(slot: slot) { record, streams in
                Self.prune(&record, streams: &streams, detector: detector, now: time)
                return streams.count
            }
            schedule.pruned(slot: slot, remaining: remaining ?? 0)
        }
        if sighting.wasRestored { schedule.invalidate() }
        guard sighting.previous != .inside, let id = regions.identifier(slot: slot) else { return [] }
        return setState(id, .inside, crossing: sighting.previous == .outside, evidence: EventEvidence(
            rssi: rssi, scannerID: scannerID, beacon: identity,
            reason: sighting.previous == .unknown ? "first sighting after registration" : "sighting"))
    }

    /// What recording a sighting in a region's record changed.
    struct RecordedSighting {
        var previous: RegionState
        var newStream: Bool
        var streamCount: Int
        /// The stream's gone-deadline after the sighting.
        var deadline: Timestamp
        /// Its gone-deadline before, in seconds, when the engine knew it (an existing stream whose
        /// deadline it had computed for the stream's state then); NaN otherwise.
        var previousDeadline: Double
        var wasRestored: Bool
        /// What the stream lends its scanner's prior (``ExitDetector/streamPrior(of:)``) once it is settled.
        var prior: StreamPrior? = nil
    }

    /// With ``ExitDetector/evidenceGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``:
    /// a sighting of a beacon that `monitored`, a region bound to *another* scanner, holds a stream
    /// of. The stream, silent since before `time`, counts it when it is at least as strong as its
    /// own RSSI level (``ReceptionEstimator/recordElsewhere(rssi:at:)``). True when a stream's
    /// evidence changed (its deadline may be earlier: reschedule).
    static func recordElsewhere(_ identity: BeaconIdentity, scannerID: String?, rssi: Int, in monitored: RegionRecord,
                                streams: inout RegionStreams, at time: Timestamp) -> Bool {
        guard monitored.state == .inside, case .beacon(let beacon) = monitored.region, let bound = beacon.scannerID,
              scannerID != bound, beacon.constraint.matches(identity) else { return false }
        let key = MonitoredRegion.StreamKey(identity: identity, scannerID: bound)
        guard let stream = streams.index(forKey: key) else { return false }
        return streams[position: stream].recordElsewhere(rssi: rssi, at: time)
    }

    /// Records a sighting of `identity` by `scannerID` at `rssi` in `monitored` (a region the match
    /// table gave for `identity`; its present streams `streams`) when the region's scanner
    /// binding lets it; nil when it does not.
    /// A new stream resumes the one `departed` holds for it since the region's last exit, if any.
    /// `channel`: the sighting's scanner channel, when the detector uses one: the stream takes the
    /// channel's prior, and with ``ExitDetector/usesChannels`` the part of the silence the scanner
    /// shared (its `gaps`) is excused; with other detectors, `gaps` holds only the last time the
    /// scanner said it was offline (if it ever did), excused. `wantsPrior`: whether to compute
    /// what the stream lends its scanner's prior (``RecordedSighting/prior``).
    static func recordSighting(_ identity: BeaconIdentity, scannerID: String?, rssi: Int, in monitored: inout RegionRecord,
                               streams: inout RegionStreams, departed: inout DepartedStreams, at time: Timestamp,
                               detector: ExitDetector, channel: ChannelView? = nil, gaps: [ScannerChannel.Gap]? = nil,
                               wantsPrior: Bool = true) -> RecordedSighting? {
        // The match table found this region by its constraint's own key, so only the scanner
        // binding is left to check (the constraint is checked again in debug builds).
        guard case .beacon(let beacon) = monitored.region, beacon.scannerID == nil || beacon.scannerID == scannerID else { return nil }
        assert(beacon.constraint.matches(identity), "the match table gave \(beacon.identifier) for \(identity)")
        let key = MonitoredRegion.StreamKey(identity: identity, scannerID: scannerID)
        let newStream: Bool
        let deadline: Timestamp
        var prior: StreamPrior?
        var previousDeadline = Double.nan
        let count: Int
        let origin = monitored.registeredAt
        // One in-place access to the stream: found, its old deadline read and the sighting
        // recorded (each access to the store's arrays is checked for uniqueness; reading the
        // estimator back out copied it).
        let updated = streams.update(key, scannerHash: channel?.nameHash) { (stream: inout ReceptionEstimator) -> ((Timestamp, StreamPrior?), deadline: Timestamp?) in
            var excused = 0.0
            if let channel, detector.usesChannels {
                excused = channel.excusedSilence(from: stream.lastSighting, to: time, streamRate: 1 / max(stream.meanInterval, 1e-3), gaps: gaps ?? [])
            } else if let gaps {
                // Its scanner said it was offline during this silence: not the stream's own.
                excused = ScannerChannel.declaredSilence(in: gaps, from: stream.lastSighting, to: time)
            }
            if let channel {
                stream.priorScale = channel.priorScale
                stream.setPriorLoss(channel.priorLoss, weight: channel.priorLossWeight)
            }
            // A stream from before a switch to the evidence profile starts its evidence now.
            if detector.usesEvidence { stream.startTrackingEvidence() }
            stream.record(at: time, rssi: rssi, excused: excused)
            let deadline = detector.goneDeadline(for: stream, gridOrigin: origin)
            guard channel != nil, wantsPrior, stream.intervals >= ScannerChannel.settledIntervals,
                  stream.lastSighting - stream.firstSighting >= ScannerChannel.settledSeconds else {
                return ((deadline, nil), deadline: deadline)
            }
            return ((deadline, detector.streamPrior(of: stream)), deadline: deadline)
        }
        if let updated {
            (deadline, prior) = updated.result
            previousDeadline = updated.previousDeadline
            count = updated.count
            newStream = false
        } else {
            var stream = detector.stream(resuming: departed.take(key, at: &monitored.departedPosition), at: time, rssi: rssi)
            if let channel {
                stream.priorScale = channel.priorScale
                stream.setPriorLoss(channel.priorLoss, weight: channel.priorLossWeight)
            }
            deadline = detector.goneDeadline(for: stream, gridOrigin: origin)
            streams.insertNew(key, stream, deadline: deadline, in: &monitored)
            count = streams.count
            newStream = true
        }
        let wasRestored = monitored.restoredAt != nil
        if wasRestored { monitored.restoredAt = nil }
        return RecordedSighting(previous: monitored.state, newStream: newStream, streamCount: count,
                                deadline: deadline, previousDeadline: previousDeadline, wasRestored: wasRestored, prior: prior)
    }

    /// Keeps the latest-deadline stream of a many-stream region current after the stream of
    /// `identity` by `scannerID` was heard at `time` (its deadline now `deadline`), with
    /// ``exitDeadline(of:id:)``'s tie rule.
    private mutating func updateExitCache(slot: Int, identity: BeaconIdentity, scannerID: String?, deadline: Timestamp, at time: Timestamp) {
        guard !schedule.updateExitLeader(slot: slot, identity: identity, scannerID: scannerID, deadline: deadline, at: time) else { return }
        let detector = profile.exitDetector
        if let found = regions.updateStreams(slot: slot, { Self.scanExitDeadline(of: $0, streams: $1, detector: detector) }) ?? nil {
            schedule.setExitLeader(RegionSchedule.ExitLeader(time: found.time, key: found.key, lastSighting: found.stream.lastSighting), slot: slot)
        }
    }

    /// A location fix: determines or crosses circular regions with the profile's hysteresis.
    /// A `noFix` report is "location unavailable" and changes nothing, as does a position outside
    /// the WGS 84 ranges (latitude −90...90, longitude −180...180). An accuracy that is not a
    /// finite, non-negative number of metres (NaN from a damaged NMEA HDOP, −1 for "invalid") is
    /// taken as not given: the hysteresis used 0 m for it already, and the evidence shows none
    /// instead of a NaN that no JSON can carry and that makes equal events compare unequal.
    ///
    /// The cost does not grow with the number of far-away regions: only regions that can change
    /// are evaluated — those whose circle the fix is in or near (found through the spatial index),
    /// plus every region whose state is unknown or inside, or that has a crossing pending (an
    /// exit can come from any distance). An outside region with nothing pending can only change
    /// when the fix is inside its circle (the inside threshold is `radius − min(buffer, radius/2)`),
    /// and an inside one only when the device may have moved beyond `radius + minimumBuffer`
    /// (those deep inside rest meanwhile: `RestingRegions`), so skipping the others gives the
    /// same events, in the same order (registration order), as evaluating every region. The one
    /// visible difference: ``MonitoredRegion/lastDistance`` is not updated for the skipped outside
    /// regions (a resting region's is computed from the last fix when its record is read).
    public mutating func ingest(_ fix: LocationFix) -> [LocationEvent] {
        defer { settleTimers() }
        var events = advance(to: fix.timestamp)
        guard fix.mode != .noFix, fix.latitude.isFinite, fix.longitude.isFinite,
              abs(fix.latitude) <= 90, abs(fix.longitude) <= 180 else { return events }
        var fix = fix
        if let accuracy = fix.horizontalAccuracy, !(accuracy.isFinite && accuracy >= 0) { fix.horizontalAccuracy = nil }
        lastFix = fix
        // The candidate buffer, kept between fixes for its capacity, moves out of `self` while
        // the query fills it (swapped: no copy, no retain).
        // Resting regions the device may have moved far enough to change are evaluated again.
        let point = RegionIndex.point(latitude: fix.latitude, longitude: fix.longitude)
        geoResting.wake(at: point, into: &geoActive)
        var candidates: [GeoCandidate] = []
        swap(&candidates, &geoCandidates)
        let query = circularSlotsToEvaluate(for: fix, caching: true, point: point, into: &candidates)
        // The next fix's list starts from the active regions in registration order: sorting it
        // is then a pass, not an insertion sort of every active region (≈ 20 a fix at 1 M regions in `count.sh geofence`).
        if query.disordered { geoActive.arrange(inOrderOf: candidates) { $0.indexSlot } }
        for candidate in candidates where candidate.slot >= 0 {
            // An active region the index did not find (far from the fix: an inside region being
            // left, a state still unknown) gets its distance from the centre's unit vector the
            // index keeps and the fix's the query computed: the same value, to the bit, and no
            // trigonometry.
            var distance = candidate.distance
            if distance.isNaN, candidate.indexSlot >= 0, let point = query.point {
                distance = circularIndex.distance(atSlot: Int(candidate.indexSlot), to: point)
            }
            let (slack, reach) = evaluate(fix, slot: Int(candidate.slot), indexSlot: candidate.indexSlot, distance: distance, into: &events)
            // Deep inside and nothing pending: rests until the device has moved `slack` metres,
            // and on while it stays within `reach` of the centre (measured again then).
            if slack > 0, usesSpatialIndex, candidate.indexSlot >= 0, let centre = circularIndex.centre(atSlot: Int(candidate.indexSlot)),
               geoResting.rest(Int(candidate.indexSlot), slack: slack, at: point, circle: (centre, reach)) {
                geoActive.remove(Int(candidate.indexSlot))
            }
        }
        swap(&candidates, &geoCandidates)
        return events
    }

    /// Extra metres added to index queries so rounding differences between the index's distance
    /// and the engine's (normalised longitudes) can never drop a region that must be evaluated.
    static let indexSlack = 1.0

    /// The identifiers of the circular regions ``ingest(_:)-(LocationFix)`` would evaluate `fix`
    /// against, in registration order (a diagnostic: how much work a fix costs).
    public func circularRegionsToEvaluate(for fix: LocationFix) -> [String] {
        var candidates: [GeoCandidate] = []
        var engine = self   // (the query is mutating for its cache, which it leaves alone here)
        _ = engine.circularSlotsToEvaluate(for: fix, caching: false, into: &candidates)
        // The resting regions this fix would wake are evaluated too (the query skipped them),
        // merged in by registration number.
        if fix.latitude.isFinite, fix.longitude.isFinite, abs(fix.latitude) <= 90 {
            let woken = geoResting.wouldWake(at: RegionIndex.point(latitude: fix.latitude, longitude: fix.longitude))
            // (Not twice: without the index every region is listed already.)
            let listed = Set(candidates.map(\.indexSlot))
            for indexSlot in woken.map(Int.init) where indexSlot < geoRegionSlots.count && geoRegionSlots[indexSlot] >= 0
                && !listed.contains(Int32(truncatingIfNeeded: indexSlot)) {
                candidates.append(GeoCandidate(rank: circularIndex.tag(atSlot: indexSlot), slot: geoRegionSlots[indexSlot],
                                               indexSlot: Int32(truncatingIfNeeded: indexSlot), distance: .nan))
            }
            if !woken.isEmpty { candidates.sort { $0.rank < $1.rank } }
        }
        return candidates.compactMap { $0.slot >= 0 ? regions[slot: Int($0.slot)]?.region.identifier : nil }
    }

    /// The ``regions`` slots of ``circularRegionsToEvaluate(for:)``, in registration order, into
    /// `candidates` (emptied first, its capacity kept), through the device's candidate cache
    /// (``geoCache``, updated in place: the index fills it while the engine's other properties
    /// are read) when `caching`. Regions are told apart by index slot, ranked by the registration number kept as the
    /// slot's tag, and mapped to their records' slots (`geoRegionSlots`) as they are listed: no
    /// identifier is hashed, and the list is not compacted afterwards — an entry whose index slot
    /// has no record keeps slot −1 and is skipped by the callers. A region the index found comes
    /// with the distance the index computed for it (see ``GeoCandidate/distance``), so it is not
    /// computed a second time; for the others the query's `point` serves
    /// ``RegionIndex/distance(atSlot:to:)`` (`nil`: no index query, or the fix's longitude is not
    /// the index's, so no index distance is the region's own).
    ///
    /// The list is sorted only when it has to be: ``geoActive``'s members come first and are
    /// usually in registration order already (`disordered` says when they were not: then worth
    /// arranging), and most fixes find no region outside them.
    @discardableResult
    mutating func circularSlotsToEvaluate(for fix: LocationFix, caching: Bool,
                                          point known: Geodesy.UnitVector? = nil,
                                          into candidates: inout [GeoCandidate]) -> (disordered: Bool, point: Geodesy.UnitVector?) {
        candidates.removeAll(keepingCapacity: true)
        // A negative configured buffer moves the inside threshold beyond the radius.
        let margin = max(0, -profile.geoHysteresis.buffer(forAccuracy: fix.horizontalAccuracy)) + Self.indexSlack
        guard usesSpatialIndex, margin.isFinite else {
            for entry in order {
                let slot = entry.slot
                if regions.region(slot: slot)?.kind == .circular {
                    // (The index slot too: `geoActive` stays filed as with the index.)
                    let indexSlot = geoIndexSlot(record: slot).map { Int32(truncatingIfNeeded: $0) } ?? -1
                    candidates.append(GeoCandidate(rank: 0, slot: Int32(truncatingIfNeeded: slot), indexSlot: indexSlot, distance: .nan))
                }
            }
            return (false, nil)
        }
        // The index's distance is the engine's to the bit when both longitudes are already in
        // [-180, 180) (the index normalises them; a region's is checked where it is evaluated).
        let sameLongitude = Geodesy.normalizedLongitude(fix.longitude) == fix.longitude
        let map = geoRegionSlots
        @inline(__always) func record(_ indexSlot: Int) -> Int32 {
            indexSlot < map.count ? map[indexSlot] : -1
        }
        // Every active region first, in the order of `geoActive.members`, so an active region
        // the index also finds is updated in place (its position in the list is its position
        // in the members).
        let active = geoActive
        var list = candidates   // a local the closure below can capture (not the inout parameter)
        candidates = []
        defer { candidates = list }
        list.reserveCapacity(active.count + 16)
        var disordered = false
        var previousRank = Int.min
        for slot in active.members {
            let rank = circularIndex.tag(atSlot: Int(slot))
            if previousRank > rank { disordered = true }
            previousRank = rank
            list.append(GeoCandidate(rank: rank, slot: record(Int(slot)), indexSlot: slot, distance: .nan))
        }
        let activeCount = list.count
        // A closure literal in the call, so non-escaping: `list` is captured by address, with no
        // box and no dynamic exclusivity check per access.
        // Resting regions are skipped before the index computes their distance.
        let point = circularIndex.forEachCandidate(latitude: fix.latitude, longitude: fix.longitude, within: margin, cache: &geoCache,
                                                   caching: caching, point: known, skipping: geoResting.slots) { slot, tag, distance in
            let found = sameLongitude ? distance : .nan
            if let position = active.position(of: slot) {
                list[position].distance = found
            } else {
                let recordSlot = record(slot)
                if recordSlot >= 0 {
                    list.append(GeoCandidate(rank: tag, slot: recordSlot, indexSlot: Int32(truncatingIfNeeded: slot), distance: found))
                }
            }
        }
        // Regions the index refused (decoded, unvalidated ones) are merged in by registration number.
        for id in geoUnindexed {
            if let slot = regions.slot(of: id) {
                list.append(GeoCandidate(rank: schedule.number(slot: slot) ?? .max, slot: Int32(truncatingIfNeeded: slot), indexSlot: -1, distance: .nan))
            }
        }
        if disordered || list.count > activeCount { list.sort { $0.rank < $1.rank } }
        return (disordered, sameLongitude ? point : nil)
    }

    /// Drops streams of a region that are already gone (keeps memory flat when beacons churn).
    static func prune(_ monitored: inout RegionRecord, streams: inout RegionStreams, detector: ExitDetector, now time: Timestamp) {
        let registeredAt = monitored.registeredAt
        streams.removeAll(in: &monitored) { _, stream in
            !(detector.goneDeadline(for: stream, gridOrigin: registeredAt) > time)
        }
    }

    /// The distance from `circle`'s centre to `fix`: `known` (the spatial index's, ``GeoCandidate/distance``)
    /// where it is the region's own to the bit — known, and the centre's longitude below 180,
    /// as the index stores it — else computed.
    @inline(__always)
    static func distance(_ circle: CircularRegion, _ fix: LocationFix, known: Double) -> Double {
        known.isNaN || circle.longitude >= 180 ? circle.distance(latitude: fix.latitude, longitude: fix.longitude) : known
    }

    mutating func evaluate(_ fix: LocationFix, regionID id: String) -> [LocationEvent] {
        guard let slot = regions.slot(of: id) else { return [] }
        var events: [LocationEvent] = []
        evaluate(fix, slot: slot, indexSlot: geoIndexSlot(record: slot).map { Int32(truncatingIfNeeded: $0) } ?? -1, distance: .nan, into: &events)
        return events
    }

    /// Evaluates `fix` against the circular region in `slot` of ``regions`` (`indexSlot`: its
    /// ``circularIndex`` slot, −1 when it has none); `known` is the
    /// spatial index's distance from the region's centre to the fix (NaN: not known), the same
    /// value `CircularRegion.distance` gives while the region's longitude is below 180. The
    /// events are appended to `events` (most regions produce none: returning an empty array
    /// from each and appending it was a generic call and a release per region).
    ///
    /// Returns the region's *slack* when it stays inside with nothing pending: the metres the
    /// device can move before a fix could change it (see ``RestingRegions``), less
    /// ``RestingRegions/safety``; 0 otherwise. `reach`: the distance from the centre within
    /// which no fix changes it (`radius + minimumBuffer`) when there is a slack.
    @discardableResult
    mutating func evaluate(_ fix: LocationFix, slot: Int, indexSlot: Int32, distance known: Double,
                           into events: inout [LocationEvent]) -> (slack: Double, reach: Double) {
        // The common case, a region that stays as it is (inside, or near and outside, nothing
        // pending): one access by slot, the distance written in place, nothing to re-file.
        let hysteresis = profile.geoHysteresis
        // Beyond `radius + minimumBuffer` a fix is outside whatever its accuracy (`buffer ≥ minimumBuffer`).
        let restReach = hysteresis.minimumBuffer
        guard let unchanged = regions.update(slot: slot, { record -> (slack: Double, reach: Double)? in
            guard record.restoredAt == nil, record.state != .unknown, case .circular(let circle) = record.region else { return nil }
            let distance = Self.distance(circle, fix, known: known)
            let side = hysteresis.side(distance: distance, radius: circle.radius, accuracy: fix.horizontalAccuracy)
            let wantsCandidate = side != .unknown && side != record.state
            if (!wantsCandidate && record.candidate == nil && record.candidateSince == nil) || (wantsCandidate && record.candidate == side) {
                record.lastDistance = distance
                let reach = circle.radius + restReach
                guard record.state == .inside, record.candidate == nil, reach <= RestingRegions.maximumReach else { return (0, 0) }
                return (reach - distance - RestingRegions.safety, reach)
            }
            return nil
        }) else { return (0, 0) }
        guard let slack = unchanged else {
            let index = indexSlot >= 0 ? Int(indexSlot) : nil
            let produced = evaluateHysteresis(fix, slot: slot, indexSlot: index, distance: known)
            trackGeo(indexSlot: index, record: slot)
            if !produced.isEmpty { events += produced }
            return (0, 0)
        }
        return slack
    }

    /// What ``evaluateHysteresis(_:slot:indexSlot:distance:)`` found in a record.
    private enum GeoOutcome {
        case unchanged
        /// The first fix after registration determined the state.
        case determined(RegionState, distance: Double)
        /// The first fix after a restart contradicted the stored state beyond the buffer.
        case changedWhileStopped(RegionState, distance: Double)
    }

    /// The hysteresis for the circular region in `slot` of ``regions``, its record updated in
    /// place (the identifier is not hashed): the first fix determines the state, a side beyond
    /// the buffer starts (or keeps) a candidate crossing, which fires after its dwell. `known`:
    /// as in ``evaluate(_:slot:indexSlot:distance:)``.
    private mutating func evaluateHysteresis(_ fix: LocationFix, slot: Int, indexSlot: Int?, distance known: Double) -> [LocationEvent] {
        let (hysteresis, now) = (profile.geoHysteresis, self.now)
        let outcome = regions.update(slot: slot) { monitored -> GeoOutcome in
            guard case .circular(let circle) = monitored.region else { return .unchanged }
            let distance = Self.distance(circle, fix, known: known)
            monitored.lastDistance = distance
            switch monitored.state {
            case .unknown:
                return .determined(distance <= circle.radius ? .inside : .outside, distance: distance)
            case .inside, .outside:
                let side = hysteresis.side(distance: distance, radius: circle.radius, accuracy: fix.horizontalAccuracy)
                if monitored.restoredAt != nil {
                    // The first fix after a restart: a stored state contradicted beyond the buffer
                    // changed while we were stopped, so it crosses at once (no dwell to wait for).
                    monitored.restoredAt = nil
                    guard side != .unknown, side != monitored.state else { return .unchanged }
                    return .changedWhileStopped(side, distance: distance)
                }
                if side != .unknown && side != monitored.state {
                    if monitored.candidate != side {
                        monitored.candidate = side
                        monitored.candidateSince = now
                    }
                } else {
                    monitored.candidate = nil
                    monitored.candidateSince = nil
                }
                return .unchanged
            }
        } ?? .unchanged
        switch outcome {
        case .unchanged:
            return []
        case .determined(let state, let distance):
            return setState(slot: slot, indexSlot: indexSlot, state, crossing: false, evidence: EventEvidence(
                distance: distance, horizontalAccuracy: fix.horizontalAccuracy, reason: "first fix after registration"))
        case .changedWhileStopped(let side, let distance):
            return setState(slot: slot, indexSlot: indexSlot, side, crossing: true, evidence: EventEvidence(
                distance: distance, horizontalAccuracy: fix.horizontalAccuracy, reason: "changed while stopped: first fix after the restart"))
        }
    }
}
