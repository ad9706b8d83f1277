import Foundation
import Testing
@testable import RegionKitCore

/// Spec §4: the iBeacon advertisement on the air, byte by byte.
@Suite("IBeaconFrame codec (spec §4)")
struct IBeaconFrameTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let identity = BeaconIdentity(uuid: uuid, major: 0x0102, minor: 0xA0B0)

    /// The exact 30 bytes an iBeacon puts in its legacy advertising data.
    static let reference: [UInt8] = [
        0x02,       // AD length: 2 bytes follow
        0x01,       // AD type: Flags
        0x06,       // LE General Discoverable | BR/EDR Not Supported
        0x1A,       // AD length: 26 bytes follow
        0xFF,       // AD type: Manufacturer Specific Data
        0x4C, 0x00, // company identifier 0x004C (Apple), little-endian
        0x02,       // iBeacon type
        0x15,       // iBeacon payload length: 21
        0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, // proximity UUID, bytes 0-7
        0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0, // proximity UUID, bytes 8-15
        0x01, 0x02, // major 0x0102, big-endian
        0xA0, 0xB0, // minor 0xA0B0, big-endian
        0xC5,       // measured power: -59 dBm as a signed byte
    ]

    @Test func encodesTheReferenceBytes() {
        let frame = IBeaconFrame(identity: Self.identity, measuredPower: -59)
        #expect(frame.advertisingData() == Self.reference)
        #expect(frame.advertisingData().count == 30)
    }

    @Test func nilMeasuredPowerUsesTheDocumentedDefault() {
        let frame = IBeaconFrame(identity: Self.identity, measuredPower: nil)
        #expect(frame.measuredPower == -59)
        #expect(frame.advertisingData().last == 0xC5) // -59
    }

    @Test func measuredPowerIsSigned() throws {
        var bytes = Self.reference
        bytes[29] = 0x80 // -128 dBm
        #expect(try IBeaconFrame.decode(bytes).measuredPower == -128)
        bytes[29] = 0x04 // +4 dBm
        #expect(try IBeaconFrame.decode(bytes).measuredPower == 4)
    }

    @Test func decodesTheReferenceBytes() throws {
        let frame = try IBeaconFrame.decode(Self.reference)
        #expect(frame.identity == Self.identity)
        #expect(frame.measuredPower == -59)
        #expect(frame.localName == nil)
    }

    @Test func roundTripsExtremeIdentities() throws {
        for (major, minor, power) in [(UInt16(0), UInt16(0), Int8(-128)), (65535, 65535, 127), (1, 65534, 0)] {
            let frame = IBeaconFrame(identity: BeaconIdentity(uuid: UUID(), major: major, minor: minor), measuredPower: power)
            #expect(try IBeaconFrame.decode(frame.advertisingData()) == frame)
        }
    }

    @Test func decodesWithoutFlagsAndWithPaddingAndOtherStructures() throws {
        // Manufacturer AD alone, then a Complete Local Name, then zero padding to 31 bytes.
        var bytes = Array(Self.reference[3...])        // drop the Flags AD
        bytes += [0x03, 0x09, 0x52, 0x4B]               // length 3, Complete Local Name, "RK"
        bytes += [UInt8](repeating: 0, count: 31 - bytes.count + 5) // padding (zero length ends parsing)
        let frame = try IBeaconFrame.decode(bytes)
        #expect(frame.identity == Self.identity)
        #expect(frame.localName == "RK")
    }

    @Test func skipsAnotherCompanysDataBeforeTheBeacon() throws {
        var bytes: [UInt8] = [
            0x05,       // AD length 5
            0xFF,       // Manufacturer Specific Data
            0x59, 0x00, // company 0x0059 (Nordic), little-endian
            0x01, 0x02, // Nordic payload
        ]
        bytes += Self.reference[3...]
        #expect(try IBeaconFrame.decode(bytes).identity == Self.identity)
    }

    @Test func rejectsAnotherCompany() {
        var bytes = Self.reference
        bytes[5] = 0x59 // company 0x0059 instead of 0x004C
        #expect(throws: BeaconDecodingError.self) { try IBeaconFrame.decode(bytes) }
        do { _ = try IBeaconFrame.decode(bytes) } catch {
            #expect(error.code == .wrongCompany)
            #expect(error.offset == 5)
            #expect(error.message.contains("0x0059"))
        }
    }

    @Test func rejectsAnotherAppleType() {
        var bytes = Self.reference
        bytes[7] = 0x10 // Apple "Nearby" type, not iBeacon
        do { _ = try IBeaconFrame.decode(bytes); Issue.record("decoded a non-iBeacon Apple frame") } catch {
            #expect(error.code == .wrongType)
            #expect(error.offset == 7)
        }
    }

    @Test func rejectsAWrongPayloadLengthByte() {
        var bytes = Self.reference
        bytes[8] = 0x14 // says 20 payload bytes
        do { _ = try IBeaconFrame.decode(bytes); Issue.record("accepted a wrong length byte") } catch {
            #expect(error.code == .wrongLength)
            #expect(error.offset == 8)
        }
    }

    @Test func rejectsAStructureShorterThanTheBeaconPayload() {
        // AD length 0x19 (one byte short) with a consistent buffer: the payload is incomplete.
        var bytes = Array(Self.reference[0..<29])
        bytes[3] = 0x19
        do { _ = try IBeaconFrame.decode(bytes); Issue.record("accepted a short payload") } catch {
            #expect(error.code == .wrongLength)
        }
    }

    @Test func rejectsATruncatedStructureAtEveryCut() {
        // Cutting the reference anywhere inside the manufacturer AD leaves a length that overruns.
        for cut in 4..<Self.reference.count {
            let bytes = Array(Self.reference[0..<cut])
            do { _ = try IBeaconFrame.decode(bytes); Issue.record("accepted data truncated at \(cut)") } catch {
                #expect(error.code == .truncatedStructure, "cut at \(cut)")
                #expect(error.offset == 3, "cut at \(cut)")
            }
        }
    }

    @Test func rejectsDataWithoutManufacturerData() {
        do { _ = try IBeaconFrame.decode([0x02, 0x01, 0x06]); Issue.record("accepted flags only") } catch {
            #expect(error.code == .noBeaconData)
        }
        do { _ = try IBeaconFrame.decode([]); Issue.record("accepted empty data") } catch {
            #expect(error.code == .noBeaconData)
        }
    }

    @Test func rejectsManufacturerDataTooShortForACompany() {
        let bytes: [UInt8] = [0x02, 0xFF, 0x4C] // AD length 2: type + one byte of company id
        do { _ = try IBeaconFrame.decode(bytes); Issue.record("accepted 1-byte company") } catch {
            #expect(error.code == .truncatedStructure)
        }
    }

    @Test func neverTrapsOnArbitraryBytes() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            let count = Int.random(in: 0...40, using: &random)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            _ = try? IBeaconFrame.decode(bytes)
        }
        // Every single-byte mutation of a valid frame either decodes or fails with a reason.
        for index in Self.reference.indices {
            for value in [UInt8(0x00), 0x01, 0x7F, 0xFF] {
                var bytes = Self.reference
                bytes[index] = value
                _ = try? IBeaconFrame.decode(bytes)
            }
        }
    }

    @Test func scanResponseCarriesTheLocalName() {
        let frame = IBeaconFrame(identity: Self.identity, localName: "Gate 3")
        #expect(frame.scanResponseData() == [
            0x07,                               // AD length: 7
            0x09,                               // Complete Local Name
            0x47, 0x61, 0x74, 0x65, 0x20, 0x33, // "Gate 3"
        ])
        #expect(IBeaconFrame(identity: Self.identity).scanResponseData().isEmpty)
    }

    @Test func longNamesAreShortenedAtACharacterBoundary() throws {
        let name = String(repeating: "a", count: 28) + "é" // 28 + 2 bytes = 30 > 29
        let data = IBeaconFrame(identity: Self.identity, localName: name).scanResponseData()
        #expect(data.count <= 31)
        #expect(data[1] == 0x08) // Shortened Local Name
        #expect(String(decoding: data[2...], as: UTF8.self) == String(repeating: "a", count: 28))
    }
}

/// ``IBeaconFrame/identity(in:)`` is the scanner's allocation-free path: it must accept exactly
/// what ``IBeaconFrame/decode(_:)`` accepts, with the same identity and power.
@Suite("iBeacon fast path agrees with decode")
struct IBeaconFastPathTests {
    @Test("seeded mutations of real frames: same verdict, identity and power")
    func agreesWithDecode() {
        var rng = SeededRandom(seed: 42)
        var accepted = 0
        for index in 0..<20_000 {
            let identity = BeaconIdentity(uuid: UUID(), major: UInt16(index % 7), minor: UInt16(index % 5))
            var data = IBeaconFrame(identity: identity, measuredPower: -59, localName: index % 3 == 0 ? "kiosk" : nil).advertisingData()
            if index % 3 == 0 { data += IBeaconFrame(identity: identity, localName: "kiosk").scanResponseData() }
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0 where !data.isEmpty: data[Int.random(in: 0..<data.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                case 1 where !data.isEmpty: data.removeLast(Int.random(in: 1...data.count, using: &rng))
                case 2: data.insert(UInt8.random(in: 0...30, using: &rng), at: Int.random(in: 0...data.count, using: &rng))
                default: data += [0x00, 0x00]
                }
            }
            let full = try? IBeaconFrame.decode(data)
            let fast = data.withUnsafeBytes { IBeaconFrame.identity(in: $0) }
            #expect(fast?.identity == full?.identity && fast?.measuredPower == full?.measuredPower, "\(data)")
            if full != nil { accepted += 1 }
        }
        #expect(accepted > 2_000, "too few valid frames survived the mutations (\(accepted)): the test exercised little")
    }
}
