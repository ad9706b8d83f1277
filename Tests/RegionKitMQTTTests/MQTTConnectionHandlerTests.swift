import Logging
import NIOCore
import NIOEmbedded
import RegionKitConcurrency
import Testing
@testable import RegionKitMQTT

/// The per-connection protocol state on an `EmbeddedChannel` with virtual time: packet ids, QoS 1
/// acknowledgements, keepalive and CONNACK deadlines, and what ends a connection.
@Suite("MQTT connection handler")
struct MQTTConnectionHandlerTests {
    final class Received: Sendable {
        let messages = LockedBox<[MQTTMessage]>([])
    }

    struct Harness {
        let channel: EmbeddedChannel
        let handler: MQTTConnectionHandler
        let received: Received
        var loop: EmbeddedEventLoop { channel.embeddedEventLoop }

        /// - Parameter acknowledgesLater: the consumer takes QoS 1 acknowledgements (``MQTTConnectionHandler/acknowledge(_:)``).
        init(keepAlive: TimeAmount = .seconds(30), connectTimeout: TimeAmount = .seconds(5), acknowledgesLater: Bool = false) throws {
            channel = EmbeddedChannel()
            let received = Received()
            self.received = received
            handler = MQTTConnectionHandler(
                connect: .init(clientID: "test", keepAliveSeconds: UInt16(keepAlive.nanoseconds / 1_000_000_000)),
                keepAlive: keepAlive, connectTimeout: connectTimeout,
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                onMessage: { message, packetID in
                    received.messages.withLock { $0.append(message) }
                    return acknowledgesLater && packetID != nil
                },
                connAckPromise: channel.eventLoop.makePromise(), closedPromise: channel.eventLoop.makePromise())
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1883)).wait()
        }

        func outbound() throws -> [MQTTPacket] {
            loop.run()
            var packets: [MQTTPacket] = []
            while let packet = try channel.readOutbound(as: MQTTPacket.self) { packets.append(packet) }
            return packets
        }

        func accept() throws {
            #expect(try outbound().first.map { if case .connect = $0 { true } else { false } } == true)
            try channel.writeInbound(MQTTPacket.connack(.init(sessionPresent: false, returnCode: .accepted)))
            #expect(try handler.connAckPromise.futureResult.wait() == false)
        }

        func publish(_ qos: MQTTQoS) -> EventLoopFuture<Void> {
            let promise = loop.makePromise(of: Void.self)
            handler.publish(MQTTMessage(topic: "t", payload: [1], qos: qos), promise: promise)
            return promise.futureResult
        }

        func closeReason() throws -> MQTTError? {
            loop.run()
            #expect(!channel.isActive)
            return try handler.closedPromise.futureResult.wait()
        }
    }

    @Test("QoS 1 publishes are pipelined with ids 1, 2, 3 and each completes on its own PUBACK")
    func pipelining() throws {
        let h = try Harness()
        try h.accept()
        let futures = (0..<3).map { _ in h.publish(.atLeastOnce) }
        let sent = try h.outbound()
        let ids: [UInt16?] = sent.map { if case .publish(let p) = $0 { p.packetID } else { nil } }
        #expect(ids == [1, 2, 3])
        let completed = LockedBox<[Bool]>([false, false, false])
        for (i, future) in futures.enumerated() { future.whenSuccess { completed.withLock { $0[i] = true } } }
        func done() -> [Bool] { completed.withLock { $0 } }
        try h.channel.writeInbound(MQTTPacket.puback(packetID: 2))
        #expect(done() == [false, true, false])
        try h.channel.writeInbound(MQTTPacket.puback(packetID: 3))
        try h.channel.writeInbound(MQTTPacket.puback(packetID: 1))
        #expect(done() == [true, true, true])
        // QoS 0 completes when written and carries no packet id.
        let qos0 = h.publish(.atMostOnce)
        #expect(try h.outbound() == [.publish(.init(message: MQTTMessage(topic: "t", payload: [1])))])
        try qos0.wait()
    }

    @Test("packet ids cycle through 1…65535, skip ids in flight, and run out with a typed error")
    func packetIDs() throws {
        let h = try Harness()
        try h.accept()
        var futures: [EventLoopFuture<Void>] = []
        for _ in 0..<65_535 { futures.append(h.publish(.atLeastOnce)) }
        let ids = try h.outbound().compactMap { if case .publish(let p) = $0 { p.packetID } else { nil } }
        #expect(ids.count == 65_535 && Set(ids).count == 65_535 && !ids.contains(0))
        #expect(throws: MQTTError.tooManyInFlight) { try h.publish(.atLeastOnce).wait() }
        try h.channel.writeInbound(MQTTPacket.puback(packetID: 7))
        try futures[6].wait()
        _ = h.publish(.atLeastOnce)
        let reused = try h.outbound().compactMap { if case .publish(let p) = $0 { p.packetID } else { nil } }
        #expect(reused == [7])
    }

    @Test("an incoming QoS 1 PUBLISH reaches onMessage, then is PUBACKed; QoS 0 is not acknowledged")
    func incoming() throws {
        let h = try Harness()
        try h.accept()
        let m1 = MQTTMessage(topic: "in/a", payload: [1, 2], qos: .atLeastOnce, retain: true)
        let m0 = MQTTMessage(topic: "in/b", payload: [], qos: .atMostOnce, retain: false)
        try h.channel.writeInbound(MQTTPacket.publish(.init(message: m1, packetID: 99)))
        try h.channel.writeInbound(MQTTPacket.publish(.init(message: m0)))
        #expect(h.received.messages.withLock { $0 } == [m1, m0])
        #expect(try h.outbound() == [.puback(packetID: 99)])
    }

    @Test("A consumer that takes the acknowledgements: no PUBACK on delivery; acknowledge() sends them in the order given")
    func deferredAcknowledgement() throws {
        let h = try Harness(acknowledgesLater: true)
        try h.accept()
        let m1 = MQTTMessage(topic: "in/a", payload: [1], qos: .atLeastOnce)
        let m0 = MQTTMessage(topic: "in/b", payload: [2], qos: .atMostOnce)
        try h.channel.writeInbound(MQTTPacket.publish(.init(message: m1, packetID: 7)))
        try h.channel.writeInbound(MQTTPacket.publish(.init(message: m0)))
        try h.channel.writeInbound(MQTTPacket.publish(.init(message: m1, packetID: 9)))
        #expect(h.received.messages.withLock { $0 } == [m1, m0, m1])
        #expect(try h.outbound() == [], "delivered, not acknowledged")
        h.handler.acknowledge([7])
        #expect(try h.outbound() == [.puback(packetID: 7)])
        h.handler.acknowledge([9])
        #expect(try h.outbound() == [.puback(packetID: 9)])
        // A broker that sends again what the session keeps: delivered again, acknowledged again.
        try h.channel.writeInbound(MQTTPacket.publish(.init(message: m1, packetID: 7)))
        #expect(try h.outbound() == [])
        h.handler.acknowledge([7])
        #expect(try h.outbound() == [.puback(packetID: 7)])
    }

    @Test("keepalive (virtual time): PINGREQ every keepalive; no answer within half of it closes with keepAliveTimeout")
    func keepAlive() throws {
        let h = try Harness(keepAlive: .seconds(10))
        try h.accept()
        h.loop.advanceTime(by: .seconds(9))
        #expect(try h.outbound().isEmpty)
        h.loop.advanceTime(by: .seconds(1))
        #expect(try h.outbound() == [.pingreq])
        h.loop.advanceTime(by: .seconds(4))
        try h.channel.writeInbound(MQTTPacket.pingresp)
        h.loop.advanceTime(by: .seconds(6))                     // t = 20: the second PINGREQ
        #expect(try h.outbound() == [.pingreq])
        #expect(h.channel.isActive)
        h.loop.advanceTime(by: .seconds(5))                     // t = 25: no PINGRESP
        #expect(try h.closeReason() == .keepAliveTimeout)
    }

    @Test("no CONNACK within the connect timeout closes with connectTimeout")
    func connectTimeout() throws {
        let h = try Harness(connectTimeout: .seconds(5))
        h.loop.advanceTime(by: .seconds(5))
        #expect(try h.closeReason() == .connectTimeout)
        #expect(throws: MQTTError.connectTimeout) { try h.handler.connAckPromise.futureResult.wait() }
    }

    @Test("a refusing CONNACK surfaces its return code and closes")
    func refused() throws {
        let h = try Harness()
        _ = try h.outbound()
        try h.channel.writeInbound(MQTTPacket.connack(.init(sessionPresent: false, returnCode: .notAuthorized)))
        #expect(throws: MQTTError.connectionRefused(.notAuthorized)) { try h.handler.connAckPromise.futureResult.wait() }
        #expect(try h.closeReason() == .connectionRefused(.notAuthorized))
    }

    @Test("a lost connection fails the QoS 1 publishes in flight with notConnected")
    func lostConnection() throws {
        let h = try Harness()
        try h.accept()
        let future = h.publish(.atLeastOnce)
        try h.channel.close().wait()
        #expect(throws: MQTTError.notConnected) { try future.wait() }
        #expect(try h.closeReason() == .connectionClosed)
        #expect(throws: MQTTError.notConnected) { try h.publish(.atMostOnce).wait() }
    }

    @Test("a client-to-server packet from the broker is a protocol error that closes the connection")
    func unexpectedPacket() throws {
        let h = try Harness()
        try h.accept()
        try h.channel.writeInbound(MQTTPacket.pingreq)
        guard case .protocolError(let detail)? = try h.closeReason() else {
            Issue.record("no protocol error")
            return
        }
        #expect(detail.kind == .unexpectedPacket)
    }

    @Test("an acknowledgment of the wrong kind for a packet id in flight closes the connection and fails the request, never strands it")
    func mismatchedAcknowledgment() throws {
        for wrong in [MQTTPacket.suback(.init(packetID: 1, returnCodes: [0])), .unsuback(packetID: 1)] {
            let h = try Harness()
            try h.accept()
            // Packet id 1: a QoS 1 PUBLISH in flight; the broker answers it with a SUBACK or an UNSUBACK.
            let future = h.publish(.atLeastOnce)
            _ = try h.outbound()
            try h.channel.writeInbound(wrong)
            guard case .protocolError(let detail)? = try h.closeReason() else {
                Issue.record("no protocol error for \(wrong)")
                continue
            }
            #expect(detail.kind == .unexpectedPacket && detail.what.contains("packet id 1"), "\(detail)")
            // The publish is failed with the connection (retried on the next one), not left waiting for good.
            #expect(throws: MQTTError.notConnected) { try future.wait() }
        }
        // And a PUBACK for a SUBSCRIBE in flight.
        let h = try Harness()
        try h.accept()
        let promise = h.loop.makePromise(of: [UInt8].self)
        h.handler.subscribe([.init(filter: "a/#", qos: .atLeastOnce)], promise: promise)
        _ = try h.outbound()
        try h.channel.writeInbound(MQTTPacket.puback(packetID: 1))
        guard case .protocolError? = try h.closeReason() else {
            Issue.record("no protocol error for a PUBACK of a SUBSCRIBE")
            return
        }
        #expect(throws: MQTTError.notConnected) { try promise.futureResult.wait() }
    }

    @Test("disconnectAndClose sends DISCONNECT and reports a clean close (nil)")
    func cleanDisconnect() throws {
        let h = try Harness()
        try h.accept()
        h.handler.disconnectAndClose()
        #expect(try h.outbound() == [.disconnect])
        #expect(try h.closeReason() == nil)
    }
}
