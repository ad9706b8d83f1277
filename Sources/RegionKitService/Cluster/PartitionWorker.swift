import Foundation
import Logging
import RegionKit
import RegionKitConcurrency
import RegionKitCore
import RegionKitGateway
import RegionKitMQTT
import RegionKitStore

/// One partition held by a cluster member: its own engine (a `LocationManager`) over the regions
/// the partition's beacons can match, restored from the partition's stored contributions; its own
/// persistent MQTT session (client id `regionkit-<site>-part-<p>`, QoS 1), so the sightings published
/// while the partition had no holder are delivered to the next one; and a ``ContributionWriter``
/// that turns the engine's `didDetermineState` into the partition's contribution and logs its
/// beacons' `didChangeNearestScanner` (every sighting of a beacon reaches its partition).
///
/// While the broker connection is down the partition hears nothing, which is not every beacon
/// leaving: the engine is set aside (nothing it decides is written), and on reconnection a new one
/// starts from the partition's last states exactly as when a partition is taken over (a region
/// inside stays inside while its beacons are heard again; one not heard again exits once). The
/// same while the broker refuses the partition's subscription: the client asks again, and the
/// partition resumes when it is granted (or when messages arrive on its session anyway). Its
/// beacons' rooms are carried over the same way (the rooms it last wrote, or at a takeover the
/// rooms the store keeps): one heard again stays, one not heard leaves.
///
/// A QoS 1 sighting is acknowledged to the broker only once what it decided is committed
/// (``AcknowledgementQueue``): a decision dropped because the lease lapsed or moved leaves its
/// message in the partition's session, and the next holder gets it again.
///
/// ```swift
/// let worker = PartitionWorker(lease: lease, member: "engine-a", regions: regions, store: store, …)
/// try await worker.start()
/// await worker.stop(handOver: true)   // flush the contributions, keep the MQTT session
/// ```
final class PartitionWorker: LocationManagerDelegate {
    let lease: PartitionLease
    let regions: [Region]
    let topicFilter: String
    /// The nodes' status filter (``ClusterConfiguration/statusFilter``), read by every partition.
    let statusFilter: String?
    private let store: any ClusterStoring
    private let profile: MonitoringProfile
    private let client: MQTTClient
    private let writer: ContributionWriter
    /// The QoS 1 acknowledgements owed, released once their decisions are committed.
    let acknowledgements: AcknowledgementQueue<MQTTAcknowledgement>
    /// Releases the acknowledgements that waited their longest (``AcknowledgementQueue/maximumWait``)
    /// when nothing else does (no message, delivery or commit to release them).
    private let acknowledgementTask = LockedBox<Task<Void, Never>?>(nil)
    private let hooks: HookConfiguration
    /// What the partition's beacons' distances last published (nil: not published).
    private let ranging: LockedBox<PresenceRangingTracker?>
    /// Whether a departed beacon's distance and attributes stay retained (see `init`).
    private let retainsDepartures: Bool
    /// Reads the distances the broker keeps retained for the partition's beacons when the
    /// partition is taken (an earlier holder's) and again at each resumption after a lost
    /// connection (a departure handed to the connection as it dropped was lost with it: the
    /// partition's publishes are QoS 0 semantics, ``MQTTClient/publishDetached(_:)``). With
    /// ranging and a known partition count only (only this partition's beacons are its own).
    private let distanceScan: RetainedDistanceScan?
    /// One request per scan due (the start, each resumption); a scan under way serves those
    /// that arrive meanwhile but one.
    private let scanRequests = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    /// Scans completed since the start (diagnostics; tests wait for one).
    let scansCompleted = LockedBox(0)
    /// Beacons whose distance an earlier holder or engine published, cleared unless ranged
    /// again within `leftoverGrace`. Changed with `ranging`'s lock held (lock order:
    /// `ranging`, then `leftovers`); only the postponement takes it alone.
    let leftovers = LockedBox(RangingLeftovers())
    /// See `init`.
    private let leftoverGrace: Duration
    /// The scan and the check of the leftovers every second (with ranging).
    private let leftoverTask = LockedBox<Task<Void, Never>?>(nil)
    /// The cluster's partitions (see `init`).
    private let partitionCount: Int?
    /// Which partition a sighting's topic hashes to (nil: one partition, or no `+` level).
    private let routeCheck: PartitionRouteCheck?
    /// Sightings delivered here that hash to another partition (``PartitionRouteCheck``).
    let misroutedSightings = LockedBox(0)
    private let logger: Logger
    private let clientTask = LockedBox<Task<Void, Never>?>(nil)
    /// The running engine and what feeds it; `suspended` while the broker connection is down.
    let current: LockedBox<Current>
    /// The last state written (or restored) per region: where a new engine starts from.
    private let lastStates = LockedBox<[String: RegionContribution]>([:])
    /// The rooms the partition's beacons were last placed in, as written (or restored at the
    /// start), like ``lastStates``: the next engine starts from them
    /// (``LocationManager/restoreNearestScanners(_:)``), so a beacon that left during an outage
    /// leaves its room (its room event, distance and attributes) instead of staying there. Kept
    /// from the room events delivered, not read from the engine set aside: a move it decided but
    /// never delivered (dropped at the set-aside) was never written or published.
    private let lastRooms = LockedBox<[BeaconIdentity: String]>([:])
    /// Routes the client's messages to the current ingest (set after the client is made).
    let route: LockedBox<Routing>

    /// Where the client's messages go. While the engine is set aside for a lost connection nothing
    /// arrives, except in the instant between the broker's CONNACK and the client's `.connected` event, when the
    /// persistent session's queued QoS 1 messages are redelivered at once: those are held here
    /// and fed to the new engine first, in order (acknowledged once what they decided is committed,
    /// like every message).
    struct Routing {
        var ingest: MQTTSightingIngest?
        /// The engine generation of `ingest` (``Current/generation``).
        var generation = 0
        var holding = false
        var held: [MQTTMessage] = []
        /// Set aside because the broker refused the subscription, not for a lost connection: a
        /// message that arrives anyway shows that the session still delivers (a persistent
        /// session keeps its earlier subscription), and resumes the engine with it.
        var resumeOnMessage = false
        /// The held statuses' topics, each with its last message's index in ``held``.
        var heldStatuses: [String: Int] = [:]
    }

    /// Node status topics held at most while the engine is set aside.
    static let heldStatusCapacity = 4_096

    struct Current {
        var manager: LocationManager
        var ingest: MQTTSightingIngest
        var suspended = false
        var stopping = false
        /// Whether the partition's MQTT session is connected now (its subscription delivers).
        var connected = false
        /// Whether the broker refuses the partition's subscription on this connection (the
        /// client asks again; the engine is set aside meanwhile).
        var refused = false
        /// Connections lost since the partition was taken.
        var reconnects = 0
        /// Sightings delivered to engines set aside before this one.
        var earlierSightings = 0
        /// The engine's number: 0 for the first, one more at each resumption
        /// (``AcknowledgementQueue/retire(through:)``).
        var generation = 0
    }

    /// The ESPresense id of a beacon region that names one iBeacon (UUID, major and minor): the token
    /// the broker partitions by. `nil` for a region that spans beacons (it lives in every partition).
    static func partitionToken(of region: Region) -> String? {
        guard case .beacon(let beacon) = region, beacon.constraint.format == .iBeacon,
              let major = beacon.major, let minor = beacon.minor else { return nil }
        return partitionToken(of: BeaconIdentity(uuid: beacon.uuid, major: major, minor: minor))
    }

    /// The partitions of `count` that decide `region`: the one its beacon hashes to, or every
    /// partition for a region spanning beacons.
    static func partitions(deciding region: Region, count: Int) -> [Int] {
        guard let token = partitionToken(of: region) else { return Array(0..<count) }
        return [NATSPartition.partition(of: token, count: count)]
    }

    /// The regions partition `partition` of `count` can decide: every region spanning beacons, and
    /// the one-beacon regions whose beacon hashes to it.
    static func regions(_ regions: [Region], partition: Int, count: Int) -> [Region] {
        regions.filter { region in
            guard let token = partitionToken(of: region) else { return true }
            return NATSPartition.partition(of: token, count: count) == partition
        }
    }

    /// - Parameters:
    ///   - ranging: publishes the partition's beacons' distances and attributes (and
    ///     `mqtt_room`), as one daemon's hub does; nil publishes none.
    ///   - partitionCount: the cluster's partitions, to find the stored rooms of this partition's
    ///     beacons (``storedRooms()``) and its beacons among the distances an earlier holder left
    ///     retained (the scan); nil restores none and scans nothing.
    ///   - retainsDepartures: a departed beacon's distance and attributes stay retained (Home
    ///     Assistant discovery is on: the outputs holder may have announced its distance sensor,
    ///     which this partition cannot tell); otherwise sent, then the topics removed
    ///     (``PresenceMessage/departure(topic:text:kept:)``).
    ///   - leftoverGrace: how long a beacon whose distance an earlier holder left retained (found
    ///     by the scan at the start), or whose ranging a broker outage ended, has to be ranged
    ///     again before its distance is cleared; counted from the broker's return.
    ///   - acknowledgementWait: how long a QoS 1 message's acknowledgement waits for its
    ///     decisions to be committed before it is sent anyway (``AcknowledgementQueue``).
    init(lease: PartitionLease, member: String, regions: [Region], profile: MonitoringProfile, store: any ClusterStoring,
         mqtt: MQTTClientConfiguration, clientIDPrefix: String, topicFilter: String, statusFilter: String? = nil, hooks: HookConfiguration,
         ranging: PresenceRangingTracker? = nil, partitionCount: Int? = nil, retainsDepartures: Bool = true, leftoverGrace: Duration = .seconds(30),
         maximumBacklog: Int = PresenceHub.defaultMaximumBacklog, acknowledgementWait: Duration = .seconds(10), logger: Logger,
         onEvents: @escaping @Sendable ([StoredEvent]) -> Void, onFenced: @escaping @Sendable (Int) -> Void) {
        self.lease = lease
        self.ranging = LockedBox(ranging)
        self.retainsDepartures = retainsDepartures
        self.leftoverGrace = leftoverGrace
        self.partitionCount = partitionCount
        routeCheck = partitionCount.flatMap { PartitionRouteCheck(filter: topicFilter, count: $0) }
        // The marker is the partition's: one a stop left subscribed in the persistent session is
        // the next holder's, which its scan unsubscribes.
        let distanceScan = partitionCount == nil ? nil : ranging.map { RetainedDistanceScan(topics: $0.topics, marker: "part-\(lease.partition)") }
        self.distanceScan = distanceScan
        self.regions = regions
        self.store = store
        self.profile = profile
        self.topicFilter = topicFilter
        self.statusFilter = statusFilter
        var logger = logger
        logger[metadataKey: "partition"] = "\(lease.partition)"
        self.logger = logger
        let manager = Self.makeManager(profile: profile)
        let current = LockedBox(Current(manager: manager, ingest: Self.makeIngest(topicFilter: topicFilter, statusFilter: statusFilter, manager: manager, logger: logger)))
        self.current = current
        let route = LockedBox(Routing())
        self.route = route
        let partition = lease.partition
        self.hooks = hooks
        let box = WorkerBox()
        let writer = ContributionWriter(partition: partition, logger: logger, apply: { write, id in
            switch write {
            case .contribution(let region, let state, let since, let time, let evidence):
                try await store.applyContribution(region: region.identifier, lease: lease, member: member, write: id, state: state,
                                                  since: since, time: time) { previous, merged, _ in
                    ClusterEvents.rows(previous: previous, merged: merged, region: region, time: time, evidence: evidence, hooks: hooks)
                }
            case .events(_, let rows):
                try await store.appendEvents(rows, lease: lease, member: member, write: id)
            }
        }, onEvents: onEvents, onFenced: { onFenced(partition) }, onCommitted: { box.worker?.releaseAcknowledgements() })
        self.writer = writer
        let acknowledgements = AcknowledgementQueue<MQTTAcknowledgement>(maximumWait: acknowledgementWait,
                                                                         submitted: { writer.submitted }, committed: { writer.committed })
        self.acknowledgements = acknowledgements
        var configuration = mqtt
        // Every partition keeps its own session: whoever holds the partition gets its queue.
        configuration.clientID = "\(clientIDPrefix)\(lease.partition)"
        configuration.cleanSession = false
        configuration.will = nil
        // Spread the partitions' connections over the brokers (each still fails over to the others).
        let servers = configuration.servers
        let first = Int(lease.partition.magnitude % UInt(servers.count))   // the store hands out 0..<partitions; never an index below 0
        configuration.host = servers[first].host
        configuration.port = servers[first].port
        configuration.useTLS = servers[first].useTLS
        configuration.fallbackServers = Array(servers[(first + 1)...] + servers[..<first])
        // Backpressure: the broker keeps the partition's sightings (its session is persistent)
        // while the engine's undelivered events and the writes queued for the store are more than
        // `maximumBacklog`. (Not the messages held while the engine is set aside: a message is
        // what resumes it after a refused subscription.)
        let readPause = MQTTReadPause(pauseAbove: maximumBacklog, resumeAtOrBelow: maximumBacklog / 2) {
            current.withLock { $0.stopping ? 0 : $0.manager.undeliveredCount } + writer.queued
        }
        client = MQTTClient(configuration: configuration, logger: logger, readPause: readPause, onDelivery: { message, acknowledgement in
            // The scan's distances and marker are not sightings: nothing to decide, acknowledged
            // in their turn (after the sightings before them).
            if distanceScan?.received(message) == true {
                if let acknowledgement, let worker = box.worker {
                    let (engine, generation) = worker.current.withLock { ($0.manager, $0.generation) }
                    acknowledgements.received(acknowledgement, fedTo: engine, generation: generation)
                    worker.releaseAcknowledgements()
                }
                return
            }
            box.worker?.checkRoute(of: message.topic)
            let owed = acknowledgement.map { ($0, acknowledgements) }
            if Self.deliver(message, via: route, statusFilter: statusFilter, acknowledgement: owed) { box.worker?.deliveredWhileRefused() }
            box.worker?.releaseAcknowledgements()
        }, onConnectionEvent: { event in box.worker?.connectionChanged(event) })
        box.worker = self
    }

    /// One of the client's messages: to the running engine's ingest, or held while it is set
    /// aside. True when a sighting arrived while the subscription was refused
    /// (``Routing/resumeOnMessage``): then ``deliveredWhileRefused()`` is due. (A node's status,
    /// on `statusFilter`'s subscription of its own, says nothing about the refused one.)
    ///
    /// `acknowledgement`: the QoS 1 acknowledgement the message owes, queued (under the route's
    /// lock, so in the order the messages were fed) with the engine it was fed to, or as held; a
    /// message neither fed nor held (the partition stopping) is never acknowledged: the broker
    /// delivers it again to the next holder.
    static func deliver(_ message: MQTTMessage, via route: LockedBox<Routing>, statusFilter: String? = nil,
                        acknowledgement: (token: MQTTAcknowledgement, queue: AcknowledgementQueue<MQTTAcknowledgement>)? = nil) -> Bool {
        route.withLock { routing -> Bool in
            if let ingest = routing.ingest {
                ingest.handle(topic: message.topic, payload: message.payload, retained: message.retain)
                acknowledgement.map { $0.queue.received($0.token, fedTo: ingest.manager, generation: routing.generation) }
            } else if routing.holding {
                // Held (or, for a status, replaced or over capacity: nothing to decide): its
                // acknowledgement waits for the resumption.
                acknowledgement.map { $0.queue.received($0.token, fedTo: nil, generation: routing.generation) }
                guard let statusFilter, MQTTTopicFilter.matches(filter: statusFilter, topic: message.topic) else {
                    routing.held.append(message)
                    return routing.resumeOnMessage
                }
                // A node's status: only its last one is kept per topic, for at most
                // ``heldStatusCapacity`` topics (the status subscription is granted while the
                // sightings' is refused, and anyone may publish on it).
                if let earlier = routing.heldStatuses[message.topic] {
                    routing.held[earlier].topic = ""   // replaced: skipped at the replay
                } else if routing.heldStatuses.count >= Self.heldStatusCapacity {
                    return false
                }
                routing.heldStatuses[message.topic] = routing.held.count
                routing.held.append(message)
            }
            return false
        }
    }

    /// Counts a sighting whose topic hashes to another partition, and logs it at the 1st, 10th,
    /// 100th, …: it is still decided here (dropping it would leave its beacon unheard), but the
    /// broker's mapping must be fixed. Nothing for a node's status or a one-partition cluster.
    func checkRoute(of topic: String) {
        guard let routeCheck, let expected = routeCheck.partition(of: topic), expected != lease.partition else { return }
        let count = misroutedSightings.withLock { count -> Int in
            count += 1
            return count
        }
        guard count.isPowerOfTen else { return }
        logger.warning("""
            a sighting of another partition was delivered here: the broker's partition mapping must count \
            \(routeCheck.count) partitions (cluster.partitions), as every node's
            """, metadata: ["topic": "\(topic.prefix(200))", "hashes-to": "\(expected)", "misrouted": "\(count)"])
    }

    /// Sends the QoS 1 acknowledgements whose messages' decisions are committed (or that waited
    /// their longest), in order. Called after each message, delivery run and commit, and twice a second.
    func releaseAcknowledgements() {
        // Not late once the decisions can no longer be written: withheld, the broker delivers them again.
        let lateAllowed = !writer.isFenced && !current.withLock { $0.stopping }
        let client = client
        acknowledgements.release(lateAllowed: lateAllowed) { client.acknowledge($0) }
    }

    func locationManagerDidFinishDelivering(_ manager: LocationManager) {
        releaseAcknowledgements()
    }

    /// Breaks the cycle between the client's callbacks and the worker.
    final class WorkerBox: @unchecked Sendable {
        weak var worker: PartitionWorker?
    }

    static func makeManager(profile: MonitoringProfile) -> LocationManager {
        LocationManager(profile: profile, automation: .all, clock: SystemClock(), sources: [.beacon: .authorized])
    }

    /// The partition's ESPresense messages, and the nodes' status on `statusFilter`, into `manager`.
    static func makeIngest(topicFilter: String, statusFilter: String?, manager: LocationManager, logger: Logger) -> MQTTSightingIngest {
        let source = MQTTSourceConfiguration(format: .espresense, topic: topicFilter, status: statusFilter ?? MQTTSourceConfiguration.noStatus)
        return MQTTSightingIngest(sources: [source], manager: manager, logger: logger)
    }

    /// Sightings the partition's MQTT session delivered to its engines.
    var sightings: Int { current.withLock { $0.earlierSightings + $0.ingest.statistics.sightings } }

    /// The partition's engine as it is now (its beacons' streams and ranging), for the HTTP API.
    var engineSnapshot: MonitoringEngine { current.withLock { $0.manager }.engineSnapshot }

    /// The partition's MQTT session as a source (`GET /v1/sources`, `/readyz`, `/metrics`).
    var status: SourceStatus {
        let (connected, refused, reconnects, sightings, stopping) = current.withLock {
            ($0.connected, $0.refused, $0.reconnects, $0.earlierSightings + $0.ingest.statistics.sightings, $0.stopping)
        }
        let misrouted = misroutedSightings.withLock { $0 }
        let detail = (!connected ? "epoch \(lease.epoch): connecting to the broker for \(topicFilter)"
            : refused ? "epoch \(lease.epoch): the broker refuses the subscription to \(topicFilter) (asked again)"
            : "epoch \(lease.epoch), \(topicFilter)")
            + (misrouted == 0 ? "" : "; \(misrouted) sightings of other partitions (the broker's mapping counts another number of partitions)")
            + Self.acknowledgementDetail(late: acknowledgements.late, withheld: acknowledgements.withheld)
        let state: SourceStatus.State = stopping ? .finished : !connected ? .connecting : refused ? .down : .up
        var status = SourceStatus(name: "partition-\(lease.partition)", kind: "mqtt", state: state,
                                  detail: detail, sightings: sightings, reconnects: reconnects)
        if let pause = client.readPause {
            status.readPauses = pause.pauses
            status.readPausedSeconds = pause.pausedTime.inSeconds
            status.readPaused = pause.isPaused
        }
        return status
    }

    /// What the status says of the QoS 1 acknowledgements that did not go the usual way (nothing
    /// when all did).
    static func acknowledgementDetail(late: Int, withheld: Int) -> String {
        (late == 0 ? "" : "; \(late) QoS 1 sightings acknowledged late (before their decisions were committed)")
            + (withheld == 0 ? "" : "; \(withheld) QoS 1 sightings withheld from an engine set aside (delivered again by the broker)")
    }

    /// Registers the partition's regions on `manager`: restored from `states` (no
    /// `didStartMonitoring`, no spurious enter), the others started afresh.
    func register(on manager: LocationManager, from states: [String: RegionContribution]) {
        manager.delegate = self
        var fresh: [Region] = []   // a run of regions started afresh: one step (see MonitoringService)
        for region in regions {
            if let saved = states[region.identifier], saved.state != .unknown {
                if !fresh.isEmpty { manager.startMonitoring(for: fresh); fresh.removeAll() }
                manager.restoreMonitoring(for: region, state: saved.state, since: saved.since.map { Timestamp(seconds: $0) })
            } else {
                fresh.append(region)
            }
        }
        if !fresh.isEmpty { manager.startMonitoring(for: fresh) }
    }

    func connectionChanged(_ event: MQTTConnectionEvent) {
        switch event {
        case .disconnected:
            current.withLock { current in
                if current.connected { current.reconnects += 1 }
                current.connected = false
            }
            // Owed on the connection that closed: the broker delivers those messages again.
            acknowledgements.removeAll()
            // A broker outage is not a departure.
            setAside("broker connection lost: the partition's engine is set aside until it is back")
        case .connected:
            current.withLock { current in
                current.connected = true
                current.refused = false   // the client asks for the subscription again with this connection
            }
            resume("broker connection back: the partition resumes from its last states")
        case .subscriptionRefused(let filter):
            if filter == statusFilter {
                logger.warning("the broker refused the subscription to the nodes' status: a node that goes offline is not known as such (its beacons leave as if it were silent)",
                               metadata: ["filter": "\(filter)"])
                return
            }
            // The partition hears nothing until the broker grants the subscription (the client
            // asks again): as when the connection is lost, that is not every beacon leaving.
            guard filter == topicFilter else { return }
            current.withLock { $0.refused = true }
            logger.error("the broker refused the partition's subscription: its engine is set aside until it is granted",
                         metadata: ["filter": "\(filter)"])
            setAside(nil, resumeOnMessage: true)
        case .subscriptionRestored(let filter):
            guard filter == topicFilter else { return }
            let connected = current.withLock { current in
                current.refused = false
                return current.connected
            }
            guard connected else { return }
            resume("the broker granted the partition's subscription: the partition resumes from its last states")
        case .messageSkipped(let topic, let size, let retained):
            // Counted where the message would have gone (the client logged it).
            route.withLock { $0.ingest }?.skipped(topic: topic, size: size, retained: retained)
        }
    }

    /// Sets the engine aside (nothing it decides is written; the client's messages are held
    /// until ``resume(_:)``), logging `warning` when it was running. `resumeOnMessage`: for a
    /// refused subscription (``Routing/resumeOnMessage``).
    private func setAside(_ warning: String?, resumeOnMessage: Bool = false) {
        let setAside = current.withLock { current -> (manager: LocationManager, withheld: Int)? in
            guard !current.suspended, !current.stopping else { return nil }
            let withheld = acknowledgements.withheld
            // While its events still reach the writer: what it has not delivered yet is withheld.
            acknowledgements.retire(through: current.generation)
            current.suspended = true
            return (current.manager, withheld)
        }
        guard let (suspended, withheldBefore) = setAside else { return }
        route.withLock { $0 = Routing(ingest: nil, holding: true, resumeOnMessage: resumeOnMessage) }
        suspended.delegate = nil
        if let warning { logger.warning("\(warning)") }
        // On a connection that stays up (a refused subscription) a withheld message keeps one of
        // the broker's in-flight slots (Mosquitto has 20) until the connection ends: it ends now,
        // and the broker delivers the message again on the next one.
        let withheld = acknowledgements.withheld - withheldBefore
        if resumeOnMessage, withheld > 0 {
            logger.notice("QoS 1 sightings withheld from the engine set aside: reconnecting so that the broker delivers them again",
                          metadata: ["withheld": "\(withheld)"])
            client.reconnect()
        }
    }

    /// A message arrived while the engine was set aside for a refused subscription: the session
    /// delivers after all, so the partition resumes (the held messages first).
    func deliveredWhileRefused() {
        let resuming = current.withLock { current -> Bool in
            guard current.refused else { return false }
            current.refused = false
            return true
        }
        guard resuming else { return }
        resume("messages arrive on the partition's session although the broker refused the subscription: the partition resumes from its last states")
    }

    /// Starts a new engine from the partition's last states when the engine is set aside, the
    /// connection is up and its subscription is not refused; feeds it what was held first.
    private func resume(_ notice: String) {
        let states = lastStates.withLock { $0 }
        let resumed = current.withLock { current -> (manager: LocationManager, offline: [String], generation: Int)? in
            guard current.suspended, current.connected, !current.refused, !current.stopping else { return nil }
            let offline = current.manager.offlineScanners
            let manager = Self.makeManager(profile: profile)
            current.earlierSightings += current.ingest.statistics.sightings
            current.generation += 1
            current.manager = manager
            current.ingest = Self.makeIngest(topicFilter: topicFilter, statusFilter: statusFilter, manager: manager, logger: logger)
            current.suspended = false
            return (manager, offline, current.generation)
        }
        guard let (resumed, offline, generation) = resumed else { return }
        // The old engine's rangings are gone with it, not their beacons: forgotten without a
        // clearing; a beacon still around is listed by the new engine's first deliveries that
        // hear it, one that left meanwhile leaves its room (the restored one), and one not ranged
        // again within the grace period is cleared (``checkLeftovers()``).
        suspendRanging { _, _ in true }
        // What the broker keeps now (a departure may have been lost with the connection).
        if distanceScan != nil { scanRequests.continuation.yield() }
        register(on: resumed, from: states)
        let rooms = lastRooms.withLock { $0 }
        resumed.restoreNearestScanners(rooms)
        // The nodes still offline stay so: a subscription granted again on the same connection
        // brings no retained status back (a reconnection's subscription does, and what arrived
        // meanwhile follows with the held messages).
        for scanner in offline { resumed.setScannerStatus(scanner, online: false) }
        let ingest = current.withLock { $0.ingest }
        let redelivered = route.withLock { routing -> Int? in
            // Set aside again meanwhile (the connection lost, the subscription refused): the
            // routing stays as that left it (it holds what arrives for the next engine).
            guard current.withLock({ $0.manager === resumed && !$0.suspended }) else { return nil }
            // What arrived before this event first, then everything after it, in order.
            for message in routing.held where !message.topic.isEmpty {
                ingest.handle(topic: message.topic, payload: message.payload, retained: message.retain)
            }
            acknowledgements.fedHeld(to: resumed, generation: generation)
            defer { routing = Routing(ingest: ingest, generation: generation) }
            return routing.held.filter { !$0.topic.isEmpty }.count
        }
        guard let redelivered else { return }
        logger.notice("\(notice)", metadata: ["regions": "\(states.count)", "beacons-placed": "\(rooms.count)", "redelivered-before-resume": "\(redelivered)"])
    }

    /// The rooms the partition's previous holder placed its beacons in (`RegionStoring.beaconRooms()`,
    /// the beacons that hash to this partition), when the profile tracks nearest scanners and the
    /// partition count is known. A store that cannot be read costs only the rooms (a warning):
    /// they are decided afresh from the next sightings.
    func storedRooms() async -> [BeaconIdentity: String] {
        guard profile.nearestScanner != nil, let partitionCount else { return [:] }
        let stored: [String: String]
        do { stored = try await store.beaconRooms() } catch {
            logger.warning("the partition's beacon rooms not restored: decided afresh from the next sightings", metadata: ["error": "\(error)"])
            return [:]
        }
        var rooms: [BeaconIdentity: String] = [:]
        for (name, scanner) in stored {
            guard let identity = BeaconIdentity(description: name),
                  NATSPartition.partition(of: Self.partitionToken(of: identity), count: partitionCount) == lease.partition else { continue }
            rooms[identity] = scanner
        }
        return rooms
    }

    /// The token the broker partitions `identity`'s sightings by: its ESPresense id, in every
    /// format (`iBeacon:…`, `altBeacon:…`, the Eddystone-UID form).
    static func partitionToken(of identity: BeaconIdentity) -> String {
        ESPresenseMessage.id(for: identity)
    }

    /// Restores the partition's regions from its stored contributions (no `didStartMonitoring`, no
    /// spurious enter: a beacon still heard keeps its region inside) and its beacons' rooms, then subscribes.
    func start() async throws {
        let stored = try await store.contributions(partition: lease.partition)
        lastStates.withLock { $0 = stored }
        let rooms = await storedRooms()
        lastRooms.withLock { $0 = rooms }
        let (manager, ingest) = current.withLock { ($0.manager, $0.ingest) }
        register(on: manager, from: stored)
        manager.restoreNearestScanners(rooms)
        // The previous holder may have left the distances of the ranged ones retained.
        let beaconRegions = regions.compactMap(\.beaconRegion)
        ranging.withLock { tracker in
            tracker?.assumePublished(rooms.keys.filter { beacon in beaconRegions.contains { $0.matches(beacon) } })
        }
        route.withLock { $0 = Routing(ingest: ingest) }
        let (client, logger) = (client, logger)
        clientTask.withLock { $0 = Task { await client.run() } }
        if ranging.withLock({ $0 != nil }) {
            leftoverTask.withLock { $0 = Task { await self.watchLeftovers() } }
        }
        acknowledgementTask.withLock {
            $0 = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(500))
                    guard let self else { return }
                    self.releaseAcknowledgements()
                }
            }
        }
        for filter in [topicFilter] + (statusFilter.map { [$0] } ?? []) {
            Task {
                // Remembered by the client: subscribed again after every reconnection.
                do { try await client.subscribe(filter, qos: .atLeastOnce) } catch {
                    logger.error("cannot subscribe", metadata: ["filter": "\(filter)", "error": "\(error)"])
                }
            }
        }
    }

    func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {
        guard current.withLock({ $0.manager === manager && !$0.suspended }) else { return }
        switch event.kind {
        case .didDetermineState(let state, let region) where state != .unknown:
            // Outside (also without an exit notification): the region's ranging ended with it.
            if state == .outside { rangingEnded(of: region.identifier, on: manager) }
            let since = manager.monitoredRegion(region.identifier)?.stateSince?.seconds ?? event.timestamp.seconds
            lastStates.withLock { $0[region.identifier] = RegionContribution(partition: lease.partition, state: state, since: since) }
            writer.submit(.init(region: region, state: state, since: since, time: event.timestamp.seconds, evidence: event.evidence))
        case .didRangeBeacons(let beacons, let constraint, let label):
            // Every sighting of these beacons reaches this partition: their distances are this
            // engine's to publish (QoS 0, retained, throttled like the hub's), on the partition's
            // own connection.
            // Handed to the connection under the tracker's lock, so the updates go out in the
            // order the tracker made them (the retained value the broker keeps is the newest);
            // a Task per update published them in whatever order the tasks ran.
            guard client.isConnected else { return }
            let client = client
            ranging.withLock { tracker in
                guard var current = tracker else { return }
                // A beacon this ranging listed and no longer does (and no other lists) is cleared.
                let messages = current.messages(for: beacons, ranging: constraint, label: label, at: event.timestamp,
                                                room: { manager.nearestScanner(for: $0) },
                                                roomDistance: { manager.rangedDistance(of: $0, from: $1, ranging: constraint, label: label) },
                                                kept: { _ in retainsDepartures })
                // Remembered as published only once handed over: a connection lost just now
                // must not hold the next update back as "unchanged".
                if messages.isEmpty || client.publishDetached(messages.map(PresenceHub.mqtt)) { tracker = current }
            }
        case .didExitRegion(let region):
            rangingEnded(of: region.identifier, on: manager)
        case .monitoringDidFail(let region, let error) where error.code == .sourceUnavailable:
            // Failed for want of a source: its rangings stopped, its beacons did not leave.
            suspendRanging { _, label in label == region.identifier }
        case .didFailRanging(let constraint, let label, _):
            suspendRanging { $0 == constraint && $1 == label }
        case .didChangeNearestScanner(let identity, let scanner, _):
            // Heard by no scanner any more: the distance and attributes this partition published
            // for it stop placing it, on the connection its distances go out on, in order with them.
            // Placed elsewhere: attributes a ranging left naming the old room name the new one.
            if client.isConnected {
                let client = client
                ranging.withLock { tracker in
                    guard var current = tracker else { return }
                    let messages = scanner.map { current.moved(identity, to: $0, kept: retainsDepartures) }
                        ?? current.unplaced(identity, kept: retainsDepartures)
                    if messages.isEmpty || client.publishDetached(messages.map(PresenceHub.mqtt)) { tracker = current }
                }
            }
            lastRooms.withLock { $0[identity] = scanner }
            // Every sighting of a beacon reaches this partition, so its nearest scanner is decided
            // here, as one engine decides it; logged like one daemon logs it (the outputs publish
            // the beacon's room and its Home Assistant tracker from the shared log).
            let time = event.timestamp.seconds
            var row = ClusterEventRow(time: time, type: event.typeName, region: nil, state: nil, reason: event.evidence?.reason,
                                      json: event.jsonLine(origin: .zero), hooks: hooks.hooks(for: event.typeName))
            // Where it is placed now, for the partition's next holder (written with the row).
            row.room = BeaconRoomChange(beacon: identity.description, scanner: scanner)
            writer.submit(.events(time: time, rows: [row]))
        default:
            break
        }
    }

    /// The rangings under `label` that `manager` no longer ranges (its region left): the beacons
    /// only they listed are cleared (no delivery will drop them), on the connection the
    /// distances go out on, in order with them. Disconnected: nothing now; the reconnection's
    /// ``resume(_:)`` sets them aside, and they are cleared when they leave their room or are
    /// not ranged again within ``leftoverGrace``.
    private func rangingEnded(of label: String, on manager: LocationManager) {
        guard client.isConnected else { return }
        let client = client
        ranging.withLock { tracker in
            guard var current = tracker else { return }
            let ended = current.endedRangings(on: manager) { $0 == label }
            guard !ended.isEmpty else { return }
            let messages = current.rangingEnded(where: { ended.contains(.init(constraint: $0, label: $1)) }, room: { manager.nearestScanner(for: $0) },
                                                kept: { _ in retainsDepartures })
            if messages.isEmpty || client.publishDetached(messages.map(PresenceHub.mqtt)) { tracker = current }
        }
    }

    /// The rangings `ended` names stopped for want of a source (the event says so, or the
    /// engine was set aside): forgotten without a clearing
    /// (``PresenceRangingTracker/rangingSuspended(where:)``); their beacons are cleared if not
    /// ranged again within ``leftoverGrace``.
    private func suspendRanging(where ended: (BeaconIdentityConstraint, String) -> Bool) {
        ranging.withLock { tracker in
            guard var current = tracker else { return }
            let suspended = current.rangingSuspended(where: ended)
            leftovers.withLock { $0.add(suspended, grace: leftoverGrace) }
            tracker = current
        }
    }

    /// The scans of the distances the broker keeps retained (at the start, from the first
    /// connection, and after each resumption) beside the check of the leftovers every second,
    /// until the stop.
    private func watchLeftovers() async {
        await withTaskGroup(of: Void.self) { group in
            if let distanceScan {
                scanRequests.continuation.yield()
                group.addTask {
                    let current = self.current
                    for await _ in self.scanRequests.stream {
                        guard let found = await distanceScan.runUntilComplete(on: self.client, stopping: { current.withLock { $0.stopping } },
                                                                             logger: self.logger) else { return }
                        self.adoptLeftovers(found)
                        self.scansCompleted.withLock { $0 += 1 }
                    }
                }
            }
            group.addTask {
                while !Task.isCancelled, !self.current.withLock({ $0.stopping }) {
                    try? await Task.sleep(for: .seconds(1))
                    self.checkLeftovers()
                }
            }
        }
    }

    /// The scan's distances: those of this partition's beacons (every sighting of a beacon
    /// reaches one partition, which alone publishes its distance) count as published (by an
    /// earlier holder, or by this one before a departure was lost), and those this holder has
    /// not published are cleared unless ranged again within ``leftoverGrace``. (Other
    /// partitions' beacons are theirs to clear.)
    private func adoptLeftovers(_ found: Set<BeaconIdentity>) {
        guard let partitionCount else { return }
        let partition = lease.partition
        let mine = found.filter { NATSPartition.partition(of: Self.partitionToken(of: $0), count: partitionCount) == partition }
        let adopted = ranging.withLock { tracker -> Int in
            guard var current = tracker else { return 0 }
            let left = current.adoptRetained(mine)
            leftovers.withLock { $0.add(left, grace: leftoverGrace) }
            tracker = current
            return left.count
        }
        if adopted > 0 {
            logger.info("distances the broker keeps retained that this holder did not publish: cleared for the beacons not ranged again soon",
                        metadata: ["beacons": "\(adopted)", "grace": "\(leftoverGrace)"])
        }
    }

    /// Every second: the leftovers whose grace period has passed are cleared (distance `None`,
    /// attributes with their room or `not_home`), on the connection the distances go out on, in
    /// order with them. While the broker is away, the engine set aside or the reads held back
    /// (deliveries are not taken, so a beacon ranged again is not listed yet) the deadline moves
    /// with the time. A departure handed to a connection lost just then is not made again (as
    /// for every partition publish, ``MQTTClient/publishDetached(_:)``).
    private func checkLeftovers() {
        let (usable, manager) = current.withLock { ($0.connected && !$0.refused && !$0.suspended && !$0.stopping, $0.manager) }
        // (Reads held back, the engine behind the broker: a beacon still around may not be ranged yet.)
        guard usable, client.isConnected, client.readPause?.isPaused != true else {
            leftovers.withLock { $0.postpone(by: leftoverGrace) }
            return
        }
        let (client, retainsDepartures) = (client, retainsDepartures)
        ranging.withLock { tracker in
            guard var current = tracker, let due = leftovers.withLock({ $0.isDue() ? $0.beacons : nil }) else { return }
            let messages = current.leftoverDepartures(of: due, room: { manager.nearestScanner(for: $0) }, kept: { _ in retainsDepartures })
            // Handed over: forgotten; otherwise (the connection lost just now) tried again.
            guard messages.isEmpty || client.publishDetached(messages.map(PresenceHub.mqtt)) else { return }
            tracker = current
            leftovers.withLock { $0.clear() }
        }
    }

    /// Stops consuming (the MQTT session stays on the broker, so nothing published meanwhile is
    /// lost), then with `handOver` waits up to `timeout` for the queued contributions, which makes
    /// the partition's state current for its next holder. Without it (the lease is already lost)
    /// what is queued is dropped: the store would refuse it. Either way the QoS 1 messages not
    /// acknowledged yet stay the broker's (the session ends at once; a hand-over's writes would
    /// keep it open until the lease can be taken, and a connection kicked by the next holder's
    /// reconnects): the next holder gets them again, and a sighting decided twice changes nothing.
    /// - Returns: the contributions left unwritten.
    @discardableResult
    func stop(handOver: Bool, timeout: Duration = .seconds(5)) async -> Int {
        let manager = current.withLock { current in
            current.stopping = true
            acknowledgements.retire(through: current.generation)
            return current.manager
        }
        route.withLock { $0 = Routing() }
        acknowledgementTask.withLock { $0.take() }?.cancel()
        // The scan ends at once (its subscriptions removed from the persistent session while
        // the connection is up; a broker that does not answer is waited for 2 s at most), the
        // check with it.
        distanceScan?.cancel()
        scanRequests.continuation.finish()
        if let task = leftoverTask.withLock({ $0.take() }) {
            task.cancel()
            _ = await PresenceHub.waiting(at: .seconds(2)) { await task.value }
        }
        await client.shutdown()
        if let task = clientTask.withLock({ $0.take() }) { await task.value }
        manager.delegate = nil
        if handOver { _ = await writer.flush(timeout: timeout) }
        let left = writer.queued
        await writer.close()
        return left
    }
}
