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
        (listener, port) = try Loopback.listen(backlog: backlog)
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
