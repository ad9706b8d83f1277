import Foundation
import RegionKitConcurrency
import Logging
import RegionKit
import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
import Testing
@testable import RegionKitService

/// The presence hub's reactions that need no broker: a refused subscription (the beacons on a
/// refused sighting filter go unheard, which must read as the MQTT source failing, not as every
/// beacon leaving — until the broker grants it when the client asks again, on this connection or
/// the next) and the shutdown's time bound
/// (real time: phase 2 of scripts/test.sh, in a process of its own, beside at most one other suite).
@Suite("Presence hub: refused subscriptions, the shutdown's bound", .tags(.realTime))
struct PresenceHubTests {
    @Test("A refused sighting filter makes the MQTT source unavailable and its activity down; the next connection, or the filter granted when asked again, brings it back; other filters change nothing")
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
        // Nor the scanners' status refused: a warning, the sightings still come.
        #expect(hub.ingest?.statusFilters == ["espresense/rooms/+/status"])
        hub.connectionChanged(.subscriptionRefused(filter: "espresense/rooms/+/status"))
        #expect(service.manager.authorizationStatus(for: .beacon) == .authorized && hub.activity.status.state == .up)
        #expect(hub.counts.refusedSubscriptions == 0)
        hub.connectionChanged(.subscriptionRefused(filter: filter))
        #expect(service.manager.authorizationStatus(for: .beacon) == .restricted(reason: "the MQTT broker refused the subscription to '\(filter)'"))
        #expect(hub.activity.status.state == .down && hub.activity.status.detail?.contains(filter) == true)
        #expect(hub.counts.refusedSubscriptions == 1)
        hub.connectionChanged(.connected(sessionPresent: false))
        #expect(service.manager.authorizationStatus(for: .beacon) == .authorized && hub.activity.status.state == .up)
        // Refused again, then granted when the client asks again on the same connection.
        hub.connectionChanged(.subscriptionRefused(filter: filter))
        #expect(service.manager.authorizationStatus(for: .beacon) != .authorized && hub.activity.status.state == .down)
        hub.connectionChanged(.subscriptionRestored(filter: "homeassistant/status"))
        #expect(hub.activity.status.state == .down, "another filter granted: the sighting filter is still refused")
        hub.connectionChanged(.subscriptionRestored(filter: filter))
        #expect(service.manager.authorizationStatus(for: .beacon) == .authorized && hub.activity.status.state == .up)
    }

    @Test("The shutdown's drain is bounded: work that never finishes is left running after the timeout, work that finishes in time is waited for")
    func drainIsBounded() async {
        let clock = ContinuousClock()
        let start = clock.now
        // What a broker that stopped acknowledging leaves the drain waiting on (not cancellable).
        let stuck = await PresenceHub.waiting(at: .milliseconds(200)) { try? await Task.sleep(for: .seconds(3600)) }
        let waited = clock.now - start
        #expect(!stuck)
        // Bounded, not the stuck work's hour: the 200 ms timer can run seconds late on 2 cores
        // busy with the other suites (it did, at 5 s, beside a compile).
        #expect(waited >= .milliseconds(200) && waited < .seconds(60), "\(waited)")
        let done = LockedBox(false)
        #expect(await PresenceHub.waiting(at: .seconds(10)) { done.withLock { $0 = true } })
        #expect(done.withLock { $0 })
    }
}
