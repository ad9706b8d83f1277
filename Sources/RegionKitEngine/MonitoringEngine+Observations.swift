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
                    monitored.streams[key] = ReceptionEstimator(firstSighting: time, priorInterval: profile.exitDetector.priorInterval, rssi: observation.rssi)
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
    /// A `noFix` report is "location unavailable" and changes nothing.
    public mutating func ingest(_ fix: LocationFix) -> [LocationEvent] {
        var events = advance(to: fix.timestamp)
        guard fix.mode != .noFix, fix.latitude.isFinite, fix.longitude.isFinite else { return events }
        lastFix = fix
        for id in circularIDs {
            events += evaluate(fix, regionID: id)
        }
        return events
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
