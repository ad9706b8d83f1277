import Foundation
import Logging
import RegionKit
import RegionKitConcurrency
import RegionKitCore
import RegionKitMQTT
import RegionKitStore

/// One partition held by a cluster member: its own engine (a ``LocationManager``) over the regions
/// the partition's beacons can match, restored from the partition's stored contributions; its own
/// persistent MQTT session (client id `regionkit-part-<p>`, QoS 1), so the sightings published
/// while the partition had no holder are delivered to the next one; and a ``ContributionWriter``
/// that turns the engine's `didDetermineState` into the partition's contribution.
///
/// ```swift
/// let worker = PartitionWorker(lease: lease, member: "engine-a", regions: regions, store: store, …)
/// try await worker.start()
/// await worker.stop(handOver: true)   // flush the contributions, keep the MQTT session
/// ```
final class PartitionWorker: LocationManagerDelegate {
    let lease: PartitionLease
    let manager: LocationManager
    let regions: [Region]
    let topicFilter: String
    private let store: any ClusterStoring
    private let client: MQTTClient
    private let ingest: MQTTSightingIngest
    private let writer: ContributionWriter
    private let logger: Logger
    private let clientTask = LockedBox<Task<Void, Never>?>(nil)

    /// The ESPresense id of a beacon region that names one iBeacon (UUID, major and minor): the token
    /// the broker partitions by. `nil` for a region that spans beacons (it lives in every partition).
    static func partitionToken(of region: Region) -> String? {
        guard case .beacon(let beacon) = region, beacon.constraint.format == .iBeacon,
              let major = beacon.major, let minor = beacon.minor else { return nil }
        return "iBeacon:\(beacon.uuid.uuidString.lowercased())-\(major)-\(minor)"
    }

    /// The regions partition `partition` of `count` can decide: every region spanning beacons, and
    /// the one-beacon regions whose beacon hashes to it.
    static func regions(_ regions: [Region], partition: Int, count: Int) -> [Region] {
        regions.filter { region in
            guard let token = partitionToken(of: region) else { return true }
            return NATSPartition.partition(of: token, count: count) == partition
        }
    }

    init(lease: PartitionLease, member: String, regions: [Region], profile: MonitoringProfile, store: any ClusterStoring,
         mqtt: MQTTClientConfiguration, clientIDPrefix: String, topicFilter: String, hooks: HookConfiguration, logger: Logger,
         onEvents: @escaping @Sendable ([StoredEvent]) -> Void, onFenced: @escaping @Sendable (Int) -> Void) {
        self.lease = lease
        self.regions = regions
        self.store = store
        self.topicFilter = topicFilter
        var logger = logger
        logger[metadataKey: "partition"] = "\(lease.partition)"
        self.logger = logger
        manager = LocationManager(profile: profile, automation: .all, clock: SystemClock(), sources: [.beacon: .authorized])
        ingest = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .espresense, topic: topicFilter)], manager: manager, logger: logger)
        let partition = lease.partition
        writer = ContributionWriter(store: store, lease: lease, member: member, logger: logger, render: { previous, merged, _, write in
            ClusterEvents.rows(previous: previous, merged: merged, region: write.region, time: write.time, evidence: write.evidence, hooks: hooks)
        }, onEvents: onEvents, onFenced: { onFenced(partition) })
        var configuration = mqtt
        // Every partition keeps its own session: whoever holds the partition gets its queue.
        configuration.clientID = "\(clientIDPrefix)\(lease.partition)"
        configuration.cleanSession = false
        configuration.will = nil
        // Spread the partitions' connections over the brokers (each still fails over to the others).
        let servers = configuration.servers
        let first = servers[lease.partition % servers.count]
        configuration.host = first.host
        configuration.port = first.port
        configuration.useTLS = first.useTLS
        configuration.fallbackServers = Array(servers[(lease.partition % servers.count + 1)...] + servers[..<(lease.partition % servers.count)])
        let box = IngestBox()
        client = MQTTClient(configuration: configuration, logger: logger, onMessage: { message in
            box.ingest?.handle(topic: message.topic, payload: message.payload)
        })
        box.ingest = ingest
    }

    /// Holds the ingest for the client's callback (set right after the client is made).
    final class IngestBox: @unchecked Sendable {
        var ingest: MQTTSightingIngest?
    }

    /// What the partition's MQTT session has delivered.
    var statistics: MQTTSightingIngest.Statistics { ingest.statistics }

    /// Restores the partition's regions from its stored contributions (no `didStartMonitoring`, no
    /// spurious enter: a beacon still heard keeps its region inside), then subscribes.
    func start() async throws {
        let stored = try await store.contributions(partition: lease.partition)
        manager.delegate = self
        for region in regions {
            if let contribution = stored[region.identifier], contribution.state != .unknown {
                manager.restoreMonitoring(for: region, state: contribution.state, since: contribution.since.map { Timestamp(seconds: $0) })
            } else {
                manager.startMonitoring(for: region)
            }
        }
        let (client, logger, filter) = (client, logger, topicFilter)
        clientTask.withLock { $0 = Task { await client.run() } }
        Task {
            // Remembered by the client: subscribed again after every reconnection.
            do { try await client.subscribe(filter, qos: .atLeastOnce) } catch {
                logger.error("cannot subscribe", metadata: ["filter": "\(filter)", "error": "\(error)"])
            }
        }
    }

    func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {
        guard case .didDetermineState(let state, let region) = event.kind, state != .unknown else { return }
        let since = manager.monitoredRegion(region.identifier)?.stateSince?.seconds
        writer.submit(.init(region: region, state: state, since: since ?? event.timestamp.seconds, time: event.timestamp.seconds,
                            evidence: event.evidence))
    }

    /// Stops consuming (the MQTT session stays on the broker, so nothing published meanwhile is
    /// lost), then with `handOver` waits up to `timeout` for the queued contributions, which makes
    /// the partition's state current for its next holder. Without it (the lease is already lost)
    /// what is queued is dropped: the store would refuse it.
    /// - Returns: the contributions left unwritten.
    @discardableResult
    func stop(handOver: Bool, timeout: Duration = .seconds(5)) async -> Int {
        await client.shutdown()
        if let task = clientTask.withLock({ $0.take() }) { await task.value }
        manager.delegate = nil
        if handOver { _ = await writer.flush(timeout: timeout) }
        let left = writer.queued
        await writer.close()
        return left
    }
}
