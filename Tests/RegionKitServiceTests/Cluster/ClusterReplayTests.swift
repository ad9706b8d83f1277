import Foundation
import Logging
import RegionKitConcurrency
import Testing
import RegionKit
import RegionKitCore
import RegionKitGateway
import RegionKitMQTT
import RegionKitPostgres
import RegionKitSimulation
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// A real gateway recording replayed through the real cluster — published as ESPresense nodes
/// publish, one client per scanner each on its own node of a 3-node NATS cluster that partitions
/// the topics by beacon id, decided by 3 cluster engines (``ClusterEngine``, in this process) with
/// leases and merged states in a private PostgreSQL — against one engine fed the same sightings
/// at the times they were published (on virtual time). The replay runs `speed` times faster than
/// recorded (both sides see the same accelerated input, including the publisher's lag under
/// load); the cluster's times are wall-clock, so a decision may come later by the delivery delay
/// and the detector's scan-cycle phase.
@Suite("A real recording through the broker into 3 cluster engines decides as one engine", .serialized, .tags(.endToEnd, .alone),
       .enabled(if: NATSCluster.isAvailable && PostgresServer.isAvailable && SharedFixtures.available,
                "needs nats-server and PostgreSQL (./scripts/test.sh installs them) and the shared fixtures: SKIPPED, not passed"))
struct ClusterReplayTests {
    static let partitions = 16
    /// 10×, not 20× as first written: at 20× (≈ 1,000 sightings/s) the publisher of a debug build
    /// on 2 cores fell 5–9 s behind in two fresh-clone CI runs (sessions 11 and 12), and the
    /// cluster's wall-clock decisions came up to 5 s of recording time before or after one
    /// engine's, outside the bounds below: a twentieth of a second of scheduling is a second of
    /// recording there.
    static let speed = 10.0

    /// A per-stream exit detector (`altbeacon`: 10 s of silence on its scan cycle), so that one
    /// engine and the partitions decide alike (see ClusterEquivalenceTests); rooms on, as the
    /// daemon sets them for MQTT sources.
    static var profile: MonitoringProfile {
        get throws {
            var profile = try #require(MonitoringProfile.named("altbeacon"))
            profile.nearestScanner = NearestScannerPolicy()
            return profile
        }
    }

    /// A region's or a beacon's changes: (seconds since the replay started, new state or room).
    typealias Changes = [String: [(time: Double, value: String)]]

    static func record(_ changes: inout Changes, _ key: String, _ time: Double, _ value: String) {
        if changes[key]?.last?.value == value { return }
        changes[key, default: []].append((time, value))
    }

    @Test("FourScanners at 10× through 3 NATS nodes and 3 engines: every region's states in the same order as one engine, at nearly the same times; the beacons' rooms too (at most two beacons near a tie differ, ending in the same room)",
          .timeLimit(.minutes(8)))
    func sameDecisions() async throws {
        let recording = try GatewayRecording(path: SharedFixtures.beaconRun("FourScannersRun1-2015-03-07.json.gz"))
        let regions = try MQTTReplayEquivalenceTests.regions(recording)
        let messages = RecordingMessages.messages(recording, format: .espresense)
        let profile = try Self.profile

        // The cluster.
        let server = try await PostgresServer.started(database: "replay")
        defer { server.stop() }
        let nats = try NATSCluster(nodes: 3, mappings: [
            "espresense.devices.*.*": "regionkit.part.{{partition(\(Self.partitions),1)}}.espresense.devices.{{wildcard(1)}}.{{wildcard(2)}}",
        ])
        try await nats.start()
        defer { nats.stop() }
        var logger = Logger(label: "cluster-replay")
        logger.logLevel = .warning
        let reader = try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: "replay")
        var stores: [PostgresRegionStore] = []
        var engines: [ClusterEngine] = []
        var runs: [Task<Void, Never>] = []
        for index in 0..<3 {
            let store = try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: "replay", threads: 1)
            var mqtt = try MQTTClientConfiguration(urls: (0..<3).map { nats.mqttURL((index + $0) % 3) })
            mqtt.keepAlive = .seconds(5)
            mqtt.reconnectMinimumDelay = .milliseconds(50)
            let engine = ClusterEngine(store: store, configuration: ClusterConfiguration(partitions: Self.partitions, member: "engine-\(index)", leaseSeconds: 3),
                                       mqtt: mqtt, profile: profile, regions: regions, site: "replay", logger: logger)
            try await engine.start()
            stores.append(store)
            engines.append(engine)
            runs.append(Task { await engine.run() })
        }
        func stopAll() async {
            for engine in engines { await engine.stop(reason: "test over") }
            for run in runs { await run.value }
            for store in stores { await store.shutdown() }
            await reader.shutdown()
        }
        do {
            // Every partition held, by all three.
            let spread = try await waitUntil(timeout: 60) {
                let leases = try await reader.leases().filter { $0.expiresIn > 0 }
                return leases.count == Self.partitions && Set(leases.compactMap(\.owner)).count == 3
            }
            let leases = try await reader.leases().map { "\($0.partition):\($0.owner ?? "-")" }
            #expect(spread, "leases: \(leases)")
            // The partitions' MQTT sessions subscribe as they start; let them settle.
            try await Task.sleep(for: .seconds(2))
            let before = try await reader.lastEventID()

            // One publisher per scanner, each on its own node first; QoS 1 (every sighting arrives).
            let scanners = Array(Set(messages.map { $0.topic.split(separator: "/").last.map(String.init) ?? "" })).sorted()
            var clients: [String: MQTTClient] = [:]
            var clientRuns: [Task<Void, Never>] = []
            for (index, scanner) in scanners.enumerated() {
                var configuration = try MQTTClientConfiguration(urls: (0..<3).map { nats.mqttURL((index + $0) % 3) })
                configuration.clientID = "rk-replay-\(index)"
                let client = MQTTClient(configuration: configuration, onMessage: { _ in })
                clients[scanner] = client
                clientRuns.append(Task { await client.run() })
                try await client.waitUntilConnected()
            }
            let start = Date()
            // When each sighting went out (seconds after start): one engine is fed these times, so
            // both sides see the same input even when the publisher falls behind under load.
            var sentAt: [Double] = []
            sentAt.reserveCapacity(messages.count)
            var next = 0
            var lag: Double = 0
            while next < messages.count {
                let now = Date().timeIntervalSince(start)
                var due: [String: [MQTTMessage]] = [:]
                while next < messages.count, messages[next].time / Self.speed <= now {
                    let message = messages[next]
                    due[String(message.topic.split(separator: "/").last ?? ""), default: []]
                        .append(MQTTMessage(topic: message.topic, payload: message.payload, qos: .atLeastOnce))
                    lag = max(lag, now - message.time / Self.speed)
                    sentAt.append(now)
                    next += 1
                }
                if due.isEmpty {
                    let wait = messages[next].time / Self.speed - now
                    try await Task.sleep(for: .milliseconds(max(1, Int(wait * 1000))))
                    continue
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (scanner, batch) in due {
                        guard let client = clients[scanner] else { continue }
                        group.addTask { try await client.publish(batch) }
                    }
                    try await group.waitForAll()
                }
            }
            let published = Date().timeIntervalSince(start)
            // The exits after the last sighting (10 s on the scan cycle), with margin.
            try await Task.sleep(for: .seconds(20))
            for client in clients.values { await client.shutdown() }
            for run in clientRuns { await run.value }

            // One engine, on virtual time, fed the same sightings at the times they were published.
            let single = LockedBox<Changes>([:])
            let replay = ReplaySession(profile: profile, automation: .all, regions: regions) { event in
                switch event.kind {
                case .didDetermineState(let state, let region) where state != .unknown:
                    single.withLock { Self.record(&$0, region.identifier, event.timestamp.seconds, state.rawValue) }
                case .didChangeNearestScanner(let beacon, let scanner?, _):
                    // Rooms are compared as placements: a beacon leaving its room because no scanner
                    // hears it any more is a timer's decision, most of them after the last sighting,
                    // where this side runs 30 s on and the cluster is read after 20 s.
                    single.withLock { Self.record(&$0, "room \(beacon)", event.timestamp.seconds, scanner) }
                default: break
                }
            }
            for (sighting, time) in zip(recording.sightings, sentAt) {
                var observation = sighting.observation(originMilliseconds: recording.originMilliseconds)
                observation.timestamp = Timestamp(seconds: time)
                replay.feed(observation)
            }
            replay.finish(tail: 30)
            let expected = single.withLock { $0 }

            // The cluster's decisions, from the shared log, on the replay's time axis.
            let origin = start.timeIntervalSince1970
            var actual: Changes = [:]
            for event in try await reader.events(since: nil, region: nil, type: nil, afterID: before, limit: nil) {
                let time = event.time - origin
                switch event.type {
                case "didDetermineState":
                    if let region = event.region, let state = event.state { Self.record(&actual, region, time, state) }
                case "didChangeNearestScanner":
                    guard let change = PresenceOutputs.nearestScannerChange(event.json), let scanner = change.scanner else { continue }
                    Self.record(&actual, "room \(change.beacon)", time, scanner)
                default: break
                }
            }
            // A leading "outside" is each side's start (the cluster's engines started before the replay).
            func trimmed(_ changes: Changes) -> Changes {
                changes.mapValues { list in list.first?.value == "outside" ? Array(list.dropFirst()) : list }.filter { !$0.value.isEmpty }
            }
            let (a, b) = (trimmed(expected), trimmed(actual))
            var sameOrder = 0
            var different: [String] = []
            var deltas: [Double] = []
            for key in Set(a.keys).union(b.keys).sorted() {
                let x = a[key] ?? [], y = b[key] ?? []
                guard x.map(\.value) == y.map(\.value) else {
                    different.append("\(key): one engine \(x.map { "\(String(format: "%.1f", $0.time)) \($0.value)" }.prefix(8)) vs cluster \(y.map { "\(String(format: "%.1f", $0.time)) \($0.value)" }.prefix(8))")
                    continue
                }
                sameOrder += 1
                deltas += zip(x, y).map { $1.time - $0.time }
            }
            deltas.sort()
            let regionKeys = a.keys.filter { !$0.hasPrefix("room ") }.count, roomKeys = a.keys.filter { $0.hasPrefix("room ") }.count
            func quantile(_ q: Double) -> String { deltas.isEmpty ? "-" : String(format: "%.2f", deltas[min(deltas.count - 1, Int(q * Double(deltas.count)))]) }
            print("""
                cluster-replay: \(messages.count) sightings of \(scanners.count) scanners published in \(String(format: "%.1f", published)) s \
                (recording \(String(format: "%.0f", (messages.last?.time ?? 0))) s at \(Int(Self.speed))×; worst publishing lag \(String(format: "%.2f", lag)) s); \
                one engine: \(regionKeys) regions and \(roomKeys) beacons with changes; \(sameOrder) of \(Set(a.keys).union(b.keys).count) \
                in the same order; \(deltas.count) decisions, cluster − one engine: min \(quantile(0)) s, median \(quantile(0.5)) s, \
                p95 \(quantile(0.95)) s, max \(deltas.last.map { String(format: "%.2f", $0) } ?? "-") s; different: \(different)
                """)
            #expect(regionKeys >= 10 && roomKeys >= 5, "the recording has decisions to compare")
            // Regions: exactly one engine's decisions. Rooms: a room is the scanner that hears a
            // beacon best, with a dwell; the four scanners publish through different clients and
            // nodes, so near a tie their sightings can reach the partition in another interleaving
            // than one engine's file order, and a room held for a second or two (at 10×) can be
            // skipped, or a near tie at a change resolved the other way and held by the dwell (two
            // of the recording's beacons stand near such ties: 1:8 between Room202 and Room203,
            // 14:1 between Room201, 202 and 204; in six local runs of session 50 one of them
            // differed in four, never both, so a bound of one left no margin). At most two beacons
            // may differ that way, and each must end in the same room.
            let differentRegions = different.filter { !$0.hasPrefix("room ") }
            #expect(differentRegions.isEmpty, "\(differentRegions)")
            let differentRooms = Set(a.keys).union(b.keys).filter { $0.hasPrefix("room ") && a[$0]?.map(\.value) != b[$0]?.map(\.value) }
            #expect(differentRooms.count <= 2, "\(differentRooms.count) beacons' rooms differ")
            for key in differentRooms {
                #expect(a[key]?.last?.value == b[key]?.last?.value, "\(key) ends in another room")
            }
            // Later by the delivery delay and up to one scan cycle (1.1 s) of phase; never earlier
            // by more than a cycle.
            #expect((deltas.first ?? 0) > -1.5 && (deltas.last ?? 0) < 3, "deltas \(quantile(0))…\(deltas.last ?? 0)")
        } catch {
            await stopAll()
            throw error
        }
        await stopAll()
    }

}
