import Foundation
import RegionKit
#if canImport(Glibc)
import Glibc
#endif

/// A private Mosquitto for `regionkit bench mqtt`: its own config in a temporary directory, a
/// listener on 127.0.0.1 and a free port, no persistence, no queue limits (so a slow subscriber
/// is measured, not dropped); stopped (SIGTERM, then SIGKILL) by `stop()`.
final class PrivateBroker {
    let port: Int
    let directory: String
    private let process = Process()

    var url: String { "mqtt://127.0.0.1:\(port)" }

    /// An executable on PATH or in the sbin directories (mosquitto installs to /usr/sbin).
    static func tool(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin", "/sbin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    init() throws {
        guard let mosquitto = Self.tool("mosquitto") else {
            throw RegionKitError(.invalidArgument, "mosquitto not found (apt-get install mosquitto mosquitto-clients), or give --broker")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rk-bench-mqtt-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        // set_tcp_nodelay: Mosquitto leaves Nagle on by default, which holds small packets up to the
        // receiver's delayed ACK (~40 ms); a presence broker should set it (see README).
        var lines = ["listener \(port) 127.0.0.1", "allow_anonymous true", "persistence false", "set_tcp_nodelay true",
                     "max_queued_messages 0", "max_inflight_messages 0", "log_dest none"]
        if geteuid() == 0 { lines.append("user root") }
        try (lines.joined(separator: "\n") + "\n").write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: mosquitto)
        process.arguments = ["-c", directory + "/mosquitto.conf"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !Self.isListening(port) {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw RegionKitError(.sourceUnavailable, "the private mosquitto did not start on 127.0.0.1:\(port)")
            }
            usleep(20_000)
        }
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(3)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RegionKitError(.sourceUnavailable, "socket() failed: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw RegionKitError(.sourceUnavailable, "no free port on 127.0.0.1") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func isListening(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
