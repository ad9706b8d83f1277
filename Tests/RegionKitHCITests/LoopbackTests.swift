import Foundation
import Testing
@testable import RegionKitTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The port helpers every end-to-end test relies on: a port from ``Loopback/freePort()`` is never
/// one the kernel hands to `bind(0)` or to a connection, nor handed out twice; a refusing port
/// refuses, and nothing can take it while the test holds it.
@Suite("Loopback ports")
struct LoopbackTests {
    /// Binds a socket with SO_REUSEADDR (as NIO servers and mosquitto do) to 127.0.0.1:`port`,
    /// listens, and returns errno (0: it bound and listens).
    static func bindAndListen(port: UInt16) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard Loopback.withAddress(port: port, { bind(descriptor, $0, $1) == 0 }), listen(descriptor, 1) == 0 else { return errno }
        return 0
    }

    /// Connects to 127.0.0.1:`port` and returns errno (0: connected).
    static func connectErrno(port: UInt16) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        return Loopback.withAddress(port: port) { connect(descriptor, $0, $1) == 0 } ? 0 : errno
    }

    @Test("a refusing port refuses connections, and no server can bind it while it is held")
    func refusingPort() async throws {
        try await Loopback.withRefusingPort { port in
            #expect(Self.connectErrno(port: port) == ECONNREFUSED)
            #expect(Self.bindAndListen(port: port) == EADDRINUSE)
        }
    }

    @Test("free ports are distinct, bindable, and outside the kernel's ephemeral range")
    func freePorts() throws {
        let text = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let range = text.split(whereSeparator: \.isWhitespace).compactMap { UInt16($0) }
        try #require(range.count == 2)
        let ports = try (0..<500).map { _ in try Loopback.freePort() }
        #expect(Set(ports).count == ports.count, "a port handed out twice")
        #expect(ports.allSatisfy { $0 < range[0] || $0 > range[1] }, "\(ports.filter { !($0 < range[0] || $0 > range[1]) })")
        #expect(ports.allSatisfy { Loopback.handOutWindow?.contains(Int($0)) == true })
        #expect(Self.bindAndListen(port: ports[0]) == 0)
        // Each is locked for this process: another test process (here, another open file, which
        // flock treats alike) cannot lock it to hand it out.
        for port in ports.prefix(20) {
            let descriptor = open("\(Loopback.lockDirectory)/\(port)", O_RDWR | O_CLOEXEC)
            #expect(descriptor >= 0, "no lock file for \(port)")
            #expect(flock(descriptor, LOCK_EX | LOCK_NB) == -1 && errno == EWOULDBLOCK, "\(port) is not locked")
            close(descriptor)
        }
    }
}
