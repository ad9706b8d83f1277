import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A scripted peer on 127.0.0.1 (a fake controller for the TCP transport, say): listens on a free
/// port, accepts one host, and lets the test read what the host sent and write raw bytes back.
///
/// ```swift
/// let peer = try LoopbackPeer()
/// defer { peer.shutdown() }
/// async let connected = peer.accept()
/// let transport = try await TCPTransport.connect(host: "127.0.0.1", port: peer.port)
/// #expect(await connected)
/// ```
public final class LoopbackPeer: @unchecked Sendable {
    public let listener: Int32
    public let port: UInt16
    private let lock = NSLock()
    private var client: Int32 = -1

    public init(backlog: Int32 = 1) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, backlog) == 0 else {
            let code = errno
            _ = close(descriptor)
            throw TestFailure("bind/listen on 127.0.0.1 failed: errno \(code)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        listener = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    /// Waits (at most `timeoutMilliseconds`) for the host to connect.
    public func accept(timeoutMilliseconds: Int32 = 20_000) async -> Bool {
        let listener = self.listener
        let accepted = await offThread { () -> Int32 in
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, timeoutMilliseconds) == 1 else { return -1 }
            return Glibc.accept(listener, nil, nil)
        }
        lock.withLock { client = accepted }
        return accepted >= 0
    }

    /// Reads exactly `count` bytes from the host, or fewer on timeout/EOF.
    public func read(_ count: Int, timeoutMilliseconds: Int32 = 20_000) async -> [UInt8] {
        let client = lock.withLock { self.client }
        return await offThread { () -> [UInt8] in
            var result: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: count)
            while result.count < count {
                var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0)]
                guard poll(&fds, 1, timeoutMilliseconds) == 1 else { break }
                let got = buffer.withUnsafeMutableBytes { Glibc.read(client, $0.baseAddress, count - result.count) }
                if got <= 0 { break }
                result += buffer[0..<got]
            }
            return result
        }
    }

    public func write(_ bytes: [UInt8]) {
        let client = lock.withLock { self.client }
        _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Closes the host connection (the controller "goes away").
    public func dropClient() {
        lock.withLock {
            if client >= 0 { _ = close(client) }
            client = -1
        }
    }

    public func shutdown() {
        dropClient()
        _ = close(listener)
    }
}
