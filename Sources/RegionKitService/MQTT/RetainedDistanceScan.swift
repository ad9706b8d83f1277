import Foundation
import RegionKitConcurrency
import RegionKitCore
import RegionKitMQTT

/// Reads which beacon distances the broker keeps retained under the site (an earlier run's, or
/// another version's): the hub's ranging knows only the beacons it ranged itself, so one that left
/// while the daemon was stopped kept its last distance retained for good wherever no restored
/// room named it (one scanner, no rooms). The hub assumes these published and clears those no
/// ranging lists after a grace period (``PresenceRangingTracker/leftoverDepartures(of:room:kept:)``).
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
    }

    private let state = LockedBox(State())

    /// The marker did not come back in time.
    private struct TimedOut: Error {}

    init(topics: PresenceTopics) {
        self.topics = topics
        filter = topics.base + "/beacons/+/distance"
        marker = topics.base + "/scan/" + UUID().uuidString.lowercased()
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
    /// connection dropped, the broker refused the subscription or the marker): the caller asks
    /// again at the next connection. The subscriptions are gone afterwards either way.
    func run(on client: MQTTClient, timeout: Duration) async -> Set<BeaconIdentity>? {
        let seen = FirstResult<Void>()
        state.withLock { state in
            state = State(scanning: true, found: [], markerSeen: seen, lastFound: .now)
        }
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
                let quietSince = state.withLock { $0.lastFound }
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
            defer { state = State() }
            return state.found
        }
        return complete ? found : nil
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
