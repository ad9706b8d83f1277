import Foundation
import Logging
import RegionKitConcurrency
import RegionKit
import RegionKitCore
import RegionKitMQTT
import RegionKitStore

/// RegionKit as a presence hub on an MQTT broker: sightings in from the scanners' topics (the
/// ``MQTTSightingIngest``), and out, from the durable event log so that a broker outage loses
/// nothing, every event (QoS 1, in log order, each once per acknowledgement), retained region
/// states and beacon rooms, the daemon's availability (retained `online`, will `offline`), beacon
/// distances, and Home Assistant discovery.
///
/// The events output keeps a cursor in the store (the id of the last event the broker
/// acknowledged): after a broker restart the events of the outage are published once, in order;
/// after a crash at most the events in flight are published again (QoS 1's "at least once").
///
/// While the broker is unreachable the MQTT sources hear nothing, which is not the same as every
/// beacon leaving: the beacon source is reported unavailable (`monitoringDidFail`, like a
/// Bluetooth controller that went away) and monitoring resumes on reconnection.
///
/// ```swift
/// let hub = try PresenceHub(configuration: mqtt, homeAssistant: ha, sources: [.init(format: .espresense)], service: service, logger: logger)
/// try await hub.prepare()               // before service.start(): the cursor starts at the log's end
/// let service = MonitoringService(…, onLogged: { _ in hub.eventLogged() })
/// await hub.run()                   // until cancelled
/// ```
public final class PresenceHub: Sendable {
    public let configuration: MQTTHubConfiguration
    public let topics: PresenceTopics
    public let ingest: MQTTSightingIngest?
    let service: MonitoringService
    let logger: Logger
    let client: MQTTClient
    let homeAssistant: HomeAssistantConfiguration?
    let outputs: LockedBox<PresenceOutputs>
    let wake = WakeSignal()
    let counters = LockedBox(Counters())

    let publisherTask = LockedBox<Task<Void, Never>?>(nil)
    let stopping = LockedBox(false)
    /// The stop under way (``shutdown(drainTimeout:)``), which a second call waits for.
    private let shutdownTask = LockedBox<Task<Void, Never>?>(nil)
    /// Whether a discovery round asked for by Home Assistant's `online` is waiting to start
    /// (another `online` meanwhile is answered by that round: HA can send them in floods, and each
    /// round re-publishes every configuration), and when the last such round started.
    let discoveryRequested = LockedBox<(pending: Bool, last: ContinuousClock.Instant?)>((false, nil))
    /// The least time between two discovery rounds asked for by Home Assistant's `online`: anyone
    /// on the broker may publish it, and a steady flood made round after round, each re-sending
    /// every announced beacon's configurations. Home Assistant says it once as it starts.
    static let discoveryRoundSpacing: Duration = .seconds(5)
    /// One discovery round at a time; a region's removal is not published during one.
    let discoveryLock = AsyncSemaphore()
    /// Status publications one at a time: an `online` for a connection made while the hub stops
    /// has either finished (acknowledged or failed) before the `offline` is sent, or is not sent
    /// at all (it sees `stopping`), so no `online` lands after the stop's `offline`. (A stop while
    /// not connected sends no `offline`: the broker keeps what it had, the will's after an
    /// unclean loss of the connection.)
    let statusLock = AsyncSemaphore()
    /// Whether an `online` answering a late will (``answerLateWill(_:)``) waits for its turn, and
    /// how many `offline`s it answers.
    let lateWillAnswer = LockedBox<(pending: Bool, read: Int)>((false, 0))
    let connected = LockedBox(false)
    /// The sighting filters the broker refuses on this connection (the client asks again): the
    /// MQTT sources are unavailable while any is refused.
    let refusedFilters = LockedBox<Set<String>>([])
    /// The id of the last event the broker acknowledged (loaded from the store on first use).
    let cursor = LockedBox<Int64?>(nil)
    /// The store cursor's name: one per site, so two hubs of different sites on one store do not share it.
    let outputName: String
    /// Where the MQTT sources' availability goes (nil: straight to the manager's beacon source).
    let availability = LockedBox<SourceAvailability?>(nil)
    /// Beacons whose published distance stopped placing them while the hub could not say so
    /// (disconnected, or the publish failed): cleared at the next connection, unless heard again.
    let departedWhileDisconnected = LockedBox<Set<BeaconIdentity>>([])
    /// The beacons' tracker configurations on the broker: devices deleted in Home Assistant, entities nobody recorded (with discovery only).
    let trackerWatch: TrackerConfigWatch?
    /// The distances an earlier run left retained on the broker, read once, at the first
    /// connection whose scan completes; the ranging loop clears those no ranging lists after
    /// ``leftoverGrace``.
    let distanceScan: RetainedDistanceScan
    /// Whether the scan is still to run (`pending`), running, or done.
    let scanPhase = LockedBox(ScanPhase.pending)
    enum ScanPhase { case pending, running, done }
    /// What the scan found, until the ranging loop takes it.
    let leftovers = LockedBox<Set<BeaconIdentity>?>(nil)
    /// How long a beacon whose distance an earlier run left retained may go unranged before its
    /// distance is cleared: long enough for the sources to come up and a beacon still around to be
    /// ranged again (a region restored inside ranges at once; a node reports every few seconds).
    let leftoverGrace: Duration

    /// What the hub has done since start.
    public struct Counters: Hashable, Sendable {
        public var eventsPublished = 0
        public var connections = 0
        public var disconnections = 0
        public var discoveryRounds = 0
        /// Sighting subscriptions the broker refused (each makes the MQTT sources unavailable until
        /// it is granted: the client asks again).
        public var refusedSubscriptions = 0
        /// Placements of beacons left without Home Assistant entities: the limit of announced beacons was reached.
        public var unannouncedBeacons = 0
        /// Logged events with a message that can never be published (a topic longer than MQTT
        /// allows, from a region identifier of over 65,000 bytes): that message is left out and
        /// logged as an error, the event's other messages go out.
        public var eventsUnpublishable = 0
        /// Announced beacons dismissed because their devices were deleted in Home Assistant.
        public var forgottenBeacons = 0
        /// Beacons with entities on the broker that were not recorded as announced, counted as announced.
        public var adoptedBeacons = 0
        /// `online`s published to answer an earlier connection's will read late (``PresenceHub/answerLateWill(_:)``).
        public var lateWillsAnswered = 0
    }

    /// The hub as an output, for `/metrics` (``OutputStatus``).
    public var status: OutputStatus {
        let counts = counts
        let (discovery, announced) = outputs.withLock { ($0.discovery, $0.announcedBeacons.count) }
        return OutputStatus(name: outputName, kind: "mqtt", connected: client.isConnected, eventsPublished: counts.eventsPublished,
                            cursor: cursor.withLock { $0 }, connections: counts.connections, eventsUnpublishable: counts.eventsUnpublishable,
                            lateWillsAnswered: counts.lateWillsAnswered,
                            homeAssistant: discovery.map { _ in
                                OutputStatus.HomeAssistantStatus(discoveryRounds: counts.discoveryRounds, announcedBeacons: announced,
                                                                 unannouncedBeacons: counts.unannouncedBeacons, forgottenBeacons: counts.forgottenBeacons,
                                                                 adoptedBeacons: counts.adoptedBeacons)
                            })
    }

    public var counts: Counters {
        var counts = counters.withLock { $0 }
        counts.forgottenBeacons = trackerWatch?.forgotten ?? 0
        counts.adoptedBeacons = trackerWatch?.adopted ?? 0
        return counts
    }

    /// The MQTT sources as one input of the daemon, for `GET /v1/sources`, `/readyz` and `/metrics`:
    /// up while connected, their sightings, reconnections and rejected messages by kind.
    public let activity: SourceActivity
    public var isConnected: Bool { client.isConnected }

    /// Logged events published per round trip to the broker (their messages pipelined, the cursor
    /// saved once): 1 publishes each event alone, waiting for its acknowledgement.
    public let eventsPerRound: Int
    /// A round takes no further event once it holds this many messages.
    static let roundMessageBudget = 2_000

    /// The events not yet logged (``MonitoringService/backlog``) above which the hub holds back its
    /// reads of sightings from the broker (`MQTTReadPause`: until they are down to half, at most
    /// 0.5 s at a time), unless `mqtt.maximumBacklog` says otherwise: a flood of new beacons faster
    /// than the event log can take their events waits at the broker instead of in this process's memory.
    public static let defaultMaximumBacklog = 50_000

    /// - Parameter eventsPerRound: events whose messages go out together, acknowledged as one
    ///   round (``eventsPerRound``; `bench mqtt` compares 1 with the default).
    public init(configuration: MQTTHubConfiguration, homeAssistant: HomeAssistantConfiguration?, sources: [MQTTSourceConfiguration],
                service: MonitoringService, logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment,
                eventsPerRound: Int = 64, leftoverGrace: Duration = .seconds(30)) throws {
        try configuration.validate()
        self.leftoverGrace = leftoverGrace
        self.eventsPerRound = max(1, eventsPerRound)
        self.configuration = configuration
        self.homeAssistant = homeAssistant
        self.service = service
        self.logger = logger
        topics = PresenceTopics(site: configuration.siteName)
        outputName = "mqtt:" + configuration.siteName
        let discovery = homeAssistant?.discovery(topics: topics)
        var presenceOutputs = PresenceOutputs(topics: topics, discovery: discovery)
        presenceOutputs.retainsAllDepartures = configuration.retainsAllDepartures
        outputs = LockedBox(presenceOutputs)
        trackerWatch = discovery.map(TrackerConfigWatch.init)
        distanceScan = RetainedDistanceScan(topics: topics)
        // Batching: one read's sightings to the engine together, so their events commit together.
        let ingest = sources.isEmpty ? nil : MQTTSightingIngest(sources: sources, manager: service.manager, logger: logger, batching: true)
        self.ingest = ingest
        activity = SourceActivity(name: "mqtt:" + sources.map(\.format.rawValue).joined(separator: "+") + "@" + configuration.brokerDescription, kind: "mqtt")

        var clientConfiguration = try configuration.clientConfiguration(environment: environment)
        clientConfiguration.will = Self.status("offline", topics)

        let box = HubBox()
        // Backpressure on the sightings: none once the ingest is stopped (a stop waits for the
        // engine's queue with the ingest off, and the hub still reads its acknowledgements).
        let maximumBacklog = configuration.maximumBacklog ?? Self.defaultMaximumBacklog
        let readPause = ingest.map { ingest in
            MQTTReadPause(pauseAbove: maximumBacklog, resumeAtOrBelow: maximumBacklog / 2) {
                ingest.isStopped ? 0 : service.backlog
            }
        }
        client = MQTTClient(configuration: clientConfiguration, logger: logger, readPause: readPause,
                            onReadComplete: { ingest?.flush() },
                            onMessage: { message in box.hub?.received(message) },
                            onConnectionEvent: { event in box.hub?.connectionChanged(event) })
        box.hub = self
        activity.track {
            let statistics = ingest?.statistics ?? MQTTSightingIngest.Statistics()
            let connections = box.hub?.counts.connections ?? 0
            let pauses = readPause.map { (count: $0.pauses, seconds: $0.pausedTime.inSeconds, now: $0.isPaused) }
            return SourceActivity.Counters(inputs: statistics.sightings, reconnects: max(0, connections - 1),
                                           decodeErrors: statistics.decodeErrors,
                                           readPauses: pauses)
        }
    }

    /// Breaks the init-time cycle between the client's callbacks and the hub.
    final class HubBox: @unchecked Sendable {
        weak var hub: PresenceHub?
    }

    /// Creates the events cursor at the log's current end if this site has none yet (a new output
    /// does not replay an old log), and reads back the beacons announced to Home Assistant before
    /// (``PresenceOutputs/restoreAnnounced(_:)``). Call before the service logs its start (and
    /// ``MonitoringService/restoreRooms()`` before ``run()``).
    public func prepare() async throws {
        // Known from the start, so /metrics says how far behind the log the hub is even when the
        // broker is unreachable from the start.
        let position = try await service.store.outputCursor(outputName, createAtEnd: true)
        cursor.withLock { $0 = $0 ?? position }
        guard outputs.withLock({ $0.discovery != nil }) else { return }
        let stored = try await PresenceOutputs.storedAnnouncements(of: outputName, in: service.store, logger: logger)
        outputs.withLock { outputs in
            outputs.restoreAnnounced(stored.announced)
            outputs.restoreDismissed(stored.dismissed)
        }
    }

    /// Reports the MQTT sources' availability to `availability` (under ``activity``'s name) instead
    /// of setting the manager's beacon source status directly: a broker outage then restricts the
    /// beacon regions only when no other source (a controller, a simulation) still serves them.
    public func reportAvailability(to availability: SourceAvailability) {
        self.availability.withLock { $0 = availability }
    }

    func reportStatus(_ status: AuthorizationStatus) {
        if let availability = availability.withLock({ $0 }) {
            availability.report(status, for: .beacon, from: activity.name)
        } else {
            service.manager.setSourceStatus(status, for: .beacon)
        }
    }

    /// Tells the publisher an event was logged (call from the service's `onLogged`).
    public func eventLogged() {
        wake.signal()
    }

    /// Connects, subscribes (the sources' filters, Home Assistant's status), publishes until
    /// ``shutdown(drainTimeout:)`` or cancellation.
    public func run() async {
        var filters = (ingest?.topicFilters ?? []).map { ($0, MQTTQoS.atMostOnce) }
        // The scanners' status at QoS 1: rare, and an `offline` lost is a node's beacons leaving
        // while it reboots.
        filters += (ingest?.statusFilters ?? []).map { ($0, MQTTQoS.atLeastOnce) }
        // The beacons' tracker configurations at QoS 1: a deletion in Home Assistant, or the copy
        // of the hub's own removal (``TrackerConfigWatch``), must not be dropped on the way.
        if let discovery = outputs.withLock({ $0.discovery }) { filters += discovery.statusTopics.map { ($0, .atMostOnce) } + [(discovery.trackerConfigFilter, .atLeastOnce)] }
        // Its own status at QoS 1: an earlier connection's will published late is answered
        // (``answerLateWill(_:)``).
        filters.append((topics.status, .atLeastOnce))
        for (filter, qos) in filters {
            // Remembered by the client, so subscribed again after every reconnection.
            Task { [client, logger] in
                do { try await client.subscribe(filter, qos: qos) } catch {
                    logger.error("cannot subscribe", metadata: ["filter": "\(filter)", "error": "\(error)"])
                }
            }
        }
        // Not started once the stop has begun: shutdown() takes the publisher it finds, and one
        // started after that would publish beside its drain. (Checked and stored under the
        // publisher's lock, which shutdown() takes after setting `stopping`.)
        let publisher = publisherTask.withLock { slot -> Task<Void, Never>? in
            guard !stopping.withLock({ $0 }) else { return nil }
            let task = Task { await self.publishEvents() }
            slot = task
            return task
        }
        // The client's run ends on shutdown() or cancellation; then the other loops stop too.
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.client.run(); return true }
            if let publisher {
                group.addTask { await withTaskCancellationHandler { await publisher.value } onCancel: { publisher.cancel() }; return false }
            }
            group.addTask { await self.publishRanging(); return false }
            for await clientEnded in group where clientEnded {
                group.cancelAll()
            }
        }
    }

    /// Stops feeding sightings to the engine (``MQTTSightingIngest/stop()``); the outputs go on
    /// until ``shutdown(drainTimeout:)``. The daemon calls it first when it stops, so that the
    /// engine's queue it waits for is not refilled by the broker meanwhile.
    public func stopIngest() {
        ingest?.stop()
    }

    /// Publishes the events logged so far (stop the sources and the service first, so the last
    /// one is "process stopped"; at most `drainTimeout` with the event publisher's last one), then
    /// `offline` (retained; at most `drainTimeout` more, whether the drain finished or not), and
    /// disconnects cleanly. Cancel ``run()``'s task afterwards.
    /// A second call waits for the first one's stop (one drain, one `offline`; its own
    /// `drainTimeout` is not used). Not cancellable: every wait in it is bounded.
    public func shutdown(drainTimeout: Duration = .seconds(3)) async {
        let stop = shutdownTask.withLock { slot -> Task<Void, Never> in
            if let running = slot { return running }
            let task = Task { await self.stop(drainTimeout: drainTimeout) }
            slot = task
            return task
        }
        await stop.value
    }

    /// ``shutdown(drainTimeout:)``'s work, once.
    private func stop(drainTimeout: Duration) async {
        // The disconnection below is ours: it must not read as the beacon source failing.
        stopping.withLock { $0 = true }
        // No more sightings (when the daemon has not stopped them already): also ends any hold on
        // the reads, so the drain's acknowledgements are read.
        ingest?.stop()
        if let statistics = ingest?.statistics {
            let rejected = statistics.rejected.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
            let metadata: Logger.Metadata = [
                "messages": "\(statistics.messages)", "sightings": "\(statistics.sightings)",
                "ignored": "\(statistics.ignored.values.reduce(0, +))", "rejected": "\(statistics.rejectedTotal)",
                "rejected-by-kind": "\(rejected)", "unrouted": "\(statistics.unrouted)",
                "scanner-statuses": "\(statistics.statuses)", "scanner-status-changes-unlogged": "\(statistics.unloggedStatusChanges)",
                "late-sightings": "\(statistics.late)",
            ]
            // A warning when messages were rejected, so it shows at the daemon's usual log levels.
            logger.log(level: statistics.rejectedTotal > 0 ? .warning : .info, "MQTT sources: totals since start", metadata: metadata)
        }
        // The publisher loop stops first (after the event it is publishing), so the drain below
        // is the only one publishing. Its wait and the drain share `drainTimeout`; a publisher
        // still waiting for an acknowledgement then is left to it, and the drain is skipped
        // (two drains would race on the cursor): the events are published after the next start.
        let deadline = ContinuousClock.now + drainTimeout
        var publisherEnded = true
        if let publisher = publisherTask.withLock({ $0.take() }) {
            publisher.cancel()
            publisherEnded = await Self.waiting(at: drainTimeout) { await publisher.value }
        }
        if client.isConnected {
            // The drain and the offline status wait for the broker's acknowledgments, which a broker
            // that answers PINGREQ but stopped acknowledging never sends, and an await on them is not
            // cancellable: they run on their own, and `drainTimeout` after they started the client is
            // shut down whether they finished or not (closing the connection fails what they still
            // wait for, which ends them). A task group did not bound this: it waits for every child.
            // The offline status has a wait of its own: a drain that timed out must not cost it
            // (the clean disconnection below discards the will, so nothing else would say it).
            let remaining = deadline - ContinuousClock.now
            let finished = publisherEnded && remaining > .zero ? await Self.waiting(at: remaining) { _ = await self.publishPending() } : false
            if !finished {
                logger.warning("MQTT shutdown: events still unacknowledged after the drain timeout are published after the next start",
                               metadata: ["timeout": "\(drainTimeout)"])
            }
            await Self.sayOffline(client, Self.status("offline", topics), within: drainTimeout, lock: statusLock, logger: logger)
        }
        await client.shutdown()
    }

    /// Publishes `offline`, the retained status message given, on `client`, waiting at most
    /// `timeout` for the broker's acknowledgement (a broker that stopped acknowledging would hold
    /// it forever); `lock`, when given, is held around the publication (status publications one
    /// at a time). Failures and a missing acknowledgement are logged. The hub's stop, the
    /// cluster's outputs and a scanner publisher's stop all end so.
    static func sayOffline(_ client: MQTTClient, _ offline: MQTTMessage, within timeout: Duration, lock: AsyncSemaphore? = nil, logger: Logger) async {
        let publish: @Sendable () async -> Void = {
            do {
                try await client.publish(offline)
            } catch {
                logger.warning("cannot publish offline status (the broker's will does on an unclean end only)", metadata: ["error": "\(error)"])
            }
        }
        let acknowledged = await waiting(at: timeout) {
            if let lock { await lock.withPermit { await publish() } } else { await publish() }
        }
        if !acknowledged { logger.warning("offline status unacknowledged within the timeout", metadata: ["timeout": "\(timeout)"]) }
    }

    /// Runs `body` in its own task and waits for it at most `timeout`: true when it finished in
    /// time. The task is not cancelled (what it awaits may ignore cancellation); it runs on.
    static func waiting(at timeout: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
        let race = FirstResult<Bool>()
        Task {
            await body()
            race.finish(.success(true))
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            race.finish(.success(false))
        }
        let inTime = (try? await race.value) ?? false
        timer.cancel()
        return inTime
    }

    // MARK: Incoming

    func received(_ message: MQTTMessage) {
        if message.topic == topics.status { return answerLateWill(message) }
        if let discovery = outputs.withLock({ $0.discovery }), discovery.statusTopics.contains(message.topic) {
            // A retained `online` (a birth message set to retain) is the broker's copy, handed over
            // at the subscription: not Home Assistant restarting now. The connection's own round
            // covers it (a second round followed every connection).
            if message.payload == Array("online".utf8), !message.retain {
                // One round for the `online`s that come while one waits; the wait spreads the
                // announcements of many hubs over a second, and keeps rounds apart.
                let now = ContinuousClock.now
                let delay = discoveryRequested.withLock { requested -> Duration? in
                    guard !requested.pending else { return nil }
                    requested.pending = true
                    let jitter = Duration.milliseconds(Int.random(in: 100...1000))
                    guard let last = requested.last else { return jitter }
                    return max(jitter, last.advanced(by: Self.discoveryRoundSpacing) - now)
                }
                guard let delay else { return }
                logger.info("Home Assistant is online: re-sending discovery", metadata: ["in": "\(delay)"])
                Task {
                    try? await Task.sleep(for: delay)
                    self.discoveryRequested.withLock { $0 = (false, ContinuousClock.now) }
                    await self.sendDiscovery()
                }
            }
            return
        }
        // The site's own distances: an earlier run's retained ones while the scan runs.
        if distanceScan.received(message) { return }
        if let trackerWatch, trackerWatch.received(message) {
            if trackerWatch.isPending { wake.signal() }
            return
        }
        // Its own output, back through a broad source filter (`regionkit/#`): no sighting, and no
        // rejected batch either (each event and ranging update counted as one).
        if topics.isOwnOutput(message.topic) { return }
        ingest?.handle(topic: message.topic, payload: message.payload, retained: message.retain)
    }

    /// Its own status read back: an `offline` while connected and not stopping is not true. It is
    /// an earlier connection's will that the broker published late (the daemon restarted before
    /// the broker noticed the old connection dead, up to 1.5 keepalives), and it made every Home
    /// Assistant entity of the site unavailable until the next reconnection. Answered with
    /// `online`. Not a retained one: that comes with the subscription each connection makes,
    /// before the connection's own `online`, which replaces it anyway; not the stop's own.
    ///
    /// One answer at a time (and one log line): the `offline`s read while an answer waits for the
    /// status lock are answered by it, published after them.
    func answerLateWill(_ message: MQTTMessage) {
        guard !message.retain, message.payload.count <= 64,
              String(decoding: message.payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == "offline",
              connected.withLock({ $0 }), !stopping.withLock({ $0 }) else { return }
        let read = lateWillAnswer.withLock { answer -> Int? in
            answer.read += 1
            guard !answer.pending else { return nil }
            answer.pending = true
            return answer.read
        }
        guard let read else { return }
        logger.info("the site's offline status read while connected (an earlier connection's will): saying online again",
                    metadata: ["topic": "\(message.topic)", "offline_read": "\(read)"])
        Task {
            await statusLock.withPermit {
                lateWillAnswer.withLock { $0 = (false, 0) }   // an offline read from now on is answered again
                guard !stopping.withLock({ $0 }) else { return }
                do {
                    try await client.publish(Self.status("online", topics))
                    counters.withLock { $0.lateWillsAnswered += 1 }
                } catch {
                    logger.warning("cannot publish online status", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    func connectionChanged(_ event: MQTTConnectionEvent) {
        switch event {
        case .connected:
            connected.withLock { $0 = true }
            refusedFilters.withLock { $0.removeAll() }   // asked for again with this connection
            trackerWatch?.connected()
            activity.set(.up)
            counters.withLock { $0.connections += 1 }
            logger.info("MQTT connected", metadata: ["broker": "\(client.currentServer.map(\.url) ?? configuration.url)"])
            if ingest != nil { reportStatus(.authorized) }
            Task {
                let online = await self.statusLock.withPermit {
                    // A stop under way says `offline` (after this lock): no `online` after it, and
                    // no discovery round competing with its drain.
                    guard !self.stopping.withLock({ $0 }) else { return false }
                    do {
                        try await self.client.publish(Self.status("online", self.topics))
                    } catch {
                        self.logger.warning("cannot publish online status", metadata: ["error": "\(error)"])
                    }
                    return true
                }
                guard online else { return }
                await self.sendDiscovery()
                self.wake.signal()
                await self.scanLeftovers()
            }
        case .subscriptionRefused(let filter):
            // A sighting filter refused: the beacons on it go unheard, which must read as the
            // source failing (regions fail visibly), not as every beacon leaving. The client asks
            // again, on this connection (`.subscriptionRestored` once granted) and at the next one
            // (whose `.connected` reports the source up again).
            if let ingest, ingest.statusFilters.contains(filter) {
                logger.warning("the MQTT broker refused the subscription to the scanners' status: a scanner that goes offline is not known as such (its beacons leave as if it were silent)",
                               metadata: ["filter": "\(filter)"])
                return
            }
            guard let ingest, ingest.topicFilters.contains(filter) else { return }
            counters.withLock { $0.refusedSubscriptions += 1 }
            refusedFilters.withLock { _ = $0.insert(filter) }
            let reason = "the MQTT broker refused the subscription to '\(filter)'"
            activity.set(.down, detail: reason)
            reportStatus(.restricted(reason: reason))
        case .messageSkipped(let topic, let size, let retained):
            // Over the client's packet limit (it logged it and kept the connection): a rejected sighting message.
            ingest?.skipped(topic: topic, size: size, retained: retained)
        case .subscriptionRestored(let filter):
            // Granted when the client asked again on this connection: up once no filter is refused.
            guard ingest != nil else { return }
            let stillRefused = refusedFilters.withLock { refused in
                refused.remove(filter)
                return refused.sorted().first
            }
            if let stillRefused {
                let reason = "the MQTT broker refused the subscription to '\(stillRefused)'"
                activity.set(.down, detail: reason)
                reportStatus(.restricted(reason: reason))
            } else if connected.withLock({ $0 }) {
                activity.set(.up)
                reportStatus(.authorized)
            }
        case .disconnected(let error):
            // A batch the connection's last read left (its read-complete never came) goes now,
            // before the sources are said to be unavailable.
            ingest?.flush()
            // Failed attempts while already disconnected are the client's to log (at info).
            let wasConnected = connected.withLock { state in
                defer { state = false }
                return state
            }
            let isStopping = stopping.withLock { $0 }
            activity.set(isStopping ? .finished : .connecting, detail: error.map { "\($0)" })
            // Also when the first attempts fail: the sources are then known to be unavailable, not
            // undetermined. An attempt that failed with another broker of `urls` tried next says
            // nothing yet (a standby answering; reported unavailable, every region failed at each
            // start whose first broker was down); a lost connection does at once (its sightings stopped).
            if ingest != nil && !isStopping && (wasConnected || !client.triesAnotherServerAfterFailure) {
                reportStatus(.restricted(reason: "MQTT broker \(configuration.brokerDescription) unreachable"))
            }
            guard wasConnected else { return }
            counters.withLock { $0.disconnections += 1 }
            if let error {
                logger.warning("MQTT disconnected", metadata: ["broker": "\(configuration.brokerDescription)", "error": "\(error)"])
            } else {
                logger.info("MQTT disconnected", metadata: ["broker": "\(configuration.brokerDescription)"])
            }
        }
    }

    /// The monitored regions, read once, when first asked for.
    final class RegionsSnapshot {
        let manager: LocationManager
        lazy var regions: [Region] = manager.monitoredRegions
        init(_ manager: LocationManager) { self.manager = manager }
    }

    /// A beacon placed in a room but not announced to Home Assistant: the limit is reached.
    /// Counted each time; logged once.
    func countUnannounced(_ event: StoredEvent) {
        let first = counters.withLock { counters in
            defer { counters.unannouncedBeacons += 1 }
            return counters.unannouncedBeacons == 0
        }
        guard first, let limit = outputs.withLock({ $0.discovery?.beacons.maximum }) else { return }
        logger.warning("Home Assistant: the limit of announced beacons is reached; further beacons keep their room topic but get no entities (homeAssistant.maximumBeacons, or beacons: regions)",
                       metadata: ["limit": "\(limit)", "event": "\(event.id)"])
    }

    func sendDiscovery() async {
        await discoveryLock.withPermit { await self.sendDiscoveryRound() }
    }

    private func sendDiscoveryRound() async {
        guard !stopping.withLock({ $0 }) else { return }
        let monitored = service.manager.monitoredRegions
        for group in PresenceOutputs.topicCollisions(monitored) {
            logger.warning("regions share MQTT topics: their retained states overwrite each other and Home Assistant shows one entity; rename one",
                           metadata: ["regions": "\(group)", "level": "\(PresenceTopics.level(group[0]))"])
        }
        // Topics regions left behind under their earlier topic levels: cleared first.
        let removals = outputs.withLock { $0.legacyTopicRemovals(regions: monitored) }.map(Self.mqtt)
        for message in Self.publishable(removals, logger: logger, context: ["output": "earlier topics' removal"]) {
            do { try await client.publish(message) } catch {
                logger.warning("earlier topics not cleared (will be on reconnection)", metadata: ["error": "\(error)"])
                return
            }
        }
        let all = outputs.withLock { $0.discoveryMessages(regions: monitored) }.map(Self.mqtt)
        let messages = Self.publishable(all, logger: logger, context: ["output": "Home Assistant discovery"])
        guard !messages.isEmpty else { return }
        counters.withLock { $0.discoveryRounds += 1 }
        for message in messages {
            do { try await client.publish(message) } catch {
                logger.warning("discovery not sent (will be re-sent on reconnection)", metadata: ["error": "\(error)"])
                return
            }
        }
    }

    /// The daemon's availability, retained: `online` after connecting, `offline` at a clean stop and as the will.
    static func status(_ text: String, _ topics: PresenceTopics) -> MQTTMessage {
        status(text, on: topics.status)
    }

    /// A retained status message, `online` or `offline`, on `topic` (QoS 1): the hub's, a
    /// scanner publisher's.
    static func status(_ text: String, on topic: String) -> MQTTMessage {
        MQTTMessage(topic: topic, payload: Array(text.utf8), qos: .atLeastOnce, retain: true)
    }

    static func mqtt(_ message: PresenceMessage) -> MQTTMessage {
        MQTTMessage(topic: message.topic, payload: message.payload, qos: message.qos == 0 ? .atMostOnce : .atLeastOnce, retain: message.retain)
    }

    // MARK: Events from the log

    /// Publishes logged events after the cursor whenever connected; waits for a connection or a
    /// new event when there is nothing to do.
    func publishEvents() async {
        var connection = 0
        while !Task.isCancelled {
            guard client.isConnected else {
                do { try await client.waitUntilConnected() } catch { return }
                continue
            }
            // At each new connection, the regions' states and beacons' rooms again — here, in the
            // events' own order: a state read now and published after a newer event's would
            // overwrite it (the events published next end with the states read here, or newer).
            let current = counters.withLock { $0.connections }
            if current != connection {
                connection = current
                await republishStates()
                await republishRooms()
                await republishDepartures()
            }
            if let trackerWatch, trackerWatch.isPending {
                // (The configurations of the beacons announced already, sent at every subscription,
                // need nothing: no wait for the connection's discovery round.)
                trackerWatch.discardKnown(outputs.withLock { $0 })
                if trackerWatch.isPending { await applyTrackerWatch(trackerWatch) }
            }
            switch await publishPending() {
            case .done: await wake.wait(timeout: .seconds(1))   // the timeout covers events logged by another process
            case .disconnected:
                // Not connected any more (the loop then waits for the connection), or a publish
                // refused while connected: retried after a pause, not in a tight loop.
                await wake.wait(timeout: .seconds(1))
            case .storeFailed: try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    enum PublishOutcome { case done, disconnected, storeFailed }

    /// `messages` without those that can never be published (`MQTTClient.checkPublishable(_:)`:
    /// a topic over MQTT's 65,535 bytes, from a region identifier that long), each left out logged
    /// as an error with `context`: retrying them cannot help, and an event publisher that did would
    /// hold back every later event forever (a discovery round, every later region's configuration).
    static func publishable(_ messages: [MQTTMessage], logger: Logger, context: @autoclosure () -> Logger.Metadata) -> [MQTTMessage] {
        messages.filter { message in
            do {
                try MQTTClient.checkPublishable(message)
                return true
            } catch {
                logger.error("an MQTT message can never be published: left out", metadata: context().merging(["error": "\(error)"]) { $1 })
                return false
            }
        }
    }

    /// ``publishable(_:logger:context:)`` for an event's messages (the event stays in the log).
    static func publishable(_ messages: [MQTTMessage], of event: StoredEvent, logger: Logger) -> [MQTTMessage] {
        publishable(messages, logger: logger, context: [
            "event": "\(event.id)", "type": "\(event.type)", "region": "\(event.region.map { String($0.prefix(120)) } ?? "-")",
        ])
    }

    /// Publishes every logged event after the cursor, in order, ``eventsPerRound`` at a time,
    /// advancing the cursor per acknowledged round. One caller at a time (the publisher loop, or
    /// ``shutdown(drainTimeout:)``'s drain once the loop has ended; skipped when it has not). A
    /// cancelled caller returns before its next event (`.done`: its loop then ends).
    func publishPending() async -> PublishOutcome {
        let store = service.store
        while true {
            let batch: [StoredEvent]
            do {
                let position: Int64
                if let known = cursor.withLock({ $0 }) {
                    position = known
                } else {
                    let loaded = try await store.outputCursor(outputName, createAtEnd: true)
                    cursor.withLock { $0 = $0 ?? loaded }
                    position = loaded
                }
                batch = try await store.events(since: nil, region: nil, type: nil, afterID: position, limit: 256)
            } catch {
                logger.error("cannot read the event log or the MQTT cursor", metadata: ["error": "\(error)"])
                return .storeFailed
            }
            guard !batch.isEmpty else { return .done }
            var start = batch.startIndex
            while start < batch.endIndex {
                // The publisher cancelled by a stop ends after its current round: the stop's
                // drain goes on from the cursor.
                if Task.isCancelled { return .done }
                let manager = service.manager
                // Each event's messages are decided as if the ones before it in the round were
                // already acknowledged (a provisional copy of the outputs: a beacon announced by
                // an earlier event is not announced twice, and the announcement limit holds), and
                // the same decisions are applied to the outputs once the broker acknowledged all.
                var provisional = outputs.withLock { $0 }
                var decided: [(event: StoredEvent, regions: () -> [Region])] = []
                // Placements left without entities (the limit), counted once the round is acknowledged.
                var beyondLimit: [StoredEvent] = []
                var unpublishable = 0
                var messages: [MQTTMessage] = []
                // Up to eventsPerRound events, and no event started once the round holds
                // roundMessageBudget messages (a region's start announces every beacon it matches:
                // 64 of them could exceed the 65,535 packet ids in flight).
                while start < batch.endIndex && decided.count < eventsPerRound && messages.count < Self.roundMessageBudget {
                    let event = batch[start]
                    start += 1
                    // One snapshot per event, taken only if needed: `published` must decide as
                    // `messages` did, though a region may be put while the messages are in flight.
                    let snapshot = RegionsSnapshot(manager)
                    let regions = { snapshot.regions }
                    let eventMessages = provisional.messages(for: event, region: { manager.monitoredRegion($0)?.region }, regions: regions)
                    if provisional.isBeyondLimit(event, regions: regions) { beyondLimit.append(event) }
                    provisional.published(event, regions: regions)
                    let all = eventMessages.filter { configuration.publishEvents != false || $0.topic != topics.events }.map(Self.mqtt)
                    let group = Self.publishable(all, of: event, logger: logger)
                    if group.count < all.count { unpublishable += 1 }
                    messages += group
                    decided.append((event, regions))
                }
                // The beacons this round announces, recorded before their entities go out.
                do {
                    try await PresenceOutputs.recordAnnouncements(provisional.announcedBeacons, since: outputs.withLock { $0.announcedBeacons },
                                                                  of: outputName, in: store)
                } catch {
                    logger.error("cannot record the beacons announced to Home Assistant: the round waits", metadata: ["error": "\(error)"])
                    return .storeFailed
                }
                // A round's messages go out together, in order, pipelined (one round trip: each
                // event waited for its own acknowledgement, 66–430 events/s under a flood); on
                // failure the whole round is published again after reconnecting (QoS 1: at least
                // once; retained ones are idempotent).
                // A region's removal waits for a discovery round under way: the round read the
                // monitored regions before the stop and would publish the removed region's config
                // after its removal, an entity left in Home Assistant for good (review finding).
                let removesRegions = outputs.withLock { $0.discovery != nil } && decided.contains { $0.event.type == "monitoringStopped" }
                do {
                    if removesRegions {
                        try await discoveryLock.withPermit { [client, messages] in try await client.publish(messages) }
                    } else {
                        try await client.publish(messages)
                    }
                } catch { return .disconnected }
                outputs.withLock { outputs in
                    for (event, regions) in decided { outputs.published(event, regions: regions) }
                }
                for event in beyondLimit { countUnannounced(event) }
                if unpublishable > 0 { counters.withLock { $0.eventsUnpublishable += unpublishable } }
                guard let last = decided.last?.event.id else { continue }
                cursor.withLock { $0 = last }
                counters.withLock { $0.eventsPublished += decided.count }
                // Saved once a round, even when the stop came meanwhile (the broker has the events).
                let outputName = outputName
                do { try await uncancelled { try await store.setOutputCursor(outputName, to: last) } } catch {
                    logger.error("cannot save the MQTT events cursor (events may be published again after a restart)", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Every monitored region's state again, retained, at every connection: a broker restarted
    /// without its retained messages, or a region whose topic moved (its topic level became
    /// one-to-one in session 45), would otherwise show nothing until the region's next change —
    /// a restored region logs none while it stays inside. Events published after this (an
    /// outage's) end with the same states.
    func republishStates() async {
        let manager = service.manager
        var messages: [PresenceMessage] = []
        for region in manager.monitoredRegions {
            guard let state = manager.state(for: region) else { continue }
            messages.append(PresenceMessage(topic: topics.regionState(region.identifier), text: state.rawValue, qos: 1, retain: true))
        }
        let publishable = Self.publishable(messages.map(Self.mqtt), logger: logger, context: ["output": "region states"])
        do { try await republish(publishable) } catch {
            logger.warning("region states not re-sent (will be at the next connection)", metadata: ["error": "\(error)"])
        }
    }

    /// Messages re-sent at a connection, at most this many in flight at once.
    static let republishChunk = 1_000

    /// `messages` in order, pipelined ``republishChunk`` at a time (one round trip a chunk: one
    /// acknowledgement awaited per message made a reconnection with 10,000 beacons take 10,000
    /// round trips before the outage's events went out). Throws the first failure.
    func republish(_ messages: [MQTTMessage]) async throws(MQTTError) {
        try await Self.publish(messages, inChunksOn: client)
    }

    /// `messages` in order on `client`, pipelined ``republishChunk`` at a time (never more QoS 1
    /// messages in flight than that, however many there are). Throws the first failure.
    static func publish(_ messages: [MQTTMessage], inChunksOn client: MQTTClient) async throws(MQTTError) {
        var start = messages.startIndex
        while start < messages.endIndex {
            let end = min(start + republishChunk, messages.endIndex)
            try await client.publish(Array(messages[start..<end]))
            start = end
        }
    }

    /// The beacons' rooms again, retained, at every connection: a broker restarted without its
    /// retained messages (no persistence) would otherwise leave every device tracker unknown
    /// until its beacon changed rooms. Each beacon placed in a room now, and each beacon with a
    /// Home Assistant entity that is in none (`not_home`). Events of an outage published after
    /// this end with the same rooms (they lead to the engine's state now).
    func republishRooms() async {
        let rooms = service.manager.nearestScanners
        let messages = outputs.withLock { $0.roomMessages(placed: rooms) }.map(Self.mqtt)
        guard !messages.isEmpty else { return }
        do { try await republish(messages) } catch {
            logger.warning("beacons' rooms not re-sent (will be at the next connection)", metadata: ["error": "\(error)"])
            return
        }
        logger.notice("beacons' rooms re-sent", metadata: ["beacons": "\(messages.count)"])
    }

    /// The distance and attributes of each beacon that stopped being placed while the hub was
    /// disconnected (``departedWhileDisconnected``), cleared as
    /// ``PresenceRangingTracker/unplaced(_:kept:)`` clears them, at the next connection: they
    /// stayed on the broker, retained, and placed the beacon in its last room for ever (the device
    /// tracker said `not_home`, its attributes the kitchen). A beacon heard again meanwhile is left
    /// to its next distance.
    func republishDepartures() async {
        let departed = departedWhileDisconnected.withLock { set in defer { set.removeAll() }; return set }
        let engine = service.manager
        let kept = departureKeeper()
        var left = departed.sorted()[...]
        while !left.isEmpty {
            // A chunk of beacons at a time, pipelined (each beacon's messages in order).
            let chunk = left.prefix(Self.republishChunk / 4)
            let messages = chunk.filter { engine.nearestScanner(for: $0) == nil }.flatMap { identity in
                PresenceRangingTracker.departure(identity, topics: topics, kept: kept(identity)).map(Self.mqtt)
            }
            do { try await client.publish(messages) } catch {
                // Not connected any more: this chunk and the rest at the next connection.
                departedWhileDisconnected.withLock { $0.formUnion(left) }
                return
            }
            left = left.dropFirst(chunk.count)
        }
        if !departed.isEmpty { logger.notice("beacons' departures re-sent", metadata: ["beacons": "\(departed.count)"]) }
    }

    /// Adopts the beacons with unrecorded entities and dismisses those whose devices were deleted
    /// in Home Assistant (``TrackerConfigWatch``): in the publisher loop, between events rounds, and
    /// outside discovery rounds (either could otherwise announce a beacon dismissed meanwhile, and
    /// its device would come back).
    func applyTrackerWatch(_ watch: TrackerConfigWatch) async {
        let manager = service.manager
        await discoveryLock.withPermit {
            await watch.apply(outputs: { outputs.withLock { $0 } }, update: { changed in outputs.withLock { $0 = changed } },
                              messages: { beacons in outputs.withLock { $0.removalMessages(beacons) { manager.nearestScanner(for: $0) != nil } } },
                              output: outputName, store: service.store, publish: { try await republish($0) }, logger: logger)
        }
    }

    /// Whether a departed beacon's distance and attributes stay retained: ``PresenceOutputs/keepsDeparture(of:)``,
    /// or its entities are still to be announced by a placement event not yet published (a
    /// backlog, an outage: the ranging path runs ahead of the event log). The outputs are read
    /// now and the monitored regions at most once (on the first beacon that needs them), so a
    /// batch of departures asks the same keeper.
    func departureKeeper() -> (BeaconIdentity) -> Bool {
        let outputs = outputs.withLock { $0 }
        let regions = RegionsSnapshot(service.manager)
        return { beacon in outputs.keepsDeparture(of: beacon) || outputs.announces(beacon, regions: { regions.regions }) }
    }
}
