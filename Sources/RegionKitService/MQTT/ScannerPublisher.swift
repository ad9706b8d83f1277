import Foundation
import Logging
import RegionKitConcurrency
import RegionKitCore
import RegionKitGateway
import RegionKitMQTT

/// A RegionKit scanner publishing its iBeacon sightings to a hub over MQTT (`regionkit scan
/// --publish`): batched every ``batchInterval`` seconds (or at ``maximumBatch`` sightings) as a
/// ``ScannerBatch`` on `regionkit/scanners/<scanner>`, QoS 0 like the other scanner firmwares.
/// Sightings are live data: while the broker is unreachable they are counted as dropped, not
/// queued (a hub would time them at their late arrival).
///
/// ```swift
/// let publisher = try ScannerPublisher(url: "mqtt://hub.lan", scanner: "kitchen", logger: logger)
/// Task { await publisher.run() }
/// publisher.add(identity, rssi: -67, measuredPower: -59, at: Date().timeIntervalSince1970)
/// ```
public final class ScannerPublisher: Sendable {
    public let scanner: String
    public let topic: String
    public let batchInterval: Duration
    public let maximumBatch: Int
    let client: MQTTClient
    let logger: Logger
    let state = LockedBox(State())

    struct State {
        var pending: [(identity: BeaconIdentity, rssi: Int, power: Int?, time: Double)] = []
        var published = 0
        var dropped = 0
        var batches = 0
    }

    /// Sightings published and dropped (broker unreachable) so far, and batches sent.
    public var counts: (published: Int, dropped: Int, batches: Int) { state.withLock { ($0.published, $0.dropped, $0.batches) } }

    /// - Parameters: credentials as for the daemon: `REGIONKIT_MQTT_USERNAME`, `REGIONKIT_MQTT_PASSWORD` (never on the command line).
    public init(url: String, scanner: String, caFile: String? = nil, batchInterval: Duration = .milliseconds(100), maximumBatch: Int = 256,
                logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard !scanner.isEmpty, scanner.utf8.count <= 128 else {
            throw RegionKitError(.invalidArgument, "--scanner must be 1–128 bytes")
        }
        var configuration: MQTTClientConfiguration
        do { configuration = try MQTTClientConfiguration(url: url) } catch {
            throw RegionKitError(.invalidArgument, "--publish: \(error)")
        }
        let hub = MQTTHubConfiguration(url: url)
        let credentials = try hub.credentials(environment: environment)
        configuration.username = credentials.username
        configuration.password = credentials.password
        configuration.caFile = caFile
        self.scanner = scanner
        topic = ScannerBatch.topic(scanner: PresenceTopics.sanitized(scanner))
        self.batchInterval = batchInterval
        self.maximumBatch = max(1, maximumBatch)
        self.logger = logger
        client = MQTTClient(configuration: configuration, logger: logger, onMessage: { _ in })
    }

    /// Queues one sighting (`time`: Unix seconds of the scanner's clock). A measured power no radio
    /// could report (outside ``BeaconObservation/rssiRange``: the beacon's byte is something else)
    /// is sent as not set, and a sighting whose RSSI is outside it (a controller's invalid value)
    /// is not sent: the hub refuses a batch holding either (a hub before session 52 refused it
    /// for such a power too), and the engine ignores such an RSSI.
    public func add(_ identity: BeaconIdentity, rssi: Int, measuredPower: Int?, at time: Double) {
        guard BeaconObservation.rssiRange.contains(rssi) else { return }
        let power = measuredPower.flatMap { BeaconObservation.rssiRange.contains($0) ? $0 : nil }
        let full = state.withLock { state -> Bool in
            state.pending.append((identity, rssi, power, time))
            return state.pending.count >= maximumBatch
        }
        if full { Task { await self.flush() } }
    }

    /// Connects and publishes until cancelled, then flushes what is pending and disconnects.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.client.run() }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.batchInterval)
                    await self.flush()
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    public func shutdown() async {
        await flush()
        await client.shutdown()
    }

    /// Publishes what is pending as one batch (or drops it while disconnected).
    public func flush() async {
        let now = Date().timeIntervalSince1970
        let taken = state.withLock { state in
            defer { state.pending.removeAll(keepingCapacity: true) }
            return state.pending
        }
        guard !taken.isEmpty else { return }
        guard client.isConnected else {
            state.withLock { $0.dropped += taken.count }
            return
        }
        let batch = ScannerBatch(scanner: scanner, time: now, sightings: taken.map {
            .init(identity: $0.identity, rssi: $0.rssi, measuredPower: $0.power, offset: max(-ScannerBatch.maximumAge, min(0, $0.time - now)))
        })
        do {
            try await client.publish(MQTTMessage(topic: topic, payload: batch.json(), qos: .atMostOnce, retain: false))
            state.withLock {
                $0.published += taken.count
                $0.batches += 1
            }
        } catch {
            state.withLock { $0.dropped += taken.count }
        }
    }
}
