import FuzzSupport
import RegionKitHCI

/// H4 deframer: the input (after a chunk-size byte) is an H4 byte stream fed in chunks. Invariants:
/// chunking never changes the packets or the failure; the packets re-encode to a prefix of the stream.
enum H4DeframerFuzz {
    static func run(_ data: [UInt8]) {
        let stream = Array(data.dropFirst())
        var whole = H4Deframer(maximumPayloadLength: data.first.map { $0 & 1 == 0 ? 0xFFFF : 64 } ?? 0xFFFF)
        let (wholePackets, wholeError) = drain(&whole, chunks: [stream])
        var chunked = H4Deframer(maximumPayloadLength: data.first.map { $0 & 1 == 0 ? 0xFFFF : 64 } ?? 0xFFFF)
        let (chunkedPackets, chunkedError) = drain(&chunked, chunks: FuzzInput.chunks(data, maximum: 17))
        guard wholePackets == chunkedPackets else { FuzzTarget.fail("chunking changed the packets") }
        guard wholeError?.offset == chunkedError?.offset, wholeError?.code == chunkedError?.code else {
            FuzzTarget.fail("chunking changed the failure: \(String(describing: wholeError)) vs \(String(describing: chunkedError))")
        }
        let encoded = wholePackets.flatMap(\.encoded)
        guard stream.starts(with: encoded) else { FuzzTarget.fail("packets do not re-encode to a prefix of the stream") }
        for packet in wholePackets where packet.type == .event {
            _ = try? HCIEvent(decoding: packet.payload)
        }
    }

    static func drain(_ deframer: inout H4Deframer, chunks: [[UInt8]]) -> ([H4Packet], HCIError?) {
        var packets: [H4Packet] = []
        for chunk in chunks {
            deframer.append(chunk)
            do {
                while let packet = try deframer.next() { packets.append(packet) }
            } catch {
                return (packets, error)
            }
        }
        return (packets, nil)
    }
}
