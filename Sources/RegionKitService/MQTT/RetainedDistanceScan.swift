import Foundation
import Logging
import RegionKitConcurrency
import RegionKitCore
import RegionKitMQTT

/// Reads which beacon distances the broker keeps retained under the site (an earlier run's, or
/// another version's): the hub's ranging knows only the beacons it ranged itself, so one that left
/// while the daemon was stopped kept its last distance retained for good wherever no restored
/// room named it (one scanner, no rooms). The hub (and each cluster partition, for its own
/// beacons, at each takeover) assumes these published and clears those no ranging lists after a
/// grace period (``PresenceRangingTracker/leftoverDepartures(of:room:kept:)``).
///
/// Subscribes to `regionkit/<site>/beacons/+/distance` and to a marker topic of its own, then
/// publishes the marker. Mosquitto sends a subscription's retained messages before anything
/// published after it on the same connection, so when the marker comes back every retained
/// distance has arrived; MQTT does not promise that order (brokers that deliver retained messages
/// on their own schedule exist), so the scan also waits until ``quietPeriod`` has passed without a
/// new one. Then both are unsubscribed (the hub's own distances would otherwise come back to it).
/// Only retained messages count (a broker forwards live ones with the retain flag clear), and
/// only numbers: `None` and an empty payload are departures already made.
///
/// ```swift
/// let scan = RetainedDistanceScan(topics: topics)
/// // the client's onMessage: if scan.received(message) { return }
/// if let leftovers = await scan.run(on: client, timeout: .seconds(10)) { … }
/// ```
final class RetainedDistanceScan: Sendable {
    let topics: PresenceTopics
    /// `regionkit/<site>/beacons/+/distance`.
    let filter: String
    /// A topic of this scan alone (under the site's base: a client allowed to publish there may use it).
    let marker: String
    /// `regionkit/<site>/beacons/`: a distance topic starts with it.
    private let beaconsPrefix: String
    /// After the marker, how long without a new retained distance ends the scan.
    static let quietPeriod = Duration.milliseconds(500)

    private struct State {
        var scanning = false
        var found: Set<BeaconIdentity> = []
        var markerSeen: FirstResult<Void>?
        var lastFound = ContinuousClock.now
        /// ``cancel()`` was called: no scan runs any more.
        var cancelled = false
    }

    private let state = LockedBox(State())

    /// The marker did not come back in time.
    private struct TimedOut: Error {}
    /// ``cancel()`` ended the scan.
    private struct Cancelled: Error {}

    /// - Parameter marker: the marker topic's last level (`<base>/scan/<marker>`); a random one by
    ///   default. A cluster partition names its own, so that one a stopped holder left subscribed
    ///   in the partition's persistent session is the next holder's, which unsubscribes it.
    init(topics: PresenceTopics, marker: String = UUID().uuidString.lowercased()) {
        self.topics = topics
        filter = topics.base + "/beacons/+/distance"
        self.marker = topics.base + "/scan/" + marker
        beaconsPrefix = topics.base + "/beacons/"
    }

    /// Whether `message` is the scan's (a distance under the site, or the marker), noting a
    /// retained numeric distance's beacon while a scan runs.
    func received(_ message: MQTTMessage) -> Bool {
        if message.topic == marker {
            state.withLock { $0.markerSeen }?.finish(.success(()))
            return true
        }
        // Every sighting message passes here: one prefix test for those.
        guard message.topic.hasPrefix(beaconsPrefix), let beacon = Self.beacon(distanceTopic: message.topic, base: topics.base) else { return false }
        guard message.retain, Self.isDistance(message.payload) else { return true }
        state.withLock { state in
            guard state.scanning else { return }
            state.found.insert(beacon)
            state.lastFound = .now
        }
        return true
    }

    /// Runs one scan on `client` (connected): the beacons whose distance the broker keeps
    /// retained as a number, or nil when the marker did not come back within `timeout` (the
    /// connection dropped, the broker refused the subscription or the marker) or ``cancel()``
    /// ended it. The subscriptions are gone afterwards either way (asked of the broker while
    /// connected; otherwise forgotten by the client).
    func run(on client: MQTTClient, timeout: Duration) async -> Set<BeaconIdentity>? {
        let seen = FirstResult<Void>()
        let cancelled = state.withLock { state -> Bool in
            guard !state.cancelled else { return true }
            state = State(scanning: true, found: [], markerSeen: seen, lastFound: .now)
            return false
        }
        guard !cancelled else { return nil }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            seen.finish(.failure(TimedOut()))
        }
        let complete: Bool
        do {
            try await client.subscribe(filter, qos: .atMostOnce)
            try await client.subscribe(marker, qos: .atMostOnce)
            try await client.publish(MQTTMessage(topic: marker, payload: Array("scan".utf8), qos: .atMostOnce))
            try await seen.value
            // Until a quiet period passes without a new retained distance (bounded by the timeout).
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                let (quietSince, cancelled) = state.withLock { ($0.lastFound, $0.cancelled) }
                if cancelled { throw Cancelled() }
                let wait = quietSince + Self.quietPeriod - .now
                guard wait > .zero else { break }
                try await Task.sleep(for: wait)
            }
            complete = true
        } catch {
            complete = false
        }
        timer.cancel()
        // Forgotten by the client even when not connected now (not subscribed again at the next connection).
        try? await client.unsubscribe(filter)
        try? await client.unsubscribe(marker)
        let found = state.withLock { state in
            defer { state = State(cancelled: state.cancelled) }
            return state.found
        }
        return complete ? found : nil
    }

    /// Runs scans on `client` until one completes: the beacons found, or nil once `stopping`
    /// says so (or ``cancel()`` was called). The first scan starts once the client is connected.
    /// One that does not complete (the connection dropped, the broker refused the subscription or
    /// dropped the marker, reads paused) is tried again, while connected, after 10 s, then twice
    /// as long after each real attempt up to 10 minutes, each failure logged as a warning.
    ///
    /// ```swift
    /// if let found = await scan.runUntilComplete(on: client, stopping: { stopping.withLock { $0 } }, logger: logger) { … }
    /// ```
    func runUntilComplete(on client: MQTTClient, stopping: () -> Bool, logger: Logger) async -> Set<BeaconIdentity>? {
        var delay = Duration.seconds(10)
        while !stopping(), !Task.isCancelled, !state.withLock({ $0.cancelled }) {
            let attempted = client.isConnected
            if attempted, let found = await run(on: client, timeout: .seconds(10)) { return found }
            if attempted, !state.withLock({ $0.cancelled }) {
                logger.warning("the scan of the distances left retained on the broker did not complete (subscription or marker refused, or no answer in 10 s): tried again later",
                               metadata: ["topic": "\(filter)", "retry-in": "\(delay)"])
            }
            // Waited out a second at a time, so a stop ends it promptly; while disconnected, only
            // until the connection is back.
            let until = ContinuousClock.now + delay
            while ContinuousClock.now < until, !stopping(), !Task.isCancelled, !state.withLock({ $0.cancelled }), attempted || !client.isConnected {
                try? await Task.sleep(for: attempted ? .seconds(1) : .milliseconds(200))
            }
            // Longer only after a real attempt (not while disconnected).
            if attempted { delay = min(delay * 2, .seconds(600)) }
        }
        return nil
    }

    /// Ends a scan under way at once (without its result) and every later one: for a stop, which
    /// need not wait for the marker's timeout.
    func cancel() {
        let seen = state.withLock { state -> FirstResult<Void>? in
            state.cancelled = true
            return state.markerSeen
        }
        seen?.finish(.failure(Cancelled()))
    }

    /// The beacon of `topic` when it is `<base>/beacons/<key>/distance` with a beacon's key.
    static func beacon(distanceTopic topic: String, base: String) -> BeaconIdentity? {
        let prefix = base + "/beacons/", suffix = "/distance"
        guard topic.hasPrefix(prefix), topic.hasSuffix(suffix), topic.count > prefix.count + suffix.count else { return nil }
        let key = topic.dropFirst(prefix.count).dropLast(suffix.count)
        guard !key.contains("/") else { return nil }
        return PresenceTopics.beacon(key: String(key))
    }

    /// Whether `payload` is a distance as the hub publishes it (a finite number), not `None` or empty.
    static func isDistance(_ payload: [UInt8]) -> Bool {
        guard !payload.isEmpty, payload.count <= 32, let value = Double(String(decoding: payload, as: UTF8.self)) else { return false }
        return value.isFinite
    }
}
