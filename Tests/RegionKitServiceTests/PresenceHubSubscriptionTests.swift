import Foundation
import Logging
import RegionKit
import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
import Testing
@testable import RegionKitService

/// What the presence hub makes of the broker refusing a subscription: the beacons on a refused
/// sighting filter go unheard, which must read as the MQTT source failing, not as every beacon
/// leaving — until the next connection, which asks again.
@Suite("Presence hub: a refused sighting subscription")
struct PresenceHubSubscriptionTests {
    @Test("A refused sighting filter makes the MQTT source unavailable and its activity down; the next connection brings it back; other filters change nothing")
    func refusedSightingFilter() throws {
        let configuration = try ServiceConfiguration.decode("""
        sources:
          - mqtt: {format: espresense}
        mqtt: {url: "mqtt://127.0.0.1:1", site: home}
        """, path: "/tmp/regionkit-test.yaml")
        let mqtt = try #require(configuration.mqtt)
        let service = try MonitoringService(store: RegionStore(path: temporaryStorePath()), clock: VirtualClock(), sources: [.beacon: .notDetermined])
        let hub = try PresenceHub(configuration: mqtt, homeAssistant: nil, sources: configuration.mqttSources, service: service,
                                  logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, environment: [:])
        let filter = try #require(hub.ingest?.topicFilters.first)
        hub.connectionChanged(.connected(sessionPresent: false))
        #expect(service.manager.authorizationStatus(for: .beacon) == .authorized)
        // A filter that is not a sighting filter (Home Assistant's status, say) changes nothing.
        hub.connectionChanged(.subscriptionRefused(filter: "homeassistant/status"))
        #expect(service.manager.authorizationStatus(for: .beacon) == .authorized && hub.activity.status.state == .up)
        hub.connectionChanged(.subscriptionRefused(filter: filter))
        #expect(service.manager.authorizationStatus(for: .beacon) == .restricted(reason: "the MQTT broker refused the subscription to '\(filter)'"))
        #expect(hub.activity.status.state == .down && hub.activity.status.detail?.contains(filter) == true)
        #expect(hub.counts.refusedSubscriptions == 1)
        hub.connectionChanged(.connected(sessionPresent: false))
        #expect(service.manager.authorizationStatus(for: .beacon) == .authorized && hub.activity.status.state == .up)
    }
}
