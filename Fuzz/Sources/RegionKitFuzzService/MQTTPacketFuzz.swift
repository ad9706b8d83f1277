import FuzzSupport
import NIOCore
import RegionKitMQTT

/// MQTT 3.1.1 packets as the client's decoder reads them off the socket, in chunks. Invariants:
/// chunking never changes the packets; a failure leaves the reader where the bad packet starts;
/// a decoded packet the client could also send re-encodes to the same bytes.
enum MQTTPacketFuzz {
    static func run(_ data: [UInt8]) {
        let limit = data.first.map { $0 & 1 == 0 ? MQTTClientConfiguration.defaultMaximumIncomingPacketSize : 64 } ?? 64
        let whole = decode(chunks: [Array(data.dropFirst())], limit: limit)
        let chunked = decode(chunks: FuzzInput.chunks(data, maximum: 19), limit: limit)
        guard whole.packets == chunked.packets, whole.failed == chunked.failed else {
            FuzzTarget.fail("chunking changed the packets or the failure")
        }
        for packet in whole.packets {
            var buffer = ByteBuffer()
            guard (try? packet.encode(into: &buffer)) != nil else { continue }
            guard let again = try? MQTTPacket.decode(from: &buffer), again == packet else {
                FuzzTarget.fail("\(packet) does not survive encode/decode")
            }
        }
    }

    static func decode(chunks: [[UInt8]], limit: Int) -> (packets: [MQTTPacket], failed: Bool) {
        var buffer = ByteBuffer()
        var packets: [MQTTPacket] = []
        for chunk in chunks {
            buffer.writeBytes(chunk)
            while true {
                let start = buffer.readerIndex
                do {
                    guard let packet = try MQTTPacket.decode(from: &buffer, maximumPacketSize: limit) else { break }
                    packets.append(packet)
                } catch {
                    guard buffer.readerIndex == start else { FuzzTarget.fail("a failed decode moved the reader") }
                    return (packets, true)
                }
            }
        }
        return (packets, false)
    }
}
