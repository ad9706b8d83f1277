import Foundation
import NIOCore
import NIOPosix
import Testing
import RegionKitConcurrency
import RegionKitTestSupport
@testable import RegionKitMQTT

/// MQTTClient against an in-process fake broker (NIO on 127.0.0.1, port chosen by the system) that
/// answers CONNECT with fixed bytes: malformed or oversized packets from a broker end the
/// connection with a typed error, are logged at error level with what and where, and the client
/// keeps reconnecting. Packets before the bad one are still delivered.
@Suite("MQTT client against a misbehaving broker", .tags(.realTime))
struct MQTTClientFakeBrokerTests {
    /// Replies `reply` to the first bytes of every connection.
    final class ReplyHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let reply: [UInt8]
        init(reply: [UInt8]) { self.reply = reply }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: reply)), promise: nil)
        }
    }

    static func withFakeBroker(reply: [UInt8], _ body: (Int) async throws -> Void) async throws {
        try await withFakeBroker(handler: { ReplyHandler(reply: reply) }, body)
    }

    /// A broker on 127.0.0.1 (a port the system picks) whose every connection gets a fresh `handler()`.
    static func withFakeBroker(handler: @escaping @Sendable () -> some ChannelHandler & Sendable, _ body: (Int) async throws -> Void) async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler()) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)
        do {
            try await body(port)
        } catch {
            try await server.close()
            throw error
        }
        try await server.close()
    }

    static func probe(port: Int) throws -> MQTTClientProbe {
        var configuration = try MQTTClientConfiguration(url: "mqtt://127.0.0.1:\(port)")
        configuration.reconnectMinimumDelay = .milliseconds(20)
        configuration.reconnectMaximumDelay = .milliseconds(100)
        configuration.maximumIncomingPacketSize = 1 << 20
        return MQTTClientProbe(configuration: configuration)
    }

    static let connack: [UInt8] = [0x20, 0x02, 0x00, 0x00]
    static let goodPublish: [UInt8] = [0x30, 0x04, 0x00, 0x01, 0x61, 0x21]             // QoS 0 "a" → "!"

    @Test("protocol errors from the broker close the connection with a typed error; the client reconnects",
          arguments: [
            ([0x34, 0x05, 0x00, 0x01, 0x61, 0x00, 0x01], MQTTProtocolError.Kind.qos2NotSupported),  // QoS 2 PUBLISH
            ([0x90, 0x80, 0x80, 0x80, 0x01], .packetTooLarge),                                   // a SUBACK claiming 2 MiB > 1 MiB
            ([0xF0, 0x00], .reservedPacketType),                                                  // type 15
            ([0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], .malformedRemainingLength),                    // 5-byte length
            ([0x30, 0x05, 0x00, 0x03, 0xC3, 0x28, 0x61], .invalidUTF8),                           // topic not UTF-8
            ([0x50, 0x02, 0x00, 0x01], .qos2NotSupported),                                        // PUBREC
            ([0x82, 0x06, 0x00, 0x01, 0x00, 0x01, 0x61, 0x00], .unexpectedPacket),                // SUBSCRIBE from a broker
          ] as [([UInt8], MQTTProtocolError.Kind)])
    func malformed(bad: [UInt8], kind: MQTTProtocolError.Kind) async throws {
        try await Self.withFakeBroker(reply: Self.connack + Self.goodPublish + bad) { port in
            let probe = try Self.probe(port: port)
            probe.start()
            #expect(await probe.wait { probe.disconnectedCount >= 2 }, "disconnected, reconnected, disconnected again")
            await probe.stop()
            guard case .protocolError(let detail)?? = probe.disconnections.first else {
                Issue.record("expected a protocol error, got \(probe.disconnections)")
                return
            }
            #expect(detail.kind == kind)
            #expect(probe.connectedCount >= 2)
            #expect(probe.received.first == MQTTMessage(topic: "a", payload: [0x21]), "the packet before the bad one was delivered")
            let errors = probe.logs.all.filter { $0.hasPrefix("error") }
            #expect(errors.contains { $0.contains("what=") && $0.contains("offset=") || $0.contains("unexpected packet") }, "\(errors)")
        }
    }

    /// A broker that answers CONNECT with a CONNACK, then a retained QoS 1 PUBLISH of 1.5 MiB
    /// (over the client's 1 MiB limit) sent in 64 KiB pieces, then a small one; it records what
    /// the client sends after its CONNECT.
    final class OversizedPublishHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let received = LockedBox<[UInt8]>([])
        let connections = LockedBox(0)

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            let first = connections.withLock { count in defer { count += 1 }; return count == 0 }
            guard first else {
                received.withLock { $0 += bytes.readBytes(length: bytes.readableBytes) ?? [] }
                return
            }
            let payload = 1_572_864
            let remaining = 2 + 5 + 2 + payload               // topic length, "big/a", packet id, payload
            var big: [UInt8] = [0x33]                        // PUBLISH, QoS 1, retain
            var length = remaining                           // remaining length 1,572,873: 3 varint bytes
            repeat {
                var byte = UInt8(length & 0x7F)
                length >>= 7
                if length > 0 { byte |= 0x80 }
                big.append(byte)
            } while length > 0
            big += [0x00, 0x05] + Array("big/a".utf8)        // topic name
            big += [0x12, 0x34]                              // packet id 0x1234
            big += [UInt8](repeating: 0x61, count: payload)  // payload
            context.write(wrapOutboundOut(ByteBuffer(bytes: MQTTClientFakeBrokerTests.connack)), promise: nil)
            var offset = 0
            while offset < big.count {
                let end = min(big.count, offset + 65_536)
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: big[offset..<end])), promise: nil)
                offset = end
            }
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: MQTTClientFakeBrokerTests.goodPublish)), promise: nil)
        }
    }

    @Test("A PUBLISH over the maximum incoming packet size is skipped as its bytes arrive: acknowledged (QoS 1), reported with its topic and size, the next message delivered, the connection kept")
    func oversizedPublishSkipped() async throws {
        let handler = OversizedPublishHandler()
        try await Self.withFakeBroker(handler: { handler }) { port in
            let probe = try Self.probe(port: port)
            probe.start()
            #expect(await probe.wait { probe.received.count == 1 }, "the message after the big one: \(probe.allEvents)")
            #expect(await probe.wait { handler.received.withLock { $0 }.count >= 4 }, "no PUBACK")
            let size = 1 + 3 + 2 + 5 + 2 + 1_572_864         // fixed header, remaining length, topic, packet id, payload
            #expect(probe.allEvents.contains { if case .messageSkipped("big/a", size, true) = $0 { true } else { false } }, "\(probe.allEvents)")
            #expect(probe.received == [MQTTMessage(topic: "a", payload: [0x21])])
            #expect(Array(handler.received.withLock { $0 }.prefix(4)) == [0x40, 0x02, 0x12, 0x34], "PUBACK for packet id 0x1234")
            #expect(probe.disconnectedCount == 0 && probe.connectedCount == 1 && probe.client.skippedMessages == 1)
            #expect(probe.logs.all.contains { $0.contains("skipped a message larger than the maximum incoming packet size") && $0.contains("big/a") })
            await probe.stop()
        }
    }

    /// A broker that accepts every connection, refuses the first connection's SUBSCRIBE (SUBACK
    /// 0x80) and then closes it; on later connections it grants the SUBSCRIBE and publishes one
    /// message on `a/x`.
    final class RefuseOnceHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let connections: LockedBox<Int>
        let reads = LockedBox(0)
        init(connections: LockedBox<Int>) { self.connections = connections }

        func channelActive(context: ChannelHandlerContext) {
            connections.withLock { $0 += 1 }
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            let first = connections.withLock { $0 } == 1
            while let type = bytes.readInteger(as: UInt8.self), let length = bytes.readInteger(as: UInt8.self),
                  let body = bytes.readBytes(length: Int(length)) {
                switch type >> 4 {
                case 1:   // CONNECT → CONNACK, accepted
                    context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: MQTTClientFakeBrokerTests.connack)), promise: nil)
                case 8:   // SUBSCRIBE (packet id in its first two bytes) → SUBACK
                    let suback: [UInt8] = [0x90, 0x03, body[0], body[1], first ? 0x80 : 0x00]
                    if first {
                        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: suback)), promise: nil)
                        context.close(promise: nil)
                    } else {
                        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: suback + [0x30, 0x06, 0x00, 0x03, 0x61, 0x2F, 0x78, 0x21])), promise: nil)
                    }
                default: break
                }
            }
        }
    }

    @Test("a refused subscription is reported, kept, and asked for again on the next connection, whose messages then arrive")
    func refusedSubscriptionIsKept() async throws {
        let connections = LockedBox(0)
        try await Self.withFakeBroker(handler: { RefuseOnceHandler(connections: connections) }) { port in
            let probe = try Self.probe(port: port)
            probe.start()
            #expect(await probe.wait { probe.connectedCount >= 1 })
            await #expect(throws: MQTTError.subscriptionFailed(filter: "a/#")) { try await probe.client.subscribe("a/#", qos: .atMostOnce) }
            // Reported as an event (the hub makes its sources unavailable on it), and kept: the next
            // connection subscribes again and the broker's message on a/x is delivered.
            #expect(probe.allEvents.contains { if case .subscriptionRefused("a/#") = $0 { true } else { false } })
            #expect(await probe.wait { probe.received == [MQTTMessage(topic: "a/x", payload: [0x21])] }, "\(probe.received)")
            #expect(connections.withLock { $0 } >= 2)
            await probe.stop()
        }
    }

    /// Refuses the first `refusals` SUBSCRIBEs and keeps the connection (an ACL fixed and reloaded
    /// while clients stay connected), then grants and publishes one message on a/x.
    final class RefuseThenGrantHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let connections: LockedBox<Int>
        let subscribes = LockedBox(0)
        let refusals: Int
        init(connections: LockedBox<Int>, refusals: Int) { (self.connections, self.refusals) = (connections, refusals) }

        func channelActive(context: ChannelHandlerContext) {
            connections.withLock { $0 += 1 }
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            while let type = bytes.readInteger(as: UInt8.self), let length = bytes.readInteger(as: UInt8.self),
                  let body = bytes.readBytes(length: Int(length)) {
                switch type >> 4 {
                case 1:   // CONNECT → CONNACK, accepted
                    context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: MQTTClientFakeBrokerTests.connack)), promise: nil)
                case 8:   // SUBSCRIBE (packet id in its first two bytes) → SUBACK: 0x80 refused, 0x00 granted QoS 0
                    let count = subscribes.withLock { $0 += 1; return $0 }
                    let granted = count > refusals
                    var reply: [UInt8] = [0x90, 0x03, body[0], body[1], granted ? 0x00 : 0x80]
                    if granted { reply += [0x30, 0x06, 0x00, 0x03, 0x61, 0x2F, 0x78, 0x21] }   // PUBLISH a/x "!"
                    context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: reply)), promise: nil)
                default: break
                }
            }
        }
    }

    @Test("a subscription refused on a connection that stays up is asked for again after a delay on it: once granted, restored is reported and its messages arrive")
    func refusedSubscriptionAskedAgain() async throws {
        let connections = LockedBox(0)
        let handler = RefuseThenGrantHandler(connections: connections, refusals: 3)
        try await Self.withFakeBroker(handler: { handler }) { port in
            let probe = try Self.probe(port: port)
            probe.start()
            #expect(await probe.wait { probe.connectedCount >= 1 })
            await #expect(throws: MQTTError.subscriptionFailed(filter: "a/#")) { try await probe.client.subscribe("a/#", qos: .atMostOnce) }
            #expect(await probe.wait { probe.received == [MQTTMessage(topic: "a/x", payload: [0x21])] }, "\(probe.received)")
            #expect(probe.allEvents.contains { if case .subscriptionRestored("a/#") = $0 { true } else { false } })
            // Refused three times, granted at the fourth SUBSCRIBE, all on the one connection.
            #expect(handler.subscribes.withLock { $0 } == 4)
            #expect(connections.withLock { $0 } == 1)
            #expect(probe.allEvents.filter { if case .subscriptionRefused = $0 { true } else { false } }.count == 1, "one refusal reported, not one per attempt")
            await probe.stop()
        }
    }

    @Test("a refusal of a subscription re-sent at connection is reported after that connection's .connected, however long its handler takes (a handler that resets its state on .connected must not erase it)")
    func refusalComesAfterConnected() async throws {
        let handler = RefuseThenGrantHandler(connections: LockedBox(0), refusals: 1)
        try await Self.withFakeBroker(handler: { handler }) { port in
            var configuration = try MQTTClientConfiguration(url: "mqtt://127.0.0.1:\(port)")
            configuration.reconnectMinimumDelay = .milliseconds(400)   // the first ask again comes after the slow handler
            configuration.reconnectMaximumDelay = .seconds(1)
            // `.connected` is handled slowly (a preempted task): the broker's SUBACK 0x80 is read meanwhile.
            let probe = MQTTClientProbe(configuration: configuration) { event in
                if case .connected = event { usleep(150_000) }
            }
            try await probe.client.subscribe("a/#", qos: .atMostOnce)   // not connected: remembered, sent at connection
            probe.start()
            #expect(await probe.wait { probe.allEvents.contains { if case .subscriptionRestored = $0 { true } else { false } } }, "\(probe.allEvents)")
            let kinds = probe.allEvents.map { event -> String in
                switch event {
                case .connected: "connected"
                case .subscriptionRefused: "refused"
                case .subscriptionRestored: "restored"
                case .disconnected: "disconnected"
                case .messageSkipped: "skipped"
                }
            }
            #expect(kinds == ["connected", "refused", "restored"])
            await probe.stop()
        }
    }

    @Test("a refusing CONNACK surfaces as connectionRefused with its code; never connected")
    func refused() async throws {
        try await Self.withFakeBroker(reply: [0x20, 0x02, 0x00, 0x02]) { port in
            let probe = try Self.probe(port: port)
            probe.start()
            #expect(await probe.wait { probe.disconnectedCount >= 2 })
            await probe.stop()
            #expect(probe.disconnections.first == .some(.connectionRefused(.identifierRejected)))
            #expect(probe.connectedCount == 0)
        }
    }

    @Test("nothing listening: connectionFailed events with backoff; waitUntilConnected throws after shutdown; run() ends")
    func nothingListening() async throws {
        try await Loopback.withRefusingPort { dead in
            let probe = try Self.probe(port: Int(dead))
            probe.start()
            #expect(await probe.wait { probe.disconnectedCount >= 3 })
            if case .connectionFailed?? = probe.disconnections.first {} else {
                Issue.record("expected connectionFailed, got \(probe.disconnections)")
            }
            await #expect(throws: MQTTError.notConnected) {
                try await probe.client.publish(MQTTMessage(topic: "a", payload: [], qos: .atLeastOnce, retain: false))
            }
            let client = probe.client
            let waiter = Task { try await client.waitUntilConnected() }
            await probe.stop()
            await #expect(throws: MQTTError.shutdown) { try await waiter.value }
            await #expect(throws: MQTTError.shutdown) { try await client.waitUntilConnected() }
            await #expect(throws: MQTTError.shutdown) { try await client.subscribe("a", qos: .atMostOnce) }
        }
    }

    @Test("cancelling the task running run() shuts the client down")
    func cancellation() async throws {
        try await Loopback.withRefusingPort { dead in
            let probe = try Self.probe(port: Int(dead))
            let client = probe.client
            let running = Task { await client.run() }
            #expect(await probe.wait { probe.disconnectedCount >= 1 })
            running.cancel()
            await running.value
            await #expect(throws: MQTTError.shutdown) { try await client.waitUntilConnected() }
            let waiting = Task { try await client.waitUntilConnected() }
            waiting.cancel()
            await #expect(throws: MQTTError.self) { try await waiting.value }
        }
    }

    @Test("invalid topic names and filters are refused before anything is sent")
    func invalidArguments() async throws {
        let probe = try Self.probe(port: 1)
        await #expect(throws: MQTTError.invalidTopic("a/+", reason: "contains the wildcard '+' at byte 2")) {
            try await probe.client.publish(MQTTMessage(topic: "a/+", payload: []))
        }
        await #expect(throws: MQTTError.self) { try await probe.client.subscribe("a/#/b", qos: .atMostOnce) }
        await #expect(throws: MQTTError.notConnected) { try await probe.client.publish(MQTTMessage(topic: "a", payload: [])) }
    }
}
