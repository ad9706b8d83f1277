import Foundation
import RegionKitConcurrency
import Testing
import RegionKitTestSupport
@testable import RegionKitMQTT

/// MQTTClient against the MQTT listener of a real 3-node NATS cluster (nats-server 2.9, JetStream,
/// routes; started by the test on 127.0.0.1, stopped by PID), with `mosquitto_pub`/`mosquitto_sub`
/// as independent clients. Skipped with the reason when nats-server or the Mosquitto clients are
/// not installed (`./scripts/test.sh` installs them).
@Suite("MQTT client against a NATS cluster", .serialized, .tags(.endToEnd),
       .enabled(if: NATSCluster.isAvailableWithClients, NATSCluster.clientsSkipReason))
struct NATSClusterEndToEndTests {
    static func configuration(_ urls: [String], _ change: (inout MQTTClientConfiguration) -> Void = { _ in }) throws -> MQTTClientConfiguration {
        var configuration = try MQTTClientConfiguration(urls: urls)
        configuration.reconnectMinimumDelay = .milliseconds(50)
        configuration.reconnectMaximumDelay = .milliseconds(500)
        configuration.connectTimeout = .seconds(5)
        configuration.keepAlive = .seconds(5)
        change(&configuration)
        return configuration
    }

    static func message(_ topic: String, _ text: String, qos: MQTTQoS = .atLeastOnce) -> MQTTMessage {
        MQTTMessage(topic: topic, payload: Array(text.utf8), qos: qos, retain: false)
    }

    @Test("QoS 0 and 1 both ways between nodes: our client on one node, others on the other two; 500 pipelined QoS 1 publishes",
          .timeLimit(.minutes(3)))
    func roundTripAcrossNodes() async throws {
        let cluster = try NATSCluster(nodes: 3)
        try await cluster.start()
        defer { cluster.stop() }
        let probe = MQTTClientProbe(configuration: try Self.configuration([cluster.mqttURL(0)]))
        try await probe.client.subscribe("rk/in/#", qos: .atLeastOnce)
        probe.start()
        defer { Task { await probe.stop() } }
        // NATS 2.9 sends its internal `$JS/…`, `$MQTT/…` traffic to `#`: the client must not hand it on.
        let everything = MQTTClientProbe(configuration: try Self.configuration([cluster.mqttURL(0)]))
        try await everything.client.subscribe("#", qos: .atMostOnce)
        everything.start()
        defer { Task { await everything.stop() } }
        try await everything.client.waitUntilConnected()
        try await probe.client.waitUntilConnected()
        try await probe.client.subscribe("rk/in/#", qos: .atLeastOnce)   // connected: waits for the SUBACK

        // Another node → us: mosquitto_pub on node 2, and our own second client on node 3.
        try await Self.publish(cluster, node: 1, topic: "rk/in/one", message: "hello 1", qos: 1)
        let publisher = MQTTClientProbe(configuration: try Self.configuration([cluster.mqttURL(2)]))
        publisher.start()
        defer { Task { await publisher.stop() } }
        try await publisher.client.waitUntilConnected()
        try await publisher.client.publish(Self.message("rk/in/zero", "hello 0", qos: .atMostOnce))
        #expect(await probe.wait { probe.received.count == 2 }, "received \(probe.received.count); logs:\n\(cluster.logs)")
        #expect(Set(probe.received.map { "\($0.topic) \(String(decoding: $0.payload, as: UTF8.self)) \($0.qos)" })
                == ["rk/in/one hello 1 atLeastOnce", "rk/in/zero hello 0 atMostOnce"])

        // Us → another node: mosquitto_sub on node 2 reads our QoS 0, QoS 1 and 500 pipelined QoS 1 publishes.
        let count = 500
        let subscriber = try await Self.subscribe(cluster, node: 1, topic: "rk/out/#", count: count + 2)
        try await probe.client.publish(Self.message("rk/out/zero", "zero", qos: .atMostOnce))
        try await probe.client.publish(Self.message("rk/out/one", "one"))
        try await probe.client.publish((0..<count).map { Self.message("rk/out/many", "\($0)") })
        let got = await subscriber.waitForMessages(count + 2, timeout: 60)
        #expect(got.count == count + 2)
        // Order is checked per topic: MQTT orders a topic's messages, not two topics' (and NATS
        // delivers a QoS 0 message through core NATS, QoS 1 through JetStream: a test run saw
        // "one" before "zero"). Our client's own order shows in the 500 pipelined on one topic.
        #expect(got.filter { $0.topic == "rk/out/zero" }.map(\.payload) == ["zero"])
        #expect(got.filter { $0.topic == "rk/out/one" }.map(\.payload) == ["one"])
        #expect(got.filter { $0.topic == "rk/out/many" }.map(\.payload) == (0..<count).map { "\($0)" }, "in order, none lost")
        #expect(await everything.wait { everything.received.filter { $0.topic.hasPrefix("rk/") }.count == count + 4 },
                "`#` got \(everything.received.filter { $0.topic.hasPrefix("rk/") }.count) of \(count + 4)")
        let internalTopics = everything.received.filter { $0.topic.hasPrefix("$") }.map(\.topic)
        #expect(internalTopics.isEmpty, "`#` handed on \(internalTopics.count) `$` topics, e.g. \(internalTopics.prefix(3))")
    }

    @Test("a subscription the broker's permissions refuse (SUBACK 0x80) is asked for again on the same connection: once the permissions are reloaded it is granted, reported, and its messages arrive",
          .timeLimit(.minutes(2)))
    func refusedSubscriptionGrantedAfterReload() async throws {
        let cluster = try NATSCluster(nodes: 1)
        // Every client is `hub` (no_auth_user); `hub` may not subscribe to sensors.> (MQTT sensors/#).
        let user = { (permissions: String) in
            ["authorization { users = [ { user: hub, password: pw\(permissions) } ] }", "no_auth_user: hub"]
        }
        cluster.extraLines = user(", permissions: { subscribe: { deny: [\"sensors.>\"] } }")
        try await cluster.start()
        defer { cluster.stop() }
        let probe = MQTTClientProbe(configuration: try Self.configuration([cluster.mqttURL(0)]))
        probe.start()
        defer { Task { await probe.stop() } }
        try await probe.client.waitUntilConnected()
        await #expect(throws: MQTTError.subscriptionFailed(filter: "sensors/#")) { try await probe.client.subscribe("sensors/#", qos: .atLeastOnce) }
        // The operator fixes the permissions and reloads the broker (SIGHUP), clients stay connected.
        cluster.extraLines = user("")
        try cluster.reload(0)
        #expect(await probe.wait { probe.allEvents.contains { if case .subscriptionRestored("sensors/#") = $0 { true } else { false } } },
                "events \(probe.allEvents); logs:\n\(cluster.logs)")
        try await Self.publish(cluster, node: 0, topic: "sensors/a", message: "after", qos: 1)
        #expect(await probe.wait { probe.received.map(\.topic) == ["sensors/a"] }, "received \(probe.received)")
        #expect(probe.connectedCount == 1, "granted on the connection that was refused, not at a reconnection: \(probe.allEvents)")
    }

    @Test("a persistent session lives in the cluster: QoS 1 messages published while we are away arrive when we come back on another node",
          .timeLimit(.minutes(3)))
    func persistentSessionAcrossNodes() async throws {
        let cluster = try NATSCluster(nodes: 3)
        try await cluster.start()
        defer { cluster.stop() }
        let clientID = "regionkit-engine-persistent"
        let first = MQTTClientProbe(configuration: try Self.configuration([cluster.mqttURL(0)]) {
            $0.clientID = clientID
            $0.cleanSession = false
        })
        first.start()
        try await first.client.waitUntilConnected()
        // Connected: this waits for the SUBACK. NATS answers a QoS 1 SUBSCRIBE only once the
        // session's JetStream consumer exists and the session record names the filter; subscribing
        // before `start()` and leaving at the first CONNACK (what this test did when it was
        // intermittent) could DISCONNECT before that, leaving a session without the subscription,
        // so nothing was queued for it (0 of 20) whenever the machine was loaded.
        try await first.client.subscribe("rk/queued/+", qos: .atLeastOnce)
        #expect(first.connectedCount == 1)
        await first.stop()

        for index in 0..<20 {
            try await Self.publish(cluster, node: 1, topic: "rk/queued/\(index % 3)", message: "queued \(index)", qos: 1)
        }
        let second = MQTTClientProbe(configuration: try Self.configuration([cluster.mqttURL(2)]) {
            $0.clientID = clientID
            $0.cleanSession = false
        })
        second.start()
        defer { Task { await second.stop() } }
        try await second.client.waitUntilConnected()
        // `waitUntilConnected` returns before the `.connected` event is reported.
        #expect(await second.wait { second.connectedCount >= 1 })
        var sessionPresent: Bool?
        for case .connected(let present) in second.allEvents { sessionPresent = present }
        #expect(sessionPresent == true, "the broker kept the session")
        #expect(await second.wait(timeout: .seconds(30)) { second.received.count >= 20 },
                "received \(second.received.count); client log:\n\(second.logs.text)\nbroker logs:\n\(cluster.logs)")
        #expect(Set(second.received.map { String(decoding: $0.payload, as: UTF8.self) }) == Set((0..<20).map { "queued \($0)" }))
        #expect(second.received.allSatisfy { $0.qos == .atLeastOnce })
    }

    @Test("one node killed (the one our subscriber is on; it leads the MQTT session stream, or not): subscriber and publisher fail over to the next server of their lists; QoS 1 loses nothing, QoS 0 loses what was sent while the subscriber was away",
          .timeLimit(.minutes(4)), arguments: [NodeLoss.killSessionLeader, .killOther, .freezeOther])
    func failoverWhenANodeIsKilled(loss: NodeLoss) async throws {
        let killSessionLeader = loss == .killSessionLeader
        let cluster = try NATSCluster(nodes: 3)
        try await cluster.start()
        defer { cluster.stop() }
        // The node that leads `$MQTT_sess` (it logs "new stream leader"): the reconnect time depends
        // on it, as a session can only be loaded once the stream has a leader again. The leader is
        // the last node to log it: on a loaded machine leadership can move at start-up, so more
        // than one node may have (the test once required exactly one, and took the highest-numbered).
        func leadership(_ stream: String) -> (current: Int?, history: [Int]) {
            var elected: [(time: String, node: Int)] = []
            for node in cluster.nodes.indices {
                for line in cluster.logTail(node, lines: 10_000).split(separator: "\n") where line.contains("new stream leader for '$G > \(stream)'") {
                    // "[pid] 2026/12/02 01:05:00.123456 [INF] JetStream cluster new stream leader for …"
                    let fields = line.split(separator: " ")
                    elected.append((fields.count > 2 ? "\(fields[1]) \(fields[2])" : "", node))
                }
            }
            elected.sort { $0.time < $1.time }
            return (elected.last?.node, elected.map(\.node))
        }
        let sessions = leadership("$MQTT_sess")
        let leader = try #require(sessions.current, "no node logged that it leads $MQTT_sess:\n\(cluster.logs)")
        if sessions.history.count > 1 { print("[NATS, \(loss)] $MQTT_sess leadership moved at start-up: nodes \(sessions.history)") }
        // The frozen node leads neither the sessions nor the QoS 1 messages (`$MQTT_msgs`), so the
        // publisher keeps going while the subscriber notices: what it loses at QoS 0 is then certain.
        let messagesLeader = leadership("$MQTT_msgs").current
        let victim = switch loss {
        case .killSessionLeader: leader
        case .killOther: (leader + 1) % cluster.nodes.count
        case .freezeOther: cluster.nodes.indices.first { $0 != leader && $0 != messagesLeader } ?? (leader + 1) % cluster.nodes.count
        }
        let survivors = cluster.nodes.indices.filter { $0 != victim }
        // The engine: persistent session on the victim first, then the others.
        let probe = MQTTClientProbe(configuration: try Self.configuration(([victim] + survivors).map(cluster.mqttURL)) {
            $0.clientID = "regionkit-engine-failover"
            $0.cleanSession = false
        })
        probe.start()
        defer { Task { await probe.stop() } }
        try await probe.client.waitUntilConnected()
        try await probe.client.subscribe("rk/failover/+", qos: .atLeastOnce)   // waits for the SUBACK
        #expect(probe.client.currentServer == MQTTServer(host: "127.0.0.1", port: cluster.nodes[victim].mqttPort), "the primary first")
        // A scanner: publishes to a surviving node (then the other), a QoS 0 and a QoS 1 message every 20 ms;
        // QoS 1 is retried until its PUBACK, as a scanner's outbox would.
        let scanner = MQTTClientProbe(configuration: try Self.configuration(survivors.reversed().map(cluster.mqttURL)) {
            $0.clientID = "scanner-failover"
        })
        scanner.start()
        defer { Task { await scanner.stop() } }
        try await scanner.client.waitUntilConnected()

        let load = FailoverLoad()
        let publishing = Task { await load.publish(with: scanner.client) }
        #expect(await probe.wait { load.qos1Sent >= 20 }, "the scanner publishes before the kill")

        let killed = ContinuousClock.now
        if loss == .freezeOther { cluster.freeze(victim) } else { cluster.kill(victim) }
        #expect(await probe.wait(timeout: .seconds(60)) { probe.connectedCount >= 2 },
                "no reconnect within 60 s; client log:\n\(probe.logs.text)\nbroker logs:\n\(cluster.logs)")
        let reconnect = ContinuousClock.now - killed
        let server = probe.client.currentServer
        #expect(survivors.contains { server == MQTTServer(host: "127.0.0.1", port: cluster.nodes[$0].mqttPort) },
                "a surviving node: \(String(describing: server))")
        var sessionPresent: Bool?
        for case .connected(let present) in probe.allEvents { sessionPresent = present }
        #expect(sessionPresent == true, "the session survived the node")
        // Publish on for 3 s after the reconnect, then stop and let the QoS 1 backlog drain.
        let sentAtReconnect = load.qos1Sent
        #expect(await probe.wait(timeout: .seconds(60)) { load.qos1Sent >= sentAtReconnect + 50 }, "the scanner publishes again")
        try await Task.sleep(for: .seconds(3))
        load.stop()
        await publishing.value
        let qos1 = load.qos1Sent
        #expect(await probe.wait(timeout: .seconds(60)) { Set(probe.received.filter { $0.topic == "rk/failover/q1" }.map(\.payload)).count >= qos1 },
                "QoS 1: \(Set(probe.received.filter { $0.topic == "rk/failover/q1" }.map(\.payload)).count) distinct of \(qos1); client log:\n\(probe.logs.text)")
        let received1 = probe.received.filter { $0.topic == "rk/failover/q1" }.map { String(decoding: $0.payload, as: UTF8.self) }
        let expected1 = Set((0..<qos1).map { "\($0)" })
        #expect(Set(received1) == expected1, "QoS 1 missing: \(expected1.subtracting(received1).sorted { $0.count < $1.count || $0.count == $1.count && $0 < $1 }.prefix(20))")
        let received0 = Set(probe.received.filter { $0.topic == "rk/failover/q0" }.map { String(decoding: $0.payload, as: UTF8.self) })
        let qos0 = load.qos0Sent
        #expect(received0.isSubset(of: Set((0..<qos0).map { "\($0)" })))
        let lost0 = qos0 - received0.count
        if loss == .freezeOther {
            // The publisher's node is untouched, so it sends on through the seconds the subscriber
            // needs to notice: QoS 0 sent meanwhile is not queued (checks the scenario itself).
            // After a kill the publisher may be stalled too (when the dead node led `$MQTT_msgs`),
            // so there the loss is only reported.
            #expect(load.scannerReconnects(scanner) == 0, "the publisher's node and its streams were untouched")
            #expect(lost0 > 0, "QoS 0 sent while the subscriber was away is not queued")
        }
        print("NATS node loss (nats-server 2.9.10, \(loss == .freezeOther ? "SIGSTOP" : "SIGKILL") of \(cluster.nodes[victim].name) of 3, \(killSessionLeader ? "the" : "not the") $MQTT_sess leader, loaded 2-core machine): subscriber back on \(server.map(\.url) ?? "?") after \(reconnect); "
              + "scanner reconnects \(load.scannerReconnects(scanner)), QoS 1 publishes refused and retried \(load.retries), longest QoS 1 publish \(load.longestPublish); "
              + "QoS 1: \(qos1) sent, \(Set(received1).count) received (\(received1.count - Set(received1).count) redelivered), 0 lost; "
              + "QoS 0: \(qos0) sent, \(received0.count) received, \(lost0) lost")
    }

    // MARK: Partitioning by beacon identity

    static let beaconUUID = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    @Test("ESPresense sightings partitioned by beacon with {{partition(3,1)}}: every sighting of a beacon reaches the one MQTT subscriber of its partition, from whichever node and scanner",
          .timeLimit(.minutes(3)))
    func partitionsByBeaconIdentity() async throws {
        let partitions = 3
        let cluster = try NATSCluster(nodes: 3, mappings: [
            "espresense.devices.*.*": "regionkit.part.{{partition(\(partitions),1)}}.espresense.devices.{{wildcard(1)}}.{{wildcard(2)}}",
        ])
        try await cluster.start()
        defer { cluster.stop() }
        // One engine per partition, each on its own node.
        var engines: [MQTTClientProbe] = []
        for partition in 0..<partitions {
            let engine = MQTTClientProbe(configuration: try Self.configuration([cluster.mqttURL(partition)]))
            try await engine.client.subscribe("regionkit/part/\(partition)/espresense/devices/+/+", qos: .atLeastOnce)
            engine.start()
            try await engine.client.waitUntilConnected()
            engines.append(engine)
        }
        let raw = MQTTClientProbe(configuration: try Self.configuration([cluster.mqttURL(1)]))
        try await raw.client.subscribe("espresense/devices/+/+", qos: .atLeastOnce)
        raw.start()
        try await raw.client.waitUntilConnected()
        let running = engines
        defer { Task { for engine in running { await engine.stop() }; await raw.stop() } }
        // SUBACKs are back; give the routes a moment to carry the interest to the other nodes.
        try await Task.sleep(for: .milliseconds(500))

        // 30 beacons heard by 3 scanners; each scanner publishes to its own node (mosquitto_pub -l, QoS 1).
        let beacons = (1...30).map { "iBeacon:\(Self.beaconUUID)-1-\($0)" }
        let rooms = ["kitchen", "hall", "office"]
        for (node, room) in rooms.enumerated() {
            for beacon in beacons {
                try await Self.publish(cluster, node: node, topic: "espresense/devices/\(beacon)/\(room)",
                                       message: #"{"id":"\#(beacon)","rssi":-60}"#, qos: 1)
            }
        }
        let total = beacons.count * rooms.count
        let arrived = await engines[0].wait(timeout: .seconds(60)) { engines.map(\.received.count).reduce(0, +) >= total }
        #expect(arrived, "received \(engines.map(\.received.count)) of \(total); logs:\n\(cluster.logs)")

        var partitionOfBeacon: [String: Set<Int>] = [:]
        var deliveries: [String: Int] = [:]
        for (partition, engine) in engines.enumerated() {
            for message in engine.received {
                let levels = message.topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
                // regionkit / part / <p> / espresense / devices / <id> / <room>
                #expect(levels.count == 7 && levels[2] == "\(partition)", "\(message.topic)")
                guard levels.count == 7 else { continue }
                partitionOfBeacon[levels[5], default: []].insert(partition)
                deliveries["\(levels[5])/\(levels[6])", default: 0] += 1
            }
        }
        #expect(deliveries.count == total, "every sighting arrived")
        #expect(deliveries.values.allSatisfy { $0 == 1 }, "each exactly once")
        #expect(partitionOfBeacon.count == beacons.count)
        #expect(partitionOfBeacon.values.allSatisfy { $0.count == 1 }, "every sighting of one beacon in one partition, whatever the scanner and node")
        for beacon in beacons {
            #expect(partitionOfBeacon[beacon] == [NATSPartition.partition(of: beacon, count: partitions)],
                    "the broker's partition of \(beacon) is FNV-1a(token) mod N")
        }
        let sizes = (0..<partitions).map { partition in partitionOfBeacon.values.filter { $0 == [partition] }.count }
        #expect(sizes.allSatisfy { $0 > 0 }, "every partition has beacons: \(sizes)")
        #expect(raw.received.isEmpty, "the mapping replaces the subject: the original topic gets nothing (\(raw.received.count))")
        print("NATS partitioning: \(total) sightings of \(beacons.count) beacons over \(partitions) partitions, beacons per partition \(sizes)")
    }

    // MARK: Helpers

    /// How the subscriber's node is lost: killed (the kernel closes its sockets: the client sees
    /// the end at once) while leading the MQTT session stream or not, or frozen with SIGSTOP (no
    /// FIN: only the keepalive's missing PINGRESP tells the client, within 1.5 keepalives).
    enum NodeLoss: String, CustomTestStringConvertible, Sendable {
        case killSessionLeader = "SIGKILL, leads $MQTT_sess"
        case killOther = "SIGKILL, does not lead $MQTT_sess"
        case freezeOther = "SIGSTOP, leads neither $MQTT_sess nor $MQTT_msgs"
        var testDescription: String { rawValue }
    }

    /// A scanner's traffic during a node kill: QoS 0 and QoS 1 messages numbered from 0, one of
    /// each every 20 ms; a QoS 1 message is retried (after the next connection) until its PUBACK.
    final class FailoverLoad: Sendable {
        private struct Counts {
            var qos0 = 0
            var qos1 = 0
            var retries = 0
            var longest: Duration = .zero
            var stopped = false
        }
        private let counts = LockedBox(Counts())
        var qos0Sent: Int { counts.withLock { $0.qos0 } }
        var qos1Sent: Int { counts.withLock { $0.qos1 } }
        var retries: Int { counts.withLock { $0.retries } }
        var longestPublish: Duration { counts.withLock { $0.longest } }
        func stop() { counts.withLock { $0.stopped = true } }
        func scannerReconnects(_ scanner: MQTTClientProbe) -> Int { max(0, scanner.connectedCount - 1) }

        func publish(with client: MQTTClient) async {
            while !counts.withLock({ $0.stopped }) {
                let (zero, one) = counts.withLock { ($0.qos0, $0.qos1) }
                // QoS 0: counted as sent once written to a live connection.
                if (try? await client.publish(NATSClusterEndToEndTests.message("rk/failover/q0", "\(zero)", qos: .atMostOnce))) != nil {
                    counts.withLock { $0.qos0 += 1 }
                }
                let started = ContinuousClock.now
                while true {
                    do {
                        try await client.publish(NATSClusterEndToEndTests.message("rk/failover/q1", "\(one)"))
                        break
                    } catch {
                        counts.withLock { $0.retries += 1 }
                        // Bounded: a cluster that never comes back ends the load 60 s after `stop()`.
                        if counts.withLock({ $0.stopped }) && ContinuousClock.now - started > .seconds(60) { return }
                        while !client.isConnected && !(counts.withLock { $0.stopped } && ContinuousClock.now - started > .seconds(60)) {
                            try? await Task.sleep(for: .milliseconds(20))
                        }
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                }
                let took = ContinuousClock.now - started
                counts.withLock { $0.qos1 += 1; $0.longest = max($0.longest, took) }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// One message with `mosquitto_pub` to node `node`.
    static func publish(_ cluster: NATSCluster, node: Int, topic: String, message: String, qos: Int) async throws {
        guard let pub = MosquittoBroker.mosquittoPub else { throw TestFailure("mosquitto_pub not found") }
        let result = try await Tool.run(pub, ["-h", "127.0.0.1", "-p", "\(cluster.nodes[node].mqttPort)", "-V", "mqttv311",
                                              "-q", "\(qos)", "-t", topic, "-m", message], timeout: .seconds(30))
        guard result.status == 0 else { throw TestFailure("mosquitto_pub to \(cluster.nodes[node].name) exited \(result.status): \(result.stderr)") }
    }

    /// `mosquitto_sub` on node `node`, returned once subscribed.
    static func subscribe(_ cluster: NATSCluster, node: Int, topic: String, count: Int) async throws -> MosquittoBroker.Subscriber {
        guard let sub = MosquittoBroker.mosquittoSub else { throw TestFailure("mosquitto_sub not found") }
        let arguments = ["-h", "127.0.0.1", "-p", "\(cluster.nodes[node].mqttPort)", "-V", "mqttv311", "-t", topic, "-q", "1",
                         "-C", "\(count)", "-W", "90", "-d", "-F", "MSG %t|%q|%r|%p"]
        let subscriber = if let stdbuf = MosquittoBroker.tool("stdbuf") {
            MosquittoBroker.Subscriber(executable: stdbuf, arguments: ["-oL", sub] + arguments)
        } else {
            MosquittoBroker.Subscriber(executable: sub, arguments: arguments)
        }
        try subscriber.start()
        guard await subscriber.waitFor(prefix: "Subscribed (mid", timeout: 15) else {
            subscriber.terminate()
            throw TestFailure("mosquitto_sub \(topic) on \(cluster.nodes[node].name) did not subscribe: \(subscriber.output)")
        }
        return subscriber
    }
}
