import Foundation
import Logging
import RegionKit
import RegionKitConcurrency
import RegionKitCore
import RegionKitMQTT
import RegionKitStore

/// The cluster's MQTT outputs, run by the member holding the outputs lease: every event of the
/// shared log after the site's cursor is published as one daemon's hub publishes it (the event on
/// the events topic at QoS 1, then what it changes, e.g. the region's retained state: see
/// ``PresenceOutputs``), in log order, and the cursor (`mqtt:<site>` in the store, the hub's own)
/// advances per acknowledged event. When the lease moves, the next holder starts from the cursor:
/// at most the events in flight are published twice (QoS 1's at least once), none is skipped.
///
/// The site's availability (`regionkit/<site>/status`, retained) says whether a member serves the
/// outputs: `online` on every connection and again every `statusInterval` (so a late will of an
/// earlier holder, published by the broker after this one connected, is corrected within one
/// interval), `offline` when it stops and as its will. With Home Assistant discovery, the regions'
/// `binary_sensor` configurations (retained) are published on every connection and whenever Home
/// Assistant announces itself `online`; they follow the same retained state topics as a single
/// daemon's. A beacon's retained room and its `device_tracker` follow its logged nearest-scanner
/// changes, as in one daemon; its distance (and distance sensor) is published by its partition's
/// engine, where its ranging lives (ranging is not in the shared log).
///
/// ```swift
/// let publisher = ClusterEventsPublisher(store: store, mqtt: clientConfiguration, site: "airport", regions: regions,
///                                        discovery: HomeAssistantDiscovery(topics: PresenceTopics(site: "airport")), logger: logger)
/// let task = Task { await publisher.run() }
/// // … the outputs lease is lost …
/// await publisher.shutdown()   // the loop ends, `offline` is its last message, then it disconnects
/// await task.value
/// ```
final class ClusterEventsPublisher: Sendable {
    let store: any RegionStoring
    let client: MQTTClient
    let topics: PresenceTopics
    let outputName: String
    let regions: [String: Region]
    let publishEvents: Bool
    let discovery: HomeAssistantDiscovery?
    /// Every beacon's departure stays retained (`mqtt.retainDepartures: all`).
    let retainAllDepartures: Bool
    let statusInterval: Duration
    let logger: Logger
    let published = LockedBox(0)
    /// Set on every connection and when Home Assistant announces itself: the status and the
    /// discovery are (re)published before the next events.
    let announce: LockedBox<Bool>
    let wake: WakeSignal
    /// The beacons' tracker configurations on the broker (with discovery only).
    let trackerWatch: TrackerConfigWatch?
    /// What ``status`` reports besides the counters above, kept by the loop.
    let progress = LockedBox(Progress())
    struct Progress {
        var cursor: Int64?
        var connections = 0
        var announced = 0
        var unannounced = 0
        var unpublishable = 0
    }
    /// Discovery rounds sent since this publisher started.
    let discoveryRounds = LockedBox(0)
    /// How long ``shutdown()`` waits for the loop to finish what it is publishing and say
    /// `offline` (a broker that stopped acknowledging would hold it forever).
    let stopTimeout: Duration
    /// Whether ``run(interval:)`` started, and whether ``shutdown()`` asked it to end.
    let lifecycle = LockedBox((started: false, stopping: false))
    /// Finished when ``run(interval:)`` has published its last message.
    let loopEnded = FirstResult<Void>()

    /// - Parameters:
    ///   - publishEvents: false keeps the events topic quiet (the retained states still go out), as `mqtt.publishEvents: false`.
    ///   - discovery: Home Assistant discovery of the regions, or nil.
    ///   - retainAllDepartures: every beacon's departure stays retained (`mqtt.retainDepartures: all`).
    ///   - statusInterval: how often `online` is published again while connected.
    ///   - stopTimeout: how long ``shutdown()`` waits for the last publications and `offline`.
    init(store: any RegionStoring, mqtt: MQTTClientConfiguration, site: String, regions: [Region], publishEvents: Bool = true,
         discovery: HomeAssistantDiscovery? = nil, retainAllDepartures: Bool = false, statusInterval: Duration = .seconds(10),
         stopTimeout: Duration = .seconds(3), logger: Logger) {
        self.store = store
        self.retainAllDepartures = retainAllDepartures
        self.stopTimeout = stopTimeout
        let topics = PresenceTopics(site: site)
        var configuration = mqtt
        configuration.clientID = "regionkit-\(site)-outputs"
        configuration.cleanSession = true
        configuration.will = PresenceHub.status("offline", topics)
        let announce = LockedBox(false)
        let wake = WakeSignal()
        self.announce = announce
        self.wake = wake
        let haStatus = discovery?.statusTopics ?? []
        let trackerWatch = discovery.map(TrackerConfigWatch.init)
        self.trackerWatch = trackerWatch
        let progress = progress
        client = MQTTClient(configuration: configuration, logger: logger, onMessage: { message in
            // (A retained `online` is the broker's copy at the subscription, which the
            // connection's own announcement covers: ``PresenceHub``'s rule.)
            if haStatus.contains(message.topic), message.payload == Array("online".utf8), !message.retain {
                announce.withLock { $0 = true }
                wake.signal()
            } else if let trackerWatch, trackerWatch.received(message), trackerWatch.isPending {
                wake.signal()
            }
        }, onConnectionEvent: { event in
            if case .connected = event {
                trackerWatch?.connected()
                progress.withLock { $0.connections += 1 }
                announce.withLock { $0 = true }
                wake.signal()
            }
        })
        self.topics = topics
        outputName = Self.outputName(site: site)
        self.regions = Dictionary(regions.map { ($0.identifier, $0) }, uniquingKeysWith: { $1 })
        self.publishEvents = publishEvents
        self.discovery = discovery
        self.statusInterval = statusInterval
        self.logger = logger
    }

    /// The cursor's name in the store: the single daemon's hub uses the same one for a site.
    static func outputName(site: String) -> String { "mqtt:" + site }

    /// Events published since this publisher started.
    var count: Int { published.withLock { $0 } }

    /// Connects and publishes until ``shutdown()`` or cancellation (the log is polled every
    /// `interval` while idle: the events come from every member, not from this process); then,
    /// when connected, publishes `offline` as its last message and disconnects. Call it once.
    func run(interval: Duration = .milliseconds(200)) async {
        let first = lifecycle.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard first else {
            logger.error("ClusterEventsPublisher.run() called twice")
            return
        }
        let connection = Task { await client.run() }
        await publish(interval: interval)
        // Nothing else publishes for this publisher now, so `offline` is the last status the
        // broker retains: a status or announcement still in flight cannot land after it.
        await sayOffline()
        loopEnded.finish(.success(()))
        await client.shutdown()
        await connection.value
    }

    /// Publishes `offline` (retained) when connected, waiting at most `stopTimeout` for the
    /// broker's acknowledgement (a broker that stopped acknowledging would hold it forever).
    private func sayOffline() async {
        guard client.isConnected else { return }
        await PresenceHub.sayOffline(client, PresenceHub.status("offline", topics), within: stopTimeout, logger: logger)
    }

    private var isStopping: Bool { lifecycle.withLock { $0.stopping } }

    /// The publishing loop: until cancelled or asked to stop.
    private func publish(interval: Duration) async {
        if let discovery {
            // Remembered by the client, so subscribed again after every reconnection.
            // Home Assistant's status, and the beacons' tracker configurations (emptied when the
            // user deletes a device: ``TrackerConfigWatch``).
            // (The tracker configurations at QoS 1: neither a deletion nor the copy of the holder's
            // own removal may be dropped on the way.)
            for (filter, qos) in discovery.statusTopics.map({ ($0, MQTTQoS.atMostOnce) }) + [(discovery.trackerConfigFilter, .atLeastOnce)] {
                Task { [client, logger] in
                    do { try await client.subscribe(filter, qos: qos) } catch {
                        logger.warning("cannot subscribe to Home Assistant's topics", metadata: ["filter": "\(filter)", "error": "\(error)"])
                    }
                }
            }
        }
        var outputs = PresenceOutputs(topics: topics, discovery: discovery)
        outputs.retainsAllDepartures = retainAllDepartures
        // The beacons announced by earlier holders (read before the first announcement).
        var announcementsRead = discovery == nil
        var cursor: Int64?
        var lastStatus = ContinuousClock.now
        while !Task.isCancelled, !isStopping {
            // The cursor read even while the broker is unreachable: /metrics says how far behind the log the output is.
            if cursor == nil, let position = try? await store.outputCursor(outputName, createAtEnd: true) {
                cursor = position
                progress.withLock { $0.cursor = position }
            }
            // Not connected: wait for the connection (it signals `wake`), a stop or cancellation.
            guard client.isConnected else {
                await wake.wait(timeout: interval)
                continue
            }
            do {
                if !announcementsRead {
                    try await outputs.restoreStoredAnnouncements(of: outputName, in: store, logger: logger)
                    announcementsRead = true
                    progress.withLock { $0.announced = outputs.announcedBeacons.count }
                }
                // Entities nobody recorded, devices deleted in Home Assistant: here, where the announcements are made.
                trackerWatch?.discardKnown(outputs)
                if let trackerWatch, trackerWatch.isPending {
                    let (store, client) = (store, client)
                    // A beacon the partitions placed keeps its room topic (other consumers read it).
                    let placed = try await store.beaconRooms().filter { !$0.value.isEmpty }
                    await trackerWatch.apply(outputs: { outputs }, update: { outputs = $0 },
                                               messages: { beacons in outputs.removalMessages(beacons) { placed[$0.description] != nil } },
                                               output: outputName, store: store,
                                               publish: { try await PresenceHub.publish($0, inChunksOn: client) }, logger: logger)
                    progress.withLock { $0.announced = outputs.announcedBeacons.count }
                }
                if announce.withLock({ state in defer { state = false }; return state }) {
                    // Asked for again when it fails (the store unreachable for the states, or the broker gone).
                    do { try await publishAnnouncement(outputs) } catch {
                        announce.withLock { $0 = true }
                        throw error
                    }
                    lastStatus = .now
                } else if ContinuousClock.now - lastStatus >= statusInterval {
                    try await client.publish(PresenceHub.status("online", topics))
                    lastStatus = .now
                }
                let position: Int64
                if let cursor { position = cursor } else { position = try await store.outputCursor(outputName, createAtEnd: true) }
                cursor = position
                progress.withLock { $0.cursor = position }
                let batch = try await store.events(since: nil, region: nil, type: nil, afterID: position, limit: 256)
                if batch.isEmpty {
                    await wake.wait(timeout: interval)
                    continue
                }
                // A stop is looked at before each event (each waits for the broker and the
                // store): the rest of the batch is the next holder's, from the cursor.
                for event in batch where !isStopping {
                    let regions = { Array(self.regions.values) }
                    let messages = outputs.messages(for: event, region: { self.regions[$0] }, regions: regions)
                        .filter { publishEvents || $0.topic != topics.events }
                        .map(PresenceHub.mqtt)
                    // The beacon this event announces, recorded before its entities go out.
                    var next = outputs
                    let beyondLimit = next.isBeyondLimit(event, regions: regions)
                    next.published(event, regions: regions)
                    try await PresenceOutputs.recordAnnouncements(next.announcedBeacons, since: outputs.announcedBeacons, of: outputName, in: store)
                    let publishable = PresenceHub.publishable(messages, of: event, logger: logger)
                    try await client.publish(publishable)
                    // Counted once published (an event published again after a failure counts once).
                    if beyondLimit { countUnannounced(event) }
                    if publishable.count < messages.count { progress.withLock { $0.unpublishable += 1 } }
                    outputs = next
                    cursor = event.id
                    progress.withLock { $0.cursor = event.id; $0.announced = outputs.announcedBeacons.count }
                    published.withLock { $0 += 1 }
                    // Saved even when the stop came meanwhile (the broker has the event).
                    let (store, outputName, id) = (store, outputName, event.id)
                    try await uncancelled { try await store.setOutputCursor(outputName, to: id) }
                }
            } catch is MQTTError {
                // Not connected (any more): wait for the connection (which asks for the
                // announcement again and wakes this loop), then go on from the cursor.
                await wake.wait(timeout: interval)
                continue
            } catch {
                logger.warning("events output: cannot use the store (the log, the cursor or the announced beacons)", metadata: ["error": "\((error as? RegionKitError)?.message ?? "\(error)")"])
                await wake.wait(timeout: .seconds(1))
            }
        }
    }

    /// A beacon placed but left without Home Assistant entities (its limit is reached): counted
    /// each time its event is published, logged once, as the hub does.
    private func countUnannounced(_ event: StoredEvent) {
        let first = progress.withLock { progress in
            defer { progress.unannounced += 1 }
            return progress.unannounced == 0
        }
        guard first, let limit = discovery?.beacons.maximum else { return }
        logger.warning("Home Assistant: the limit of announced beacons is reached; further beacons keep their room topic but get no entities (homeAssistant.maximumBeacons, or beacons: regions)",
                       metadata: ["limit": "\(limit)", "event": "\(event.id)"])
    }

    /// This holder as an output, for `/metrics` (``OutputStatus``).
    var status: OutputStatus {
        let progress = progress.withLock { $0 }
        return OutputStatus(name: outputName, kind: "mqtt", connected: client.isConnected, eventsPublished: count, cursor: progress.cursor,
                            connections: progress.connections, eventsUnpublishable: progress.unpublishable,
                            homeAssistant: discovery.map { _ in
                                OutputStatus.HomeAssistantStatus(discoveryRounds: discoveryRounds.withLock { $0 }, announcedBeacons: progress.announced,
                                                                 unannouncedBeacons: progress.unannounced, forgottenBeacons: trackerWatch?.forgotten ?? 0,
                                                                 adoptedBeacons: trackerWatch?.adopted ?? 0)
                            })
    }

    /// `online` and, with discovery, every region's configuration (retained).
    /// And every region's merged state and every beacon's room, retained (a broker restarted
    /// without its retained messages, or a topic moved to its one-to-one level, would show nothing
    /// until the next change); published in the loop, before the events after the cursor, which
    /// end with these states and rooms.
    func publishAnnouncement(_ outputs: PresenceOutputs) async throws {
        var messages = [PresenceHub.status("online", topics)]
        let configured = regions.values.sorted { $0.identifier < $1.identifier }
        let stored = try await store.states()
        // Topics regions left behind under their earlier topic levels: cleared first.
        messages += PresenceHub.publishable(outputs.legacyTopicRemovals(regions: configured).map(PresenceHub.mqtt), logger: logger,
                                            context: ["output": "earlier topics' removal"])
        messages += PresenceHub.publishable(outputs.discoveryMessages(regions: configured).map(PresenceHub.mqtt), logger: logger,
                                            context: ["output": "Home Assistant discovery"])
        let states = configured.compactMap { region in
            stored[region.identifier].map { PresenceMessage(topic: topics.regionState(region.identifier), text: $0.state.rawValue, qos: 1, retain: true) }
        }
        messages += PresenceHub.publishable(states.map(PresenceHub.mqtt), logger: logger, context: ["output": "region states"])
        // And every beacon's room, as one daemon's hub re-sends them at a connection: the rooms
        // the partitions stored (with their room events), and `not_home` for the beacons with
        // entities that are in none (a broker restarted without its retained messages left their
        // device trackers unknown until the beacon's next room change).
        // (A row with no room is none: an empty retained message would remove the topic.)
        let rooms = try await store.beaconRooms().compactMap { name, room in room.isEmpty ? nil : BeaconIdentity(description: name).map { ($0, room) } }
        messages += outputs.roomMessages(placed: Dictionary(rooms, uniquingKeysWith: { $1 })).map(PresenceHub.mqtt)
        // In chunks: a site's beacons can outnumber the packet ids one connection has in flight.
        try await PresenceHub.publish(messages, inChunksOn: client)
        if discovery != nil { discoveryRounds.withLock { $0 += 1 } }
    }

    /// Ends ``run(interval:)``: its loop stops after the event it is publishing, publishes
    /// `offline` (retained) when connected, and disconnects; returns when that is done, or after
    /// `stopTimeout` — then (the loop waits on the store or an acknowledgement) `offline` is
    /// published from here, still after every status the loop wrote (it writes none once it
    /// saw the stop), and the connection is closed, failing what still waits for the broker.
    /// Call it when the outputs lease is lost or the member stops, before the lease is released,
    /// so the next holder's `online` comes after this one's `offline`.
    func shutdown() async {
        let started = lifecycle.withLock { state in
            state.stopping = true
            return state.started
        }
        wake.signal()
        if started {
            let loopEnded = loopEnded
            let inTime = await PresenceHub.waiting(at: stopTimeout) { try? await loopEnded.value }
            if !inTime {
                logger.warning("events output: still publishing after the stop timeout; saying offline and disconnecting", metadata: ["timeout": "\(stopTimeout)"])
                await sayOffline()
            }
        }
        await client.shutdown()
    }
}
