import Foundation
import Testing
import RegionKitConcurrency
import RegionKitTestSupport
@testable import RegionKitMQTT

/// Backpressure (``MQTTReadPause``) against a real Mosquitto: while the consumer says it is behind,
/// the client reads nothing more from the broker for up to the maximum hold (the broker keeps the
/// QoS 1 messages queued), keeps the connection through pings it cannot read the answers of, gets
/// everything once the consumer has caught up — and, while it stays behind, one read per hold.
@Suite("MQTT client: reading paused while the consumer is behind", .serialized, .tags(.endToEnd),
       .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
struct MQTTReadPauseTests {
    @Test("Held past a whole keepalive: no message read, no disconnection; all 300 read after the consumer caught up",
          .timeLimit(.minutes(2)))
    func pausedAndResumed() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let backlog = LockedBox(0)
        // A hold longer than the test's: only the backlog ends it here.
        let pause = MQTTReadPause(pauseAbove: 10, resumeAtOrBelow: 5, maximumHold: .seconds(60)) { backlog.withLock { $0 } }
        // A keepalive of 2 s: a ping at 2 s whose answer is due at 3 s, inside the 4 s hold.
        let probe = MQTTClientProbe(configuration: try MQTTBrokerEndToEndTests.configuration(broker) { $0.keepAlive = .seconds(2) },
                                    readPause: pause)
        try await probe.client.subscribe("rk/in/#", qos: .atLeastOnce)
        probe.start()
        try await probe.client.waitUntilConnected()
        try await probe.client.subscribe("rk/in/#", qos: .atLeastOnce)

        // Not behind: read as they come.
        try broker.publishLines(topic: "rk/in/a", lines: (0..<100).map { Array("a\($0)".utf8) }, qos: 1)
        #expect(await probe.wait { probe.received.count == 100 })
        #expect(pause.pauses == 0)

        // Behind: the read already asked for may bring a little more, then nothing.
        backlog.withLock { $0 = 11 }
        try broker.publishLines(topic: "rk/in/b", lines: (0..<300).map { Array("b\($0)".utf8) }, qos: 1)
        try await Task.sleep(for: .seconds(1))
        let held = probe.received.count
        try await Task.sleep(for: .seconds(3))
        #expect(probe.received.count == held, "nothing read while held (\(held) then \(probe.received.count))")
        #expect(held < 400, "the rest waits at the broker")
        #expect(pause.pauses == 1 && pause.isPaused)
        #expect(pause.pausedTime >= .seconds(4), "the current hold counts")
        #expect(probe.disconnectedCount == 0, "a PINGRESP left unread in the socket is not a dead broker: \(probe.disconnections)")

        // Still above the resume mark: still held.
        backlog.withLock { $0 = 6 }
        try await Task.sleep(for: .milliseconds(300))
        #expect(probe.received.count == held)

        // Caught up: everything, in order, on the same connection.
        backlog.withLock { $0 = 5 }
        #expect(await probe.wait { probe.received.count == 400 }, "\(probe.received.count) of 400")
        #expect(probe.received.suffix(300).map { String(decoding: $0.payload, as: UTF8.self) } == (0..<300).map { "b\($0)" })
        #expect(probe.connectedCount == 1 && probe.disconnectedCount == 0)
        #expect(!pause.isPaused && pause.pausedTime >= .seconds(4))
        #expect(probe.logs.text.contains("reads from the broker are held back"))
        await probe.stop()
    }

    @Test("A consumer that stays behind still gets one read per maximum hold: all 300 arrive, over several holds",
          .timeLimit(.minutes(2)))
    func behindForGoodStillReads() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let pause = MQTTReadPause(pauseAbove: 10, resumeAtOrBelow: 5, maximumHold: .milliseconds(200)) { 11 }
        let probe = MQTTClientProbe(configuration: try MQTTBrokerEndToEndTests.configuration(broker), readPause: pause)
        try await probe.client.subscribe("rk/in/#", qos: .atLeastOnce)
        probe.start()
        try await probe.client.waitUntilConnected()
        try await probe.client.subscribe("rk/in/#", qos: .atLeastOnce)
        // QoS 1: Mosquitto has at most 20 unacknowledged in flight, so 300 take many reads.
        try broker.publishLines(topic: "rk/in/c", lines: (0..<300).map { Array("c\($0)".utf8) }, qos: 1)
        #expect(await probe.wait(timeout: .seconds(60)) { probe.received.count == 300 }, "\(probe.received.count) of 300")
        #expect(probe.received.map { String(decoding: $0.payload, as: UTF8.self) } == (0..<300).map { "c\($0)" })
        #expect(pause.pauses >= 2, "held again after each read: \(pause.pauses)")
        #expect(probe.connectedCount == 1 && probe.disconnectedCount == 0)
        await probe.stop()
    }
}
