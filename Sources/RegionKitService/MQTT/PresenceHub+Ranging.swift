import Foundation
import RegionKit
import RegionKitCore
import RegionKitMQTT

extension PresenceHub {
    /// What the ranging loop handles, in order: the engine's events, and a check every second.
    enum RangingInput: Sendable {
        case event(LocationEvent)
        /// Rangings ended that no event announced (a region removed, ranging stopped), the
        /// earlier run's distances found, leftovers due.
        case check
    }

    /// The ranging loop's own state, beside its tracker.
    struct RangingLoopState {
        var tracker: PresenceRangingTracker
        /// The connection number the tracker last saw (a new one republishes every distance).
        var connection = 0
        /// An earlier run's distances (``scanLeftovers()``) and those of rangings stopped for want of a source.
        var leftovers = RangingLeftovers()
    }

    /// Beacon distances and attributes from the ranging updates (QoS 0, retained; skipped while
    /// disconnected), and their clearing (distance `None`): a beacon heard by no scanner
    /// (`didChangeNearestScanner` to none), dropped from the deliveries that listed it, or listed
    /// only by rangings that ended (a region's exit at once, its removal within a second), or
    /// whose distance an earlier run left retained and that is not ranged again within
    /// ``leftoverGrace`` (``scanLeftovers()``). A ranging that stops because its source went away
    /// (`didFailRanging`, `monitoringDidFail`, or found ended while the beacon source is
    /// unusable) clears nothing: its beacons are left to the grace period, counted from the
    /// source's return. One loop, so a clearing never overtakes the distance published before
    /// it; a publish that fails leaves the tracker as it was, so the clearing is made again.
    func publishRanging() async {
        var state = RangingLoopState(tracker: PresenceRangingTracker(topics: topics, mqttRoom: homeAssistant?.mqttRoom == true))
        // Beacons placed in rooms restored at the start (``MonitoringService/restoreRooms()``,
        // before the hub runs): the previous run may have left their distance and attributes
        // retained. (Every one: the regions that range them are not restored yet. For one never
        // ranged its departure sends a little more than needed.)
        state.tracker.assumePublished(service.restoredRooms.keys)
        // Subscribed before the tasks start: no event falls between.
        let events = service.manager.events(bufferingPolicy: .bufferingNewest(4096))
        let (inputs, feed) = AsyncStream.makeStream(of: RangingInput.self, bufferingPolicy: .bufferingNewest(4096))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events { feed.yield(.event(event)) }
                feed.finish()
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    feed.yield(.check)
                }
            }
            for await input in inputs {
                switch input {
                case .event(let event): await handleRanging(event, &state)
                case .check: await checkRanging(&state)
                }
            }
            group.cancelAll()
        }
    }

    /// One engine event of ``publishRanging()``.
    private func handleRanging(_ event: LocationEvent, _ state: inout RangingLoopState) async {
        let manager = service.manager
        let room = { (beacon: BeaconIdentity) in manager.nearestScanner(for: beacon) }
        switch event.kind {
        case .didChangeNearestScanner(let identity, nil, _):
            // Heard by no scanner any more: its published distance and attributes stop placing it
            // (here, in order with the distances; nothing for a beacon never ranged).
            // Disconnected (or the publish fails): cleared at the next connection instead.
            // Retained only for a beacon with a Home Assistant entity (its distance sensor).
            let messages = state.tracker.unplaced(identity, kept: departureKeeper()(identity))
            guard !messages.isEmpty else { return }
            do {
                guard client.isConnected else { throw MQTTError.notConnected }
                try await client.publish(messages.map(Self.mqtt))
            } catch {
                departedWhileDisconnected.withLock { _ = $0.insert(identity) }
            }
        case .didChangeNearestScanner(let identity, let scanner?, _):
            // Its attributes name its new room when they named the old one, left there by a
            // ranging that stopped listing it (nothing for a beacon ranged now: its next distance
            // carries the room). Not connected: its next departure or distance sets them right.
            let messages = state.tracker.moved(identity, to: scanner, kept: departureKeeper()(identity))
            guard !messages.isEmpty, client.isConnected else { return }
            _ = await publish(messages)
        case .didExitRegion(let region), .didDetermineState(.outside, let region):
            // The region's ranging ended with it (also without an exit notification): its beacons
            // listed by no other ranging are cleared now, not at the next check. Only its own
            // rangings are asked about.
            guard client.isConnected else { return }
            let label = region.identifier
            let ended = state.tracker.endedRangings(on: manager) { $0 == label }
            guard !ended.isEmpty else { return }
            var next = state.tracker
            let messages = next.rangingEnded(where: { ended.contains(.init(constraint: $0, label: $1)) }, room: room, kept: departureKeeper())
            if await publish(messages) { state.tracker = next }
        case .monitoringDidFail(let region, let error) where error.code == .sourceUnavailable:
            // The region failed because its source went away: its rangings ended with it (said by
            // the event itself, whatever the engine does since), not its beacons. (Other failures,
            // such as a state asked of a region just removed, are left to the check.)
            suspendRangings(&state) { _, label in label == region.identifier }
        case .didFailRanging(let constraint, let label, _):
            suspendRangings(&state) { $0 == constraint && $1 == label }
        case .didRangeBeacons(let beacons, let constraint, let label):
            // A delivery queued before its ranging ended (the engine runs ahead of this loop): the
            // check may have cleared its beacons already; listing them again would publish their
            // distance until the next check cleared it once more.
            guard client.isConnected, manager.isRanging(constraint, label: label) else { return }
            // A new connection (the broker may have lost its retained messages): every distance
            // and attribute goes out again at the next update, not only those that changed (the
            // beacons stay known, so a departure before that still clears them).
            let current = counters.withLock { $0.connections }
            if current != state.connection {
                state.connection = current
                state.tracker.republishAll()
            }
            var next = state.tracker
            let messages = next.messages(for: beacons, ranging: constraint, label: label, at: event.timestamp, room: room,
                                         roomDistance: { manager.rangedDistance(of: $0, from: $1, ranging: constraint, label: label) },
                                         kept: departureKeeper())
            if await publish(messages) { state.tracker = next }
        default:
            break
        }
    }

    /// The rangings `ended` names stopped for want of a source: their beacons become leftovers,
    /// cleared if not ranged again within the grace period.
    private func suspendRangings(_ state: inout RangingLoopState, where ended: (BeaconIdentityConstraint, String) -> Bool) {
        state.leftovers.add(state.tracker.rangingSuspended(where: ended), grace: leftoverGrace)
    }

    /// The check every second of ``publishRanging()``.
    private func checkRanging(_ state: inout RangingLoopState) async {
        let manager = service.manager
        // The distances an earlier run left retained, once found.
        if let found = leftovers.withLock({ found in defer { found = nil }; return found }) {
            state.leftovers.add(state.tracker.adoptRetained(found), grace: leftoverGrace)
        }
        // (With no beacon source configured at all, as for a GPS-only daemon, nothing is away:
        // no beacon is ranged again, and an earlier configuration's distances are cleared.)
        guard !manager.isMonitoringAvailable(for: .beacon) || manager.authorizationStatus(for: .beacon).isAuthorized else {
            // The source is away: rangings stopped with it are no departures, and the grace
            // period of the leftovers counts from its return.
            let ended = state.tracker.endedRangings(on: manager)
            suspendRangings(&state) { ended.contains(.init(constraint: $0, label: $1)) }
            state.leftovers.postpone(by: leftoverGrace)
            return
        }
        // Disconnected, deliveries are not taken: a beacon ranged again meanwhile is listed only
        // by the first delivery after the connection, so the grace counts from the connection.
        guard client.isConnected else {
            state.leftovers.postpone(by: leftoverGrace)
            return
        }
        // Reads held back (the engine is behind the broker, ``MQTTReadPause``): a beacon still
        // around may not be ranged yet, so the grace waits too.
        if client.readPause?.isPaused == true { state.leftovers.postpone(by: leftoverGrace) }
        let room = { (beacon: BeaconIdentity) in manager.nearestScanner(for: beacon) }
        let ended = state.tracker.endedRangings(on: manager)
        if !ended.isEmpty {
            var next = state.tracker
            let messages = next.rangingEnded(where: { ended.contains(.init(constraint: $0, label: $1)) }, room: room, kept: departureKeeper())
            if await publish(messages) { state.tracker = next }
        }
        if state.leftovers.isDue() {
            var next = state.tracker
            let messages = next.leftoverDepartures(of: state.leftovers.beacons, room: room, kept: departureKeeper())
            if await publish(messages) {
                state.tracker = next
                state.leftovers.clear()
            }
        }
    }

    /// Ranging messages in order, pipelined (distances QoS 0, departures QoS 1): whether all went
    /// out. On failure (the connection lost) the caller keeps its tracker as it was.
    private func publish(_ messages: [PresenceMessage]) async -> Bool {
        guard !messages.isEmpty else { return true }
        do {
            try await Self.publish(messages.map(Self.mqtt), inChunksOn: client)
            return true
        } catch {
            return false
        }
    }

    /// Runs the scan of the distances an earlier run left retained (``RetainedDistanceScan``)
    /// unless one completed or runs: found, they go to the ranging loop. An incomplete scan is
    /// tried again with a growing delay (``RetainedDistanceScan/runUntilComplete(on:stopping:logger:)``);
    /// the stop ends it.
    func scanLeftovers() async {
        let start = scanPhase.withLock { phase -> Bool in
            guard phase == .pending else { return false }
            phase = .running
            return true
        }
        guard start else { return }
        if let found = await distanceScan.runUntilComplete(on: client, stopping: { stopping.withLock { $0 } }, logger: logger) {
            leftovers.withLock { $0 = found }
            scanPhase.withLock { $0 = .done }
            if !found.isEmpty {
                logger.info("distances an earlier run left retained: cleared for the beacons not ranged again soon",
                            metadata: ["beacons": "\(found.count)", "grace": "\(leftoverGrace)"])
            }
            return
        }
        scanPhase.withLock { $0 = .pending }
    }
}
