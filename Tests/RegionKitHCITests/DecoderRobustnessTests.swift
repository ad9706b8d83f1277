import Testing
@testable import RegionKitHCI

/// A small deterministic generator (SplitMix64) so failures reproduce.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Decoders must answer every input with a value or an HCIError, never a trap.
/// (A trap would crash the test process, failing the run.)
@Suite struct DecoderRobustnessTests {
    static let validEvents: [[UInt8]] = [
        Fixtures.resetComplete,
        Fixtures.iBeaconLegacyReport,
        LEAdvertisingReportTests.twoReportsFieldArrays,
        LEAdvertisingReportTests.twoReportsSequential,
        LEExtendedAdvertisingReportTests.iBeaconExtended,
        LEExtendedAdvertisingReportTests.twoExtended,
    ].map { Array($0.dropFirst()) } // without the H4 type byte

    static func decodeAll(_ bytes: [UInt8]) -> Int {
        var failures = 0
        for layout in [LEAdvertisingReportLayout.fieldArrays, .reportByReport] {
            do { _ = try HCIEvent(decoding: bytes, advertisingReportLayout: layout) } catch { failures += 1 }
        }
        do { _ = try HCICommand(decoding: bytes) } catch { failures += 1 }
        do { _ = try H4Packet(decoding: bytes) } catch { failures += 1 }
        do { _ = try LEFeatures(returnParameters: bytes) } catch { failures += 1 }
        do { _ = try BTSnoopFile(decoding: bytes) } catch { failures += 1 }
        return failures
    }

    @Test func everyTruncationOfValidEventsIsRejected() {
        for event in Self.validEvents {
            for length in 0..<event.count {
                let prefix = Array(event.prefix(length))
                #expect(throws: HCIError.self, "prefix \(length) of \(event)") {
                    try HCIEvent(decoding: prefix, advertisingReportLayout: .fieldArrays)
                }
                // Even with the length byte patched to agree, a cut report must not decode.
                if length >= 2, event[0] == 0x3E {
                    var patched = prefix
                    patched[1] = UInt8(length - 2)
                    #expect(throws: HCIError.self, "patched prefix \(length)") {
                        try HCIEvent(decoding: patched, advertisingReportLayout: .fieldArrays)
                    }
                }
            }
        }
    }

    @Test func everySingleByteMutationDecodesOrThrows() {
        var decoded = 0
        for event in Self.validEvents {
            for index in event.indices {
                for value in [UInt8(0x00), 0x01, 0x02, 0x0D, 0x1F, 0x7F, 0x80, 0xFF] {
                    var mutated = event
                    mutated[index] = value
                    decoded += 6 - Self.decodeAll(mutated)
                }
            }
        }
        #expect(decoded > 0)
    }

    @Test func randomBytesDecodeOrThrow() {
        var generator = SplitMix64(state: 0x5EED)
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...80, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Bias toward plausible headers so the inner decoders get exercised.
            if count >= 3, Bool.random(using: &generator) {
                bytes[0] = [0x0E, 0x0F, 0x05, 0x10, 0x3E].randomElement(using: &generator) ?? 0x3E
                bytes[1] = UInt8(count - 2)
                if bytes[0] == 0x3E { bytes[2] = Bool.random(using: &generator) ? 0x02 : 0x0D }
            }
            _ = Self.decodeAll(bytes)
        }
    }

    @Test func deframerSurvivesRandomStreams() {
        var generator = SplitMix64(state: 42)
        for _ in 0..<2_000 {
            var deframer = H4Deframer()
            let count = Int.random(in: 0...200, using: &generator)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...5, using: &generator) }
            _ = try? deframer.feed(bytes)
        }
    }
}
