import Foundation
import Logging
import RegionKitConcurrency
import Testing
import RegionKit
import RegionKitCore
import RegionKitGateway
import RegionKitMQTT
import RegionKitSimulation
import RegionKitTestSupport
@testable import RegionKitService

/// The real gateway recordings, converted to what ESPresense nodes and Theengs gateways publish,
/// go through a real Mosquitto and RegionKit's MQTT sources; the region events and rooms must be
/// the ones `regionkit replay` decides from the file.
///
/// Time: the engine runs on a virtual clock that the receiving side moves to each message's
/// recorded time as it arrives (the messages carry no time of their own, and their order is the
/// broker's). So the comparison is exact and fast; what it checks is the whole path between the
/// file and the engine — conversion to each scanner format, the broker, our MQTT client, the
/// decoders (scanner = room/gateway, RSSI, measured power) — not real-time pacing, which the
/// daemon tests cover.
@Suite("Same decisions through the broker as from the file (real recordings)", .serialized, .tags(.endToEnd, .heavy),
       .enabled(if: MosquittoBroker.isAvailable && SharedFixtures.available, "needs mosquitto (apt) and the shared fixtures"))
struct MQTTReplayEquivalenceTests {
    static func regions(_ recording: GatewayRecording) throws -> [Region] {
        let identities = Set(recording.sightings.map(\.identity)).sorted()
        var regions = try Set(identities.map(\.uuid)).sorted { $0.uuidString < $1.uuidString }.enumerated().map { index, uuid in
            Region.beacon(try BeaconRegion(identifier: "uuid-\(index)", uuid: uuid))
        }
        regions += try identities.map { identity in
            Region.beacon(try BeaconRegion(identifier: "b\(identity.major)-\(identity.minor)", uuid: identity.uuid, major: identity.major, minor: identity.minor))
        }
        return regions
    }

    static var profile: MonitoringProfile {
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()   // as `regionkit replay` sets it
        return profile
    }

    /// The decisions worth comparing, one line each.
    static func line(_ event: LocationEvent) -> String? {
        let t = String(format: "%.3f", event.timestamp.seconds)
        switch event.kind {
        case .didEnterRegion(let region): return "\(t) enter \(region.identifier)"
        case .didExitRegion(let region): return "\(t) exit \(region.identifier)"
        case .didDetermineState(let state, let region): return "\(t) state \(region.identifier) \(state.rawValue)"
        case .didChangeNearestScanner(let beacon, let scanner, _): return "\(t) room \(beacon) \(scanner ?? "-")"
        default: return nil
        }
    }

    @Test("TwoScanners as ESPresense, FourScanners as Theengs, FourScanners as RegionKit batches",
          arguments: [("TwoScannersRun1-2015-03-03.json.gz", SightingMessageFormat.espresense),
                      ("FourScannersRun1-2015-03-07.json.gz", .theengs),
                      ("FourScannersRun1-2015-03-07.json.gz", .regionkit)])
    func sameDecisions(file: String, format: SightingMessageFormat) async throws {
        let recording = try GatewayRecording(path: SharedFixtures.beaconRun(file))
        let regions = try Self.regions(recording)

        // The file, as `regionkit replay --instant` plays it.
        let expected = LockedBox<[String]>([])
        let replay = ReplaySession(profile: Self.profile, regions: regions) { event in
            if let line = Self.line(event) { expected.withLock { $0.append(line) } }
        }
        for sighting in recording.sightings { replay.feed(sighting.observation(originMilliseconds: recording.originMilliseconds)) }
        replay.finish(tail: 60)

        // The same sightings through the broker.
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let messages = RecordingMessages.messages(recording, format: format)
        let clock = VirtualClock()
        let manager = LocationManager(profile: Self.profile, automation: Automation(), clock: clock, sources: [.beacon: .authorized])
        let actual = LockedBox<[String]>([])
        let collector = Collector { event in if let line = Self.line(event) { actual.withLock { $0.append(line) } } }
        manager.delegate = collector
        for region in regions { manager.startMonitoring(for: region) }
        let ingest = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: format)], manager: manager, logger: Logger(label: "test"))
        let received = LockedBox(0)
        // Counted once a message has been handled: the last one must be in the engine before the
        // test moves the clock on (counting on arrival raced it under load: a run differed once).
        let handled = LockedBox(0)
        let times = messages.map(\.time)
        var configuration = try MQTTClientConfiguration(url: broker.url)
        configuration.reconnectMinimumDelay = .milliseconds(20)
        let subscriber = MQTTClient(configuration: configuration, onMessage: { message in
            let index = received.withLock { count in
                defer { count += 1 }
                return count
            }
            defer { handled.withLock { $0 += 1 } }
            guard index < times.count else { return }
            clock.advance(to: Timestamp(seconds: times[index]))
            ingest.handle(topic: message.topic, payload: message.payload)
        })
        let subscriberTask = Task { await subscriber.run() }
        try await subscriber.waitUntilConnected()
        try await subscriber.subscribe(format.defaultTopicFilter, qos: .atLeastOnce)

        var publisherConfiguration = try MQTTClientConfiguration(url: broker.url)
        publisherConfiguration.clientID = "rk-equivalence-publisher"
        let publisher = MQTTClient(configuration: publisherConfiguration, onMessage: { _ in })
        let publisherTask = Task { await publisher.run() }
        try await publisher.waitUntilConnected()
        // In order, 500 at a time, pipelined (one round trip per 500, not per message: one at a
        // time took 95 s of CI for the three recordings). The broker queues without a limit.
        for start in stride(from: 0, to: messages.count, by: 500) {
            try await publisher.publish(messages[start..<min(start + 500, messages.count)].map {
                MQTTMessage(topic: $0.topic, payload: $0.payload, qos: .atLeastOnce)
            })
        }
        // Pipelined, the broker holds most of the recording before the subscriber (a debug build,
        // beside other suites) has handled it: waited for as long as it makes progress, up to 30 s
        // without a message handled.
        var progress = -1
        while handled.withLock({ $0 }) < messages.count, handled.withLock({ $0 }) > progress {
            progress = handled.withLock { $0 }
            _ = await waitUntil(timeout: 30) { handled.withLock { $0 } >= messages.count }
        }
        let done = handled.withLock { $0 }
        try #require(done >= messages.count, "\(done) of \(messages.count) messages handled (received \(received.withLock { $0 })): none for 30 s")
        clock.advance(by: 60)
        await publisher.shutdown()
        await subscriber.shutdown()
        _ = await (publisherTask.value, subscriberTask.value)

        let statistics = ingest.statistics
        #expect(statistics.sightings == recording.sightings.count && statistics.rejectedTotal == 0 && statistics.ignored.isEmpty, "\(statistics)")
        let want = expected.withLock { $0 }, got = actual.withLock { $0 }
        #expect(want.count > 20, "the recording yields decisions to compare")
        let firstDifference = zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(got.count, want.count)
        #expect(got == want, "first difference at line \(firstDifference): broker \(got.dropFirst(firstDifference).first ?? "-") vs file \(want.dropFirst(firstDifference).first ?? "-") (\(got.count) vs \(want.count) lines)")
    }

    final class Collector: LocationManagerDelegate {
        let output: @Sendable (LocationEvent) -> Void
        init(_ output: @escaping @Sendable (LocationEvent) -> Void) { self.output = output }
        func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) { output(event) }
    }
}
