import Foundation
import RegionKitConcurrency
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A private Mosquitto broker for tests (Debian: `apt-get install -y mosquitto mosquitto-clients`,
/// plus `openssl` for TLS): a generated config file in a temporary directory, a listener on
/// 127.0.0.1 and a free port, `persistence false`; started and stopped by PID. Self-contained (no
/// dependency on any test suite) so that other test targets can use it.
///
/// ```swift
/// let broker = try MosquittoBroker()
/// try broker.start(.init(users: ["hub": "secret"], allowAnonymous: false, tls: true))
/// defer { broker.stop() }
/// var configuration = try MQTTClientConfiguration(url: broker.url)
/// configuration.caFile = broker.caFile
/// let subscriber = try broker.subscribe(topic: "regionkit/#", count: 1, username: "hub", password: "secret")
/// ```
public final class MosquittoBroker: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// Users written to a password file with `mosquitto_passwd -b`.
        public var users: [String: String] = [:]
        public var allowAnonymous = true
        /// A TLS listener with a CA and a server certificate (SAN 127.0.0.1 and localhost) made by `openssl`.
        public var tls = false
        /// Keep sessions and queued messages on disk (autosaved every second), so a persistent
        /// subscriber's session survives a broker killed with SIGKILL and restarted.
        public var persistence = false
        /// More lines for the config file.
        public var extraLines: [String] = []

        public init(users: [String: String] = [:], allowAnonymous: Bool = true, tls: Bool = false, persistence: Bool = false, extraLines: [String] = []) {
            self.users = users
            self.allowAnonymous = allowAnonymous
            self.tls = tls
            self.persistence = persistence
            self.extraLines = extraLines
        }
    }

    public enum Failure: Error, CustomStringConvertible {
        case missingTool(String)
        case command(String, status: Int32, output: String)
        case notListening(port: Int, log: String)

        public var description: String {
            switch self {
            case .missingTool(let tool): "\(tool) not found"
            case .command(let command, let status, let output): "\(command) exited with \(status): \(output)"
            case .notListening(let port, let log): "mosquitto did not listen on port \(port); log:\n\(log)"
            }
        }
    }

    // MARK: Tools

    /// Finds an executable on PATH or in the sbin directories (mosquitto installs to /usr/sbin).
    public static func tool(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin", "/sbin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    public static let mosquitto = tool("mosquitto")
    public static let mosquittoSub = tool("mosquitto_sub")
    public static let mosquittoPub = tool("mosquitto_pub")
    public static let mosquittoPasswd = tool("mosquitto_passwd")
    public static let openssl = tool("openssl")

    /// Whether the broker and its command-line clients are installed (the condition for `.enabled(if:)`).
    public static let isAvailable = mosquitto != nil && mosquittoSub != nil && mosquittoPub != nil && mosquittoPasswd != nil
    public static let skipReason: Comment = "mosquitto, mosquitto_sub/pub or mosquitto_passwd not found: apt-get install -y mosquitto mosquitto-clients (./scripts/test.sh does)"
    public static let isTLSAvailable = isAvailable && openssl != nil
    public static let tlsSkipReason: Comment = "mosquitto or openssl not found: apt-get install -y mosquitto mosquitto-clients openssl"

    /// A TCP port on 127.0.0.1 that was free a moment ago (``Loopback/freePort()``).
    public static func freePort() -> Int? { (try? Loopback.freePort()).map(Int.init) }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func isListening(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard let port = UInt16(exactly: port) else { return false }
        return Loopback.withAddress(port: port) { connect(fd, $0, $1) == 0 }
    }

    /// Runs a command to completion; throws unless it exits 0. Returns its output (stdout + stderr).
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = 30) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        process.killAndWait()
        let output = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw Failure.command(([executable] + arguments).joined(separator: " "), status: process.terminationStatus, output: output)
        }
        return output
    }

    // MARK: Broker

    public let directory: String
    public let port: Int
    public private(set) var configuration = Configuration()
    private let lock = NSLock()
    private var process: Process?
    /// The `mosquitto_sub` processes `subscribe` started: ended by ``stop()`` (a subscriber whose
    /// broker is gone retries for ever, whatever its `-W`, and its reader keeps it alive).
    private var subscribers: [Subscriber] = []

    public var configFile: String { directory + "/mosquitto.conf" }
    public var logFile: String { directory + "/mosquitto.log" }
    /// The CA certificate (PEM) that signed the TLS listener's certificate.
    public var caFile: String { directory + "/ca.crt" }
    public var url: String { "\(configuration.tls ? "mqtts" : "mqtt")://127.0.0.1:\(port)" }
    /// The broker's PID while it runs.
    public var pid: Int32? { lock.withLock { process?.isRunning == true ? process?.processIdentifier : nil } }
    public var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// Reserves a directory and a free port (kept across restarts).
    public init(port: Int? = nil) throws {
        guard let port = port ?? Self.freePort() else { throw Failure.notListening(port: 0, log: "no free port") }
        self.port = port
        let template = TestScratch.directory.appendingPathComponent("regionkit-mosquitto-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw Failure.command("mkdtemp", status: errno, output: template) }
        directory = String(cString: made)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Writes the config (and the password file and certificates it needs), starts mosquitto and
    /// waits until it accepts connections.
    public func start(_ configuration: Configuration = Configuration()) throws {
        guard let mosquitto = Self.mosquitto else { throw Failure.missingTool("mosquitto") }
        self.configuration = configuration
        var lines = [
            "listener \(port) 127.0.0.1",
            "allow_anonymous \(configuration.allowAnonymous)",
            "persistence \(configuration.persistence)",
            "persistence_location \(directory)/",
            "autosave_interval 1",
            // The default (1000) silently drops QoS 1 messages queued for a slow subscriber (a loaded test machine).
            "max_queued_messages 0",
            "log_dest file \(logFile)",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            "connection_messages true",
        ]
        if geteuid() == 0 { lines.append("user root") }  // else mosquitto drops to a user who cannot read our files
        if !configuration.users.isEmpty {
            guard let passwd = Self.mosquittoPasswd else { throw Failure.missingTool("mosquitto_passwd") }
            let passwordFile = directory + "/passwords"
            try? FileManager.default.removeItem(atPath: passwordFile)
            for (index, (user, password)) in configuration.users.sorted(by: { $0.key < $1.key }).enumerated() {
                try Self.run(passwd, (index == 0 ? ["-c"] : []) + ["-b", passwordFile, user, password])
            }
            lines.append("password_file \(passwordFile)")
        }
        if configuration.tls {
            try makeCertificates()
            lines += ["cafile \(caFile)", "certfile \(directory)/server.crt", "keyfile \(directory)/server.key"]
        }
        lines += configuration.extraLines
        try (lines.joined(separator: "\n") + "\n").write(toFile: configFile, atomically: true, encoding: .utf8)
        try launch(mosquitto)
    }

    private func launch(_ mosquitto: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: mosquitto)
        process.arguments = ["-c", configFile]
        process.standardOutput = FileHandle.nullDevice
        let stderr = FileManager.default.createFile(atPath: directory + "/stderr.log", contents: nil)
            ? FileHandle(forWritingAtPath: directory + "/stderr.log") : nil
        process.standardError = stderr ?? FileHandle.nullDevice
        try process.run()
        lock.withLock { self.process = process }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.isListening(port: port) { return }
            if !process.isRunning { break }
            usleep(20_000)
        }
        let stderrText = (try? String(contentsOfFile: directory + "/stderr.log", encoding: .utf8)) ?? ""
        stop()
        throw Failure.notListening(port: port, log: log + stderrText)
    }

    /// Stops the subscribers it started, then the broker: SIGTERM, then SIGKILL after 3 s. Safe to
    /// call when stopped.
    public func stop() {
        for subscriber in lock.withLock({ () -> [Subscriber] in defer { subscribers.removeAll() }; return subscribers }) {
            subscriber.terminate()
        }
        guard let process = lock.withLock({ self.process }) else { return }
        process.stop(signal: SIGTERM, grace: .seconds(3))
        lock.withLock { self.process = nil }
    }

    /// Kills the broker with SIGKILL (no clean shutdown) and waits until it is gone.
    public func kill() {
        guard let process = lock.withLock({ self.process }) else { return }
        if process.isRunning { process.killAndWait() }
        lock.withLock { self.process = nil }
    }

    /// Starts the broker again with the same configuration on the same port.
    public func restart() throws {
        stop()
        guard let mosquitto = Self.mosquitto else { throw Failure.missingTool("mosquitto") }
        // The old socket may linger briefly; mosquitto sets SO_REUSEADDR, so this normally binds at once.
        try launch(mosquitto)
    }

    /// SIGSTOP: the broker stops answering (its socket still accepts connections into the backlog).
    public func suspend() { if let pid { Glibc.kill(pid, SIGSTOP) } }
    /// SIGCONT after `suspend()`.
    public func resume() { if let pid { Glibc.kill(pid, SIGCONT) } }

    /// Creates a CA and a server certificate for 127.0.0.1/localhost signed by it (P-256, 2 days).
    private func makeCertificates() throws {
        guard let openssl = Self.openssl else { throw Failure.missingTool("openssl") }
        if FileManager.default.fileExists(atPath: directory + "/server.crt") { return }
        let d = directory
        try Self.run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                               "-keyout", "\(d)/ca.key", "-out", caFile, "-days", "2", "-subj", "/CN=RegionKit test CA",
                               "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        try Self.run(openssl, ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                               "-keyout", "\(d)/server.key", "-out", "\(d)/server.csr", "-subj", "/CN=127.0.0.1"])
        try ("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n" +
             "keyUsage=critical,digitalSignature,keyAgreement\nextendedKeyUsage=serverAuth\n")
            .write(toFile: "\(d)/server.ext", atomically: true, encoding: .utf8)
        try Self.run(openssl, ["x509", "-req", "-in", "\(d)/server.csr", "-CA", caFile, "-CAkey", "\(d)/ca.key",
                               "-CAcreateserial", "-out", "\(d)/server.crt", "-days", "2", "-extfile", "\(d)/server.ext"])
    }

    // MARK: Independent clients

    /// The connection arguments of mosquitto_pub/mosquitto_sub for this broker.
    public func clientArguments(username: String? = nil, password: String? = nil) -> [String] {
        var arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-V", "mqttv311"]
        if configuration.tls { arguments += ["--cafile", caFile] }
        if let username { arguments += ["-u", username] }
        if let password { arguments += ["-P", password] }
        return arguments
    }

    /// Publishes one message with `mosquitto_pub` and waits for it to exit.
    public func publish(topic: String, message: String, qos: Int = 0, retain: Bool = false,
                 username: String? = nil, password: String? = nil) throws {
        guard let pub = Self.mosquittoPub else { throw Failure.missingTool("mosquitto_pub") }
        try Self.run(pub, clientArguments(username: username, password: password)
            + ["-t", topic, "-m", message, "-q", "\(qos)"] + (retain ? ["-r"] : []))
    }

    /// Starts `mosquitto_sub` on `topic` and returns once its SUBACK arrived. It exits after `count`
    /// messages (or `timeout` seconds); read what it received with `waitForExit()`/`lines`.
    /// With `clientID` and `persistentSession`, the broker keeps the subscription and queues QoS 1
    /// messages while this subscriber is away (and, with ``Configuration/persistence``, across a
    /// broker restart): a later `subscribe` with the same id receives them.
    /// With `will`, the connection has that retained QoS 1 will: ``Subscriber/kill()`` loses it
    /// without a DISCONNECT, and the broker publishes it (an ESPresense node's `offline`).
    public func subscribe(topic: String, count: Int, qos: Int = 1, timeout: Int = 30,
                          username: String? = nil, password: String? = nil,
                          clientID: String? = nil, persistentSession: Bool = false,
                          will: (topic: String, payload: String)? = nil) async throws -> Subscriber {
        guard let sub = Self.mosquittoSub else { throw Failure.missingTool("mosquitto_sub") }
        var session: [String] = []
        if let clientID { session += ["-i", clientID] }
        if persistentSession { session.append("-c") }
        if let will { session += ["--will-topic", will.topic, "--will-payload", will.payload, "--will-retain", "--will-qos", "1"] }
        // mosquitto_sub does not flush its debug lines into a pipe: stdbuf makes stdout line-buffered.
        let arguments = clientArguments(username: username, password: password) + session
            + ["-t", topic, "-q", "\(qos)", "-C", "\(count)", "-W", "\(timeout)", "-d", "-F", "MSG %t|%q|%r|%p"]
        let subscriber = if let stdbuf = Self.tool("stdbuf") {
            Subscriber(executable: stdbuf, arguments: ["-oL", sub] + arguments)
        } else {
            Subscriber(executable: sub, arguments: arguments)
        }
        try subscriber.start()
        lock.withLock { subscribers.append(subscriber) }
        // 30 s: on 2 cores busy with the other suites (and a compile) 10 s once passed between
        // mosquitto_sub's CONNECT and its SUBACK.
        guard await subscriber.waitFor(prefix: "Subscribed (mid", timeout: 30) else {
            subscriber.terminate()
            throw Failure.command("mosquitto_sub \(topic) (no SUBACK within 30 s)", status: -1, output: subscriber.output)
        }
        return subscriber
    }

    /// Publishes one message of arbitrary bytes (from a temporary file, `mosquitto_pub -f`).
    public func publish(topic: String, payload: [UInt8], qos: Int = 0, retain: Bool = false) throws {
        guard let pub = Self.mosquittoPub else { throw Failure.missingTool("mosquitto_pub") }
        let file = directory + "/payload-\(UUID().uuidString)"
        try Data(payload).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Self.run(pub, clientArguments() + ["-t", topic, "-f", file, "-q", "\(qos)"] + (retain ? ["-r"] : []))
    }

    /// Publishes each line as one message, in order, over one connection (`mosquitto_pub -l`).
    /// Lines must not contain a newline byte; any other bytes (invalid UTF-8 too) are sent as they are.
    public func publishLines(topic: String, lines: [[UInt8]], qos: Int = 0) throws {
        guard let pub = Self.mosquittoPub else { throw Failure.missingTool("mosquitto_pub") }
        let file = directory + "/lines-\(UUID().uuidString)"
        var bytes: [UInt8] = []
        for line in lines { bytes += line; bytes.append(0x0A) }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: pub)
        process.arguments = clientArguments() + ["-t", topic, "-l", "-q", "\(qos)"]
        process.standardInput = FileHandle(forReadingAtPath: file)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure.command("mosquitto_pub -l -t \(topic)", status: process.terminationStatus, output: "")
        }
    }

    /// A running `mosquitto_sub -d -F 'MSG %t|%q|%r|%p'`.
    public final class Subscriber: @unchecked Sendable {
        /// One received message.
        public struct Message: Equatable {
            public var topic: String
            public var qos: Int
            public var retained: Bool
            public var payload: String

            public init(topic: String, qos: Int, retained: Bool, payload: String) {
                self.topic = topic
                self.qos = qos
                self.retained = retained
                self.payload = payload
            }
        }

        private let process = Process()
        /// What the process wrote, split into complete lines as it arrives (parsed once, not on
        /// every poll: a 2,000-message run writes ~300 KB of debug output).
        private struct Received {
            var pending: [UInt8] = []
            var lines: [String] = []
            var messages: [Message] = []
        }
        private let received = LockedBox(Received())
        /// The pipe reached end of file (everything the process wrote has been read).
        private let drained = LockedBox(false)

        public init(executable: String, arguments: [String]) {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }

        public func start() throws {
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            // A plain reader thread until end of file. FileHandle.readabilityHandler (a dispatch
            // source on Linux) lost the last chunks of a fast writer that exits: ~1 run in 3 of
            // the 2,000-message test missed the final 40–300 messages mosquitto_sub had printed.
            let handle = pipe.fileHandleForReading
            Thread.detachNewThread { [self] in
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    received.withLock {
                        $0.pending += data
                        Self.take(&$0, final: false)
                    }
                }
                received.withLock { Self.take(&$0, final: true) }
                drained.withLock { $0 = true }
            }
        }

        /// Moves the complete lines of `pending` (all of it at end of file) into `lines` and `messages`.
        private static func take(_ state: inout Received, final: Bool) {
            var start = 0
            for index in state.pending.indices where state.pending[index] == 0x0A {
                add(state.pending[start..<index], to: &state)
                start = index + 1
            }
            if final, start < state.pending.count {
                add(state.pending[start...], to: &state)
                start = state.pending.count
            }
            state.pending.removeFirst(start)
        }

        private static func add(_ bytes: ArraySlice<UInt8>, to state: inout Received) {
            let line = String(decoding: bytes, as: UTF8.self)
            state.lines.append(line)
            guard line.hasPrefix("MSG ") else { return }
            let fields = line.dropFirst(4).split(separator: "|", maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4 else { return }
            state.messages.append(Message(topic: String(fields[0]), qos: Int(fields[1]) ?? -1,
                                          retained: fields[2] == "1", payload: String(fields[3])))
        }

        /// Everything received so far (complete lines).
        public var output: String { received.withLock { $0.lines.joined(separator: "\n") } }

        /// The messages received so far, in order.
        public var messages: [Message] { received.withLock { $0.messages } }

        private var messageCount: Int { received.withLock { $0.messages.count } }

        public func waitFor(prefix: String, timeout: TimeInterval) async -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if hasLine(prefix: prefix) { return true }
                if !process.isRunning { return hasLine(prefix: prefix) }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return false
        }

        /// Waits until `count` messages arrived (or the timeout) and returns them.
        public func waitForMessages(_ count: Int, timeout: TimeInterval = 30) async -> [Message] {
            let deadline = Date().addingTimeInterval(timeout)
            // mosquitto_sub exits once it has its -C messages, possibly before this side has read
            // them all from the pipe: keep reading until end of file, not just until the exit.
            while messageCount < count, Date() < deadline, process.isRunning || !drained.withLock({ $0 }) {
                try? await Task.sleep(for: .milliseconds(10))
            }
            try? await Task.sleep(for: .milliseconds(20))
            return messages
        }

        private func hasLine(prefix: String) -> Bool {
            received.withLock { $0.lines.contains { $0.hasPrefix(prefix) } }
        }

        /// Kills the client at once (SIGKILL): its connection ends without a DISCONNECT, so the
        /// broker publishes its will.
        public func kill() {
            if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        }

        public func terminate() {
            process.stop(signal: SIGTERM, grace: .seconds(1))
        }

        deinit { terminate() }
    }
}
