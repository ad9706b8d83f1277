import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A private cluster of `nats-server` nodes for tests (Debian: `apt-get install -y nats-server`,
/// 2.9): every node on 127.0.0.1 with free ports for clients, routes and MQTT, clustered over
/// routes, JetStream on (each node's store in its own directory of one temporary directory), the
/// MQTT listener on (it needs JetStream); started by the test and stopped by PID. Each node logs to
/// its own file in that directory, read by ``logTail(_:lines:)`` for failure messages; set
/// `REGIONKIT_KEEP_TEST_DIRS=1` to keep the directory after the test.
///
/// ```swift
/// let cluster = try NATSCluster(nodes: 3, mappings: ["espresense.devices.*.*":
///     "part.{{partition(4,1)}}.espresense.devices.{{wildcard(1)}}.{{wildcard(2)}}"])
/// try await cluster.start()
/// defer { cluster.stop() }
/// let configuration = try MQTTClientConfiguration(url: cluster.mqttURL(0))
/// cluster.kill(1)                         // SIGKILL one node
/// try await cluster.restart(1)            // same ports, same JetStream store
/// ```
public final class NATSCluster: @unchecked Sendable {
    /// One node's ports and files.
    public struct Node: Sendable {
        public var name: String
        public var clientPort: Int
        public var routePort: Int
        public var mqttPort: Int
        public var storeDirectory: String
        public var configFile: String
        public var logFile: String
    }

    public static let natsServer = MosquittoBroker.tool("nats-server")
    /// Whether `nats-server` is installed (the condition for `.enabled(if:)`).
    public static let isAvailable = natsServer != nil
    public static let skipReason: Comment = "nats-server not found: apt-get install -y nats-server (./scripts/test.sh does): SKIPPED, not passed"
    /// `nats-server` and the Mosquitto command-line clients (independent publishers and subscribers).
    public static let isAvailableWithClients = isAvailable && MosquittoBroker.mosquittoPub != nil && MosquittoBroker.mosquittoSub != nil
    public static let clientsSkipReason: Comment = "nats-server or mosquitto_pub/mosquitto_sub not found: apt-get install -y nats-server mosquitto-clients (./scripts/test.sh does): SKIPPED, not passed"

    public let directory: String
    public let nodes: [Node]
    /// Subject mappings of the (global) account, source → destination, written into every node's config.
    public let mappings: [String: String]
    /// How long JetStream waits for an MQTT QoS 1 acknowledgement before redelivering (`mqtt.ack_wait`).
    public let mqttAckWait: Duration
    /// More lines for every node's config file (authorization, say): set before ``start(timeout:)``,
    /// or change and ``reload(_:)``.
    public var extraLines: [String] {
        get { lock.withLock { _extraLines } }
        set { lock.withLock { _extraLines = newValue } }
    }
    private let lock = NSLock()
    private var processes: [Int: Process] = [:]
    private var _extraLines: [String] = []

    /// Reserves a directory and free ports for `nodes` nodes (kept across restarts).
    public init(nodes count: Int = 3, mappings: [String: String] = [:], mqttAckWait: Duration = .seconds(5)) throws {
        guard count >= 1 else { throw TestFailure("a NATS cluster needs at least one node") }
        let template = TestScratch.directory.appendingPathComponent("regionkit-nats-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw TestFailure("mkdtemp \(template) failed: errno \(errno)") }
        directory = String(cString: made)
        // Loopback.freePort never hands out a port twice while the process lives (nor does another
        // test process meanwhile): no two nodes get the same port, and no one else gets theirs.
        func port() throws -> Int { Int(try Loopback.freePort()) }
        var nodes: [Node] = []
        for index in 0..<count {
            let name = "n\(index + 1)"
            nodes.append(Node(name: name, clientPort: try port(), routePort: try port(), mqttPort: try port(),
                              storeDirectory: "\(directory)/\(name)-jetstream", configFile: "\(directory)/\(name).conf",
                              logFile: "\(directory)/\(name).log"))
        }
        self.nodes = nodes
        self.mappings = mappings
        self.mqttAckWait = mqttAckWait
    }

    deinit {
        stop()
        if ProcessInfo.processInfo.environment["REGIONKIT_KEEP_TEST_DIRS"] != "1" {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// `mqtt://127.0.0.1:<port>` of node `index`.
    public func mqttURL(_ index: Int) -> String { "mqtt://127.0.0.1:\(nodes[index].mqttPort)" }
    /// Every node's MQTT URL, in node order.
    public var mqttURLs: [String] { nodes.indices.map(mqttURL) }
    /// The PID of node `index` while it runs.
    public func pid(_ index: Int) -> Int32? {
        lock.withLock { processes[index].flatMap { $0.isRunning ? $0.processIdentifier : nil } }
    }

    /// How many copies JetStream keeps of the MQTT streams and consumers: every node, at most 3.
    public var mqttReplicas: Int { min(3, nodes.count) }

    /// The config file of one node: client, route and MQTT listeners on 127.0.0.1, routes to every
    /// other node, JetStream in its own directory, the account's subject mappings, and the MQTT
    /// streams' and consumers' replica count written out.
    ///
    /// The replica count must be explicit: left to itself, nats-server 2.9.10 creates the MQTT
    /// streams (`$MQTT_sess`, `$MQTT_msgs`, `$MQTT_rmsgs`) and consumers with as many replicas as
    /// the node has configured routes (logged as "Creating MQTT streams/consumers with replicas 2"
    /// on every node of a 3-node cluster whose route lists name the two others). An R2 stream has
    /// no quorum once one of its two peers dies, so killing a node stalled every MQTT session and
    /// QoS 1 publish for good ("JetStream system temporarily unavailable (10008)", "has NO quorum,
    /// stalled"): that was the node-kill failure, not the client.
    public func configuration(of index: Int) -> String {
        let node = nodes[index]
        let replicas = nodes.count > 1 ? ", stream_replicas: \(mqttReplicas), consumer_replicas: \(mqttReplicas)" : ""
        let routes = nodes.indices.filter { $0 != index }.map { "nats://127.0.0.1:\(nodes[$0].routePort)" }
        var lines = [
            "server_name: \(node.name)",
            "listen: 127.0.0.1:\(node.clientPort)",
            "jetstream { store_dir: \"\(node.storeDirectory)\" }",
            "mqtt { listen: 127.0.0.1:\(node.mqttPort), ack_wait: \"\(Int(mqttAckWait.components.seconds))s\"\(replicas) }",
        ]
        if nodes.count > 1 {
            lines.append("cluster { name: regionkit, listen: 127.0.0.1:\(node.routePort), routes: [\(routes.joined(separator: ", "))] }")
        }
        if !mappings.isEmpty {
            lines.append("mappings = {")
            for (source, destination) in mappings.sorted(by: { $0.key < $1.key }) {
                lines.append("  \"\(source)\": \"\(destination)\"")
            }
            lines.append("}")
        }
        return (lines + extraLines).joined(separator: "\n") + "\n"
    }

    /// Writes node `index`'s config again (with the current ``extraLines``) and sends it SIGHUP:
    /// nats-server reloads it in place, its clients stay connected.
    ///
    /// ```swift
    /// cluster.extraLines = ["authorization { users = [{user: hub, password: pw}] }", "no_auth_user: hub"]
    /// try cluster.reload(0)
    /// ```
    public func reload(_ index: Int) throws {
        try configuration(of: index).write(toFile: nodes[index].configFile, atomically: true, encoding: .utf8)
        guard let pid = pid(index) else { throw TestFailure("node \(nodes[index].name) is not running") }
        Glibc.kill(pid, SIGHUP)
    }

    /// Writes the configs, starts every node and waits until each accepts an MQTT QoS 1 publish
    /// (JetStream has a leader and the MQTT streams exist), at most `timeout`.
    public func start(timeout: Duration = .seconds(60)) async throws {
        for index in nodes.indices {
            try configuration(of: index).write(toFile: nodes[index].configFile, atomically: true, encoding: .utf8)
            try launch(index)
        }
        for index in nodes.indices { try await waitUntilReady(index, timeout: timeout) }
    }

    private func launch(_ index: Int) throws {
        guard let natsServer = Self.natsServer else { throw TestFailure("nats-server not found") }
        let node = nodes[index]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: natsServer)
        process.arguments = ["-c", node.configFile, "-l", node.logFile]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        lock.withLock { processes[index] = process }
    }

    /// Waits until node `index` listens for MQTT and acknowledges a QoS 1 publish from
    /// `mosquitto_pub` (when installed; otherwise until its log shows a JetStream leader).
    public func waitUntilReady(_ index: Int, timeout: Duration = .seconds(60)) async throws {
        let node = nodes[index]
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard pid(index) != nil else {
                throw TestFailure("nats-server \(node.name) exited during start; log:\n\(logTail(index))")
            }
            if MosquittoBroker.isListening(port: node.mqttPort) {
                if let pub = MosquittoBroker.mosquittoPub {
                    let result = try await Tool.run(pub, ["-h", "127.0.0.1", "-p", "\(node.mqttPort)", "-V", "mqttv311", "-q", "1",
                                                         "-i", "regionkit-probe-\(node.name)", "-t", "regionkit-probe/ready", "-m", "ready"],
                                                    timeout: .seconds(10))
                    if result.status == 0 { return }
                } else if logTail(index, lines: 1000).contains("JetStream cluster new metadata leader")
                            || logTail(index, lines: 1000).contains("Self is new JetStream cluster metadata leader") {
                    return
                }
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw TestFailure("nats-server \(node.name) not ready within \(timeout); log:\n\(logTail(index))")
    }

    /// SIGKILL node `index` (no clean shutdown) and wait until it is gone.
    public func kill(_ index: Int) {
        guard let process = lock.withLock({ processes.removeValue(forKey: index) }) else { return }
        if process.isRunning { process.killAndWait() }
    }

    /// SIGSTOP node `index`: it keeps its sockets open but answers nothing (a hung machine or a
    /// network cut, where no FIN or RST tells the clients); `stop` resumes it before terminating it.
    public func freeze(_ index: Int) {
        guard let pid = pid(index) else { return }
        Glibc.kill(pid, SIGSTOP)
    }

    /// SIGTERM node `index`, SIGKILL after 5 s.
    public func stop(_ index: Int) {
        guard let process = lock.withLock({ processes.removeValue(forKey: index) }) else { return }
        process.stop(signal: SIGTERM, grace: .seconds(5))
    }

    /// Stops every node. Safe to call when stopped.
    public func stop() {
        for index in nodes.indices { stop(index) }
    }

    /// Starts node `index` again (same ports, config and JetStream store) and waits until it is ready.
    public func restart(_ index: Int, timeout: Duration = .seconds(60)) async throws {
        stop(index)
        try launch(index)
        try await waitUntilReady(index, timeout: timeout)
    }

    /// The last `lines` lines of node `index`'s log.
    public func logTail(_ index: Int, lines: Int = 40) -> String {
        let text = (try? String(contentsOfFile: nodes[index].logFile, encoding: .utf8)) ?? "(no log at \(nodes[index].logFile))"
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    /// Every node's log tail, labelled: for a failure message.
    public var logs: String {
        nodes.indices.map { "--- \(nodes[$0].name) (\(nodes[$0].logFile))\n" + logTail($0) }.joined(separator: "\n")
    }
}
