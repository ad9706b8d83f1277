import Foundation
import Logging
import RegionKitConcurrency
import RegionKitCore
import RegionKitGateway
import RegionKitMQTT

/// A RegionKit scanner publishing its iBeacon sightings to a hub over MQTT (`regionkit scan
/// --publish`): batched every ``batchInterval`` seconds (or at ``maximumBatch`` sightings) as a
/// `ScannerBatch` on `regionkit/scanners/<scanner>`, QoS 0 like the other scanner firmwares.
/// Sightings are live data: while the broker is unreachable they are counted as dropped, not
/// queued (a hub would time them at their late arrival).
///
/// Like an ESPresense node, it says whether it is online on a retained topic,
/// `ScannerBatch.statusTopic(scanner:prefix:)` (`regionkit/scanners/<scanner>/status`): `online`
/// after each connection, `offline` at ``shutdown()`` and as its will (the broker publishes it when
/// the connection is lost), so a hub holds the beacons only it hears while it restarts or is
/// unplugged instead of sending them away. It watches that topic too: an `offline` read while it
/// is connected (the will of an earlier connection the broker noticed dead only after this one
/// began) is answered with `online` again, so the retained status ends up true.
///
/// ```swift
/// let publisher = try ScannerPublisher(url: "mqtt://hub.lan", scanner: "kitchen", logger: logger)
/// Task { await publisher.run() }
/// publisher.add(identity, rssi: -67, measuredPower: -59, at: Date().timeIntervalSince1970)
/// await publisher.shutdown()   // says offline: not a cancellation of run()
/// ```
public final class ScannerPublisher: Sendable {
    public let scanner: String
    public let topic: String
    /// Where it says `online` / `offline` (retained), or nil when it says nothing (`status: false`).
    public let statusTopic: String?
    public let batchInterval: Duration
    /// The longest ``batchInterval``: half of `ScannerBatch.maximumLateness`, so that a batch's
    /// oldest sighting reaches a hub in time.
    public static let maximumBatchInterval: Duration = .seconds(1)
    public let maximumBatch: Int
    /// How long ``shutdown()`` waits for the broker to acknowledge the `offline` status.
    public let stopTimeout: Duration
    let client: MQTTClient
    let logger: Logger
    let state = LockedBox(State())
    /// Status publications one at a time: none after the stop's `offline`.
    let statusLock = AsyncSemaphore()

    struct State {
        var pending: [(identity: BeaconIdentity, rssi: Int, power: Int?, time: Double)] = []
        var published = 0
        var dropped = 0
        var batches = 0
        /// Connections made (reconnections included).
        var connections = 0
        /// ``shutdown()`` has begun: no `online` any more.
        var stopping = false
        /// An `online` answering an `offline` it read is queued and not yet being published: the
        /// `offline`s read meanwhile are answered by it (a flood of them costs a few answers, not
        /// one each).
        var answerPending = false
        /// `offline`s read while connected since the last answer was queued.
        var offlinesRead = 0
    }

    final class Box: @unchecked Sendable {
        weak var publisher: ScannerPublisher?
    }

    /// Sightings published and dropped (broker unreachable) so far, and batches sent.
    public var counts: (published: Int, dropped: Int, batches: Int) { state.withLock { ($0.published, $0.dropped, $0.batches) } }

    /// - Parameters:
    ///   - status: say `online` / `offline` on ``statusTopic`` (with a will); false for a broker
    ///     whose access rules allow the batches' topic only (Mosquitto refuses a connection whose
    ///     will topic it would not let the client publish on).
    ///   - environment: credentials as for the daemon: `REGIONKIT_MQTT_USERNAME`,
    ///     `REGIONKIT_MQTT_PASSWORD` (never on the command line).
    public init(url: String, scanner: String, caFile: String? = nil, status: Bool = true, batchInterval: Duration = .milliseconds(100),
                maximumBatch: Int = 256, stopTimeout: Duration = .seconds(5),
                logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        if let problem = ScannerName.problem(scanner) {
            throw RegionKitError(.invalidArgument, "--scanner \(problem)")
        }
        // A hub takes a batch's sightings as current up to ScannerBatch.maximumLateness old.
        guard batchInterval > .zero, batchInterval <= Self.maximumBatchInterval else {
            throw RegionKitError(.invalidArgument, "the batch interval must be within 0...\(Self.maximumBatchInterval) (a hub drops sightings more than \(ScannerBatch.maximumLateness) s old), got \(batchInterval)")
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
        topic = ScannerBatch.topic(scanner: scanner)
        let statusTopic = status ? ScannerBatch.statusTopic(scanner: scanner) : nil
        self.statusTopic = statusTopic
        configuration.will = statusTopic.map { PresenceHub.status("offline", on: $0) }
        self.batchInterval = batchInterval
        self.maximumBatch = max(1, maximumBatch)
        self.stopTimeout = stopTimeout
        self.logger = logger
        let box = Box()
        client = MQTTClient(configuration: configuration, logger: logger, onMessage: { message in
            box.publisher?.received(message)
        }, onConnectionEvent: { event in
            if case .connected = event, let publisher = box.publisher {
                publisher.state.withLock { $0.connections += 1 }
                publisher.sayOnline()
            }
        })
        box.publisher = self
    }

    /// Publishes `online` (retained) unless the stop has begun.
    func sayOnline() {
        guard let statusTopic else { return }
        Task {
            await statusLock.withPermit {
                let stopping = state.withLock { state in
                    state.answerPending = false   // an offline read from now on is answered again
                    return state.stopping
                }
                guard !stopping else { return }
                do {
                    try await client.publish(PresenceHub.status("online", on: statusTopic))
                } catch {
                    logger.warning("cannot publish online status", metadata: ["topic": "\(statusTopic)", "error": "\(error)"])
                }
            }
        }
    }

    /// Its own status topic read back: an `offline` while connected and not stopping is not true
    /// (a late will), and is answered with `online`. Read as the hub reads it (case and
    /// surrounding whitespace aside). Not a retained one: that comes with the subscription each
    /// connection makes, before the connection's own `online`, which replaces it anyway.
    ///
    /// One answer (and one log line) at a time: the `offline`s read while an answer waits for its
    /// turn are answered by it, since it is published after them. A flood of them (anyone who
    /// may publish on the topic, a loop of misconfigured nodes) costs a few answers, not one each.
    func received(_ message: MQTTMessage) {
        guard let statusTopic, message.topic == statusTopic, !message.retain,
              let status = try? ScannerStatusMessage.decode(topic: message.topic, payload: message.payload, filter: statusTopic, scanner: scanner),
              !status.online, client.isConnected else { return }
        let read = state.withLock { state -> Int? in
            guard !state.stopping else { return nil }
            state.offlinesRead += 1
            guard !state.answerPending else { return nil }
            state.answerPending = true
            defer { state.offlinesRead = 0 }
            return state.offlinesRead
        }
        guard let read else { return }
        logger.info("an offline status of this scanner read while connected (an earlier connection's will): saying online again",
                    metadata: ["topic": "\(message.topic)", "offline_read": "\(read)"])
        sayOnline()
    }

    /// Queues one sighting (`time`: Unix seconds of the scanner's clock). A measured power no radio
    /// could report (outside `BeaconObservation.rssiRange`: the beacon's byte is something else)
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

    /// Connects and publishes until ``shutdown()``, which flushes what is pending, says `offline`
    /// and disconnects. Stop it so: cancelling this task alone disconnects cleanly, which makes
    /// the broker discard the will, and leaves the retained `online` behind.
    public func run() async {
        if let statusTopic {
            // Remembered by the client and subscribed at every connection.
            do { try await client.subscribe(statusTopic, qos: .atLeastOnce) } catch {
                logger.warning("cannot watch the status topic", metadata: ["topic": "\(statusTopic)", "error": "\(error)"])
            }
        }
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

    /// Publishes what is pending, says `offline` (retained: the clean disconnection that follows
    /// discards the will, so nothing else would say it; at most ``stopTimeout`` waited for) and
    /// disconnects.
    public func shutdown() async {
        await flush()
        state.withLock { $0.stopping = true }
        if let statusTopic, client.isConnected {
            await PresenceHub.sayOffline(client, PresenceHub.status("offline", on: statusTopic), within: stopTimeout, lock: statusLock, logger: logger)
        }
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
