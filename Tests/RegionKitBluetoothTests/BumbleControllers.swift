import Foundation
import Testing
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs `scripts/bumble/controllers.py` (Bumble virtual controllers on 127.0.0.1) with the
/// interpreter named by REGIONKIT_BUMBLE_PYTHON, collects its stdout lines (READY, ADV <json>,
/// BEACONS-STARTED/STOPPED), and stops it by PID: SIGTERM, then SIGKILL after 5 s.
final class BumbleControllers: @unchecked Sendable {
    static let pythonVariable = "REGIONKIT_BUMBLE_PYTHON"
    static var python: String? {
        guard let value = ProcessInfo.processInfo.environment[pythonVariable], !value.isEmpty else { return nil }
        return value
    }
    static let skipMessage = Comment(rawValue: """
        REGIONKIT_BUMBLE_PYTHON is unset: the Bumble end-to-end tests of RegionKitBluetooth are SKIPPED. \
        Run ./scripts/test.sh, or `bash scripts/bumble/setup.sh` and set REGIONKIT_BUMBLE_PYTHON to the path it prints.
        """)

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/bumble/controllers.py").path
    }

    struct Line {
        var received: ContinuousClock.Instant
        var text: String
    }

    let process = Process()
    let ports: [UInt16]
    private let stdout = Pipe()
    private let stderrPath: String
    private let collected = Locked<[Line]>([])
    private let reader: Thread

    /// Launches `count` exposed controllers (on `ports` if given, else free ones).
    init(controllers count: Int = 1, ports: [UInt16]? = nil, legacyOnly: Bool = false, iBeacons: [String] = [],
         beaconsPaused: Bool = false, scanJSON: Bool = false, intervalMilliseconds: Double = 100) throws {
        guard let python = Self.python else { throw TestFailure("\(Self.pythonVariable) is unset") }
        self.ports = try ports ?? (0..<count).map { _ in try Self.freePort() }
        var arguments = [Self.script] + self.ports.map { "tcp-server:127.0.0.1:\($0)" }
        if legacyOnly { arguments.append("--legacy-only") }
        for beacon in iBeacons { arguments += ["--advertise-ibeacon", beacon] }
        if beaconsPaused { arguments.append("--beacons-paused") }
        if scanJSON { arguments.append("--scan-json") }
        arguments += ["--interval-ms", String(intervalMilliseconds)]
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        stderrPath = FileManager.default.temporaryDirectory.appendingPathComponent("bumble-bt-\(getpid())-\(self.ports[0]).err").path
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

    var lines: [Line] { collected.withLock { $0 } }

    /// Waits (bounded) for a line starting with `prefix` at index ≥ `after`; returns it.
    @discardableResult
    func waitForLine(_ prefix: String, after index: Int = 0, timeout: Duration = .seconds(15)) async throws -> Line {
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

    func waitUntilReady() async throws { try await waitForLine("READY ") }

    /// SIGUSR1: the beacons start advertising. Returns when the launcher confirms.
    func startBeacons() async throws {
        let index = lines.count
        kill(process.processIdentifier, SIGUSR1)
        try await waitForLine("BEACONS-STARTED", after: index, timeout: .seconds(20))
    }

    /// SIGUSR2: the beacons stop advertising. Returns when the launcher confirms.
    func stopBeacons() async throws {
        let index = lines.count
        kill(process.processIdentifier, SIGUSR2)
        try await waitForLine("BEACONS-STOPPED", after: index, timeout: .seconds(20))
    }

    /// SIGTERM by PID, wait up to 5 s, then SIGKILL.
    func stop() {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(20)
        while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: stderrPath)
    }

    deinit { stop() }

    /// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, released).
    static func freePort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { throw TestFailure("bind/getsockname on 127.0.0.1 failed: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// Runs a command-line tool with a time limit; returns status and output.
enum Tool {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func find(_ name: String) -> String? {
        for directory in ["/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin"] {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Async so that waiting never blocks a thread of Swift's cooperative pool (2 threads on a
    /// 2-core machine: a blocking wait there starves every other test's timers).
    static func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(60)) async throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let outPath = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(getpid())-\(UUID().uuidString).out").path
        let errPath = outPath + ".err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        let exited = Locked<CheckedContinuation<Void, Never>?>(nil)
        let finished = Locked(false)
        process.terminationHandler = { _ in
            let continuation = exited.withLock { value -> CheckedContinuation<Void, Never>? in
                defer { value = nil }
                return value
            }
            finished.withLock { $0 = true }
            continuation?.resume()
        }
        try process.run()
        let pid = process.processIdentifier
        let killer = Task {
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { kill(pid, SIGKILL) }
        }
        await withCheckedContinuation { continuation in
            let done = finished.withLock { done -> Bool in
                if !done { exited.withLock { $0 = continuation } }
                return done
            }
            if done { continuation.resume() }
        }
        killer.cancel()
        if process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL {
            throw TestFailure("\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
