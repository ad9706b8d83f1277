import Foundation
import Testing
import RegionKitCore
@testable import RegionKitLocation
import RegionKitTestSupport

@Suite("gpsd client over TCP (in-process fake server)")
struct GPSDClientTests {
    static let version = #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#
    static func tpv(_ s: Int, mode: Int = 3) -> String {
        mode <= 1 ? #"{"class":"TPV","mode":1}"#
            : #"{"class":"TPV","mode":\#(mode),"time":"2020-01-01T00:00:0\#(s).000Z","lat":1.\#(s),"lon":2.\#(s),"eph":5}"#
    }

    @Test("sends WATCH, yields fixes, skips repeats and junk, reconnects after gpsd restarts")
    func reconnect() async throws {
        let server = try FakeGPSDServer(scripts: [
            [GPSDClientTests.version, GPSDClientTests.tpv(1), GPSDClientTests.tpv(1), "garbage{", GPSDClientTests.tpv(2)],
            [GPSDClientTests.version, #"{"class":"SKY","hdop":1.0}"#, GPSDClientTests.tpv(0, mode: 1), GPSDClientTests.tpv(3)],
        ])
        let client = GPSDClient(configuration: .init(
            port: server.port, initialBackoff: 0.05, maximumBackoff: 0.2, maximumReconnectAttempts: 3,
            clock: { Timestamp(seconds: 99) }))
        let events = await collect(client.events(), count: 100, timeout: 15)
        var fixes: [LocationFix] = []
        var connects = 0, disconnects = 0, diagnostics = 0
        var gaveUp = false
        for e in events {
            switch e {
            case .fix(let f, _): fixes.append(f)
            case .connected: connects += 1
            case .disconnected(_, let retry): disconnects += 1; if retry == nil { gaveUp = true }
            case .diagnostic(let d): diagnostics += 1; #expect(d.code == .malformedJSON && d.line == 4)
            default: break
            }
        }
        #expect(server.received.allSatisfy { $0 == "?WATCH={\"enable\":true,\"json\":true}\n" } && server.received.count == 2)
        #expect(connects == 2)
        #expect(diagnostics == 1)
        #expect(gaveUp)                         // after the scripts run out, connects fail → gives up
        #expect(disconnects >= 2)
        #expect(fixes.count == 4)               // tpv(1) repeated once: dropped
        #expect(fixes.map(\.latitude).prefix(2) == [1.1, 1.2])
        #expect(fixes[2].mode == .noFix && fixes[2].timestamp.seconds == 99)   // mode 1 → unavailable, clock time
        #expect(fixes[3].latitude == 1.3 && fixes[3].horizontalAccuracy == 5)
    }

    @Test("connection refused: backs off, then gives up with connectionFailed")
    func refused() async throws {
        // Bind then close a listener to get a port nobody listens on.
        let server = try FakeGPSDServer(scripts: [])
        try await Task.sleep(nanoseconds: 100_000_000)
        let client = GPSDClient(configuration: .init(port: server.port, initialBackoff: 0.01, maximumBackoff: 0.04, maximumReconnectAttempts: 2))
        let events = await collect(client.events(), count: 10, timeout: 10)
        var retries: [Double?] = []
        for case .disconnected(let e, let r) in events {
            #expect(e.code == .connectionFailed)
            retries.append(r)
        }
        #expect(retries == [0.01, 0.02, nil])   // exponential backoff, then give up
    }

    @Test("fixes() reports location unavailable when the connection drops")
    func unavailableOnDrop() async throws {
        let server = try FakeGPSDServer(scripts: [[GPSDClientTests.version, GPSDClientTests.tpv(1)]])
        let client = GPSDClient(configuration: .init(
            port: server.port, initialBackoff: 0.05, maximumReconnectAttempts: 1, clock: { Timestamp(seconds: 7) }))
        let fixes = await collect(client.fixes(), count: 2, timeout: 10)
        #expect(fixes.count == 2)
        #expect(fixes.first?.latitude == 1.1)
        #expect(fixes.last?.mode == .noFix && fixes.last?.timestamp.seconds == 7)
    }
}

@Suite("gpsd client: a consumer that falls behind is told what it lost")
struct GPSDClientDropTests {
    /// 30 distinct fixes (latitudes 10.00 … 10.29), so none is a repeat.
    static let fixes = (0..<30).map { #"{"class":"TPV","mode":3,"time":"2020-01-01T00:00:00.000Z","lat":10.\#(String(format: "%02d", $0)),"lon":2.0}"# }

    @Test("A buffer of 4 and a consumer that starts late: the oldest go, and a droppedEvents diagnostic counts them so that what arrived plus the count is everything sent (before, they went without a word)")
    func countsDrops() async throws {
        let server = try FakeGPSDServer(scripts: [[GPSDClientTests.version] + Self.fixes])
        let client = GPSDClient(configuration: .init(port: server.port, initialBackoff: 0.01, maximumReconnectAttempts: 0, eventBuffer: 4))
        let stream = client.events()
        // The worker connects, reads 31 lines (5 ms apart), sees gpsd close and gives up (no reconnect
        // allowed), all before anything is read.
        try await Task.sleep(for: .seconds(1.5))
        let events = await collect(stream, count: 100, timeout: 10)
        // connected, version, 30 fixes, the final disconnect.
        let sent = 1 + 1 + Self.fixes.count + 1
        let notices = events.compactMap { event -> LocationInputError? in
            if case .diagnostic(let problem) = event, problem.code == .droppedEvents { return problem }
            return nil
        }
        let notice = try #require(notices.first)
        #expect(notices.count == 1 && events.count == 4, "\(events)")
        let count = try #require(Int(notice.message.prefix { $0.isNumber }))
        #expect(events.count - 1 + count == sent, "\(notice.message)")
        #expect(notice.message.contains("fell more than 4 behind"))
        // The newest survived: the final disconnect, without a retry.
        #expect(events.contains { if case .disconnected(_, nil) = $0 { return true } else { return false } })
    }

    @Test("fixes() with a buffer of 4 and a consumer that starts late: the newest fixes and the lost connection, in order (it held all 31)")
    func fixesKeepTheNewest() async throws {
        let server = try FakeGPSDServer(scripts: [[GPSDClientTests.version] + Self.fixes])
        let client = GPSDClient(configuration: .init(port: server.port, initialBackoff: 0.01, maximumReconnectAttempts: 0,
                                                      clock: { Timestamp(seconds: 7) }, eventBuffer: 4))
        let stream = client.fixes()
        try await Task.sleep(for: .seconds(1.5))
        let fixes = await collect(stream, count: 100, timeout: 10)
        #expect((2...4).contains(fixes.count), "\(fixes.map(\.latitude))")
        #expect(fixes.last?.mode == .noFix && fixes.last?.timestamp.seconds == 7, "the lost connection last")
        let latitudes = fixes.dropLast().map(\.latitude)
        #expect(latitudes.last == 10.29 && latitudes == latitudes.sorted() && latitudes.allSatisfy { $0 >= 10.26 }, "the newest: \(latitudes)")
    }

    @Test("A consumer that keeps up gets every event and no notice")
    func noDropsNoNotice() async throws {
        let server = try FakeGPSDServer(scripts: [[GPSDClientTests.version] + Self.fixes])
        // (64: a consumer would have to fall 320 ms behind, on a busy machine too.)
        let client = GPSDClient(configuration: .init(port: server.port, initialBackoff: 0.01, maximumReconnectAttempts: 0, eventBuffer: 64))
        let events = await collect(client.events(), count: 100, timeout: 10)
        #expect(events.count == 1 + 1 + Self.fixes.count + 1)
        #expect(!events.contains { if case .diagnostic = $0 { return true } else { return false } })
    }
}
