import NIOCore
import NIOPosix
import RegionKitConcurrency
import Testing
import RegionKitTestSupport
@testable import RegionKitMQTT

/// The ordered server list of `MQTTClientConfiguration` and the client's failover over it, against
/// in-process fake brokers (NIO on 127.0.0.1) and closed ports.
@Suite("MQTT client server list and failover", .tags(.realTime))
struct MQTTServerListTests {
    @Test("urls: the first is the primary, the others are fallbacks in order; each URL is checked; none is an error")
    func parsesTheList() throws {
        let configuration = try MQTTClientConfiguration(urls: ["mqtt://10.0.0.1", "mqtts://10.0.0.2:8884", "mqtt://[::1]:1999"])
        #expect(configuration.host == "10.0.0.1" && configuration.port == 1883 && !configuration.useTLS)
        #expect(configuration.fallbackServers == [MQTTServer(host: "10.0.0.2", port: 8884, useTLS: true), MQTTServer(host: "::1", port: 1999)])
        #expect(configuration.servers.map(\.url) == ["mqtt://10.0.0.1:1883", "mqtts://10.0.0.2:8884", "mqtt://[::1]:1999"])
        #expect(configuration.description.hasPrefix("mqtt://10.0.0.1:1883, mqtts://10.0.0.2:8884, mqtt://[::1]:1999 client regionkit-"))
        #expect(try MQTTClientConfiguration(url: "mqtt://broker").servers == [MQTTServer(host: "broker", port: 1883)])
        #expect(throws: MQTTError.self) { _ = try MQTTClientConfiguration(urls: []) }
        do {
            _ = try MQTTClientConfiguration(urls: ["mqtt://ok", "http://bad"])
            Issue.record("a bad fallback URL was accepted")
        } catch {
            guard case .invalidURL(let url, _) = error else { Issue.record("\(error)"); return }
            #expect(url == "http://bad")
        }
    }

    /// Answers every CONNECT with an accepting CONNACK and then keeps the connection open.
    final class AcceptingBroker: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = Self.unwrapInboundIn(data)
            if bytes.readableBytesView.first == 0x10 {        // CONNECT
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: [0x20, 0x02, 0x00, 0x00])), promise: nil)
            }
        }
    }

    static func fakeBroker() async throws -> any Channel {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(AcceptingBroker()) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    @Test("a dead primary: the next server is tried at once, without the reconnect backoff")
    func skipsADeadPrimaryWithoutWaiting() async throws {
        let broker = try await Self.fakeBroker()
        defer { broker.close(promise: nil) }
        let port = try #require(broker.localAddress?.port)
        try await Loopback.withRefusingPort { dead in
            var configuration = try MQTTClientConfiguration(urls: ["mqtt://127.0.0.1:\(dead)", "mqtt://127.0.0.1:\(port)"])
            // A backoff this long would show: the fallback must be tried before any delay.
            configuration.reconnectMinimumDelay = .seconds(30)
            configuration.reconnectMaximumDelay = .seconds(30)
            let probe = MQTTClientProbe(configuration: configuration)
            probe.start()
            #expect(await probe.wait(timeout: .seconds(10)) { probe.client.isConnected })
            #expect(probe.client.currentServer == MQTTServer(host: "127.0.0.1", port: port))
            #expect(probe.disconnectedCount == 1, "one failed attempt on the dead primary: \(probe.disconnections)")
            await probe.stop()
            #expect(probe.client.currentServer == nil)
        }
    }

    @Test("a lost connection moves to the next server; with every server down the backoff applies once per round")
    func rotatesAfterALostConnection() async throws {
        let first = try await Self.fakeBroker()
        let second = try await Self.fakeBroker()
        defer { second.close(promise: nil) }
        let firstPort = try #require(first.localAddress?.port)
        let secondPort = try #require(second.localAddress?.port)
        var configuration = try MQTTClientConfiguration(urls: ["mqtt://127.0.0.1:\(firstPort)", "mqtt://127.0.0.1:\(secondPort)"])
        configuration.reconnectMinimumDelay = .milliseconds(20)
        configuration.reconnectMaximumDelay = .milliseconds(100)
        let probe = MQTTClientProbe(configuration: configuration)
        probe.start()
        #expect(await probe.wait { probe.client.currentServer?.port == firstPort }, "the primary first")
        probe.client.dropConnectionWithoutDisconnect()
        #expect(await probe.wait { probe.client.currentServer?.port == secondPort }, "then the next one, though the primary is still up")
        probe.client.dropConnectionWithoutDisconnect()
        #expect(await probe.wait { probe.client.currentServer?.port == firstPort }, "the list wraps around")
        await probe.stop()
        try await first.close()
    }

    @Test("Each failed attempt says whether another server is tried at once: every one but the round's last; with one server none")
    func saysWhenTheRoundEnds() async throws {
        try await Loopback.withRefusingPort { first in
            try await Loopback.withRefusingPort { second in
                for urls in [["mqtt://127.0.0.1:\(first)", "mqtt://127.0.0.1:\(second)"], ["mqtt://127.0.0.1:\(first)"]] {
                    var configuration = try MQTTClientConfiguration(urls: urls)
                    configuration.reconnectMinimumDelay = .milliseconds(10)
                    configuration.reconnectMaximumDelay = .milliseconds(20)
                    // The flag as each `.disconnected` is reported (read from the handler: how a caller reads it).
                    let client = LockedBox<MQTTClient?>(nil)
                    let flags = LockedBox<[Bool]>([])
                    let probe = MQTTClientProbe(configuration: configuration) { event in
                        guard case .disconnected(.some) = event, let client = client.withLock({ $0 }) else { return }
                        flags.withLock { $0.append(client.triesAnotherServerAfterFailure) }
                    }
                    client.withLock { $0 = probe.client }
                    probe.start()
                    #expect(await probe.wait(timeout: .seconds(10)) { flags.withLock { $0.count } >= 6 })
                    await probe.stop()
                    let heard = Array(flags.withLock { $0 }.prefix(6))
                    let expected = urls.count == 2 ? [true, false, true, false, true, false] : Array(repeating: false, count: 6)
                    #expect(heard == expected, "\(urls.count) server(s): \(heard)")
                }
            }
        }
    }
}
