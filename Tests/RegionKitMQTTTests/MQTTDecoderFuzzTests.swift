import NIOCore
import NIOEmbedded
import Testing
@testable import RegionKitMQTT

/// Seeded random and mutated byte streams into the decoder: it never crashes or hangs, and always
/// yields packets or a typed protocol error (with an offset inside the packet).
@Suite("MQTT decoder fuzz")
struct MQTTDecoderFuzzTests {
    /// SplitMix64: small, fast and reproducible across platforms.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func randomString(_ rng: inout SeededGenerator, topic: Bool) -> String {
        let alphabet = Array("abc/xyz0é€😀-_$")
        var s = String((0..<Int.random(in: 1...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
        if !topic, Bool.random(using: &rng) { s += Bool.random(using: &rng) ? "/+" : "/#" }
        return s
    }

    static func randomPacket(_ rng: inout SeededGenerator) -> MQTTPacket {
        let id = UInt16.random(in: 1...UInt16.max, using: &rng)
        let payload = (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let qos: MQTTQoS = Bool.random(using: &rng) ? .atMostOnce : .atLeastOnce
        let message = MQTTMessage(topic: randomString(&rng, topic: true), payload: payload, qos: qos, retain: Bool.random(using: &rng))
        switch Int.random(in: 0..<11, using: &rng) {
        case 0:
            return .connect(.init(clientID: randomString(&rng, topic: true), cleanSession: Bool.random(using: &rng),
                                  keepAliveSeconds: UInt16.random(in: 0...UInt16.max, using: &rng),
                                  will: Bool.random(using: &rng) ? message : nil,
                                  username: Bool.random(using: &rng) ? "user" : nil, password: nil))
        case 1: return .connack(.init(sessionPresent: Bool.random(using: &rng), returnCode: .init(rawValue: UInt8.random(in: 0...5, using: &rng))))
        case 2: return .publish(.init(message: message, packetID: qos == .atLeastOnce ? id : nil, dup: qos == .atLeastOnce && Bool.random(using: &rng)))
        case 3: return .puback(packetID: id)
        case 4: return .subscribe(.init(packetID: id, subscriptions: [.init(filter: randomString(&rng, topic: false), qos: qos)]))
        case 5: return .suback(.init(packetID: id, returnCodes: [0, 1, 0x80]))
        case 6: return .unsubscribe(.init(packetID: id, filters: [randomString(&rng, topic: false), "a/b"]))
        case 7: return .unsuback(packetID: id)
        case 8: return .pingreq
        case 9: return .pingresp
        default: return .disconnect
        }
    }

    /// Decodes everything in `buffer`: the packets, then the error (if any).
    static func drain(_ bytes: [UInt8], maximum: Int = 4096) -> (packets: [MQTTPacket], error: MQTTError?) {
        var buffer = ByteBuffer(bytes: bytes)
        var packets: [MQTTPacket] = []
        do {
            while let packet = try MQTTPacket.decode(from: &buffer, maximumPacketSize: maximum) {
                packets.append(packet)
                #expect(packets.count <= bytes.count, "progress: at least 1 byte per packet")
            }
            return (packets, nil)
        } catch {
            return (packets, error)
        }
    }

    @Test("10,000 valid streams round trip; their mutations give packets or a typed protocol error")
    func mutatedStreams() throws {
        var rng = SeededGenerator(state: 0x5EED_2026)
        var errors = 0, packetsDecoded = 0
        for _ in 0..<10_000 {
            let packets = (0..<Int.random(in: 1...6, using: &rng)).map { _ in Self.randomPacket(&rng) }
            var buffer = ByteBufferAllocator().buffer(capacity: 256)
            for packet in packets { try packet.encode(into: &buffer) }
            var bytes = Array(buffer.readableBytesView)
            let clean = Self.drain(bytes)
            #expect(clean.error == nil)
            #expect(clean.packets == packets)

            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                guard !bytes.isEmpty else { break }
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes[at] ^= 1 << UInt8.random(in: 0...7, using: &rng)
                case 2: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: at)
                case 3: bytes.remove(at: at)
                default: bytes.removeLast(Int.random(in: 0...bytes.count - at, using: &rng))
                }
            }
            let mutated = Self.drain(bytes)
            packetsDecoded += mutated.packets.count
            if let error = mutated.error {
                errors += 1
                guard case .protocolError(let detail) = error else {
                    Issue.record("not a protocol error: \(error)")
                    continue
                }
                #expect(detail.offset >= 0 && detail.offset <= bytes.count, "offsets point into (or just past) the packet")
                #expect(!detail.what.isEmpty)
            }
        }
        #expect(errors > 1_000, "the mutations do reach the error paths (\(errors))")
        #expect(packetsDecoded > 10_000)
    }

    @Test("5,000 random byte strings (biased to valid headers) never crash the decoder")
    func randomBytes() {
        var rng = SeededGenerator(state: 42)
        var errors = 0
        for _ in 0..<5_000 {
            var bytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if !bytes.isEmpty, Bool.random(using: &rng) {
                // A plausible fixed header: a real type with its required flags and a small length.
                let headers: [UInt8] = [0x10, 0x20, 0x30, 0x32, 0x33, 0x40, 0x82, 0x90, 0xA2, 0xB0, 0xC0, 0xD0, 0xE0]
                bytes[0] = headers.randomElement(using: &rng)!
                if bytes.count > 1 { bytes[1] = UInt8(min(bytes.count - 2, Int.random(in: 0...70, using: &rng))) }
            }
            if case .protocolError? = Self.drain(bytes, maximum: 64).error { errors += 1 }
        }
        #expect(errors > 2_500)
    }

    @Test("the NIO decoder yields the same packets whatever the chunking of the stream")
    func chunkedThroughPipeline() throws {
        var rng = SeededGenerator(state: 7)
        for _ in 0..<300 {
            let packets = (0..<Int.random(in: 1...20, using: &rng)).map { _ in Self.randomPacket(&rng) }
            var stream = ByteBufferAllocator().buffer(capacity: 1024)
            for packet in packets { try packet.encode(into: &stream) }
            let channel = EmbeddedChannel(handler: ByteToMessageHandler(MQTTDecoder()))
            while stream.readableBytes > 0 {
                let chunk = stream.readSlice(length: min(stream.readableBytes, Int.random(in: 1...40, using: &rng)))!
                try channel.writeInbound(chunk)
            }
            var decoded: [MQTTPacket] = []
            while let packet = try channel.readInbound(as: MQTTPacket.self) { decoded.append(packet) }
            #expect(decoded == packets)
            _ = try channel.finish()
        }
    }

    @Test("a malformed packet in the pipeline raises MQTTError.protocolError")
    func pipelineError() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(MQTTDecoder()))
        #expect(throws: MQTTError.protocolError(.init(kind: .reservedPacketType, what: "reserved packet type 15", offset: 0))) {
            try channel.writeInbound(ByteBuffer(bytes: [0xD0, 0x00, 0xF0, 0x00]))
        }
        #expect(try channel.readInbound(as: MQTTPacket.self) == .pingresp, "the good packet before it was delivered")
        _ = try? channel.finish()
    }
}
