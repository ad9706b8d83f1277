import Foundation
import RegionKitConcurrency
import Testing
import RegionKitMQTT
import RegionKitPostgres
import RegionKitStore
import RegionKitTestSupport

/// `regionkit run` in cluster mode, end to end: three real engines (the binary), a 3-node NATS
/// cluster partitioning ESPresense sightings by beacon id, and a private PostgreSQL, all on loopback
/// and stopped by PID; scanners publish as ESPresense nodes do, each to its own broker node.
@Suite("regionkit run in cluster mode: 3 engines, 3 NATS nodes, PostgreSQL", .serialized, .tags(.endToEnd, .heavy),
       .enabled(if: NATSCluster.isAvailable && PostgresServer.isAvailable,
                "nats-server or PostgreSQL not found: apt-get install -y nats-server postgresql (./scripts/test.sh does): SKIPPED, not passed"))
struct ClusterDaemonTests {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static let partitions = 16
    static let beacons = 24
    static let rooms = ["kitchen", "hall", "office"]

    static func token(_ minor: Int) -> String { "iBeacon:\(uuid)-1-\(minor)" }
    /// An earlier run's distance of a beacon no scanner hears in this run (and no region
    /// matches), retained before the engines start: the partition it hashes to clears it.
    static let leftoverDistanceTopic = "regionkit/e2e/beacons/\(uuid)-1-999/distance"

    /// One engine's configuration: every engine gets the same regions; its broker list starts at
    /// its own node.
    static func configuration(member: String, urls: [String], hooksFile: String? = nil, probes: Int = 0, leaseSeconds: Int = 3) -> String {
        var lines = [
            "profile: responsive",
            "regions:",
            "  - {identifier: site, uuid: \(uuid.uppercased())}",
            "  - {identifier: floor-1, uuid: \(uuid.uppercased()), major: 1}",
        ]
        for minor in 1...beacons { lines.append("  - {identifier: b\(minor), uuid: \(uuid.uppercased()), major: 1, minor: \(minor)}") }
        // Probe regions: one beacon each (major 2), heard once (see Probes).
        for index in 0..<probes { lines.append("  - {identifier: p\(index), uuid: \(uuid.uppercased()), major: 2, minor: \(Probes.minor(index))}") }
        lines += [
            "sources: [{mqtt: {format: espresense}}]",
            "mqtt: {urls: [\(urls.map { "\"\($0)\"" }.joined(separator: ", "))], site: e2e, keepAlive: 5}",
            "cluster: {partitions: \(partitions), member: \(member), leaseSeconds: \(leaseSeconds)}",
            "homeAssistant: {discovery: true}",
        ]
        if let hooksFile {
            // One line per exit, by whichever member holds the outputs lease.
            lines.append("hooks: {onExit: ['echo \"$REGIONKIT_EVENT_ID $REGIONKIT_REGION\" >> \(hooksFile)']}")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The scanners: one MQTT client per room, each on its own broker node, publishing every
    /// present beacon of the room every `period` at QoS 1 (retried by the client's caller until
    /// acknowledged, as a scanner's outbox would).
    final class Fleet: Sendable {
        let clients: [MQTTClient]
        let present = LockedBox<Set<Int>>([])
        let lastPublished = LockedBox<[Int: Date]>([:])
        let published = LockedBox(0)
        let task = LockedBox<Task<Void, Never>?>(nil)
        let runs = LockedBox<[Task<Void, Never>]>([])

        /// Room `k` publishes to node `k` first and fails over to the others.
        init(urls: [String]) throws {
            clients = try urls.indices.map { room in
                var configuration = try MQTTClientConfiguration(urls: urls.indices.map { urls[(room + $0) % urls.count] })
                configuration.reconnectMinimumDelay = .milliseconds(50)
                configuration.reconnectMaximumDelay = .milliseconds(500)
                configuration.keepAlive = .seconds(5)
                return MQTTClient(configuration: configuration, onMessage: { _ in })
            }
        }

        func start(period: Duration) async throws {
            let clients = self.clients
            runs.withLock { runs in runs = clients.map { client in Task { await client.run() } } }
            for client in clients { try await client.waitUntilConnected() }
            task.withLock {
                $0 = Task {
                    while !Task.isCancelled {
                        let beacons = self.present.withLock { $0 }.sorted()
                        await withTaskGroup(of: Void.self) { group in
                            for (room, client) in clients.enumerated() {
                                let mine = beacons.filter { $0 % clients.count == room }
                                guard !mine.isEmpty else { continue }
                                let messages = mine.map { minor in
                                    MQTTMessage(topic: "espresense/devices/\(ClusterDaemonTests.token(minor))/\(ClusterDaemonTests.rooms[room])",
                                                payload: Array(#"{"id":"\#(ClusterDaemonTests.token(minor))","rssi":-62,"rssi@1m":-59,"distance":1.4}"#.utf8),
                                                qos: .atLeastOnce, retain: false)
                                }
                                group.addTask {
                                    do {
                                        try await client.publish(messages)
                                        let now = Date()
                                        self.lastPublished.withLock { last in for minor in mine { last[minor] = now } }
                                        self.published.withLock { $0 += messages.count }
                                    } catch {}
                                }
                            }
                        }
                        try? await Task.sleep(for: period)
                    }
                }
            }
        }

        func stop() async {
            if let task = task.withLock({ $0.take() }) {
                task.cancel()
                await task.value
            }
            for client in clients { await client.shutdown() }
            for run in runs.withLock({ $0 }) { await run.value }
        }
    }

    /// Loss accounting through the whole cluster: probe `k` is one sighting of a beacon heard
    /// nowhere else (major 2, minor `1000 + k`), alone in its region `p<k>`. It reached an engine
    /// if and only if that region was ever logged inside. Even probes are QoS 1 (re-published
    /// until acknowledged, as a scanner's outbox would), odd ones QoS 0 (published once, as
    /// ESPresense does); probe `k` goes out through scanner client `k % 3`, each on its own node
    /// first.
    final class Probes: Sendable {
        struct Sent: Sendable {
            var at: Date
            var acknowledged: Bool
            var client: Int
        }
        let clients: [MQTTClient]
        let runs: [Task<Void, Never>]
        /// Probe index → when it was (last) written and whether the broker acknowledged it (QoS 1);
        /// QoS 0 probes the client could not write (not connected) are absent.
        let sent = LockedBox<[Int: Sent]>([:])
        let retries = LockedBox<[Task<Void, Never>]>([])

        static func minor(_ index: Int) -> Int { 1000 + index }
        static func token(_ index: Int) -> String { "iBeacon:\(ClusterDaemonTests.uuid)-2-\(minor(index))" }
        static func isQoS1(_ index: Int) -> Bool { index % 2 == 0 }

        init(urls: [String]) async throws {
            clients = try urls.indices.map { node in
                var configuration = try MQTTClientConfiguration(urls: urls.indices.map { urls[(node + $0) % urls.count] })
                configuration.clientID = "rk-probe-\(node)"
                configuration.reconnectMinimumDelay = .milliseconds(50)
                configuration.reconnectMaximumDelay = .milliseconds(500)
                configuration.keepAlive = .seconds(5)
                return MQTTClient(configuration: configuration, onMessage: { _ in })
            }
            runs = clients.map { client in Task { await client.run() } }
            for client in clients { try await client.waitUntilConnected() }
        }

        /// Sends probe `index` (QoS 1: retried every 200 ms for up to 30 s until acknowledged).
        func send(_ index: Int) {
            let node = index % clients.count
            let client = clients[node]
            let message = MQTTMessage(topic: "espresense/devices/\(Self.token(index))/\(ClusterDaemonTests.rooms[node])",
                                      payload: Array(#"{"id":"\#(Self.token(index))","rssi":-62,"rssi@1m":-59,"distance":1.4}"#.utf8),
                                      qos: Self.isQoS1(index) ? .atLeastOnce : .atMostOnce, retain: false)
            guard Self.isQoS1(index) else {
                Task {
                    do {
                        try await client.publish(message)
                        self.sent.withLock { $0[index] = Sent(at: Date(), acknowledged: false, client: node) }
                    } catch {}
                }
                return
            }
            let retry = Task {
                let deadline = Date().addingTimeInterval(30)
                while Date() < deadline && !Task.isCancelled {
                    self.sent.withLock { $0[index] = Sent(at: Date(), acknowledged: false, client: node) }
                    do {
                        try await client.publish(message)
                        self.sent.withLock { $0[index]?.acknowledged = true }
                        return
                    } catch {
                        try? await Task.sleep(for: .milliseconds(200))
                    }
                }
            }
            retries.withLock { $0.append(retry) }
        }

        func stop() async {
            for retry in retries.withLock({ $0 }) { await retry.value }
            for client in clients { await client.shutdown() }
            for run in runs { await run.value }
        }
    }


    /// What each NATS node holds as retained on `topics` (a fresh client per node connects within
    /// 5 s, subscribes to the exact topic and waits up to 3 s), the beacon's logged nearest-scanner
    /// changes, and the outputs' cursor: for a failure message.
    static func retainedDiagnosis(_ rig: Rig, minor: Int, topics: [String], listeningFrom: Int64, subscribedAt: Date) async -> String {
        var lines: [String] = []
        for topic in topics {
            for node in rig.nats.nodes.indices {
                let got = LockedBox<[String]>([])
                guard let configuration = try? MQTTClientConfiguration(urls: [rig.nats.mqttURL(node)]) else { continue }
                let client = MQTTClient(configuration: configuration, onMessage: { message in
                    if message.topic == topic { got.withLock { $0.append(String(decoding: message.payload.prefix(60), as: UTF8.self)) } }
                })
                let running = Task { await client.run() }
                // Bounded: a diagnosis must not hang the failing test on a node that is down.
                if await waitUntil(timeout: 5, { client.isConnected }) {
                    do {
                        try await client.subscribe(topic, qos: .atLeastOnce)
                        _ = await waitUntil(timeout: 3) { !got.withLock { $0 }.isEmpty }
                        lines.append("\n  node \(node) retains \(topic): \(got.withLock { $0 }.first ?? "nothing")")
                    } catch {
                        lines.append("\n  node \(node): subscription failed: \(error)")
                    }
                } else {
                    lines.append("\n  node \(node): not connected within 5 s")
                }
                await client.shutdown()
                running.cancel()
            }
        }
        let beacon = "\(uuid.uppercased()):1:\(minor)"
        let changes = (try? await rig.store.events(since: nil, region: nil, type: "didChangeNearestScanner", afterID: nil, limit: nil)) ?? []
        // When each change was logged, against the listener's subscription: one logged before it
        // reaches the listener only as a retained message (the broker's copy on its node).
        let mine = changes.filter { $0.json.uppercased().contains(beacon) }
            .map { "\($0.id) at \(String(format: "%+.2f", $0.time - subscribedAt.timeIntervalSince1970)) s" }
        let cursor = (try? await rig.store.outputCursor("mqtt:e2e", createAtEnd: false)).map { "\($0)" } ?? "?"
        let holders = ((try? await rig.store.events(since: nil, region: nil, type: "outputsTaken", afterID: nil, limit: nil)) ?? [])
            .map { "\($0.reason ?? "?") at \(String(format: "%+.2f", $0.time - subscribedAt.timeIntervalSince1970)) s" }
        lines.append("\n  logged nearest-scanner changes of \(beacon) (times from the listener's subscription, log id \(listeningFrom) then): \(mine); outputs cursor \(cursor); outputs taken: \(holders)")
        return lines.joined()
    }

    static func crossings(_ events: [StoredEvent], _ region: String) -> [String] {
        events.filter { $0.region == region && ($0.type == "didEnterRegion" || $0.type == "didExitRegion") }.map(\.type)
    }

    /// PostgreSQL, a 3-node NATS cluster partitioning the ESPresense topics, `count` engines and the
    /// scanners, all started; stopped by the caller's defer blocks (see the tests).
    struct Rig {
        let server: PostgresServer
        let nats: NATSCluster
        let store: PostgresRegionStore
        let members: [String]
        let engines: [Daemon]
        let fleet: Fleet
        /// The log's last id once every region was inside (what the tests' "no crossing" checks
        /// start from: under load a region may first be determined outside, then enter).
        var settledEventID: Int64 = 0
        static let regions = ["site", "floor-1"] + (1...ClusterDaemonTests.beacons).map { "b\($0)" }

        /// Starts everything; every engine's leases spread and every region inside before it returns.
        static func start(engines count: Int, hooksFile: String? = nil, probes: Int = 0, leaseSeconds: Int = 3) async throws -> Rig {
            let server = try PostgresServer()
            try await server.start()
            try await server.createDatabase("cluster")
            let nats = try NATSCluster(nodes: 3, mappings: [
                "espresense.devices.*.*": "regionkit.part.{{partition(\(ClusterDaemonTests.partitions),1)}}.espresense.devices.{{wildcard(1)}}.{{wildcard(2)}}",
            ])
            try await nats.start()
            // What an earlier run left on the broker (replicated to every node before the engines
            // connect: a NATS cluster copies retained messages between its nodes asynchronously).
            let seeder = MQTTClient(configuration: try MQTTClientConfiguration(url: nats.mqttURL(0)), onMessage: { _ in })
            let seeding = Task { await seeder.run() }
            try await seeder.waitUntilConnected()
            try await seeder.publish(MQTTMessage(topic: ClusterDaemonTests.leftoverDistanceTopic, payload: Array("4.2".utf8), qos: .atLeastOnce, retain: true))
            await seeder.shutdown()
            await seeding.value
            try await Task.sleep(for: .seconds(2))
            let url = "postgres://\(server.user)@127.0.0.1:\(server.port)/cluster"
            let store = try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: "cluster",
                                                      operationTimeout: .seconds(3))
            let members = (0..<count).map { "engine-\($0)" }
            var engines: [Daemon] = []
            for (index, member) in members.enumerated() {
                let urls = (0..<3).map { nats.mqttURL((index + $0) % 3) }
                let config = try DaemonTests.writeConfig(ClusterDaemonTests.configuration(member: member, urls: urls, hooksFile: hooksFile, probes: probes,
                                                                                        leaseSeconds: leaseSeconds))
                engines.append(try Daemon(config: config, store: url, logLevel: "notice"))
            }
            let fleet = try Fleet(urls: nats.mqttURLs)
            return Rig(server: server, nats: nats, store: store, members: members, engines: engines, fleet: fleet)
        }

        /// Each engine's log in brief (a CI log shows only part of a long failure message): whether
        /// it runs, how often its partitions' broker connections were lost and back, and its last
        /// 30 other lines without the timestamp, each cut to 240 characters.
        var logs: String {
            zip(members, engines).map { member, engine in
                let lines = engine.stderr.split(separator: "\n")
                let routine = lines.filter { $0.contains("broker connection lost") || $0.contains("broker connection back") }
                let others = lines.filter { !($0.contains("broker connection lost") || $0.contains("broker connection back")) }
                    .suffix(30).map { line in String(line.drop { $0 != " " }.dropFirst().prefix(240)) }
                return "== \(member) (\(engine.process.isRunning ? "running" : "exited \(engine.process.terminationStatus)")): "
                    + "\(routine.count) broker connection lost/back lines; last lines:\n" + others.joined(separator: "\n")
                    + (engine.process.isRunning ? "" : "\nits end:\n" + engine.stderrForFailure)
            }.joined(separator: "\n")
        }

        /// Waits until every partition is held by a live lease and every member holds some.
        func waitUntilSpread(timeout: Double = 60) async throws -> Bool {
            try await waitUntil(timeout: timeout) {
                let leases = try await store.leases()
                let owners = Dictionary(grouping: leases.filter { $0.expiresIn > 0 }, by: { $0.owner ?? "" })
                let fair = ClusterDaemonTests.partitions / members.count
                return leases.count == ClusterDaemonTests.partitions && owners.count == members.count && !owners.keys.contains("")
                    && owners.values.allSatisfy { $0.count >= fair - 1 } && leases.allSatisfy { $0.expiresIn > 0 }
            }
        }

        func waitUntilAllInside(timeout: Double = 60) async throws -> Bool {
            try await waitUntil(timeout: timeout) {
                let states = try await store.states()
                return Rig.regions.allSatisfy { states[$0]?.state == .inside }
            }
        }

        func events() async throws -> [StoredEvent] {
            try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil)
        }

        func stop() async {
            await fleet.stop()
            for engine in engines where engine.process.isRunning { kill(engine.process.processIdentifier, SIGKILL) }
            await store.shutdown()
            nats.stop()
            server.stop()
        }
    }

    @Test("Partitions spread over 3 engines; kill -9 one: its partitions move to the others within a bounded time, no region flaps, no event is lost or doubled; departures still exit once; SIGTERM hands everything back",
          .timeLimit(.minutes(6)))
    func failoverAndHandOver() async throws {
        let hooksFile = TestScratch.directory.appendingPathComponent("rk-cluster-hooks-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: hooksFile) }
        // The outputs' listener subscribes before any sighting, so it hears every room and state
        // as published. A subscriber that arrives later gets them from the broker's retained
        // copies, which a NATS cluster replicates between its nodes asynchronously: a message
        // retained moments before may not be delivered yet on another node (seen: a room retained
        // 2.4 s before the subscription, on all three nodes later, never delivered to it). The
        // retained copies are checked at the end, long after they were published.
        let listener = LockedBox<RigListener?>(nil)
        defer { if let running = listener.withLock({ $0 }) { running.task.cancel() } }
        try await Self.withRig(engines: 3, hooksFile: hooksFile, beforeSightings: { rig in
            let started = try await RigListener(rig)
            listener.withLock { $0 = started }
        }) { rig in
            try await failover(rig, listener: try #require(listener.withLock { $0 }), hooksFile: hooksFile)
        }
    }

    /// The test's MQTT client on the cluster's outputs: every message on `regionkit/e2e/#` and
    /// `homeassistant/#`, from its subscription on.
    final class RigListener: Sendable {
        let client: MQTTClient
        let task: Task<Void, Never>
        let heard = LockedBox<[(topic: String, text: String)]>([])
        /// When it subscribed, and the log's last event id then (events are not retained: it can
        /// only expect those logged after).
        let subscribedAt: Date
        let listeningFrom: Int64

        init(_ rig: Rig) async throws {
            var configuration = try MQTTClientConfiguration(urls: [rig.nats.mqttURL(1), rig.nats.mqttURL(2)])
            configuration.reconnectMinimumDelay = .milliseconds(50)
            let heard = heard
            client = MQTTClient(configuration: configuration, onMessage: { message in
                heard.withLock { $0.append((message.topic, String(decoding: message.payload, as: UTF8.self))) }
            })
            let client = client
            task = Task { await client.run() }
            try await client.waitUntilConnected()
            try await client.subscribe("regionkit/e2e/#", qos: .atLeastOnce)
            try await client.subscribe("homeassistant/#", qos: .atLeastOnce)
            subscribedAt = Date()
            listeningFrom = try await rig.store.lastEventID()
        }
    }

    /// What a subscriber arriving now gets from `node`'s retained copies of `filter` within 5 s
    /// (topic → payload), once every topic of `expected` is among them or the time is up.
    static func retained(_ rig: Rig, node: Int, filter: String, expected: Set<String>) async throws -> [String: String] {
        let got = LockedBox<[String: String]>([:])
        let client = MQTTClient(configuration: try MQTTClientConfiguration(urls: [rig.nats.mqttURL(node)]), onMessage: { message in
            if message.retain { got.withLock { $0[message.topic] = String(decoding: message.payload, as: UTF8.self) } }
        })
        let running = Task { await client.run() }
        defer { running.cancel() }
        if await waitUntil(timeout: 5, { client.isConnected }) {
            try await client.subscribe(filter, qos: .atLeastOnce)
            _ = await waitUntil(timeout: 5) { expected.isSubset(of: Set(got.withLock { $0 }.keys)) }
        }
        await client.shutdown()
        return got.withLock { $0 }
    }

    /// Starts a rig of `count` engines, waits until the leases are spread, then (every beacon
    /// present) until every region is inside, runs `body`, and stops everything.
    static func withRig(engines count: Int, hooksFile: String? = nil, probes: Int = 0, leaseSeconds: Int = 3,
                        beforeSightings: (Rig) async throws -> Void = { _ in },
                        _ body: (Rig) async throws -> Void) async throws {
        var rig = try await Rig.start(engines: count, hooksFile: hooksFile, probes: probes, leaseSeconds: leaseSeconds)
        do {
            let spread = try await rig.waitUntilSpread()
            let spreadLeases = try await rig.store.leases().map { "\($0.partition):\($0.owner ?? "-")" }
            #expect(spread, "leases: \(spreadLeases); engine logs:\n\(rig.logs)")
            try await beforeSightings(rig)
            rig.fleet.present.withLock { $0 = Set(1...Self.beacons) }
            try await rig.fleet.start(period: .milliseconds(250))
            let allInside = try await rig.waitUntilAllInside()
            let states = try await rig.store.states()
            #expect(allInside, "not inside: \(Rig.regions.filter { states[$0]?.state != .inside }); logs:\n\(rig.logs)")
            rig.settledEventID = try await rig.store.lastEventID()
            if spread && allInside { try await body(rig) }
        } catch {
            await rig.stop()
            throw error
        }
        await rig.stop()
    }

    func failover(_ rig: Rig, listener: RigListener, hooksFile: String) async throws {
        let (store, members, engines, fleet) = (rig.store, rig.members, rig.engines, rig.fleet)
        let regions = Rig.regions
        // The events output: whichever member holds the outputs lease publishes the shared log.
        let heard = listener.heard
        let (subscribedAt, listeningFrom) = (listener.subscribedAt, listener.listeningFrom)
        // kill -9 the engine holding the most partitions.
        let leases = try await store.leases()
        let held = Dictionary(grouping: leases, by: { $0.owner ?? "" }).mapValues { $0.map(\.partition) }
        let victim = try #require(members.max { (held[$0]?.count ?? 0) < (held[$1]?.count ?? 0) })
        let victimIndex = try #require(members.firstIndex(of: victim))
        let moved = Set(held[victim] ?? [])
        let beforeKill = try await store.lastEventID()
        let killedAt = Date()
        kill(engines[victimIndex].process.processIdentifier, SIGKILL)
        let survivors = members.filter { $0 != victim }
        let tookOver = try await waitUntil(timeout: 30) {
            try await store.leases().filter { moved.contains($0.partition) }.allSatisfy { lease in
                lease.expiresIn > 0 && survivors.contains(lease.owner ?? "")
            }
        }
        let failover = Date().timeIntervalSince(killedAt)
        let afterLeases = try await store.leases().map { "\($0.partition):\($0.owner ?? "-")" }
        #expect(tookOver, "partitions \(moved.sorted()) not taken over: \(afterLeases)")
        let taken = try await store.events(since: nil, region: nil, type: "partitionTaken", afterID: beforeKill, limit: nil)
        let lastTaken = taken.map(\.time).max().map { $0 - killedAt.timeIntervalSince1970 }
        // Bounded by the lease (3 s) plus a round (1 s), with slack for this loaded 2-core machine.
        #expect(failover < 12, "failover took \(failover) s")
        print("cluster-e2e: killed \(victim) holding \(moved.count) partitions; leases moved in \(String(format: "%.2f", failover)) s (last partitionTaken logged \(lastTaken.map { String(format: "%.2f", $0) } ?? "?") s after the kill)")

        // The move does not make regions flap: 8 more seconds of sightings, no exit anywhere.
        try await Task.sleep(for: .seconds(8))
        var events = try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil)
        var settled = events.filter { $0.id > rig.settledEventID }
        for region in regions {
            #expect(Self.crossings(settled, region).isEmpty, "\(region) crossed: \(Self.crossings(settled, region))")
            let determined = settled.filter { $0.region == region && $0.type == "didDetermineState" }.compactMap(\.state)
            #expect(determined.allSatisfy { $0 == "inside" }, "\(region) determined \(determined)")
        }
        #expect(try await store.states().filter { regions.contains($0.key) }.allSatisfy { $0.value.state == .inside })

        // Departures: 8 beacons stop (among them some of the moved partitions' beacons): each exits once.
        let leaving = Array(1...8)
        let stoppedAt = Date()
        fleet.present.withLock { $0.subtract(leaving) }
        let exited = try await waitUntil(timeout: 60) {
            let events = try await store.events(since: nil, region: nil, type: "didExitRegion", afterID: nil, limit: nil)
            return leaving.allSatisfy { minor in events.contains { $0.region == "b\(minor)" } }
        }
        let exits = try await store.events(since: nil, region: nil, type: "didExitRegion", afterID: nil, limit: nil).map { $0.region ?? "-" }
        #expect(exited, "exits: \(exits)")
        try await Task.sleep(for: .seconds(2))
        events = try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil)
        settled = events.filter { $0.id > rig.settledEventID }
        let last = fleet.lastPublished.withLock { $0 }
        var delays: [Double] = []
        for minor in leaving {
            #expect(Self.crossings(settled, "b\(minor)") == ["didExitRegion"])
            if let exit = events.first(where: { $0.region == "b\(minor)" && $0.type == "didExitRegion" }), let heard = last[minor] {
                delays.append(exit.time - heard.timeIntervalSince1970)
            }
        }
        for minor in 9...Self.beacons { #expect(Self.crossings(settled, "b\(minor)").isEmpty, "b\(minor) crossed") }
        #expect(Self.crossings(settled, "site").isEmpty && Self.crossings(settled, "floor-1").isEmpty, "16 beacons still present")
        let movedBeacons = leaving.filter { moved.contains(NATSPartition.partition(of: Self.token($0), count: Self.partitions)) }
        delays.sort()
        print("cluster-e2e: \(leaving.count) departures (\(movedBeacons.count) in moved partitions) exited \(delays.map { String(format: "%.1f", $0) }) s after their last sighting; stop→last exit \(String(format: "%.1f", (events.filter { $0.type == "didExitRegion" }.map(\.time).max() ?? 0) - stoppedAt.timeIntervalSince1970)) s; \(fleet.published.withLock { $0 }) sightings published")

        // The hooks: one member at a time runs them (the outputs lease); every exit's hook delivered,
        // once, even if the killed engine was the one running them.
        let exitIDs = Set(events.filter { $0.type == "didExitRegion" }.map(\.id))
        let delivered = try await waitUntil(timeout: 30) {
            Set(try await store.deliveries(status: .delivered).map(\.eventID)).isSuperset(of: exitIDs)
        }
        let lines = ((try? String(contentsOfFile: hooksFile, encoding: .utf8)) ?? "").split(separator: "\n")
        let hookedIDs = lines.compactMap { Int64($0.split(separator: " ").first ?? "") }
        let deliveries = try await store.deliveries(status: nil).map { "\($0.eventID):\($0.status)" }
        #expect(delivered, "deliveries: \(deliveries)")
        #expect(Set(hookedIDs) == exitIDs, "hook lines \(lines) vs exits \(exitIDs.sorted())")
        #expect(hookedIDs.count == Set(hookedIDs).count, "a hook ran twice: \(lines)")
        let holders = events.filter { $0.type == "outputsTaken" }.compactMap(\.reason)
        #expect(!holders.isEmpty && holders.allSatisfy { holder in members.contains { holder.hasSuffix($0) } }, "outputs: \(holders)")
        print("cluster-e2e: hooks of \(exitIDs.count) exits delivered once each; outputs held by \(holders)")
        if holders.first?.hasSuffix(victim) == true {
            #expect(holders.count >= 2, "the killed engine ran the hooks; another must have taken them over: \(holders)")
        }

        // Every region event logged since the listener subscribed reached the events topic (at
        // least once), and the states it heard last say what the store says.
        let regionEventIDs = Set(events.filter { $0.id > listeningFrom && ["didDetermineState", "didEnterRegion", "didExitRegion"].contains($0.type) }.map(\.id))
        #expect(regionEventIDs.count >= 16, "the 8 departures' exits and states are among them")
        func publishedIDs() -> [Int64] {
            heard.withLock { $0 }.filter { $0.topic == "regionkit/e2e/events" }.compactMap { message in
                (try? JSONSerialization.jsonObject(with: Data(message.text.utf8)) as? [String: Any])?["id"].flatMap { ($0 as? NSNumber)?.int64Value }
            }
        }
        let allPublished = await waitUntil(timeout: 30) { Set(publishedIDs()).isSuperset(of: regionEventIDs) }
        let published = publishedIDs()
        #expect(allPublished, "not published: \(regionEventIDs.subtracting(published).sorted())")
        let lastState = Dictionary(heard.withLock { $0 }.filter { $0.topic.hasSuffix("/state") }.map { ($0.topic, $0.text) }, uniquingKeysWith: { $1 })
        #expect(lastState["regionkit/e2e/regions/b1/state"] == "outside" && lastState["regionkit/e2e/regions/b20/state"] == "inside",
                "states heard last: b1 \(lastState["regionkit/e2e/regions/b1/state"] ?? "-"), b20 \(lastState["regionkit/e2e/regions/b20/state"] ?? "-")")
        print("cluster-e2e: events output published \(Set(published).count) events (\(published.count - Set(published).count) twice, QoS 1 at least once) of \(regionEventIDs.count) region events")
        // Home Assistant discovery: every region's binary_sensor on its retained state topic (from
        // whichever member held the outputs), and the site online after the kill. Waited for, as
        // the events are: read at once, a round still under way in a loaded CI run left 7 of 26
        // unheard (session 56).
        func configTopic(_ region: String) -> String { "homeassistant/binary_sensor/regionkit_e2e/\(region)/config" }
        _ = await waitUntil(timeout: 30) {
            let topics = Set(heard.withLock { $0 }.map(\.topic))
            return regions.allSatisfy { topics.contains(configTopic($0)) }
        }
        let configs = heard.withLock { $0 }.filter { $0.topic.hasPrefix("homeassistant/binary_sensor/regionkit_e2e/") }
        // What Home Assistant needs is the broker's retained copy, which it reads whenever it
        // (re)subscribes. A config published on one NATS node just before the listener subscribed
        // on another can miss the listener both ways: too late for the subscription's interest to
        // reach the publishing node, too early for the listener's node to have it among its
        // retained copies yet (session 63: 1 of 26 unheard in a CI run). Those are read back
        // from node 0's retained copies; a config lost for good is in neither and still fails.
        let unheard = regions.filter { region in !configs.contains { $0.topic == configTopic(region) } }
        let retainedConfigs = unheard.isEmpty ? [:]
            : try await Self.retained(rig, node: 0, filter: "homeassistant/binary_sensor/regionkit_e2e/#", expected: Set(unheard.map(configTopic)))
        // A few at most: the live path stays tested (a regression that stopped live delivery would leave them all unheard).
        #expect(unheard.count <= 3, "\(unheard.count) of \(regions.count) discovery configs not heard live: \(unheard)")
        if !unheard.isEmpty { print("cluster-e2e: discovery configs of \(unheard) not heard live; read from node 0's retained copies: \(unheard.filter { retainedConfigs[configTopic($0)] != nil })") }
        for region in regions {
            let config = configs.last { $0.topic == configTopic(region) }?.text ?? retainedConfigs[configTopic(region)]
            #expect(config?.contains(#""state_topic":"regionkit/e2e/regions/\#(region)/state""#) == true, "\(region): \(config ?? "no config, heard or retained")")
        }
        // Each beacon's room, decided in its partition and logged (didChangeNearestScanner): retained
        // on its room topic, with a device_tracker; its distance published by its partition's engine
        // (ranged while inside), with the distance sensor.
        for minor in 9...Self.beacons {
            let key = "\(Self.uuid)-1-\(minor)"
            let roomTopic = "regionkit/e2e/beacons/\(key)/room"
            let room = heard.withLock { $0 }.last { $0.topic == roomTopic }?.text
            let trackerTopic = "homeassistant/device_tracker/regionkit_e2e/ibeacon_\(key)/config"
            let tracker = heard.withLock { $0 }.last { $0.topic == trackerTopic }?.text
            let roomHeard = room == Self.rooms[minor % Self.rooms.count]
            // The tracker reads its zones (in_zones) from its own topic, published after the room.
            let trackerHeard = tracker?.contains(#""json_attributes_topic":"regionkit/e2e/beacons/\#(key)/tracker""#) == true
            let zonesTopic = "regionkit/e2e/beacons/\(key)/tracker"
            let zones = heard.withLock { $0 }.last { $0.topic == zonesTopic }?.text
            let zonesHeard = zones == #"{"in_zones":["zone.home"],"room":"\#(Self.rooms[minor % Self.rooms.count])"}"#
            // When the listener missed one, say whether the broker holds it (a fresh subscription to
            // the exact topic on each node) and what the log says: a lost publish, or one logged
            // before the listener subscribed.
            let diagnosis = roomHeard && trackerHeard && zonesHeard ? "" : await Self.retainedDiagnosis(rig, minor: minor, topics: [roomTopic, trackerTopic, zonesTopic],
                                                                                             listeningFrom: listeningFrom, subscribedAt: subscribedAt)
            #expect(roomHeard, "b\(minor): room \(room ?? "none")\(diagnosis)")
            #expect(trackerHeard, "b\(minor) tracker: \(tracker ?? "none")\(diagnosis)")
            #expect(zonesHeard, "b\(minor) tracker zones: \(zones ?? "none")\(diagnosis)")
        }
        // The announced beacons are recorded in the shared store, for the next outputs holder.
        let announced = Set(try await rig.store.announcedBeacons("mqtt:e2e"))
        let expectedAnnounced = Set((9...Self.beacons).map { "\(Self.uuid.uppercased()):1:\($0)" })
        #expect(announced.isSuperset(of: expectedAnnounced), "not recorded: \(expectedAnnounced.subtracting(announced).sorted())")
        // And each beacon's room, written by its partition with the room event, for the partition's next holder.
        let storedRooms = try await rig.store.beaconRooms()
        let wrongRooms = (9...Self.beacons).filter { storedRooms["\(Self.uuid.uppercased()):1:\($0)"] != Self.rooms[$0 % Self.rooms.count] }
        #expect(wrongRooms.isEmpty, "stored rooms differ for minors \(wrongRooms): \(storedRooms)")
        // Every sighting reached the partition its id hashes to, by the worker's own hash
        // (PartitionRouteCheck against the real nats-server mapping: none said otherwise).
        let misrouted = rig.engines.filter { $0.stderr.contains("a sighting of another partition") }
        #expect(misrouted.isEmpty, "\(rig.logs)")
        // The earlier run's distance: cleared by its partition's holder 30 s after it took the
        // partition (by the scan at the takeover; again by the new holder when the partition
        // moved with the kill before that).
        let leftoverCleared = await waitUntil(timeout: 45) {
            heard.withLock { $0 }.contains { $0.topic == Self.leftoverDistanceTopic && $0.text == "None" }
        }
        #expect(leftoverCleared, "the earlier run's distance: \(heard.withLock { $0 }.filter { $0.topic == Self.leftoverDistanceTopic }.map(\.text))")
        // A subscriber arriving now (Home Assistant restarting) gets the rooms and the states from
        // the broker's retained copies, whichever member published them.
        var expectedRetained = ["regionkit/e2e/regions/b1/state": "outside", "regionkit/e2e/regions/b20/state": "inside"]
        for minor in 9...Self.beacons { expectedRetained["regionkit/e2e/beacons/\(Self.uuid)-1-\(minor)/room"] = Self.rooms[minor % Self.rooms.count] }
        // (Kept retained as None: discovery is on.)
        expectedRetained[Self.leftoverDistanceTopic] = "None"
        let retained = try await Self.retained(rig, node: 0, filter: "regionkit/e2e/#", expected: Set(expectedRetained.keys))
        let wrong = expectedRetained.filter { retained[$0.key] != $0.value }.map { "\($0.key): \(retained[$0.key] ?? "nothing") (expected \($0.value))" }
        #expect(wrong.isEmpty, "retained for a late subscriber on node 0: \(wrong.sorted())")
        for minor in 9...Self.beacons {
            let key = "\(Self.uuid)-1-\(minor)"
            let distance = heard.withLock { $0 }.last { $0.topic == "regionkit/e2e/beacons/\(key)/distance" }.flatMap { Double($0.text) }
            #expect(distance.map { $0 > 0 && $0 < 10 } == true, "b\(minor): distance \(distance.map { "\($0)" } ?? "none")")
            // Heard throughout, through the kill and the takeover (the new holder's scan finds its
            // distance retained): never cleared, not even for a moment.
            let cleared = heard.withLock { $0 }.filter { $0.topic == "regionkit/e2e/beacons/\(key)/distance" && Double($0.text) == nil }
            #expect(cleared.isEmpty, "b\(minor): distance cleared while heard: \(cleared.map(\.text))")
            #expect(heard.withLock { $0 }.contains { $0.topic == "homeassistant/sensor/regionkit_e2e/ibeacon_\(key)_distance/config" }, "b\(minor): distance sensor")
        }
        let statuses = heard.withLock { $0 }.filter { $0.topic == "regionkit/e2e/status" }.map(\.text)
        #expect(statuses.last == "online", "status: \(statuses)")
        print("cluster-e2e: Home Assistant: \(configs.count) region configurations heard; \(statuses.count) status messages, \(statuses.filter { $0 == "offline" }.count) offline, last \(statuses.last ?? "-")")

        // SIGTERM: the survivors hand everything back and stop cleanly.
        await fleet.stop()
        for member in survivors {
            let index = try #require(members.firstIndex(of: member))
            #expect(await engines[index].signal(SIGTERM, timeout: 20) == 0, "\(member): \(engines[index].stderrForFailure)")
        }
        // The last holder said offline when it stopped.
        let offline = await waitUntil(timeout: 10) { heard.withLock { $0 }.last { $0.topic == "regionkit/e2e/status" }?.text == "offline" }
        #expect(offline, "status after the stop: \(heard.withLock { $0 }.filter { $0.topic == "regionkit/e2e/status" }.map(\.text))")
        await listener.client.shutdown()
        let released = try await store.leases()
        #expect(released.allSatisfy { $0.expiresIn <= 0 }, "released: \(released.map { "\($0.partition):\($0.owner ?? "-") \($0.expiresIn)" })")
        events = try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil)
        let stopReasons: Set<String> = Set(events.filter { $0.type == "processStopped" }.compactMap(\.reason).map { (reason: String) -> String in String(reason.prefix(15)) })
        let survivorNames: Set<String> = Set(survivors.map { (survivor) -> String in String("member \(survivor)".prefix(15)) })
        #expect(stopReasons == survivorNames)
        #expect(events.map(\.id) == events.map(\.id).sorted() && Set(events.map(\.id)).count == events.count)
        // Every member's acknowledged events (printed with --json) are in the log, the killed one's included.
        let stored = Set(events.map(\.id))
        for (index, engine) in engines.enumerated() {
            let missing = engine.acknowledged.filter { !stored.contains($0) }
            #expect(missing.isEmpty, "\(members[index]) acknowledged ids not stored: \(missing)")
        }
    }

    @Test("PostgreSQL stopped for 6 s (every lease expires) and started again: the engines stay up, take the partitions back, beacons that left meanwhile exit once, the others never flap",
          .timeLimit(.minutes(6)))
    func postgresRestart() async throws {
        try await Self.withRig(engines: 2) { rig in
            let leaving = Array(1...4)
            rig.fleet.present.withLock { $0.subtract(leaving) }
            rig.server.stop()
            try await Task.sleep(for: .seconds(6))
            try await rig.server.start()
            let restartedAt = Date()
            for (index, engine) in rig.engines.enumerated() {
                #expect(engine.process.isRunning, "\(rig.members[index]) exited: \(engine.stderrForFailure)")
            }
            let exited = try await waitUntil(timeout: 60) {
                let events = try await rig.store.events(since: nil, region: nil, type: "didExitRegion", afterID: nil, limit: nil)
                return leaving.allSatisfy { minor in events.contains { $0.region == "b\(minor)" } }
            }
            let spreadAgain = try await rig.waitUntilSpread(timeout: 30)
            let leasesNow = try await rig.store.leases().map { "\($0.partition):\($0.owner ?? "-")\($0.expiresIn > 0 ? "" : " (expired)")" }
            #expect(spreadAgain, "leases not spread again after the restart: \(leasesNow); logs:\n\(rig.logs)")
            try await Task.sleep(for: .seconds(4))
            let events = try await rig.events()
            let settled = events.filter { $0.id > rig.settledEventID }
            #expect(exited, "exits: \(events.filter { $0.type == "didExitRegion" }.map { $0.region ?? "-" }); logs:\n\(rig.logs)")
            for minor in leaving { #expect(Self.crossings(settled, "b\(minor)") == ["didExitRegion"], "b\(minor): \(Self.crossings(settled, "b\(minor)"))") }
            for region in Rig.regions where !leaving.contains(where: { "b\($0)" == region }) {
                #expect(Self.crossings(settled, region).isEmpty, "\(region) crossed: \(Self.crossings(settled, region))")
            }
            let stored = Set(events.map(\.id))
            for (index, engine) in rig.engines.enumerated() {
                let missing = engine.acknowledged.filter { !stored.contains($0) }
                #expect(missing.isEmpty, "\(rig.members[index]) acknowledged ids not stored: \(missing)")
            }
            let lastExit = events.filter { $0.type == "didExitRegion" }.map(\.time).max() ?? 0
            // After the outage each engine takes back its own partitions (no engine takes them all
            // to hand half back): 16 takes, none released.
            let moves = events.filter { ["partitionTaken", "partitionReleased", "partitionLost"].contains($0.type) && $0.time > restartedAt.timeIntervalSince1970 - 1 }
                .map { "\(String(format: "%.1f", $0.time - restartedAt.timeIntervalSince1970)) \($0.reason ?? $0.type)" }
            let takenAfter = moves.filter { $0.contains("taken by") }.count, releasedAfter = moves.filter { $0.contains("released by") }.count
            #expect(takenAfter <= 16 && releasedAfter == 0, "after the outage: \(moves)")
            print("cluster-e2e: PostgreSQL down 6 s; departures during the outage exited \(String(format: "%.1f", lastExit - restartedAt.timeIntervalSince1970)) s after it was back; \(events.filter { $0.type == "partitionTaken" }.count) partitionTaken in all; around the outage: \(moves)")
        }
    }

    @Test("A broker node killed (one that leads neither the MQTT session nor the message stream): partitions and scanners on it move to the other nodes; no region flaps, all stay inside; every acknowledged QoS 1 probe reaches an engine, QoS 0 losses counted",
          .timeLimit(.minutes(6)))
    func brokerNodeKilled() async throws {
        let probeCount = 240
        // The 3 s lease of the failover tests. Session 14 ran this one on 5 s because a renewal
        // waited behind the contribution writes (their lease check held the row FOR SHARE) and
        // on two loaded cores the leases lapsed; the writers now hold FOR KEY SHARE, which a
        // renewal does not wait for (PostgresClusterStoreTests.renewalDoesNotWaitForWriters).
        try await Self.withRig(engines: 3, probes: probeCount) { rig in
            func leaders(_ stream: String) -> [Int] {
                rig.nats.nodes.indices.filter { rig.nats.logTail($0, lines: 10_000).contains("new stream leader for '$G > \(stream)'") }
            }
            let busy = Set(leaders("$MQTT_sess") + leaders("$MQTT_msgs"))
            let victim = rig.nats.nodes.indices.first { !busy.contains($0) } ?? 2
            // Which engines' partitions had their connection on the victim is in their logs below.
            let probes = try await Probes(urls: rig.nats.mqttURLs)
            let before = try await rig.store.lastEventID()
            // Probes every 50 ms: 3 s before the kill, 9 s after it.
            let killIndex = 60
            var killedAt = Date()
            for index in 0..<probeCount {
                if index == killIndex {
                    rig.nats.kill(victim)
                    killedAt = Date()
                }
                probes.send(index)
                try await Task.sleep(for: .milliseconds(50))
            }
            try await Task.sleep(for: .seconds(Double(max(0, 15 - Date().timeIntervalSince(killedAt)))))
            let events = try await rig.events().filter { $0.id > rig.settledEventID }
            let crossed = Rig.regions.filter { !Self.crossings(events, $0).isEmpty }
            for region in crossed {
                let partition = NATSPartition.partition(of: Self.token(Int(region.dropFirst()) ?? 0), count: Self.partitions)
                #expect(Bool(false), "\(region) (partition \(partition)) crossed after node \(victim) was killed: \(Self.crossings(events, region))")
            }
            if !crossed.isEmpty {
                let moves = events.filter { $0.reason?.contains("partition") == true || $0.type.hasPrefix("partition") }
                    .map { "\(String(format: "%.1f", $0.time - killedAt.timeIntervalSince1970)) \($0.type) \($0.reason ?? "")" }
                let exits = events.filter { $0.type == "didExitRegion" }.map { "\(String(format: "%.1f", $0.time - killedAt.timeIntervalSince1970)) \($0.region ?? "-")" }
                Issue.record("exits \(exits); partition events after the settle: \(moves); logs:\n\(rig.logs)")
            }
            #expect(try await rig.store.states().filter { Rig.regions.contains($0.key) }.allSatisfy { $0.value.state == .inside })
            for (index, engine) in rig.engines.enumerated() { #expect(engine.process.isRunning, "\(rig.members[index]) exited") }
            // Every partition set aside on a lost connection resumes (under load a partition may
            // reconnect more than once while the cluster settles).
            func counts() -> (suspended: [Int], resumed: [Int]) {
                (rig.engines.map { $0.stderr.components(separatedBy: "broker connection lost").count - 1 },
                 rig.engines.map { $0.stderr.components(separatedBy: "broker connection back").count - 1 })
            }
            _ = await waitUntil(timeout: 30) { counts().suspended == counts().resumed }
            let (suspensions, resumptions) = counts()
            print("cluster-e2e: NATS node \(victim) killed (session leader \(leaders("$MQTT_sess")), messages leader \(leaders("$MQTT_msgs"))); partitions suspended \(suspensions), resumed \(resumptions) per engine; \(events.filter { $0.id > before }.count) events in the 15 s after the kill")
            #expect(suspensions.reduce(0, +) >= 1, "no partition's connection was on the killed node?")
            #expect(suspensions == resumptions, "every suspended partition resumed")

            // Probe accounting: a probe arrived when its region was logged inside.
            let sent = probes.sent.withLock { $0 }
            let acknowledged = Set(sent.filter { $0.value.acknowledged }.map(\.key))
            func arrived() async throws -> Set<Int> {
                let inside = try await rig.store.events(since: nil, region: nil, type: "didDetermineState", afterID: before, limit: nil)
                    .filter { $0.state == "inside" }.compactMap(\.region)
                return Set(inside.compactMap { $0.hasPrefix("p") ? Int($0.dropFirst()) : nil })
            }
            _ = try await waitUntil(timeout: 45) { try await arrived().isSuperset(of: acknowledged) }
            await probes.stop()
            let reached = try await arrived()
            let qos1 = (0..<probeCount).filter(Probes.isQoS1)
            let qos0 = (0..<probeCount).filter { !Probes.isQoS1($0) }
            let lostQoS1 = acknowledged.subtracting(reached).sorted()
            #expect(lostQoS1.isEmpty, "acknowledged QoS 1 probes that reached no engine: \(lostQoS1) (sent \(lostQoS1.map { index in String(format: "%.2f", (sent[index]?.at.timeIntervalSince(killedAt) ?? .nan)) }) s after the kill); logs:\n\(rig.logs)")
            #expect(acknowledged.count == qos1.count, "QoS 1 probes never acknowledged in 30 s: \(Set(qos1).subtracting(acknowledged).sorted())")
            // QoS 0, split before / after the kill and by the scanner's node.
            func describe(_ indices: [Int]) -> String {
                let written = indices.filter { sent[$0] != nil }
                let got = written.filter { reached.contains($0) }
                return "\(indices.count) offered, \(written.count) written, \(got.count) reached, \(written.count - got.count) lost"
            }
            let qos0Before = qos0.filter { $0 < killIndex }, qos0After = qos0.filter { $0 >= killIndex }
            print("cluster-e2e: probes through node \(victim)'s kill: QoS 1 \(qos1.count) offered, \(acknowledged.count) acknowledged, \(acknowledged.intersection(reached).count) reached, \(lostQoS1.count) lost; QoS 0 before the kill \(describe(qos0Before)); after \(describe(qos0After)); after, by scanner node: \((0..<3).map { node in "node \(node): " + describe(qos0After.filter { $0 % 3 == node }) }.joined(separator: "; "))")
            // QoS 0 is counted, not required: a message in flight through the killed node is lost
            // (under CI load also some published up to a second before the kill, printed above as
            // "before the kill"). Most must arrive, or the counting itself is broken.
            let reachedQoS0 = qos0.filter { reached.contains($0) }.count
            #expect(reachedQoS0 * 2 >= qos0.count, "only \(reachedQoS0) of \(qos0.count) QoS 0 probes arrived")
        }
    }
}
