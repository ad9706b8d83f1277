import Foundation
import Logging
import RegionKit
import RegionKitConcurrency
import RegionKitCore
import RegionKitMQTT
import RegionKitStore

/// `regionkit run` in cluster mode: one member of a set of engines sharing a PostgreSQL store.
/// Beacon sightings are partitioned by the broker (NATS's `{{partition(N, …)}}` mapping, by the
/// ESPresense beacon id); each member holds some partitions through leases in the store, and runs
/// one `PartitionWorker` per partition: its own engine, its own persistent MQTT session, its
/// contributions to the regions' states. The store merges the contributions (a region is inside
/// while any partition sees one of its beacons inside) and logs each change of a region's merged
/// state once, whichever member caused it.
///
/// Every `leaseSeconds / 3` the member renews its leases and takes free partitions up to its fair
/// share (`ceil(partitions / live members)`), and hands back any surplus (so a member that joins
/// gets partitions). A member that dies loses its leases after `leaseSeconds`; the others take
/// them at their next round, restore the partition's regions from the stored contributions (a
/// region inside stays inside while its beacons are heard: no flap) and resume its MQTT session,
/// where the broker kept the QoS 1 sightings published meanwhile. After the store was unreachable
/// (every heartbeat and lease expired), a member's first round takes back only its own partitions,
/// so that the first member back does not take them all and hand most back a round later. On
/// ``stop(reason:)`` the member
/// hands everything back at once: stop consuming, write the queued contributions, release.
///
/// The outputs run on one member at a time, the holder of the "outputs" lease (taken in the same
/// rounds): the hooks (the store's pending deliveries) and the MQTT events topic with the regions'
/// retained states, the site's status and Home Assistant discovery (`ClusterEventsPublisher`,
/// from the shared log and its cursor), so a member's death moves them too.
///
/// ```swift
/// let engine = ClusterEngine(store: store, configuration: cluster, mqtt: clientConfiguration, profile: .responsive,
///                            regions: regions, logger: logger, onEvents: { print($0) }, onFatal: { stop($0) })
/// try await engine.start()
/// let running = Task { await engine.run() }
/// // … SIGTERM …
/// await engine.stop(reason: "signal 15")
/// await running.value
/// ```
public final class ClusterEngine: Sendable {
    public let member: String
    /// This process among the members (host, pid and a random part): the store refuses a second
    /// process under the same member name while this one's heartbeat is live.
    public let instance: String
    /// The digest of this member's configured region definitions (`RegionDefinitions.digest(of:)`),
    /// recorded with its heartbeat: members running other definitions are named in the log.
    public let regionDefinitions: String?
    public let configuration: ClusterConfiguration
    let store: any ClusterStoring
    let mqtt: MQTTClientConfiguration
    public let profile: MonitoringProfile
    let regions: [Region]
    let hooks: HookConfiguration
    let logger: Logger
    let clientIDPrefix: String
    let onEvents: @Sendable ([StoredEvent]) -> Void
    let onFatal: @Sendable (String) -> Void
    private let workers = LockedBox<[Int: PartitionWorker]>([:])
    /// Leases whose writer was fenced: their workers are stopped at the next round (a lease, not
    /// a partition: a fence reported late by a worker being retired stops no newer worker of its partition).
    private let fenced = LockedBox<Set<PartitionLease>>([])
    private let stopping = LockedBox(false)
    /// The name's previous heartbeat had expired when this process joined (a restart after a
    /// crash): the first lease round only reclaims, as after an outage.
    private let joinedAway = LockedBox(false)
    /// Sightings of partitions this member no longer runs.
    private let earlierSightings = LockedBox(0)
    /// The live members whose region definitions differ from this one's, as last logged.
    private let differingMembers = LockedBox<[String: String]>([:])
    /// The outputs (hooks' runner, MQTT events publisher) while this member holds the "outputs" lease.
    private let outputs = LockedBox<Outputs?>(nil)
    /// The lease whose holder runs the cluster's outputs: the hooks and the MQTT events topic.
    static let outputsLease = ClusterStatus.outputsLease
    /// The site (MQTT topics, client ids, the events cursor's name).
    let site: String
    let publishEvents: Bool
    /// Where a partition's reads from the broker are held back (see `init`).
    let maximumBacklog: Int
    /// Home Assistant discovery of the regions and beacons, published with the outputs; nil without.
    let discovery: HomeAssistantDiscovery?
    /// Every beacon's departure stays retained (``MQTTHubConfiguration/retainDepartures`` `all`).
    let retainAllDepartures: Bool
    /// Whether the partitions also publish Home Assistant `mqtt_room` payloads of their beacons.
    let mqttRoom: Bool

    struct Outputs {
        var hooks: Task<Void, Never>?
        var publisher: ClusterEventsPublisher
        var events: Task<Void, Never>
    }
    /// Serialises lease rounds with the stop (a round never starts a worker after the hand-over).
    private let rounds = AsyncSemaphore()
    /// Held by a lease expiry (``watchLeases()``) while it stops the partitions and the outputs;
    /// ``stop(reason:)`` waits for one under way before its own steps, and none starts after.
    private let expiring = AsyncSemaphore()
    /// When the last round whose renewal succeeded started: every lease this member holds runs
    /// out `leaseDuration` after it at the latest (the store counts from when it ran the round).
    private let renewedAt = LockedBox<ContinuousClock.Instant?>(nil)
    /// When the outputs lease was last renewed (asked for), by this process's clock: the lease
    /// watch stops the outputs once it is older than ``leaseLimit``.
    private let outputsRenewedAt = LockedBox<ContinuousClock.Instant?>(nil)
    /// The outputs' stop the lease watch began (it does not wait for it: the partitions' leases
    /// are its to watch meanwhile); the next start of the outputs and ``stop(reason:)`` wait for it.
    private let outputsStopping = LockedBox<Task<Void, Never>?>(nil)

    /// - Parameters:
    ///   - mqtt: the brokers, credentials and keepalive; each partition gets its own client id
    ///     (`regionkit-<site>-part-<partition>`) and a persistent session.
    ///   - profile: each partition's engine. The partitions read many scanners' sightings, so
    ///     their beacons' rooms (nearest scanners) are tracked: a profile without a
    ///     `MonitoringProfile.nearestScanner` policy gets the default one, as the daemon gives it
    ///     with MQTT sources (a beacon's room is what clears its distance when it leaves, and
    ///     what the partition's next holder starts from).
    ///   - maximumBacklog: a partition's engine events and store writes not yet committed above
    ///     which its reads from the broker are held back (`mqtt.maximumBacklog`; `MQTTReadPause`).
    ///   - onEvents: events committed to the shared store by this member (their acknowledgement).
    ///   - onFatal: the member cannot go on: the store refused it (another live process uses its
    ///     member name, or the cluster has another partition count). It has stopped its partitions
    ///     and outputs and ``run()`` returns; the caller should call ``stop(reason:)`` and exit.
    public init(store: any ClusterStoring, configuration: ClusterConfiguration, mqtt: MQTTClientConfiguration, profile: MonitoringProfile,
                regions: [Region], hooks: HookConfiguration = HookConfiguration(), site: String = "regionkit", publishEvents: Bool = true,
                homeAssistant: HomeAssistantConfiguration? = nil, retainAllDepartures: Bool = false, maximumBacklog: Int = PresenceHub.defaultMaximumBacklog,
                logger: Logger, onEvents: @escaping @Sendable ([StoredEvent]) -> Void = { _ in },
                onFatal: @escaping @Sendable (String) -> Void = { _ in }) {
        self.store = store
        self.configuration = configuration
        member = configuration.memberName
        instance = "\(ProcessInfo.processInfo.hostName) pid \(ProcessInfo.processInfo.processIdentifier) \(UUID().uuidString.prefix(8))"
        self.mqtt = mqtt
        var profile = profile
        profile.nearestScanner = profile.nearestScanner ?? NearestScannerPolicy()
        self.profile = profile
        self.regions = regions
        regionDefinitions = try? RegionDefinitions.digest(of: regions)
        self.hooks = hooks
        self.site = site
        self.publishEvents = publishEvents
        self.retainAllDepartures = retainAllDepartures
        self.maximumBacklog = maximumBacklog
        discovery = homeAssistant?.discovery(topics: PresenceTopics(site: site))
        mqttRoom = homeAssistant?.mqttRoom == true
        clientIDPrefix = "regionkit-\(site)-part-"
        var logger = logger
        logger[metadataKey: "member"] = "\(configuration.memberName)"
        self.logger = logger
        self.onEvents = onEvents
        self.onFatal = onFatal
    }

    /// The partitions this member runs now, in order.
    public var partitions: [PartitionLease] {
        workers.withLock { $0.values.map(\.lease) }.sorted()
    }

    /// The configured regions (every member of a cluster is configured alike).
    public var configuredRegions: [Region] { regions }

    /// The shared store this member writes to.
    public var sharedStore: any ClusterStoring { store }

    /// The engine of every partition this member runs now, as it is at this instant (its beacons'
    /// sighting streams and ranging sessions), by partition: what `GET /v1/beacons` shows. A
    /// beacon's sightings all go to one partition, so the partitions' beacons are disjoint.
    public var partitionEngines: [(lease: PartitionLease, engine: MonitoringEngine)] {
        workers.withLock { Array($0.values) }.map { (lease: $0.lease, engine: $0.engineSnapshot) }.sorted { $0.lease < $1.lease }
    }

    /// Each partition this member runs as a source: its MQTT session's state (connected or
    /// connecting), sightings and reconnections (`GET /v1/sources`, `/readyz`, `/metrics`).
    public var partitionStatuses: [SourceStatus] {
        workers.withLock { Array($0.values) }.sorted { $0.lease < $1.lease }.map(\.status)
    }

    /// Sightings this member's partitions' MQTT sessions delivered since it started.
    public var sightings: Int {
        earlierSightings.withLock { $0 } + workers.withLock { Array($0.values) }.reduce(0) { $0 + $1.sightings }
    }

    /// Stops `worker` (its sightings stay counted); with `handOver`, its queued contributions are
    /// written first, for at most `flushTimeout`.
    @discardableResult
    func retire(_ worker: PartitionWorker, handOver: Bool, flushTimeout: Duration = .seconds(5)) async -> Int {
        let left = await worker.stop(handOver: handOver, timeout: flushTimeout)
        earlierSightings.withLock { $0 += worker.sightings }
        return left
    }

    /// Registers the configured regions (new or changed ones only), creates the events output's
    /// cursor if the site has none, and logs "process started".
    public func start() async throws {
        if let circular = regions.first(where: { $0.kind != .beacon }) {
            throw RegionKitError(.invalidArgument, """
                region '\(circular.identifier)': cluster mode partitions beacon sightings; circular regions need a location source, \
                which is not partitioned (run them in a single daemon)
                """)
        }
        // Before anything is written under the name: a second process with it stops here. The
        // partitions are prepared in the same transaction (see ClusterStoring.join).
        try await join()
        do {
            try await store.ensureRegions(regions, at: Date().timeIntervalSince1970)
            // The events output's cursor exists before anything is decided (the first member to start
            // creates it at the log's end), so whoever takes the outputs publishes every region event
            // from here on, however late it connects.
            _ = try await store.outputCursor(ClusterEventsPublisher.outputName(site: site), createAtEnd: true)
            try await log("processStarted", reason: "member \(member), pid \(ProcessInfo.processInfo.processIdentifier)")
        } catch {
            // A member that does not start must not stay live: its heartbeat would shrink every
            // member's fair share for a lease. (Not cancellable: the start may have been cancelled.)
            let store = store, member = member, instance = instance
            await Task { _ = try? await store.leave(member: member, instance: instance, partitions: [], singletons: []) }.value
            throw error
        }
    }

    /// Claims the member name for this process and prepares the partitions (a re-partition when
    /// the count changed). A previous process under the name that died (a
    /// crash, then a restart by systemd) holds it until its heartbeat expires, at most a lease
    /// after its last round: the start waits that long (and a second), then gives up with the
    /// store's `RegionKitError.Code.clusterConflict`, as the name's holder is alive. Cancelling
    /// the task ends the wait (a signal during the start).
    func join() async throws {
        let count = configuration.partitionCount
        let byIdentifier = Dictionary(regions.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        // A re-partition seeds each region inside in the partitions that decide it now.
        let deciding: @Sendable (String) -> [Int] = { identifier in
            byIdentifier[identifier].map { PartitionWorker.partitions(deciding: $0, count: count) } ?? []
        }
        let deadline = ContinuousClock.now + .seconds(configuration.leaseDuration + 1)
        var waiting = false
        while true {
            do {
                let away = try await store.join(member: member, instance: instance, regions: regionDefinitions, ttl: configuration.leaseDuration,
                                                preparing: count, deciding: deciding)
                joinedAway.withLock { $0 = away }
                return
            } catch let error as RegionKitError where error.code == .clusterConflict && ContinuousClock.now < deadline {
                if !waiting {
                    waiting = true
                    // The name's holder alive (its heartbeat expires within a lease), or a daemon
                    // holding the store (one refused on it holds the lock for a moment).
                    logger.notice("the store refuses this member for now: waiting up to a lease", metadata: ["error": "\(error.message)"])
                }
                try await Task.sleep(for: .seconds(configuration.leaseDuration) / 6)
            }
        }
    }

    /// Lease rounds every `leaseSeconds / 3` until ``stop(reason:)``, and beside them the watch
    /// that stops the partitions once their leases have run out by this process's clock
    /// (`watchLeases()`).
    public func run() async {
        let interval = Duration.seconds(configuration.leaseDuration / 3)
        let watch = Task { await self.watchLeases() }
        // After this member was away from the store its rounds only take back its own partitions
        // for two lease times (see ReclaimWindow).
        var window = ReclaimWindow(length: .seconds(2 * configuration.leaseDuration))
        while !stopping.withLock({ $0 }) {
            // Rounds start every `interval` (at once after one that took longer): a round renews
            // every lease, and the lease watch stops the partitions when none renewed them in time.
            let next = ContinuousClock.now + interval
            do {
                let reclaimOnly = window.begin(at: .now) || joinedAway.withLock { away in defer { away = false }; return away }
                let reclaimed = try await round(reclaimOnly: reclaimOnly)
                window.succeeded(reclaimed: reclaimed, at: .now)
            } catch let error as RegionKitError where error.code == .clusterConflict {
                // Retrying cannot help: another process holds the name, or the cluster's partition count differs.
                await conflict(error.message)
                break
            } catch {
                window.failed()
                let message = (error as? RegionKitError)?.message ?? "\(error)"
                logger.warning("lease round failed", metadata: ["error": "\(message)"])
            }
            if ContinuousClock.now < next { try? await Task.sleep(until: next) }
        }
        // Not cancelled in the middle of an expiry (its partitions' writes would be cut short):
        // the watch ends by itself once it sees the stop.
        await expiring.withPermit {}
        watch.cancel()
    }

    /// The store refused this member for good: stops every partition without writing (their
    /// leases are the other process's or expired: the writes would be fenced) and the outputs,
    /// then tells ``onFatal``. The stop that follows releases nothing under a name another process
    /// holds now (``stop(reason:)`` hands back only while the name is this process's).
    func conflict(_ message: String) async {
        logger.critical("the store refused this member: stopping", metadata: ["error": "\(message)"])
        await expiring.withPermit {
            let all = self.workers.withLock { workers in defer { workers.removeAll() }; return workers }
            await withTaskGroup(of: Int.self) { group in
                for worker in all.values { group.addTask { await self.retire(worker, handOver: false) } }
                await group.waitForAll()
            }
            await self.stopOutputs(reason: message)
        }
        onFatal(message)
    }

    /// How long after the last renewal this member stops its partitions: a tenth of the lease
    /// before the store lets another member take them.
    var leaseLimit: Duration {
        let lease = Duration.seconds(configuration.leaseDuration)
        return lease - lease / 10
    }

    /// Checks every twelfth of the lease whether the leases ran out unrenewed, and if so stops
    /// every partition (and the outputs) at once, whatever a round is doing: a round can wait on
    /// the store for its operation timeout, longer than a lease, and meanwhile another member may
    /// take the partitions. Two members consuming one partition's persistent MQTT session take it
    /// from each other on every reconnection, and neither engine decides anything while it is
    /// set aside, so a departure in that partition would never exit.
    func watchLeases() async {
        let step = Duration.seconds(configuration.leaseDuration) / 12
        while !Task.isCancelled, !stopping.withLock({ $0 }) {
            try? await Task.sleep(for: step)
            guard let renewed = renewedAt.withLock({ $0 }) else { continue }
            let since = ContinuousClock.now - renewed
            guard since >= leaseLimit, !stopping.withLock({ $0 }) else {
                // The outputs on their own lease: a round that renewed the partitions but not it
                // (that query failed) must not leave them running past it. (An expiry of the
                // partitions, below, stops them too.)
                if runsOutputs, let outputsRenewed = outputsRenewedAt.withLock({ $0 }), ContinuousClock.now - outputsRenewed >= leaseLimit {
                    let late = String(format: "%.1f", (ContinuousClock.now - outputsRenewed).inSeconds)
                    logger.warning("outputs lease not renewed in time: stopping the outputs", metadata: ["seconds": "\(late)"])
                    outputsStopping.withLock { stopping in
                        let previous = stopping
                        stopping = Task {
                            await previous?.value
                            await self.stopOutputs(reason: "outputs lease not renewed for \(late) s")
                        }
                    }
                }
                continue
            }
            // The store lets another member take them `leaseDuration` after the renewal at the
            // earliest: until then this member's writes still land (later ones are fenced).
            let remaining = Duration.seconds(configuration.leaseDuration) - since
            await expiring.withPermit {
                // A stop that began meanwhile hands the partitions over itself.
                guard !self.stopping.withLock({ $0 }) else { return }
                await self.expireLeases(reason: "leases not renewed for \(String(format: "%.1f", since.inSeconds)) s",
                                        writeWithin: max(.zero, remaining))
            }
        }
    }

    /// How long a partition's QoS 1 acknowledgement waits for its decisions to be committed
    /// before it is sent anyway (``AcknowledgementQueue``): two lease times, at least 10 s. While
    /// the store is out the leases are not renewed either, and the partition stops (its messages
    /// withheld for the next holder) before a late acknowledgement; only a store that renews
    /// leases but writes more slowly than that sees one.
    static func acknowledgementWait(leaseSeconds: Double) -> Duration {
        .milliseconds(Int64(max(10, 2 * leaseSeconds) * 1_000))
    }

    /// Stops every partition (their leases run out: another member may take them soon), all at
    /// once so that every MQTT session ends within moments, then the outputs. Each partition
    /// writes its queued contributions for at most `writeWithin` (what is left of its lease by
    /// this process's clock): a QoS 1 sighting is acknowledged only once its decisions are
    /// committed, so what is not written here is delivered again to the next holder, but a write
    /// now spares it deciding again (and the regions a flap). A write after another member took
    /// the partition is refused by the store (fencing), so trying is safe.
    func expireLeases(reason: String, writeWithin: Duration = .zero) async {
        let all = workers.withLock { workers in defer { workers.removeAll() }; return workers }
        if !all.isEmpty || runsOutputs {
            logger.warning("leases ran out before a round renewed them: stopping the partitions and outputs this member runs", metadata: [
                "partitions": "\(all.keys.sorted())", "outputs": "\(runsOutputs)", "reason": "\(reason)",
            ])
        }
        if !all.isEmpty {
            let unwritten = await withTaskGroup(of: Int.self) { group in
                for worker in all.values {
                    group.addTask { await self.retire(worker, handOver: writeWithin > .zero, flushTimeout: writeWithin) }
                }
                return await group.reduce(0, +)
            }
            if unwritten > 0 {
                logger.warning("contributions not written before the leases ran out", metadata: ["unwritten": "\(unwritten)"])
            }
        }
        await stopOutputs(reason: reason)
    }

    /// Logs, when it changes, which live members run region definitions other than this
    /// member's (`definitions`: a lease round's, by member). During a rolling restart that is
    /// expected for a round or two; a member left on another configuration decides its
    /// partitions' regions by other definitions for as long as it runs, and the stored regions
    /// are those of the member that started last.
    func compareRegionDefinitions(_ definitions: [String: String]) {
        guard let own = regionDefinitions else { return }
        let differing = definitions.filter { $0.key != member && $0.value != own }
        let previous = differingMembers.withLock { known in defer { known = differing }; return known }
        guard differing != previous else { return }
        if differing.isEmpty {
            logger.notice("every live member runs this member's region definitions again", metadata: ["regions": "\(own)"])
        } else {
            logger.warning("""
                live members run other region definitions: they decide their partitions' regions by those until every member \
                runs one configuration (finish the rolling restart)
                """, metadata: [
                    "regions": "\(own)",
                    "differing": "\(differing.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))",
                ])
        }
    }

    /// One lease round; true when it only reclaimed this member's own partitions.
    @discardableResult
    func round(reclaimOnly: Bool = false) async throws -> Bool {
        try await rounds.withPermit {
            guard !self.stopping.withLock({ $0 }) else { return false }
            let started = ContinuousClock.now
            let round = try await self.store.balanceLeases(member: self.member, instance: self.instance, regions: self.regionDefinitions,
                                                           partitions: self.configuration.partitionCount,
                                                           ttl: self.configuration.leaseDuration, reclaimOnly: reclaimOnly)
            self.renewedAt.withLock { $0 = started }
            self.compareRegionDefinitions(round.regionDefinitions)
            let renewed = ContinuousClock.now
            // The outputs lease next, before the partitions' work (hand-overs, takes) that can
            // take seconds or fail half-way: renewed at the end, it could lapse meanwhile. Its
            // failure fails the round, after the partitions' work.
            var outputsFailure: (any Error)?
            do { try await self.roundOutputs() } catch { outputsFailure = error }
            // A round slower than a third of the lease delays the next renewal: say where it went.
            defer {
                let total = ContinuousClock.now - started
                if total > .seconds(self.configuration.leaseDuration / 3) {
                    self.logger.notice("slow lease round", metadata: [
                        "seconds": "\(String(format: "%.2f", total.inSeconds))",
                        "renewal": "\(String(format: "%.2f", (renewed - started).inSeconds))",
                        "partitions": "\(self.workers.withLock { $0.count })",
                    ])
                }
            }
            let held = Dictionary(uniqueKeysWithValues: round.held.map { ($0.partition, $0.epoch) })
            let fencedNow = self.fenced.withLock { set in defer { set.removeAll() }; return set }
            // Lost (expired and taken, or fenced): stop without writing.
            let lost = self.workers.withLock { workers in
                workers.filter { held[$0.key] != $0.value.lease.epoch || fencedNow.contains($0.value.lease) }
            }
            for (partition, worker) in lost.sorted(by: { $0.key < $1.key }) {
                // The lease watch may have stopped it meanwhile.
                guard self.workers.withLock({ $0.removeValue(forKey: partition) }) != nil else { continue }
                let left = await self.retire(worker, handOver: false)
                self.logger.warning("partition lost", metadata: ["partition": "\(partition)", "epoch": "\(worker.lease.epoch)", "unwritten": "\(left)"])
                try? await self.log("partitionLost", partition: worker.lease, reason: "partition \(partition) lost by \(self.member)")
            }
            // A surplus goes back (highest partitions first), written up first.
            var given = Set<Int>()
            if round.surplus > 0 {
                let give = self.workers.withLock { workers in Array(workers.keys.sorted().suffix(round.surplus)) }
                for partition in give {
                    guard let worker = self.workers.withLock({ $0.removeValue(forKey: partition) }) else { continue }
                    let left = await self.retire(worker, handOver: true)
                    try await self.store.releaseLeases(member: self.member, partitions: [partition])
                    given.insert(partition)
                    // Contributions its flush could not write in time are lost (the next holder
                    // decides those regions afresh from the sightings it is delivered): said, as a stop says it.
                    if left > 0 {
                        self.logger.warning("partition handed back with contributions unwritten", metadata: [
                            "partition": "\(partition)", "members": "\(round.liveMembers)", "unwritten": "\(left)"])
                    } else {
                        self.logger.info("partition handed back", metadata: ["partition": "\(partition)", "members": "\(round.liveMembers)"])
                    }
                    try? await self.log("partitionReleased", partition: worker.lease, reason: "partition \(partition) released by \(self.member) (rebalance)")
                }
            }
            // New ones (held but not running: taken now, or re-taken after a lost renewal).
            var toRelease: [Int] = []
            for lease in round.held where !given.contains(lease.partition) && self.workers.withLock({ $0[lease.partition] == nil }) {
                // A surplus that had no worker yet (taken in a round that failed half-way) goes straight back.
                if given.count < round.surplus {
                    given.insert(lease.partition)
                    toRelease.append(lease.partition)
                    continue
                }
                // Past half the lease the rest waits for the next round (which starts at once and
                // renews what this one took); a round that waited on the store that long acts on
                // nothing more it returned.
                guard ContinuousClock.now - started < .seconds(self.configuration.leaseDuration / 2) else { break }
                try await self.take(lease)
            }
            if !toRelease.isEmpty { try await self.store.releaseLeases(member: self.member, partitions: toRelease) }
            try await self.store.recordSightings(member: self.member, total: Int64(self.sightings))
            if let outputsFailure { throw outputsFailure }
            return round.reclaimed
        }
    }

    /// Whether this member runs the cluster's outputs (hooks, MQTT events) now.
    public var runsOutputs: Bool { outputs.withLock { $0 != nil } }

    /// Events this member's outputs published since it took them (0 when it does not hold them).
    public var eventsPublished: Int { outputs.withLock { $0?.publisher.count ?? 0 } }
    /// The MQTT outputs while this member holds them (``OutputStatus``), for `/metrics`.
    public var outputStatuses: [OutputStatus] { outputs.withLock { $0.map { [$0.publisher.status] } ?? [] } }

    /// Takes or renews the outputs lease; starts the outputs when it is taken, stops them when lost.
    func roundOutputs() async throws {
        // Outputs the lease watch is stopping are gone before new ones start (one client id).
        if let pending = outputsStopping.withLock({ $0.take() }) { await pending.value }
        let asked = ContinuousClock.now
        let held = try await store.holdSingleton(Self.outputsLease, member: member, ttl: configuration.leaseDuration) != nil
        if held { outputsRenewedAt.withLock { $0 = asked } }
        if held, !runsOutputs {
            let runner = hooks.isEmpty ? nil : HookRunner(store: store, configuration: hooks, logger: logger)
            let publisher = ClusterEventsPublisher(store: store, mqtt: mqtt, site: site, regions: regions, publishEvents: publishEvents,
                                                   discovery: discovery, retainAllDepartures: retainAllDepartures, statusInterval: .seconds(configuration.leaseDuration / 3), logger: logger)
            outputs.withLock {
                $0 = Outputs(hooks: runner.map { runner in Task { await runner.run() } }, publisher: publisher,
                             events: Task { await publisher.run() })
            }
            logger.info("outputs taken: this member runs the hooks and the MQTT events output")
            try? await log("outputsTaken", reason: "outputs run by \(member)")
        } else if !held {
            await stopOutputs(reason: "outputs lease held by another member")
        }
    }

    func stopOutputs(reason: String) async {
        guard let running = outputs.withLock({ $0.take() }) else { return }
        running.hooks?.cancel()
        await running.publisher.shutdown()
        running.events.cancel()
        await running.hooks?.value
        await running.events.value
        logger.info("outputs stopped", metadata: ["reason": "\(reason)"])
    }

    func take(_ lease: PartitionLease) async throws {
        let partitionRegions = PartitionWorker.regions(regions, partition: lease.partition, count: configuration.partitionCount)
        let fenced = fenced
        let worker = PartitionWorker(lease: lease, member: member, regions: partitionRegions, profile: profile, store: store, mqtt: mqtt,
                                     clientIDPrefix: clientIDPrefix, topicFilter: configuration.topicFilter(partition: lease.partition),
                                     statusFilter: configuration.statusFilter,
                                     hooks: hooks, ranging: PresenceRangingTracker(topics: PresenceTopics(site: site), mqttRoom: mqttRoom),
                                     partitionCount: configuration.partitionCount, retainsDepartures: discovery != nil || retainAllDepartures, maximumBacklog: maximumBacklog,
                                     acknowledgementWait: Self.acknowledgementWait(leaseSeconds: configuration.leaseDuration), logger: logger, onEvents: onEvents,
                                     onFenced: { _ in fenced.withLock { _ = $0.insert(lease) } })
        try await worker.start()
        workers.withLock { $0[lease.partition] = worker }
        logger.info("partition taken", metadata: ["partition": "\(lease.partition)", "epoch": "\(lease.epoch)", "regions": "\(partitionRegions.count)"])
        try? await log("partitionTaken", partition: lease, reason: "partition \(lease.partition) epoch \(lease.epoch) taken by \(member)")
    }

    /// Hands every partition back (stop consuming, write what is queued, release the lease), leaves
    /// the members and logs "process stopped". ``run()`` returns after its current sleep.
    public func stop(reason: String) async {
        stopping.withLock { $0 = true }
        // An expiry under way finishes first (its partitions' writes, the outputs' `offline`),
        // so "process stopped" is the member's last word.
        await expiring.withPermit {}
        await rounds.withPermit {
            if let pending = self.outputsStopping.withLock({ $0.take() }) { await pending.value }
            let all = self.workers.withLock { workers in defer { workers.removeAll() }; return workers }
            // Every partition at once, as an expiry does: each stops consuming at once and has the
            // same 5 s for its queued contributions (one after another, the last of 16 partitions
            // kept consuming for over a minute after its lease could have been taken).
            let unwritten = await withTaskGroup(of: (Int, Int).self) { group in
                for (partition, worker) in all {
                    group.addTask { (partition, await self.retire(worker, handOver: true)) }
                }
                var unwritten: [(Int, Int)] = []
                for await result in group where result.1 > 0 { unwritten.append(result) }
                return unwritten.sorted { $0.0 < $1.0 }
            }
            for (partition, left) in unwritten {
                self.logger.error("contributions not written at hand-over", metadata: ["partition": "\(partition)", "unwritten": "\(left)"])
            }
            let released = all.values.map(\.lease).sorted()
            await self.stopOutputs(reason: "stopping")
            do {
                // Only while the name is still this process's (checked in the same transaction): one
                // frozen past its heartbeat may have been replaced, noticed by a round or not.
                if try await self.store.leave(member: self.member, instance: self.instance, partitions: released, singletons: [Self.outputsLease]) {
                    if !released.isEmpty { self.logger.info("partitions handed back", metadata: ["partitions": "\(released.map(\.partition))"]) }
                } else {
                    self.logger.warning("leases left to expire: another process holds this member's name now")
                }
            } catch {
                self.logger.error("cannot release the leases (they expire on their own)", metadata: ["error": "\((error as? RegionKitError)?.message ?? "\(error)")"])
            }
            do {
                try await self.log("processStopped", reason: "member \(self.member): \(reason)")
            } catch {
                self.logger.error("cannot log the stop", metadata: ["error": "\((error as? RegionKitError)?.message ?? "\(error)")"])
            }
        }
    }

    /// Appends a member event (`processStarted`, `partitionTaken`, …) to the shared log; the JSON
    /// line carries the member and, for partition events, the partition and its epoch.
    /// The event types a cluster member logs of its own, beside the regions' and beacons' events
    /// (``HookConfiguration/loggedEventTypes``): the API's `type` filter accepts them too.
    public static let memberEventTypes = ["partitionTaken", "partitionLost", "partitionReleased", "outputsTaken"]

    func log(_ type: String, partition lease: PartitionLease? = nil, reason: String) async throws {
        let now = Date().timeIntervalSince1970
        var line = JSONLine()
        line.add("t", now)
        line.add("type", type)
        line.add("member", member)
        if let lease {
            line.add("partition", lease.partition)
            line.add("epoch", Int(lease.epoch))
        }
        let id = try await store.append(time: now, type: type, region: nil, state: nil, reason: reason, json: line.text, hooks: [])
        onEvents([StoredEvent(id: id, time: now, type: type, region: nil, state: nil, reason: reason, json: line.text)])
    }
}
