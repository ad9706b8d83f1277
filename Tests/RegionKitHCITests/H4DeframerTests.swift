import Testing
@testable import RegionKitHCI

@Suite struct H4DeframerTests {
    /// A recorded-style controller→host stream with every packet type and length form.
    static let packets: [[UInt8]] = [
        Fixtures.resetComplete,
        [
            0x04, // H4: event
            0x0F, // Command Status
            0x04, // parameter length 4
            0x00, // status
            0x01, // Num_HCI_Command_Packets
            0x0D, 0x20, // opcode 0x200D LE Create Connection
        ],
        Fixtures.iBeaconLegacyReport,
        LEExtendedAdvertisingReportTests.iBeaconExtended,
        [
            0x01, // H4: command
            0x0C, 0x20, // opcode 0x200C
            0x02, // parameter length 2
            0x01, 0x00, // enable, no duplicate filtering
        ],
        [
            0x02, // H4: ACL data
            0x40, 0x20, // handle 0x040, PB=2 (first automatically flushable)
            0x05, 0x00, // data length 5, little-endian (2 bytes)
            0x01, 0x00, 0x04, 0x00, 0x0A, // L2CAP bytes
        ],
        [
            0x03, // H4: SCO data
            0x01, 0x00, // handle 0x001
            0x02, // data length 2 (1 byte)
            0xAB, 0xCD, // samples
        ],
        [
            0x05, // H4: ISO data
            0x10, 0x00, // handle 0x010
            0x03, 0xC0, // length 3 in the low 14 bits; the 2 RFU high bits set must be ignored
            0x11, 0x22, 0x33, // payload
        ],
        [
            0x04, // H4: event
            0x13, // Number Of Completed Packets
            0x00, // parameter length 0: a packet with no payload after the header
        ],
        [
            0x02, // H4: ACL data
            0x40, 0x00, // handle
            0x00, 0x00, // length 0
        ],
    ]

    static let stream: [UInt8] = packets.flatMap { $0 }
    static let expected: [H4Packet] = packets.map { bytes in
        H4Packet(type: H4Packet.PacketType(rawValue: bytes[0]) ?? .event, payload: Array(bytes.dropFirst()))
    }

    @Test func wholeStreamAtOnce() throws {
        var deframer = H4Deframer()
        #expect(try deframer.feed(Self.stream) == Self.expected)
        #expect(deframer.bufferedByteCount == 0)
        #expect(deframer.streamOffset == Self.stream.count)
        #expect(Self.expected.map(\.encoded) == Self.packets)
    }

    @Test func byteByByte() throws {
        var deframer = H4Deframer()
        var received: [H4Packet] = []
        for byte in Self.stream { received += try deframer.feed([byte]) }
        #expect(received == Self.expected)
    }

    @Test func splitAtEveryOffset() throws {
        for split in 0...Self.stream.count {
            var deframer = H4Deframer()
            var received = try deframer.feed(Self.stream[..<split])
            received += try deframer.feed(Self.stream[split...])
            #expect(received == Self.expected, "split at \(split)")
        }
    }

    @Test func splitAtEveryPairOfOffsets() throws {
        let stream = Array(Self.stream.prefix(60)) // first packets, to keep this quadratic test quick
        let expectedCount = try H4Deframer().feedingAll(stream).count
        for first in 0...stream.count {
            for second in first...stream.count {
                var deframer = H4Deframer()
                var count = try deframer.feed(stream[..<first]).count
                count += try deframer.feed(stream[first..<second]).count
                count += try deframer.feed(stream[second...]).count
                #expect(count == expectedCount)
            }
        }
    }

    @Test func pendingPartialPacketIsKept() throws {
        var deframer = H4Deframer()
        #expect(try deframer.feed(Fixtures.resetComplete.dropLast()).isEmpty)
        #expect(deframer.bufferedByteCount == Fixtures.resetComplete.count - 1)
        #expect(try deframer.feed([0x00]).count == 1)
    }

    @Test func unknownPacketTypeFailsWithStreamOffset() throws {
        var deframer = H4Deframer()
        var stream = Fixtures.resetComplete // 7 bytes
        stream.append(0x06) // not an H4 packet type, at stream offset 7
        stream += Fixtures.resetComplete
        var received: [H4Packet] = []
        let error = expectHCIError(.unknownPacketType, offset: 7, messageContains: "0x06") {
            for byte in stream { received += try deframer.feed([byte]) }
        }
        #expect(received.count == 1) // the packet before the bad byte was delivered
        #expect(error != nil)
        // The stream stays failed: H4 cannot resynchronise.
        expectHCIError(.unknownPacketType, offset: 7) { try deframer.feed(Fixtures.resetComplete) }
        // Type 0x00 is equally invalid.
        var other = H4Deframer()
        expectHCIError(.unknownPacketType, offset: 0) { try other.feed([0x00]) }
    }

    @Test func packetsBeforeABadByteInTheSameChunkAreDelivered() throws {
        var deframer = H4Deframer()
        let stream = Fixtures.resetComplete + [
            0xFF, // not an H4 packet type, stream offset 7
        ]
        #expect(try deframer.feed(stream).count == 1) // the good packet first
        expectHCIError(.unknownPacketType, offset: 7) { try deframer.feed([]) } // then the failure
    }

    @Test func oversizedPacketsCanBeRefused() {
        var deframer = H4Deframer(maximumPayloadLength: 1024)
        expectHCIError(.lengthMismatch, offset: 0) {
            try deframer.feed([
                0x02, // H4: ACL
                0x40, 0x00, // handle
                0xFF, 0xFF, // length 65535, above the configured 1024
            ])
        }
    }

    @Test func singlePacketDecoding() throws {
        #expect(try H4Packet(decoding: Fixtures.resetComplete).type == .event)
        expectHCIError(.truncated) { try H4Packet(decoding: Array(Fixtures.resetComplete.dropLast())) }
        expectHCIError(.lengthMismatch, offset: 7) { try H4Packet(decoding: Fixtures.resetComplete + [0x04]) }
        expectHCIError(.truncated) { try H4Packet(decoding: []) }
        expectHCIError(.invalidValue) { try H4Packet(type: .acl, payload: []).event() }
        expectHCIError(.invalidValue) { try H4Packet(type: .event, payload: []).command() }
        #expect(try H4Packet(command: .reset).command() == .reset)
    }

    @Test func longStreamsCompactTheBuffer() throws {
        var deframer = H4Deframer()
        var total = 0
        for _ in 0..<2_000 { total += try deframer.feed(Fixtures.iBeaconLegacyReport).count }
        #expect(total == 2_000)
        #expect(deframer.streamOffset == 2_000 * Fixtures.iBeaconLegacyReport.count)
    }
}

extension H4Deframer {
    func feedingAll(_ bytes: [UInt8]) throws -> [H4Packet] {
        var copy = self
        return try copy.feed(bytes)
    }
}
