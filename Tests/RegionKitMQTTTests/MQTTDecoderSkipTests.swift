import NIOCore
import NIOEmbedded
import Testing
import RegionKitConcurrency
@testable import RegionKitMQTT

/// The client's decoder skips a PUBLISH over its size limit as the bytes come, in whatever pieces
/// they come: its head (topic, packet id) goes down the pipeline as a user inbound event and the
/// packets after it decode as usual.
@Suite("MQTT decoder: oversized PUBLISH skipped across reads")
struct MQTTDecoderSkipTests {
    /// Records the user inbound events that reach the end of the pipeline.
    final class Events: ChannelInboundHandler, Sendable {
        typealias InboundIn = MQTTPacket
        typealias InboundOut = MQTTPacket
        let skipped = LockedBox<[MQTTPacket.OversizedPublish]>([])

        func channelRead(context: ChannelHandlerContext, data: NIOAny) { context.fireChannelRead(data) }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let head = event as? MQTTPacket.OversizedPublish { skipped.withLock { $0.append(head) } }
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// A QoS 1 retained PUBLISH to "a/b", packet id 9, with `payload` bytes.
    static func publish(payload: Int) -> [UInt8] {
        let remaining = 2 + 3 + 2 + payload
        precondition(remaining < 16_384)
        return [0x33,                                            // PUBLISH, QoS 1, retain
                UInt8(remaining & 0x7F) | 0x80, UInt8(remaining >> 7),   // remaining length, two varint bytes
                0x00, 0x03, 0x61, 0x2F, 0x62,                    // topic "a/b"
                0x00, 0x09]                                      // packet id 9
            + [UInt8](repeating: 0x55, count: payload)
    }

    static let pingresp: [UInt8] = [0xD0, 0x00]   // PINGRESP, remaining length 0

    /// Feeds `bytes` in pieces cut at `cuts` (offsets) to a fresh decoder with a 100-byte limit.
    static func decode(_ bytes: [UInt8], cuts: [Int]) throws -> (skipped: [MQTTPacket.OversizedPublish], packets: [MQTTPacket]) {
        let events = Events()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(MQTTDecoder(maximumPacketSize: 100)))
        try channel.pipeline.syncOperations.addHandler(events)
        var start = 0
        for cut in cuts + [bytes.count] where cut > start {
            try channel.writeInbound(ByteBuffer(bytes: bytes[start..<cut]))
            start = cut
        }
        var packets: [MQTTPacket] = []
        while let packet = try channel.readInbound(as: MQTTPacket.self) { packets.append(packet) }
        _ = try channel.finish()
        return (events.skipped.withLock { $0 }, packets)
    }

    @Test("Cut anywhere — inside the fixed header, the topic, the packet id, the payload, or exactly at the end of the skipped packet — the head is reported once and the next packet decodes")
    func piecesAnywhere() throws {
        let big = Self.publish(payload: 300)
        let head = MQTTPacket.OversizedPublish(topic: "a/b", packetID: 9, retain: true, size: big.count)
        let bytes = big + Self.pingresp + big + Self.pingresp
        for cuts in [[], [1], [2], [4], [6], [9], [10], [11], [150], [big.count], [big.count + 1], [3, 7, 200, big.count + 2, big.count + 5],
                     Array(stride(from: 1, to: bytes.count, by: 1))] {
            let (skipped, packets) = try Self.decode(bytes, cuts: cuts)
            #expect(skipped == [head, head], "cuts \(cuts.prefix(6))")
            #expect(packets == [.pingresp, .pingresp], "cuts \(cuts.prefix(6))")
        }
    }

    @Test("At the limit a PUBLISH is delivered; one byte over it is skipped; another oversized packet closes the connection (an error)")
    func boundary() throws {
        let atLimit = Self.publish(payload: 100 - 10)                 // 10 bytes of header, topic and packet id: 100 in all
        #expect(atLimit.count == 100)
        let (none, delivered) = try Self.decode(atLimit, cuts: [])
        #expect(none.isEmpty && delivered.count == 1)
        let over = Self.publish(payload: 91)
        let (skipped, _) = try Self.decode(over, cuts: [])
        #expect(skipped.map(\.size) == [101])
        // A SUBACK claiming 2 MiB is not skipped: the decoder fails.
        #expect(throws: (any Error).self) { _ = try Self.decode([0x90, 0x80, 0x80, 0x80, 0x01], cuts: []) }
    }
}
