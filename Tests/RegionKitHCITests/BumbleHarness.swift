import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import RegionKitHCI

/// Starts `scripts/bumble/controllers.py` (Bumble virtual controllers on loopback)
/// with the interpreter named by REGIONKIT_BUMBLE_PYTHON, waits for its READY
/// line, and stops it by PID (SIGTERM, then SIGKILL after a bound).
final class BumbleHarness: @unchecked Sendable {
    static let pythonVariable = "REGIONKIT_BUMBLE_PYTHON"
    static var python: String? {
        guard let value = ProcessInfo.processInfo.environment[pythonVariable], !value.isEmpty else { return nil }
        return value
    }
    static let skipMessage = """
        REGIONKIT_BUMBLE_PYTHON is unset: the Bumble end-to-end tests are SKIPPED. \
        Run `bash scripts/bumble/setup.sh` and set REGIONKIT_BUMBLE_PYTHON to the path it prints (.venv/bin/python).
        """

    /// controllers.py, found from this source file (Tests/RegionKitHCITests/ → ../../scripts/bumble/).
    static var script: String {
        if let override = ProcessInfo.processInfo.environment["REGIONKIT_BUMBLE_SCRIPT"] { return override }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/bumble/controllers.py").path
    }

    let process = Process()
    let ports: [UInt16]
    private(set) var readyLine = ""
    private let stderrPath: String

    /// Launches `count` exposed controllers, optionally legacy-only, optionally with iBeacon advertisers.
    init(controllers count: Int, legacyOnly: Bool = false, iBeacons: [String] = [], intervalMilliseconds: Double = 100) throws {
        guard let python = Self.python else { throw HarnessError("\(Self.pythonVariable) is unset") }
        ports = try (0..<count).map { _ in try Self.freePort() }
        var arguments = [Self.script] + ports.map { "tcp-server:127.0.0.1:\($0)" }
        if legacyOnly { arguments.append("--legacy-only") }
        for beacon in iBeacons { arguments += ["--advertise-ibeacon", beacon] }
        arguments += ["--interval-ms", String(intervalMilliseconds)]
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        stderrPath = FileManager.default.temporaryDirectory.appendingPathComponent("bumble-\(getpid())-\(ports.first ?? 0).err").path
        FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        process.standardOutput = Pipe()
        try process.run()
    }

    /// Waits for the READY line (at most `timeout`).
    func waitUntilReady(timeout: Duration = .seconds(15)) async throws {
        guard let pipe = process.standardOutput as? Pipe else { throw HarnessError("no stdout pipe") }
        let handle = pipe.fileHandleForReading
        let descriptor = handle.fileDescriptor
        let milliseconds = Int32(timeout.components.seconds * 1000)
        let line = await offThread { () -> String? in
            var collected: [UInt8] = []
            let deadline = monotonicMilliseconds() + Int64(milliseconds)
            while monotonicMilliseconds() < deadline {
                var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
                guard poll(&fds, 1, 100) >= 0 else { return nil }
                if fds[0].revents == 0 { continue }
                var byte: UInt8 = 0
                guard read(descriptor, &byte, 1) == 1 else { return nil }
                if byte == UInt8(ascii: "\n") {
                    let text = String(decoding: collected, as: UTF8.self)
                    if text.hasPrefix("READY ") { return text }
                    collected = []
                } else {
                    collected.append(byte)
                }
            }
            return nil
        }
        guard let line else {
            let log = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
            stop()
            throw HarnessError("controllers.py gave no READY line within \(timeout); stderr:\n\(log.suffix(2000))")
        }
        readyLine = line
    }

    /// SIGTERM by PID, wait up to 5 s, then SIGKILL.
    func stop() {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        kill(pid, SIGTERM)
        let deadline = monotonicMilliseconds() + 5_000
        while process.isRunning, monotonicMilliseconds() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: stderrPath)
    }

    /// A port that was free a moment ago on 127.0.0.1.
    static func freePort() throws -> UInt16 {
        let peer = try LoopbackPeer()
        defer { peer.shutdown() }
        return peer.port
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Collects the events a transport delivers, so a test can wait for one with a deadline.
actor EventInbox {
    private(set) var events: [(at: ContinuousClock.Instant, event: HCIEvent)] = []
    private(set) var failure: (any Error)?
    private(set) var finished = false
    private var consumer: Task<Void, Never>?

    func start(_ transport: any HCITransport, capture: BTSnoopCapture? = nil) {
        consumer = Task {
            do {
                for try await packet in transport.packets {
                    capture?.record(packet, direction: .received)
                    guard packet.type == .event else { continue }
                    // Bumble (like BlueZ/Zephyr) sends one report per event; decode report by report.
                    let event = try packet.event(advertisingReportLayout: .reportByReport)
                    self.append(event)
                }
                self.finish(nil)
            } catch {
                self.finish(error)
            }
        }
    }

    private func append(_ event: HCIEvent) { events.append((ContinuousClock.now, event)) }
    private func finish(_ error: (any Error)?) {
        failure = error
        finished = true
    }

    /// Removes and returns the first event matching `predicate`, waiting up to `timeout`.
    func take(timeout: Duration = .seconds(20), where predicate: @Sendable (HCIEvent) -> Bool) async throws -> HCIEvent {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let index = events.firstIndex(where: { predicate($0.event) }) {
                return events.remove(at: index).event
            }
            if finished { throw failure ?? HarnessError("the transport's stream ended") }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessError("no matching event within \(timeout)")
    }

    /// Waits until the stream ends; returns its error (nil for a clean end).
    func waitForEnd(timeout: Duration) async throws -> (any Error)? {
        let deadline = ContinuousClock.now + timeout
        while !finished {
            guard ContinuousClock.now < deadline else { throw HarnessError("the stream did not end within \(timeout)") }
            try await Task.sleep(for: .milliseconds(10))
        }
        return failure
    }

    func removeAll() { events.removeAll() }
}

/// Records a session as btsnoop (datalink 1002) from the host's side.
final class BTSnoopCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var writer = BTSnoopWriter()

    func record(_ packet: H4Packet, direction: BTSnoopRecord.Direction) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let micros = Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
        lock.withLock { writer.append(packet: packet, direction: direction, unixMicroseconds: micros) }
    }

    var bytes: [UInt8] { lock.withLock { writer.bytes } }
}

/// Sends a command and waits for its Command Complete (or Command Status).
func execute(_ command: HCICommand, on transport: any HCITransport, inbox: EventInbox, capture: BTSnoopCapture? = nil) async throws -> HCIEvent {
    let packet = H4Packet(command: command)
    capture?.record(packet, direction: .sent)
    try await transport.send(packet)
    let opcode = command.opcode
    return try await inbox.take { $0.commandOpcode == opcode }
}
