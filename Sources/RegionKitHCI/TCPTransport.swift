#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// H4 over TCP: the packet type byte and the packet, back to back on a stream
/// socket. This is how Bumble (`tcp-server:`), the Android emulator's netsim
/// and various UART bridges expose a controller. The opener of a TCP
/// ``DescriptorTransport``.
///
/// ```swift
/// let transport = try await TCPTransport.connect(host: "127.0.0.1", port: 9000, timeout: .seconds(2))
/// try await transport.send(H4Packet(command: .reset))
/// let first = try await transport.packets.first { _ in true }
/// await transport.close()
/// ```
public enum TCPTransport {
    /// Resolves `host`, connects with a deadline, disables Nagle's algorithm and starts reading.
    /// Errors: `.connectionFailed` (refused, unreachable, unknown host) or `.timedOut`, with the
    /// failing system call as the cause.
    public static func connect(host: String, port: UInt16, timeout: Duration = .seconds(5)) async throws(HCIError) -> DescriptorTransport {
        let specification = HCITransportSpecification.tcp(host: host, port: port)
        let name = specification.description
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return try await DescriptorTransport.open(specification, name: name, isSocket: true) { () throws(HCIError) -> Int32 in
            try connectSocket(host: host, port: port, timeoutMilliseconds: max(milliseconds, 1), name: name)
        }
    }

    private static func connectSocket(host: String, port: UInt16, timeoutMilliseconds: Int32, name: String) throws(HCIError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = String(cString: gai_strerror(status))
            throw HCIError(code: .connectionFailed, message: "\(name): cannot resolve host '\(host)': \(reason)")
        }
        defer { freeaddrinfo(list) }

        let deadline = monotonicMilliseconds() + Int64(timeoutMilliseconds)
        var lastError: HCIError?
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            cursor = entry.pointee.ai_next
            let descriptor = socket(entry.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            if descriptor < 0 {
                lastError = HCIError(code: .connectionFailed, message: "\(name): cannot create a socket", cause: SystemCallError(call: "socket", errno: errno))
                continue
            }
            if Syscall.connect(descriptor, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0 {
                return configured(descriptor)
            }
            var code = errno
            if code == EINPROGRESS {
                var fds = [pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)]
                var ready: Int32 = 0
                repeat {
                    let remaining = deadline - monotonicMilliseconds()
                    if remaining <= 0 { ready = 0; break }
                    ready = poll(&fds, 1, Int32(clamping: remaining))
                } while ready < 0 && errno == EINTR
                if ready == 0 {
                    _ = Syscall.close(descriptor)
                    throw HCIError(
                        code: .timedOut,
                        message: "\(name): no connection within \(timeoutMilliseconds) ms",
                        cause: SystemCallError(call: "connect(\(host):\(port))", errno: ETIMEDOUT)
                    )
                }
                var socketError: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &socketError, &length)
                if socketError == 0 { return configured(descriptor) }
                code = socketError
            }
            _ = Syscall.close(descriptor)
            lastError = HCIError(
                code: .connectionFailed,
                message: "\(name): cannot connect (\(code == ECONNREFUSED ? "nothing listens there" : "connect failed"))",
                cause: SystemCallError(call: "connect(\(host):\(port))", errno: code)
            )
        }
        throw lastError ?? HCIError(code: .connectionFailed, message: "\(name): no address to connect to")
    }

    private static func configured(_ descriptor: Int32) -> Int32 {
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return descriptor
    }
}

func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}
