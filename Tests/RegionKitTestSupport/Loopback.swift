import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Loopback helpers shared by every test target that starts a real component on 127.0.0.1.
public enum Loopback {
    /// A TCP port on 127.0.0.1 that was free a moment ago, for a component the test starts on it.
    ///
    /// The port is taken from below the kernel's ephemeral range (`ip_local_port_range`), where the
    /// kernel hands out none. A port it picked and was released could be handed to the next
    /// `bind` to port 0 (an in-process fake server) or be the source port of a connection before
    /// the component bound it: in one CI run a fake broker bound to port 0 got the very port
    /// another test had released as "nothing listens here", and both tests failed. Within a
    /// process no port is handed out twice (a counter walks the window from a random start), so a
    /// port stays the test's across restarts of its component.
    ///
    /// ```swift
    /// let port = try Loopback.freePort()
    /// process.arguments = ["-P", String(port)]
    /// ```
    public static func freePort() throws -> UInt16 {
        let window = handOutWindow
        for _ in 0..<window.count {
            let candidate = nextCandidate(in: window)
            if let descriptor = try? bound(port: candidate) {
                close(descriptor)
                return candidate
            }
        }
        throw TestFailure("no free TCP port on 127.0.0.1 in \(window.lowerBound)...\(window.upperBound - 1)")
    }

    /// Runs `body` with a TCP port on 127.0.0.1 that refuses connections (a socket is bound there and
    /// never listens) and that nothing else can take until `body` returns: "nothing listens there"
    /// stays true for the whole test, which a port released by ``freePort()`` does not promise.
    ///
    /// ```swift
    /// try await Loopback.withRefusingPort { dead in
    ///     let client = try MQTTClientConfiguration(url: "mqtt://127.0.0.1:\(dead)")
    ///     …
    /// }
    /// ```
    public static func withRefusingPort<T>(isolation: isolated (any Actor)? = #isolation,
                                           _ body: (UInt16) async throws -> T) async throws -> T {
        let descriptor = try bound(port: 0)
        defer { close(descriptor) }
        return try await body(try boundPort(descriptor))
    }

    /// A listening TCP socket on 127.0.0.1 at an ephemeral port; the caller owns (and closes) it.
    public static func listen(backlog: Int32) throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && Glibc.listen(descriptor, backlog) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard ready else {
            let code = errno
            close(descriptor)
            throw TestFailure("bind/listen/getsockname on 127.0.0.1 failed: errno \(code)")
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }

    /// The ports ``freePort()`` hands out: up to 12,000 just below the ephemeral range, never below
    /// 10,000 (where well-known services listen); the range the kernel uses if there is no room.
    static let handOutWindow: Range<UInt16> = {
        let fallback: Range<UInt16> = 20_000..<32_768
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8) else { return fallback }
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { UInt16($0) }
        guard let low = fields.first, low >= 11_000 else { return fallback }
        return (low >= 22_000 ? low - 12_000 : 10_000)..<low
    }()

    private static let counter = Locked<UInt32?>(nil)

    private static func nextCandidate(in window: Range<UInt16>) -> UInt16 {
        let size = UInt32(window.count)
        let offset = counter.withLock { value -> UInt32 in
            let next = value.map { ($0 + 1) % size } ?? UInt32.random(in: 0..<size)
            value = next
            return next
        }
        return window.lowerBound + UInt16(offset)
    }

    /// A TCP socket bound to 127.0.0.1:`port` (0: the kernel picks), not listening, without
    /// SO_REUSEADDR (so nothing else can bind the port while it is open); the caller closes it.
    private static func bound(port: UInt16) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(port.bigEndian)
        let done = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard done else {
            let code = errno
            close(descriptor)
            throw TestFailure("bind to 127.0.0.1:\(port) failed: errno \(code)")
        }
        return descriptor
    }

    private static func boundPort(_ descriptor: Int32) throws -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let done = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) == 0 }
        }
        guard done else { throw TestFailure("getsockname failed: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// Runs blocking work on its own thread, so tests never block Swift concurrency threads.
public func offThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}

