import Foundation
import Testing
import RegionKit
import RegionKitHTTP
import RegionKitService
import RegionKitTestSupport

/// Connections that hold the server without a request in progress are closed after the idle
/// timeout (0.5 s here); a response in progress, an event stream included, is not idle. A request
/// whose body trickles in is closed after the request timeout; connections past the maximum wait
/// to be accepted.
@Suite("HTTP: idle and stalled connections are closed", .serialized, .tags(.realTime))
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

    @Test("a request whose body trickles in (with or without a token) is disconnected after the request timeout; a body sent in time is served")
    func trickledBody() async throws {
        let daemon = try await TestDaemon(idleTimeout: 60, requestTimeout: 1)
        defer { Task { try? await daemon.stop() } }
        let body = #"{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":7}"#
        var trickling: [LoopbackConnection] = []
        for token in ["Authorization: Bearer test-token\r\n", ""] {
            let connection = try LoopbackConnection(port: daemon.port)
            connection.send("PUT /v1/regions/slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\(token)Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
            trickling.append(connection)
        }
        // A byte every 0.3 s to each: never idle, never complete.
        let closedAfter = try await offPool { () -> [Double?] in
            let started = Date()
            var closedAt: [Double?] = Array(repeating: nil, count: trickling.count)
            while Date().timeIntervalSince(started) < 8, closedAt.contains(where: { $0 == nil }) {
                for (index, connection) in trickling.enumerated() where closedAt[index] == nil {
                    connection.send(" ")
                    if Self.closed(connection, within: 0.15) != nil { closedAt[index] = Date().timeIntervalSince(started) }
                }
            }
            return closedAt
        }
        print("http-request-timeout: request timeout 1 s: trickling bodies closed after \(closedAfter.map { $0.map { String(format: "%.2f s", $0) } ?? "-" })")
        #expect(closedAfter.allSatisfy { $0 != nil }, "a trickling body still open after 8 s (request timeout 1 s): \(closedAfter)")
        let served = try await daemon.client().request("PUT", "/v1/regions/quick", body: body)
        #expect(served.status == 201, "\(served.text)")
    }

    @Test("http.maxConnections and http.requestTimeout reach the server's configuration (defaults 512 and 30 s); values out of range are refused, naming the key")
    func limitsFromSettings() throws {
        let configured = try HTTPConfiguration(settings: HTTPSettings(maxConnections: 64, requestTimeout: 5), environment: [:])
        #expect(configured.maxConnections == 64 && configured.requestTimeout == 5)
        let defaults = try HTTPConfiguration(settings: HTTPSettings(), environment: [:])
        #expect(defaults.maxConnections == 512 && defaults.requestTimeout == 30)
        for (settings, key) in [(HTTPSettings(maxConnections: 0), "http.maxConnections"), (HTTPSettings(maxConnections: 100_001), "http.maxConnections"),
                                (HTTPSettings(requestTimeout: .nan), "http.requestTimeout"), (HTTPSettings(requestTimeout: 0.5), "http.requestTimeout")] {
            #expect { try settings.validate() } throws: { ($0 as? RegionKitError)?.message.contains(key) == true }
        }
    }

    @Test("past the connection limit a connection waits to be accepted; it is served once another closes")
    func connectionLimit() async throws {
        let daemon = try await TestDaemon(maxConnections: 2)
        defer { Task { try? await daemon.stop() } }
        let held = [try LoopbackConnection(port: daemon.port), try LoopbackConnection(port: daemon.port)]
        for connection in held {
            connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let (status, _) = try await offPool { try connection.head(deadline: Date().addingTimeInterval(5)) }
            #expect(status == 200)
        }
        // A third: connected (the backlog), but not served while two are open.
        let third = try LoopbackConnection(port: daemon.port)
        third.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await #expect(throws: (any Error).self, "served past the limit") {
            _ = try await offPool { try third.head(deadline: Date().addingTimeInterval(1.5)) }
        }
        held[0].hangUp()
        let (status, _) = try await offPool { try third.head(deadline: Date().addingTimeInterval(5)) }
        #expect(status == 200, "served once a connection closed")
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
