import Foundation
import Logging
import RegionKit
import RegionKitConcurrency
import RegionKitCore
import RegionKitMQTT
import RegionKitStore

/// The cluster's MQTT events output, run by the member holding the outputs lease: every event of
/// the shared log after the site's cursor is published as one daemon's hub publishes it (the event
/// on the events topic at QoS 1, then what it changes, e.g. the region's retained state: see
/// ``PresenceOutputs``), in log order, and the cursor (`mqtt:<site>` in the store, the hub's own)
/// advances per acknowledged event. When the lease moves, the next holder starts from the cursor:
/// at most the events in flight are published twice (QoS 1's at least once), none is skipped.
///
/// ```swift
/// let publisher = try ClusterEventsPublisher(store: store, mqtt: clientConfiguration, site: "airport", regions: regions, logger: logger)
/// let task = Task { await publisher.run() }
/// // … the outputs lease is lost …
/// await publisher.shutdown(); task.cancel(); await task.value
/// ```
final class ClusterEventsPublisher: Sendable {
    let store: any RegionStoring
    let client: MQTTClient
    let topics: PresenceTopics
    let outputName: String
    let regions: [String: Region]
    let publishEvents: Bool
    let logger: Logger
    let published = LockedBox(0)

    /// - Parameter publishEvents: false keeps the events topic quiet (the retained states still go out), as `mqtt.publishEvents: false`.
    init(store: any RegionStoring, mqtt: MQTTClientConfiguration, site: String, regions: [Region], publishEvents: Bool = true, logger: Logger) {
        self.store = store
        var configuration = mqtt
        configuration.clientID = "regionkit-\(site)-outputs"
        configuration.cleanSession = true
        configuration.will = nil
        client = MQTTClient(configuration: configuration, logger: logger, onMessage: { _ in })
        topics = PresenceTopics(site: site)
        outputName = Self.outputName(site: site)
        self.regions = Dictionary(regions.map { ($0.identifier, $0) }, uniquingKeysWith: { $1 })
        self.publishEvents = publishEvents
        self.logger = logger
    }

    /// The cursor's name in the store: the single daemon's hub uses the same one for a site.
    static func outputName(site: String) -> String { "mqtt:" + site }

    /// Events published since this publisher started.
    var count: Int { published.withLock { $0 } }

    /// Connects and publishes until cancelled (the log is polled every `interval` while idle: the
    /// events come from every member, not from this process).
    func run(interval: Duration = .milliseconds(200)) async {
        let connection = Task { await client.run() }
        defer { connection.cancel() }
        var outputs = PresenceOutputs(topics: topics, discovery: nil)
        var cursor: Int64?
        while !Task.isCancelled {
            do {
                try await client.waitUntilConnected()
            } catch {
                return
            }
            do {
                let position: Int64
                if let cursor { position = cursor } else { position = try await store.outputCursor(outputName, createAtEnd: true) }
                cursor = position
                let batch = try await store.events(since: nil, region: nil, type: nil, afterID: position, limit: 256)
                if batch.isEmpty {
                    try? await Task.sleep(for: interval)
                    continue
                }
                for event in batch {
                    let messages = outputs.messages(for: event) { self.regions[$0] }
                        .filter { publishEvents || $0.topic != topics.events }
                        .map { MQTTMessage(topic: $0.topic, payload: $0.payload, qos: $0.qos == 0 ? .atMostOnce : .atLeastOnce, retain: $0.retain) }
                    try await client.publish(messages)
                    cursor = event.id
                    published.withLock { $0 += 1 }
                    try await store.setOutputCursor(outputName, to: event.id)
                }
            } catch is MQTTError {
                continue   // not connected: wait for the connection, then go on from the cursor
            } catch {
                logger.warning("events output: cannot read the log or save the cursor", metadata: ["error": "\((error as? RegionKitError)?.message ?? "\(error)")"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Disconnects (call when the outputs lease is lost or the member stops).
    func shutdown() async {
        await client.shutdown()
    }
}
