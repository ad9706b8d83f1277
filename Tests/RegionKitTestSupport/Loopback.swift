import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Loopback helpers shared by every test target that starts a real component on 127.0.0.1.
public enum Loopback {
    /// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, released).
    ///
    /// ```swift
    /// let port = try Loopback.freePort()
    /// process.arguments = ["-P", String(port)]
    /// ```
    public static func freePort() throws -> UInt16 {
        let (descriptor, port) = try listen(backlog: 1)
        close(descriptor)
        return port
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
}

/// Runs blocking work on its own thread, so tests never block Swift concurrency threads.
public func offThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}

