import Foundation
import Testing
@testable import regionkit

/// `regionkit advertise`: the options, parsed by ArgumentParser as from the command line, map to
/// the exact advertising data the controller is given (`BeaconFrame.advertisingData()`, what
/// `BeaconAdvertiser` sends), and wrong combinations or values fail with a message naming the option.
@Suite("regionkit advertise: options to bytes")
struct AdvertiseOptionsTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    /// The advertising data the parsed command would send.
    func data(_ arguments: [String]) throws -> [UInt8] {
        try Advertise.parse(["--hci", "hci0"] + arguments).beaconFrame().advertisingData()
    }

    /// The message a user sees for these arguments ("" if they parse).
    func failure(_ arguments: [String]) -> String {
        do {
            _ = try Advertise.parse(["--hci", "hci0"] + arguments)
            return ""
        } catch {
            return Advertise.message(for: error)
        }
    }

    /// Bytes from hex digits, one field a line, `#` starting a comment.
    static func hex(_ text: String) -> [UInt8] {
        let code = text.split(separator: "\n").map { $0.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0] }.joined()
        let digits = Array(code.filter { !$0.isWhitespace }.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16) ?? 0xFF }
    }

    @Test("--format ibeacon is the default: Flags + Apple iBeacon manufacturer data, measured power -59 unless given; --name goes in the scan response")
    func iBeaconDefault() throws {
        let expected = Self.hex("""
            02 01 06                              # Flags: length 2, type 0x01, LE General Discoverable + BR/EDR not supported
            1A FF                                 # Manufacturer Specific Data: length 26, type 0xFF
            4C 00                                 # company 0x004C (Apple), little-endian
            02 15                                 # iBeacon type 0x02, 21 bytes follow
            E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0   # --uuid
            00 01                                 # --major 1, big-endian
            00 02                                 # --minor 2, big-endian
            C5                                    # measured power -59 dBm (default)
            """)
        #expect(try data(["--uuid", Self.uuid, "--major", "1", "--minor", "2"]) == expected)
        #expect(try data(["--format", "ibeacon", "--uuid", Self.uuid, "--major", "1", "--minor", "2"]) == expected)
        // --measured-power -65 changes only the last byte (0xBF).
        #expect(try data(["--uuid", Self.uuid, "--major", "1", "--minor", "2", "--measured-power", "-65"]) == Array(expected.dropLast()) + [0xBF])
        let named = try Advertise.parse(["--hci", "hci0", "--uuid", Self.uuid, "--name", "Room"]).beaconFrame()
        #expect(named.scanResponseData() == [0x05, 0x09, 0x52, 0x6F, 0x6F, 0x6D])   // Complete Local Name (0x09), "Room"
    }

    @Test("--format altbeacon: id1 = --uuid, id2 = --major, id3 = --minor, reference RSSI = --measured-power, company --manufacturer")
    func altBeacon() throws {
        let expected = Self.hex("""
            02 01 06                              # Flags
            1B FF                                 # Manufacturer Specific Data: length 27, type 0xFF
            18 01                                 # MFG ID 0x0118 (Radius Networks, the default), little-endian
            BE AC                                 # beacon code 0xBEAC
            E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0   # id1 bytes 0-15: --uuid
            00 01                                 # id1 bytes 16-17: --major 1 (id2 in the Android Beacon Library)
            03 E8                                 # id1 bytes 18-19: --minor 1000 (id3)
            BF                                    # reference RSSI -65 dBm
            00                                    # MFG RSVD
            """)
        let arguments = ["--format", "altbeacon", "--uuid", Self.uuid, "--major", "1", "--minor", "1000", "--measured-power", "-65"]
        #expect(try data(arguments) == expected)
        // --manufacturer 76 (0x004C) replaces bytes 5-6 only.
        var apple = expected
        apple[5] = 0x4C; apple[6] = 0x00
        #expect(try data(arguments + ["--manufacturer", "76"]) == apple)
        // The range ends: 0 and -127 dBm.
        #expect(try data(["--format", "altbeacon", "--uuid", Self.uuid, "--measured-power", "0"])[29] == 0x00)
        #expect(try data(["--format", "altbeacon", "--uuid", Self.uuid, "--measured-power", "-127"])[29] == 0x81)
    }

    @Test("--format eddystone-uid: namespace, instance, ranging data at 0 m = --measured-power + 41 dB")
    func eddystoneUID() throws {
        let expected = Self.hex("""
            02 01 06                              # Flags
            03 03 AA FE                           # Complete List of 16-bit Service UUIDs: 0xFEAA
            17 16 AA FE                           # Service Data, 16-bit UUID 0xFEAA, length 23 (the 20-byte frame + 3)
            00                                    # frame type UID
            EE                                    # ranging data -18 dBm at 0 m = -59 + 41
            8B 0C A7 50 09 54 77 CB 3E 77         # --namespace (eddystone-uid/README.md's elided-UUID example)
            00 00 00 00 00 2A                     # --instance
            00 00                                 # RFU
            """)
        let arguments = ["--format", "eddystone-uid", "--namespace", "8b0ca750095477cb3e77", "--instance", "00000000002A"]
        #expect(try data(arguments + ["--measured-power", "-59"]) == expected)
        #expect(try data(arguments) == expected, "-59 dBm is the default")
        // The spec's range at 0 m, -100...+20 dBm, is --measured-power -141...-21.
        #expect(try data(arguments + ["--measured-power", "-141"])[12] == 0x9C)   // -100
        #expect(try data(arguments + ["--measured-power", "-21"])[12] == 0x14)    // +20
    }

    @Test("--format eddystone-url: scheme and expansion codes, TX power at 0 m = --measured-power + 41 dB")
    func eddystoneURL() throws {
        let expected = Self.hex("""
            02 01 06                              # Flags
            03 03 AA FE                           # Complete List of 16-bit Service UUIDs: 0xFEAA
            0E 16 AA FE                           # Service Data, 0xFEAA, length 14 (the 11-byte frame + 3)
            10                                    # frame type URL
            EE                                    # TX power -18 dBm at 0 m = -59 + 41
            01                                    # scheme 0x01 "https://www."
            65 78 61 6D 70 6C 65                  # "example"
            00                                    # expansion 0x00 ".com/"
            """)
        #expect(try data(["--format", "eddystone-url", "--url", "https://www.example.com/"]) == expected)
        var lower = expected
        lower[12] = 0xE2                          // -71 + 41 = -30 dBm
        #expect(try data(["--format", "eddystone-url", "--url", "https://www.example.com/", "--measured-power", "-71"]) == lower)
    }

    @Test(arguments: [
        // (arguments, what the message must say)
        (["--format", "altbeacon"], "--format altbeacon needs --uuid"),
        ([] as [String], "--format ibeacon needs --uuid"),
        (["--uuid", "not-a-uuid"], "--uuid 'not-a-uuid' is not a UUID"),
        (["--format", "altbeacon", "--uuid", uuid, "--name", "x"], "--name does not go with --format altbeacon"),
        (["--uuid", uuid, "--url", "https://a.b"], "--url does not go with --format ibeacon"),
        (["--format", "eddystone-uid", "--uuid", uuid], "--uuid does not go with --format eddystone-uid"),
        (["--format", "eddystone-uid", "--namespace", "8b0ca750095477cb3e77"], "--format eddystone-uid needs --namespace HEX20 and --instance HEX12"),
        (["--format", "eddystone-uid", "--namespace", "8b0ca750095477cb3e", "--instance", "000000000001"], "--namespace '8b0ca750095477cb3e' is not 20 hex digits"),
        (["--format", "eddystone-uid", "--namespace", "8b0ca750095477cb3e77", "--instance", "00000000000g"], "--instance '00000000000g' is not 12 hex digits"),
        (["--format", "eddystone-url"], "--format eddystone-url needs --url"),
        (["--format", "eddystone-url", "--url", "https://a.b", "--instance", "000000000001"], "--instance does not go with --format eddystone-url"),
        (["--format", "eddystone-url", "--url", "ftp://x"], "--url: URL 'ftp://x' does not start with"),
        (["--format", "eddystone-url", "--url", "https://"], "--url: URL 'https://' has nothing after its scheme 'https://' (character 8)"),
        (["--format", "bluetooth", "--uuid", uuid], "--format 'bluetooth' is not ibeacon, altbeacon, eddystone-uid or eddystone-url"),
        (["--uuid", uuid, "--measured-power", "128"], "--measured-power 128 is outside -128...127 dBm"),
        (["--format", "altbeacon", "--uuid", uuid, "--measured-power", "1"], "--measured-power 1 is outside -127...0 dBm, the AltBeacon spec's reference RSSI range"),
        (["--format", "altbeacon", "--uuid", uuid, "--measured-power", "-128"], "--measured-power -128 is outside -127...0 dBm"),
        (["--format", "eddystone-uid", "--namespace", "8b0ca750095477cb3e77", "--instance", "000000000001", "--measured-power", "-20"],
         "--measured-power -20 gives 21 dBm at 0 m (sent as --measured-power + 41): Eddystone allows -100...+20 dBm at 0 m, so --measured-power must be within -141...-21"),
        (["--format", "eddystone-url", "--url", "https://a.b", "--measured-power", "-142"], "--measured-power -142 gives -101 dBm at 0 m"),
        // Found by an audit: the message's own + 41 trapped on Int.max (the range check had already refused it).
        (["--format", "eddystone-uid", "--namespace", "8b0ca750095477cb3e77", "--instance", "000000000001", "--measured-power", "9223372036854775807"],
         "--measured-power 9223372036854775807 gives more than 9223372036854775807 dBm at 0 m"),
        (["--uuid", uuid, "--major", "65536"], "--major"),
        (["--uuid", uuid, "--interval-ms", "10"], "--interval-ms 10.0 is outside 20...10240"),
    ] as [([String], String)])
    func wrongOptionsAreNamed(arguments: [String], message: String) {
        let seen = failure(arguments)
        #expect(seen.contains(message), "\(arguments): \(seen)")
    }

    @Test("--hci is required")
    func controllerIsRequired() {
        do {
            _ = try Advertise.parse(["--uuid", Self.uuid])
            Issue.record("parsed without --hci")
        } catch {
            #expect(Advertise.message(for: error).contains("--hci"))
        }
    }
}
