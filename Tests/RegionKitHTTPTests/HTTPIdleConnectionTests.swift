import Foundation
import Testing
import RegionKitTestSupport

/// Connections that hold the server without a request in progress are closed after the idle
/// timeout (0.5 s here); a response in progress, an event stream included, is not idle.
@Suite("HTTP: idle and stalled connections are closed", .serialized)
struct HTTPIdleConnectionTests {
    /// Waits up to `limit` seconds for the server to close the connection: its time, or nil.
    /// (Blocking, as the other loopback tests' reads.)
    static func closed(_ connection: LoopbackConnection, within limit: Double) -> Double? {
        let started = Date()
        let deadline = started.addingTimeInterval(limit)
        while true {
            do {
                if try !connection.fill(deadline: deadline) { return Date().timeIntervalSince(started) }
            } catch {
                return nil   // still open at the deadline
            }
        }
    }

    @Test("a client that connects and sends nothing, or stops in the middle of a request head, is disconnected after the idle timeout")
    func stalledClients() async throws {
        let daemon = try await TestDaemon(idleTimeout: 0.5)
        defer { Task { try? await daemon.stop() } }
        let silent = try LoopbackConnection(port: daemon.port)
        let partial = try LoopbackConnection(port: daemon.port)
        partial.send("GET /v1/regions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthori")
        let silentClosed = try await offPool { Self.closed(silent, within: 5) }
        let partialClosed = try await offPool { Self.closed(partial, within: 5) }
        print("http-idle: idle timeout 0.5 s: a silent connection closed after \(silentClosed.map { String(format: "%.2f", $0) } ?? "-") s, a half-sent head \(partialClosed.map { String(format: "%.2f", $0) } ?? "-") s later")
        #expect(silentClosed != nil, "a silent connection still open after 5 s")
        #expect(partialClosed != nil, "a half-sent request head still open after 5 s")
        #expect(partial.buffer.isEmpty || String(decoding: partial.buffer, as: UTF8.self).hasPrefix("HTTP/1.1 4"),
                "nothing but an error for an incomplete request: \(String(decoding: partial.buffer, as: UTF8.self))")
        // The server still serves.
        #expect(try await daemon.client().request("GET", "/healthz").status == 200)
    }

    @Test("a keep-alive connection is closed once idle after its response; an event stream stays open well past the timeout and still delivers")
    func keepAliveAndStreams() async throws {
        let daemon = try await TestDaemon(idleTimeout: 0.5)
        defer { Task { try? await daemon.stop() } }
        let connection = try LoopbackConnection(port: daemon.port)
        connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let (status, _) = try await offPool { try connection.head(deadline: Date().addingTimeInterval(5)) }
        #expect(status == 200)
        let closed = try await offPool { Self.closed(connection, within: 5) }
        #expect(closed != nil, "an idle keep-alive connection still open after 5 s")

        let stream = try await offPool { try EventStreamReader(port: daemon.port, token: "test-token") }
        #expect(stream.status == 200)
        try await Task.sleep(for: .seconds(2))   // four idle timeouts
        daemon.sight(from: 1, to: 4)
        let event = try await offPool { try stream.next(timeout: 5) }
        #expect(event.type == "didEnterRegion" || event.type == "didDetermineState", "after 2 s the stream still delivers: \(event.type)")
    }
}
