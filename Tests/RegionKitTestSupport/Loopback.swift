import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Loopback helpers shared by every test target that starts a real component on 127.0.0.1.
public enum Loopback {
    /// A TCP port on 127.0.0.1 that was free a moment ago, for a component the test starts on it.
    ///
    /// The port is taken outside the kernel's ephemeral range (`ip_local_port_range`), where the
    /// kernel hands out none. A port it picked and was released could be handed to the next
    /// `bind` to port 0 (an in-process fake server) or be the source port of a connection before
    /// the component bound it: in one CI run a fake broker bound to port 0 got the very port
    /// another test had released as "nothing listens here", and both tests failed. No port is
    /// handed out twice while the process lives, in this process (a counter walks the window from
    /// a random start) or in another test process at the same time (each port handed out is
    /// locked, `flock`, for the life of the process): a port stays the test's across restarts
    /// of its component.
    ///
    /// ```swift
    /// let port = try Loopback.freePort()
    /// process.arguments = ["-P", String(port)]
    /// ```
    public static func freePort() throws -> UInt16 {
        guard let window = handOutWindow else {
            throw TestFailure("no room for test ports outside the ephemeral range \(ephemeralRange.map { "\($0.lowerBound)...\($0.upperBound)" } ?? "?") (/proc/sys/net/ipv4/ip_local_port_range)")
        }
        for _ in 0..<window.count {
            let candidate = UInt16(nextCandidate(in: window))
            guard reserve(candidate) else { continue }
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

    /// Calls `body` with 127.0.0.1:`port` as a `sockaddr` and its length, for `bind` or `connect`.
    ///
    /// ```swift
    /// let connected = Loopback.withAddress(port: 1883) { connect(descriptor, $0, $1) == 0 }
    /// ```
    public static func withAddress<R>(port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(port.bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// A listening TCP socket on 127.0.0.1 at an ephemeral port; the caller owns (and closes) it.
    public static func listen(backlog: Int32) throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = try bound(port: 0)
        guard Glibc.listen(descriptor, backlog) == 0, let port = try? boundPort(descriptor) else {
            let code = errno
            close(descriptor)
            throw TestFailure("listen/getsockname on 127.0.0.1 failed: errno \(code)")
        }
        return (descriptor, port)
    }

    /// The kernel's ephemeral port range, as `ip_local_port_range` gives it.
    static let ephemeralRange: ClosedRange<Int>? = {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8) else { return nil }
        let fields = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard fields.count == 2, fields[0] <= fields[1] else { return nil }
        return fields[0]...fields[1]
    }()

    /// The ports ``freePort()`` hands out: up to 12,000 just below the ephemeral range, never below
    /// 10,000 (where well-known services listen), or, when the range starts lower, those above
    /// it; nil when neither leaves 1,000 ports (the range covers nearly everything).
    static let handOutWindow: Range<Int>? = {
        let ephemeral = ephemeralRange ?? 32_768...60_999   // Linux's default
        if ephemeral.lowerBound >= 11_000 { return max(10_000, ephemeral.lowerBound - 12_000)..<ephemeral.lowerBound }
        if 65_535 - ephemeral.upperBound >= 1_000 { return (ephemeral.upperBound + 1)..<65_536 }
        return nil
    }()

    private static let counter = Locked<Int?>(nil)

    private static func nextCandidate(in window: Range<Int>) -> Int {
        let offset = counter.withLock { value -> Int in
            let next = value.map { ($0 + 1) % window.count } ?? Int.random(in: 0..<window.count)
            value = next
            return next
        }
        return window.lowerBound + offset
    }

    /// Where the test processes lock the ports they hand out (one file per port).
    static let lockDirectory = "/tmp/regionkit-test-ports"
    /// The locks held, one open file per port handed out: released when the process ends.
    private static let locks = Locked<[Int32]>([])

    /// Locks `port` for this process, so that no other test process hands it out meanwhile; false
    /// when another holds it. Without a lock directory (not writable) every port counts as free
    /// to lock, as before there were locks.
    private static func reserve(_ port: UInt16) -> Bool {
        mkdir(lockDirectory, 0o1777)
        let descriptor = open("\(lockDirectory)/\(port)", O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { return true }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return false
        }
        locks.withLock { $0.append(descriptor) }
        return true
    }

    /// A TCP socket bound to 127.0.0.1:`port` (0: the kernel picks), not listening, without
    /// SO_REUSEADDR (so nothing else can bind the port while it is open); the caller closes it.
    private static func bound(port: UInt16) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
        guard withAddress(port: port, { bind(descriptor, $0, $1) == 0 }) else {
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

