import RegionKitCore
/// Feeding sightings and fixes into the engine.
extension MonitoringEngine {
    /// A beacon was sighted: enters (or first determines) every matching region and feeds ranging.
    ///
    /// ```swift
    /// let events = engine.ingest(BeaconObservation(identity: id, rssi: -64, measuredPower: -59, timestamp: t))
    /// ```
    public mutating func ingest(_ observation: BeaconObservation) -> [LocationEvent] {
        var events = advance(to: observation.timestamp)
        let time = now
        if let ids = beaconIndex[observation.identity.uuid] {
            for id in ids {
                guard var monitored = regions[id], let beacon = monitored.region.beaconRegion,
                      beacon.matches(observation.identity, scanner: observation.scannerID) else { continue }
                let key = MonitoredRegion.StreamKey(identity: observation.identity, scannerID: observation.scannerID)
                if var stream = monitored.streams[key] {
                    stream.record(at: time, rssi: observation.rssi)
                    monitored.streams[key] = stream
                } else {
                    monitored.streams[key] = profile.exitDetector.stream(resuming: monitored.departedStreams.removeValue(forKey: key), at: time, rssi: observation.rssi)
                }
                if monitored.streams.count > 4 { prune(&monitored) }
                monitored.restoredAt = nil
                let previous = monitored.state
                regions[id] = monitored
                guard previous != .inside else { continue }
                events += setState(id, .inside, crossing: previous == .outside, evidence: EventEvidence(
                    rssi: observation.rssi, scannerID: observation.scannerID, beacon: observation.identity,
                    reason: previous == .unknown ? "first sighting after registration" : "sighting"))
            }
        }
        if let policy = profile.nearestScanner, let scanner = observation.scannerID {
            var state = nearest[observation.identity] ?? NearestScannerState()
            var stamped = observation
            stamped.timestamp = time
            if let change = state.record(stamped, scanner: scanner, policy: policy, detector: profile.exitDetector) {
                events.append(LocationEvent(timestamp: time, kind: .didChangeNearestScanner(observation.identity, scannerID: change.to, previous: change.from),
                                            evidence: EventEvidence(rssi: observation.rssi, scannerID: scanner, beacon: observation.identity)))
            }
            nearest[observation.identity] = state
        }
        for index in sessions.indices where sessions[index].constraint.matches(observation.identity) {
            sessions[index].record(observation, filter: profile.rssiFilter)
        }
        return events
    }

    /// A location fix: determines or crosses circular regions with the profile's hysteresis.
    /// A `noFix` report is "location unavailable" and changes nothing, as does a position outside
    /// the WGS 84 ranges (latitude −90...90, longitude −180...180).
    ///
    /// The cost does not grow with the number of far-away regions: only regions that can change
    /// are evaluated — those whose circle the fix is in or near (found through the spatial index),
    /// plus every region whose state is unknown or inside, or that has a crossing pending (an
    /// exit can come from any distance). An outside region with nothing pending can only change
    /// when the fix is inside its circle (the inside threshold is `radius − min(buffer, radius/2)`),
    /// so skipping the others gives the same events, in the same order (registration order), as
    /// evaluating every region. The one visible difference: ``MonitoredRegion/lastDistance`` is
    /// not updated for the skipped regions.
    public mutating func ingest(_ fix: LocationFix) -> [LocationEvent] {
        var events = advance(to: fix.timestamp)
        guard fix.mode != .noFix, fix.latitude.isFinite, fix.longitude.isFinite,
              abs(fix.latitude) <= 90, abs(fix.longitude) <= 180 else { return events }
        lastFix = fix
        for id in circularRegionsToEvaluate(for: fix) {
            events += evaluate(fix, regionID: id)
        }
        compactGeoSets()
        return events
    }

    /// Extra metres added to index queries so rounding differences between the index's distance
    /// and the engine's (normalised longitudes) can never drop a region that must be evaluated.
    static let indexSlack = 1.0

    /// The identifiers of the circular regions ``ingest(_:)-(LocationFix)`` would evaluate `fix`
    /// against, in registration order (a diagnostic: how much work a fix costs).
    public func circularRegionsToEvaluate(for fix: LocationFix) -> [String] {
        // A negative configured buffer moves the inside threshold beyond the radius.
        let margin = max(0, -profile.geoHysteresis.buffer(forAccuracy: fix.horizontalAccuracy)) + Self.indexSlack
        guard usesSpatialIndex, margin.isFinite else {
            return order.filter { regions[$0]?.region.kind == .circular }
        }
        var ranked: [(rank: Int, id: String)] = []
        ranked.reserveCapacity(geoActive.count + geoUnindexed.count + 8)
        for id in geoActive { ranked.append((sequence[id] ?? .max, id)) }
        for id in geoUnindexed where !geoActive.contains(id) { ranked.append((sequence[id] ?? .max, id)) }
        circularIndex.forEachMatch(latitude: fix.latitude, longitude: fix.longitude, within: margin) { match in
            let id = match.region.id
            if !geoActive.contains(id) && !geoUnindexed.contains(id) { ranked.append((sequence[id] ?? .max, id)) }
        }
        ranked.sort { $0.rank < $1.rank }
        return ranked.map(\.id)
    }

    /// Sets keep their capacity when they shrink: after the first fix determined a million
    /// regions, `geoActive` would stay a million-bucket table that every fix iterates. Rebuild
    /// it (amortised O(1)) once it is mostly empty.
    mutating func compactGeoSets() {
        func compact(_ set: inout Set<String>) {
            guard set.capacity > 1_024, set.capacity > 8 * set.count else { return }
            var smaller = Set<String>(minimumCapacity: set.count)   // `Set(set)` would share the big table
            for id in set { smaller.insert(id) }
            set = smaller
        }
        compact(&geoActive)
        compact(&geoPending)
    }

    /// Drops streams of a region that are already gone (keeps memory flat when beacons churn).
    mutating func prune(_ monitored: inout MonitoredRegion) {
        let time = now
        let registeredAt = monitored.registeredAt
        monitored.streams = monitored.streams.filter { _, stream in
            profile.exitDetector.goneDeadline(for: stream, gridOrigin: registeredAt) > time
        }
    }

    mutating func evaluate(_ fix: LocationFix, regionID id: String) -> [LocationEvent] {
        let events = evaluateHysteresis(fix, regionID: id)
        trackGeo(id)
        return events
    }

    private mutating func evaluateHysteresis(_ fix: LocationFix, regionID id: String) -> [LocationEvent] {
        guard var monitored = regions[id], let circle = monitored.region.circularRegion else { return [] }
        let distance = circle.distance(latitude: fix.latitude, longitude: fix.longitude)
        monitored.lastDistance = distance
        switch monitored.state {
        case .unknown:
            regions[id] = monitored
            let state: RegionState = distance <= circle.radius ? .inside : .outside
            return setState(id, state, crossing: false, evidence: EventEvidence(
                distance: distance, horizontalAccuracy: fix.horizontalAccuracy, reason: "first fix after registration"))
        case .inside, .outside:
            let side = profile.geoHysteresis.side(distance: distance, radius: circle.radius, accuracy: fix.horizontalAccuracy)
            if monitored.restoredAt != nil {
                // The first fix after a restart: a stored state contradicted beyond the buffer
                // changed while we were stopped, so it crosses at once (no dwell to wait for).
                monitored.restoredAt = nil
                regions[id] = monitored
                guard side != .unknown, side != monitored.state else { return [] }
                return setState(id, side, crossing: true, evidence: EventEvidence(
                    distance: distance, horizontalAccuracy: fix.horizontalAccuracy, reason: "changed while stopped: first fix after the restart"))
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
            regions[id] = monitored
            return []
        }
    }
}
