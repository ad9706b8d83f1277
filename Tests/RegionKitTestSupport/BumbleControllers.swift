import Foundation
import Testing
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs `scripts/bumble/controllers.py` (Bumble virtual controllers on 127.0.0.1) with the
/// interpreter named by REGIONKIT_BUMBLE_PYTHON, collects its stdout lines (READY, ADV <json>,
/// BEACONS-STARTED/STOPPED), and stops it by PID: SIGTERM, then SIGKILL after 20 s. The one Bumble
/// harness of the HCI, Bluetooth and CLI end-to-end tests.
///
/// ```swift
/// let bumble = try BumbleControllers(controllers: 2, iBeacons: ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2:-59"])
/// defer { bumble.stop() }
/// try await bumble.waitUntilReady()
/// let transport = try await TCPTransport.connect(host: "127.0.0.1", port: bumble.ports[0])
/// ```
public final class BumbleControllers: @unchecked Sendable {
    public static let pythonVariable = "REGIONKIT_BUMBLE_PYTHON"
    public static var python: String? {
        guard let value = ProcessInfo.processInfo.environment[pythonVariable], !value.isEmpty else { return nil }
        return value
    }
    public static let skipMessage = Comment(rawValue: """
        REGIONKIT_BUMBLE_PYTHON is unset: the Bumble end-to-end tests are SKIPPED. \
        Run ./scripts/test.sh, or `bash scripts/bumble/setup.sh` and set REGIONKIT_BUMBLE_PYTHON to the path it prints.
        """)

    /// controllers.py, found from this source file (Tests/RegionKitTestSupport/ → ../../scripts/bumble/),
    /// or REGIONKIT_BUMBLE_SCRIPT.
    public static var script: String {
        if let override = ProcessInfo.processInfo.environment["REGIONKIT_BUMBLE_SCRIPT"], !override.isEmpty { return override }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/bumble/controllers.py").path
    }

    public struct Line: Sendable {
        public var received: ContinuousClock.Instant
        public var text: String
    }

    public let process = Process()
    public let ports: [UInt16]
    private let stdout = Pipe()
    private let stderrPath: String
    private let collected = Locked<[Line]>([])
    private let reader: Thread

    /// Launches `count` exposed controllers (on `ports` if given, else free ones).
    /// `rawBeacons`: advertising data per beacon as hex, several frames comma-separated (sent in turn).
    public init(controllers count: Int = 1, ports: [UInt16]? = nil, legacyOnly: Bool = false, iBeacons: [String] = [],
         rawBeacons: [String] = [], beaconsPaused: Bool = false, scanJSON: Bool = false, intervalMilliseconds: Double = 100) throws {
        guard let python = Self.python else { throw TestFailure("\(Self.pythonVariable) is unset") }
        self.ports = try ports ?? (0..<count).map { _ in try Loopback.freePort() }
        var arguments = [Self.script] + self.ports.map { "tcp-server:127.0.0.1:\($0)" }
        if legacyOnly { arguments.append("--legacy-only") }
        for beacon in iBeacons { arguments += ["--advertise-ibeacon", beacon] }
        for beacon in rawBeacons { arguments += ["--advertise-raw", beacon] }
        if beaconsPaused { arguments.append("--beacons-paused") }
        if scanJSON { arguments.append("--scan-json") }
        arguments += ["--interval-ms", String(intervalMilliseconds)]
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        stderrPath = TestScratch.directory.appendingPathComponent("bumble-bt-\(getpid())-\(self.ports[0]).err").path
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        process.standardOutput = stdout
        let handle = stdout.fileHandleForReading
        let sink = collected
        reader = Thread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(handle.fileDescriptor, &buffer, buffer.count)
                if count <= 0 { return }
                for byte in buffer[0..<count] {
                    if byte == UInt8(ascii: "\n") {
                        let line = Line(received: .now, text: String(decoding: pending, as: UTF8.self))
                        sink.withLock { $0.append(line) }
                        pending.removeAll(keepingCapacity: true)
                    } else {
                        pending.append(byte)
                    }
                }
            }
        }
        try process.run()
        reader.start()
    }

    public var lines: [Line] { collected.withLock { $0 } }

    /// Waits (bounded) for a line starting with `prefix` at index ≥ `after`; returns it.
    @discardableResult
    public func waitForLine(_ prefix: String, after index: Int = 0, timeout: Duration = .seconds(15)) async throws -> Line {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = lines.dropFirst(index).first(where: { $0.text.hasPrefix(prefix) }) { return line }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let log = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        let signals = ((try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? "")
            .split(separator: "\n").filter { $0.hasPrefix("Sig") }.joined(separator: " ")
        throw TestFailure("""
            controllers.py printed no '\(prefix)' line within \(timeout) (running: \(process.isRunning), \(signals)); \
            last lines: \(lines.suffix(3).map(\.text)); stderr:\n\(log.suffix(2000))
            """)
    }

    public func waitUntilReady(timeout: Duration = .seconds(15)) async throws { try await waitForLine("READY ", timeout: timeout) }

    /// SIGUSR1: the beacons start advertising. Returns when the launcher confirms.
    public func startBeacons() async throws {
        let index = lines.count
        kill(process.processIdentifier, SIGUSR1)
        try await waitForLine("BEACONS-STARTED", after: index, timeout: .seconds(20))
    }

    /// SIGUSR2: the beacons stop advertising. Returns when the launcher confirms.
    public func stopBeacons() async throws {
        let index = lines.count
        kill(process.processIdentifier, SIGUSR2)
        try await waitForLine("BEACONS-STOPPED", after: index, timeout: .seconds(20))
    }

    /// SIGTERM by PID, wait up to 20 s, then SIGKILL.
    public func stop() {
        guard process.isRunning else { return }
        process.stop(signal: SIGTERM, grace: .seconds(20))
        try? FileManager.default.removeItem(atPath: stderrPath)
    }

    deinit { stop() }
}
