import Foundation
import Testing
@testable import RegionKitCore

/// AltBeacon and Eddystone codecs byte by byte (a comment per byte, from the format documents),
/// their near-misses with reason and offset, and format-aware identities, constraints and regions.
@Suite("Beacon formats: AltBeacon and Eddystone codecs, identities and constraints")
struct BeaconFormatTests {
    static let id1 = UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!

    @Test("AltBeacon encodes to the spec's layout, byte by byte, and decodes back")
    func altBeaconBytes() throws {
        let frame = AltBeaconFrame(identity: BeaconIdentity(uuid: Self.id1, major: 1, minor: 2, format: .altBeacon),
                                   referenceRSSI: -59, manufacturerID: 0x0118, reserved: 0x5A)
        let expected: [UInt8] = [
            0x02, 0x01, 0x06,                               // Flags AD: LE General Discoverable, BR/EDR not supported
            0x1B,                                           // AltBeacon spec "AD LENGTH" 0x1B (27)
            0xFF,                                           // "AD TYPE" 0xFF Manufacturer Specific Data
            0x18, 0x01,                                     // "MFG ID" 0x0118, little-endian
            0xBE, 0xAC,                                     // "BEACON CODE" 0xBEAC
            0x2F, 0x23, 0x44, 0x54, 0xCF, 0x6D, 0x4A, 0x0F, // "BEACON ID" bytes 0-7  (id1)
            0xAD, 0xF2, 0xF4, 0x91, 0x1B, 0xA9, 0xFF, 0xA6, // "BEACON ID" bytes 8-15 (id1)
            0x00, 0x01,                                     // "BEACON ID" bytes 16-17 (id2 = 1)
            0x00, 0x02,                                     // "BEACON ID" bytes 18-19 (id3 = 2)
            0xC5,                                           // "REFERENCE RSSI" −59 dBm
            0x5A,                                           // "MFG RSVD"
        ]
        #expect(frame.advertisingData() == expected)
        #expect(expected.count == 31)
        let decoded = try AltBeaconFrame.decode(expected)
        #expect(decoded == frame)
        #expect(decoded.identity.format == .altBeacon && decoded.identity.description == "altbeacon:2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6:1:2")
        #expect(try BeaconFrame.decode(expected) == .altBeacon(frame))
    }

    @Test("An identity's description reads back to it in every format; other text does not")
    func descriptionRoundTrip() throws {
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        let eddystone = try #require(BeaconIdentity(eddystoneNamespace: Array(0..<10), instance: [0, 0, 0, 0, 0xbe, 0xef]))
        for identity in [BeaconIdentity(uuid: uuid, major: 0, minor: 65_535), BeaconIdentity(uuid: uuid, major: 1, minor: 2, format: .altBeacon), eddystone] {
            #expect(BeaconIdentity(description: identity.description) == identity, "\(identity)")
        }
        #expect(BeaconIdentity(description: "ALTBEACON:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2")?.format == .altBeacon)
        #expect(BeaconIdentity(description: "Eddystone-UID:00010203040506070809:0000BEEFBEEF")?.instance == [0, 0, 0xbe, 0xef, 0xbe, 0xef])
        for text in ["", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:65536",
                     "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2:3", "not-a-uuid:1:2", "altbeacon:1:2",
                     "eddystone-uid:0001020304050607080:00000000beef", "eddystone-uid:00010203040506070809:00000000beeg",
                     "eddystone-uid:00010203040506070809"] {
            #expect(BeaconIdentity(description: text) == nil, "\(text)")
        }
    }

    @Test("AltBeacon near-misses: reason and byte offset")
    func altBeaconNearMisses() {
        let good = AltBeaconFrame(identity: BeaconIdentity(uuid: Self.id1, major: 1, minor: 2)).advertisingData()
        func code(_ bytes: [UInt8]) -> (String, Int)? {
            do { _ = try AltBeaconFrame.decode(bytes); return nil } catch { return (error.code.rawValue, error.offset) }
        }
        // An iBeacon: code 0x0215 at offset 7 (after flags 0-2, length 3, type 4, company 5-6).
        let iBeacon = IBeaconFrame(identity: BeaconIdentity(uuid: Self.id1, major: 1, minor: 2)).advertisingData()
        #expect(code(iBeacon)! == ("wrongBeaconCode", 7))
        var short = good
        short[3] = 0x1A                                   // one byte fewer declared…
        short.removeLast()                                // …and present
        #expect(code(short)! == ("wrongLength", 3))
        #expect(code(Array(good.prefix(20)))! == ("truncatedStructure", 3))
        #expect(code([0x02, 0x01, 0x06])! == ("noBeaconData", 3))
        #expect(code([0x02, 0x01, 0x06, 0x03, 0xFF, 0x18, 0x01])! == ("truncatedStructure", 3))
    }

    /// Our test namespace: the first ten bytes of eddystone-uid/README.md's example UUID, i.e. its
    /// first four bytes followed by the six the document says to *remove* — not the document's own
    /// elided namespace (that is ``KnownAnswer/elidedNamespace``, tested below).
    static let namespace: [UInt8] = [0x8B, 0x0C, 0xA7, 0x50, 0xE7, 0xA7, 0x4E, 0x14, 0xBD, 0x99]
    static let instance: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x00, 0xA1]

    @Test("Eddystone-UID encodes to the spec's frame, byte by byte; 18-byte frames without RFU decode too")
    func eddystoneUIDBytes() throws {
        let identity = try #require(BeaconIdentity(eddystoneNamespace: Self.namespace, instance: Self.instance))
        let frame = EddystoneFrame.uid(EddystoneUIDFrame(identity: identity, rangingData: -18))
        let expected: [UInt8] = [
            0x02, 0x01, 0x06,                               // Flags
            0x03, 0x03, 0xAA, 0xFE,                         // Complete List of 16-bit Service UUIDs: 0xFEAA
            0x17, 0x16, 0xAA, 0xFE,                         // Service Data (23 bytes), UUID 0xFEAA
            0x00,                                           // eddystone-uid "Frame Type" UID
            0xEE,                                           // "Ranging Data" −18 dBm at 0 m
            0x8B, 0x0C, 0xA7, 0x50, 0xE7, 0xA7, 0x4E, 0x14, 0xBD, 0x99, // "Namespace" (10 bytes)
            0x00, 0x00, 0x00, 0x00, 0x00, 0xA1,             // "Instance" (6 bytes)
            0x00, 0x00,                                     // "RFU" must be 0x00
        ]
        #expect(frame.advertisingData() == expected)
        #expect(expected.count == 31)
        #expect(try EddystoneFrame.decode(expected) == frame)
        #expect(identity.description == "eddystone-uid:8b0ca750e7a74e14bd99:0000000000a1")
        if case .uid(let uid) = frame { #expect(uid.measuredPower == -59) }   // −18 − 41
        var withoutRFU = Array(expected.dropLast(2))
        withoutRFU[7] = 0x15
        #expect(try EddystoneFrame.decode(withoutRFU) == frame)
        #expect(try BeaconFrame.decode(expected).identity == identity)
        #expect(try BeaconFrame.decode(expected).measuredPower == -59)
    }

    /// The examples the format documents themselves give (github.com/google/eddystone at bb8738d;
    /// github.com/AltBeacon/spec README.md).
    enum KnownAnswer {
        /// eddystone-uid/README.md "Elided Version 4 UUID": "from this UUID:
        /// 8b0ca750-e7a7-4e14-bd99-095477cb3e77 remove these bytes: e7a7-4e14-bd99. This produces
        /// the following namespace: 8b0ca750095477cb3e77."
        static let uuid = "8b0ca750-e7a7-4e14-bd99-095477cb3e77"
        static let elidedNamespace: [UInt8] = [0x8B, 0x0C, 0xA7, 0x50, 0x09, 0x54, 0x77, 0xCB, 0x3E, 0x77]
    }

    @Test("Known answer, eddystone-uid/README.md: the elided UUID example is the namespace; the Service Data Length is 0x17 (0x15 without RFU)")
    func eddystoneUIDKnownAnswer() throws {
        let uuid = try #require(UUID(uuidString: KnownAnswer.uuid))
        let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        // "remove bytes 5 - 10 (inclusive)", counted from 1: indexes 4...9.
        let elided = Array(bytes[0..<4] + bytes[10..<16])
        #expect(elided == KnownAnswer.elidedNamespace)
        let identity = try #require(BeaconIdentity(eddystoneNamespace: elided, instance: [0x00, 0x00, 0x00, 0x00, 0x00, 0x01]))
        #expect(identity.description == "eddystone-uid:8b0ca750095477cb3e77:000000000001")
        #expect(try BeaconIdentityConstraint(eddystoneNamespace: "8b0ca750095477cb3e77").matches(identity))
        let data = EddystoneFrame.uid(EddystoneUIDFrame(identity: identity, rangingData: -18)).advertisingData()
        #expect(Array(data[7...12]) == [
            0x17,                                           // "The value of the Service Data Length byte must be 0x17"
            0x16, 0xAA, 0xFE,                               // Service Data, Eddystone's 16-bit UUID 0xFEAA
            0x00,                                           // Frame Type UID
            0xEE,                                           // Ranging Data -18 dBm at 0 m
        ])
        #expect(Array(data[13...22]) == KnownAnswer.elidedNamespace)
        #expect(try EddystoneFrame.decode(data) == .uid(EddystoneUIDFrame(identity: identity, rangingData: -18)))
        // "Existing UID implementations that truncate the frame to omit the RFU bytes will use 0x15."
        var truncated = Array(data.dropLast(2))
        truncated[7] = 0x15
        #expect(try BeaconFrame.decode(truncated).identity == identity)
    }

    @Test("Known answer, eddystone-url/README.md: https://goo.gl/Aq18zF and https://goo.gl/S6zT6P; TX power 0x12 = +18 dBm, 0xEE = -18 dBm")
    func eddystoneURLKnownAnswer() throws {
        let frame = try EddystoneURLFrame(url: "https://goo.gl/Aq18zF", txPower: 18)
        #expect(frame.frameBytes == [
            0x10,                                           // Frame Type URL
            0x12,                                           // "The value 0x12 is interpreted as +18dBm"
            0x03,                                           // URL Scheme 0x03 = "https://"
            0x67, 0x6F, 0x6F, 0x2E, 0x67, 0x6C, 0x2F,       // "goo.gl/" (".gl" has no expansion code)
            0x41, 0x71, 0x31, 0x38, 0x7A, 0x46,             // "Aq18zF"
        ])
        let minus = EddystoneFrame.url(try EddystoneURLFrame(url: "https://goo.gl/S6zT6P", txPower: -18))
        let data = minus.advertisingData()
        #expect(data[12] == 0xEE)                           // "The value 0xEE is interpreted as -18dBm"
        guard case .url(let decoded) = try EddystoneFrame.decode(data) else { Issue.record("not URL"); return }
        #expect(decoded.url == "https://goo.gl/S6zT6P" && decoded.txPower == -18 && decoded.measuredPower == -59)
    }

    @Test("Known answer, eddystone-tlm/tlm-plain.md: Service Data Length 0x11; VBATT 0 and TEMP 0x8000 (-128 °C) mean 'not supported'")
    func eddystoneTLMKnownAnswer() throws {
        let data: [UInt8] = [
            0x02, 0x01, 0x06,                               // Flags
            0x03, 0x03, 0xAA, 0xFE,                         // 16-bit Service UUIDs: 0xFEAA
            0x11, 0x16, 0xAA, 0xFE,                         // "The value of the Service Data Length byte must be 0x11"
            0x20,                                           // Frame Type TLM
            0x00,                                           // Version: "At present the value must be 0x00"
            0x00, 0x00,                                     // VBATT: "If not supported (for example in a USB-powered beacon) the value should be zeroed"
            0x80, 0x00,                                     // TEMP: "If not supported the value should be set to 0x8000, -128 °C"
            0x00, 0x00, 0x00, 0x01,                         // ADV_CNT 1
            0x00, 0x00, 0x00, 0x0A,                         // SEC_CNT 10 × 0.1 s
        ]
        guard case .tlm(let tlm) = try EddystoneFrame.decode(data) else { Issue.record("not TLM"); return }
        #expect(tlm.batteryMillivolts == nil && tlm.temperature == nil && tlm.temperatureRaw == Int16.min)
        #expect(tlm.advertisingCount == 1 && tlm.uptime == 1.0)
        #expect(EddystoneFrame.tlm(tlm).advertisingData() == data)   // "not supported" goes back on the air as sent
        #expect(EddystoneTelemetry(batteryMillivolts: 0, temperature: -128).frameBytes == Array(data[11...]).prefix(6) + [0, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test("Known answer, AltBeacon spec: AD LENGTH 0x1B, AD TYPE 0xFF, MFG ID little-endian, BEACON CODE 0xBEAC big-endian")
    func altBeaconKnownAnswer() throws {
        let frame = AltBeaconFrame(identity: BeaconIdentity(uuid: Self.id1, major: 1, minor: 2, format: .altBeacon), referenceRSSI: -127, manufacturerID: 0x0118)
        let data = frame.advertisingData()
        #expect(Array(data[3...8]) == [
            0x1B,                                           // AD LENGTH [MFG SPECIFIC]: 0x1B
            0xFF,                                           // AD TYPE [MFG SPECIFIC]: 0xFF
            0x18, 0x01,                                     // MFG ID 0x0118, little-endian
            0xBE, 0xAC,                                     // BEACON CODE 0xBEAC, big-endian
        ])
        #expect(data[29] == 0x81)                           // REFERENCE RSSI -127, the lowest accepted value
    }

    @Test("Eddystone-URL: scheme and expansion codes both ways, byte by byte")
    func eddystoneURLBytes() throws {
        let frame = try EddystoneURLFrame(url: "https://www.example.com/", txPower: -20)
        #expect(frame.frameBytes == [
            0x10,                                           // eddystone-url "Frame Type" URL
            0xEC,                                           // "TX Power" −20 dBm at 0 m
            0x01,                                           // "URL Scheme" 0x01 = https://www.
            0x65, 0x78, 0x61, 0x6D, 0x70, 0x6C, 0x65,       // "example"
            0x00,                                           // expansion 0x00 = ".com/"
        ])
        #expect(frame.url == "https://www.example.com/")
        let short = try EddystoneURLFrame(url: "http://goo.gl/S6zT6P", txPower: 0)
        #expect(short.encodedURL == [0x02] + Array("goo.gl/S6zT6P".utf8))   // 0x02 = http://, ".gl" has no code
        let info = try EddystoneURLFrame(url: "https://rk.info")
        #expect(info.encodedURL == [0x03, 0x72, 0x6B, 0x0B])              // https://, "rk", 0x0B = ".info"
        let data = EddystoneFrame.url(frame).advertisingData()
        #expect(try EddystoneFrame.decode(data) == .url(frame))
        #expect(throws: RegionKitError.self) { try EddystoneURLFrame(url: "ftp://example.com") }
        #expect(throws: RegionKitError.self) { try EddystoneURLFrame(url: "https://an-address-far-too-long-for-eddystone.com/") }
        #expect(throws: RegionKitError.self) { try EddystoneURLFrame(url: "https://a b.com") }
        // Nothing after the scheme: the encoded URL would be empty (the spec wants 1-17 bytes).
        for bare in ["https://", "http://www."] {
            do { _ = try EddystoneURLFrame(url: bare); Issue.record("encoded '\(bare)'") } catch {
                #expect(error.message.contains("has nothing after its scheme '\(bare)' (character \(bare.count))"), "\(error.message)")
            }
        }
    }

    @Test("Eddystone-TLM: battery, temperature, counters, byte by byte; 'not supported' values")
    func eddystoneTLMBytes() throws {
        let data: [UInt8] = [
            0x02, 0x01, 0x06,                               // Flags
            0x03, 0x03, 0xAA, 0xFE,                         // 16-bit Service UUIDs: 0xFEAA
            0x11, 0x16, 0xAA, 0xFE,                         // Service Data (17 bytes), UUID 0xFEAA
            0x20,                                           // tlm-plain "Frame Type" TLM
            0x00,                                           // "Version" 0x00 (unencrypted)
            0x0B, 0xB8,                                     // "VBATT" 3000 mV
            0x18, 0x80,                                     // "TEMP" 0x1880 = 24.5 °C (8.8 fixed point)
            0x00, 0x00, 0x01, 0x00,                         // "ADV_CNT" 256
            0x00, 0x00, 0x02, 0x58,                         // "SEC_CNT" 600 × 0.1 s = 60 s
        ]
        guard case .tlm(let tlm) = try EddystoneFrame.decode(data) else { Issue.record("not TLM"); return }
        #expect(tlm.batteryMillivolts == 3000 && tlm.temperature == 24.5 && tlm.advertisingCount == 256 && tlm.uptime == 60)
        #expect(EddystoneFrame.tlm(tlm).advertisingData() == data)
        var unsupported = data
        unsupported[13] = 0; unsupported[14] = 0            // VBATT 0: not supported
        unsupported[15] = 0x80; unsupported[16] = 0x00      // TEMP 0x8000: not supported
        guard case .tlm(let none) = try EddystoneFrame.decode(unsupported) else { Issue.record("not TLM"); return }
        #expect(none.batteryMillivolts == nil && none.temperature == nil)
        var negative = data
        negative[15] = 0xFF; negative[16] = 0x80            // −0.5 °C
        guard case .tlm(let cold) = try EddystoneFrame.decode(negative) else { Issue.record("not TLM"); return }
        #expect(cold.temperature == -0.5)
        #expect(try BeaconFrame.decode(data).identity == nil)
    }

    @Test("Telemetry as a scanner reports it: battery and °C to TEMP's 8.8 fixed point, no counters; a temperature TEMP cannot carry is 'not supported', the battery kept")
    func scannerTelemetry() throws {
        let tlm = EddystoneTelemetry(batteryMillivolts: 3000, temperature: 24.5)
        #expect(tlm.temperatureRaw == 0x1880 && tlm.batteryMillivolts == 3000 && tlm.advertisingCount == nil && tlm.uptime == nil)
        #expect(EddystoneTelemetry(batteryMillivolts: nil, temperature: -0.5).temperatureRaw == Int16(bitPattern: 0xFF80))
        #expect(EddystoneTelemetry(batteryMillivolts: 2900, temperature: nil).temperature == nil)             // 0x8000: not supported
        #expect(EddystoneTelemetry(batteryMillivolts: 0, temperature: nil).batteryMillivolts == nil)          // 0 mV: not supported
        #expect(EddystoneTelemetry(batteryMillivolts: 0, temperature: nil).isEmptyOfReadings)
        #expect(EddystoneTelemetry(batteryMillivolts: nil, temperature: 20.004).temperatureRaw == 0x1401)     // 5121.02/256 rounds to 0x1401
        #expect(EddystoneTelemetry(batteryMillivolts: nil, temperature: -127.996).temperatureRaw == -32767)   // 0x8001, the lowest real reading
        // −128 °C is TEMP 0x8000, "not supported"; the others cannot be carried: all keep the battery.
        for outside in [-128.0, 128.0, -128.01, 1000, .nan, .infinity] {
            let kept = EddystoneTelemetry(batteryMillivolts: 2900, temperature: outside)
            #expect(kept.temperatureRaw == Int16.min && kept.temperature == nil && kept.batteryMillivolts == 2900, "\(outside)")
        }
        // Absent counters go on the air as 0.
        #expect(Array(tlm.frameBytes.suffix(8)) == [0, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test("Eddystone near-misses: reason and byte offset")
    func eddystoneNearMisses() throws {
        let identity = try #require(BeaconIdentity(eddystoneNamespace: Self.namespace, instance: Self.instance))
        let good = EddystoneFrame.uid(EddystoneUIDFrame(identity: identity, rangingData: -18)).advertisingData()
        func code(_ bytes: [UInt8]) -> (String, Int)? {
            do { _ = try EddystoneFrame.decode(bytes); return nil } catch { return (error.code.rawValue, error.offset) }
        }
        var otherUUID = good
        otherUUID[9] = 0xAB                                  // service data UUID 0xFEAB at offset 9
        #expect(code(otherUUID)! == ("wrongServiceUUID", 9))
        var eid = good
        eid[11] = 0x30                                       // EID frame type at offset 11: not decoded
        #expect(code(eid)! == ("wrongFrameType", 11))
        var rfu = good
        rfu[29] = 0x01
        #expect(code(rfu)! == ("reservedValue", 29))
        var nineteen = Array(good.dropLast())
        nineteen[7] = 0x16
        #expect(code(nineteen)! == ("wrongLength", 11))
        let url = EddystoneFrame.url(try EddystoneURLFrame(url: "https://x.org")).advertisingData()
        var scheme = url
        scheme[13] = 0x04                                    // URL scheme 4 is reserved
        #expect(code(scheme)! == ("reservedValue", 13))
        var reservedCode = url
        reservedCode[14] = 0x20                              // space (0x20) is a reserved code
        #expect(code(reservedCode)! == ("reservedValue", 14))
        // eddystone-url "Frame Specification": the encoded URL is 1-17 bytes; a frame ending after the scheme is refused.
        var empty = Array(url.prefix(14))
        empty[7] = 0x06                                      // Service Data length: 0x16, AA FE, 10, TX power, scheme
        #expect(code(empty)! == ("wrongLength", 11))
        do { _ = try EddystoneFrame.decode(empty); Issue.record("decoded") } catch { #expect(error.message.contains("encoded URL after the scheme is empty")) }
        let tlm = EddystoneFrame.tlm(EddystoneTelemetry(batteryMillivolts: 3000, temperatureRaw: 0, advertisingCount: 1, uptimeDeciseconds: 1)).advertisingData()
        var encrypted = tlm
        encrypted[12] = 0x01                                 // eTLM version 0x01: not decoded
        #expect(code(encrypted)! == ("reservedValue", 12))
        #expect(code(Array(good.prefix(20)))! == ("truncatedStructure", 7))
        #expect(code([0x02, 0x01, 0x06])! == ("noBeaconData", 3))
        // The umbrella decoder reports the specific near-miss, not "not Apple".
        do { _ = try BeaconFrame.decode(rfu); Issue.record("decoded") } catch { #expect(error.code == .reservedValue && error.offset == 29) }
    }

    @Test("Format-aware identities: same 20 bytes in two formats are different beacons; Codable keeps iBeacon's old shape")
    func identities() throws {
        let iBeacon = BeaconIdentity(uuid: Self.id1, major: 1, minor: 2)
        let altBeacon = BeaconIdentity(uuid: Self.id1, major: 1, minor: 2, format: .altBeacon)
        #expect(iBeacon != altBeacon && iBeacon.hashValue != altBeacon.hashValue)
        #expect(Set([iBeacon, altBeacon]).count == 2)
        #expect(MemoryLayout<BeaconIdentity>.size == 21 && MemoryLayout<BeaconIdentity>.stride == 22)
        let json = String(decoding: try JSONEncoder().encode(iBeacon), as: UTF8.self)
        #expect(!json.contains("format"))
        #expect(try JSONDecoder().decode(BeaconIdentity.self, from: Data(json.utf8)) == iBeacon)
        let alt = try JSONEncoder().encode(altBeacon)
        #expect(String(decoding: alt, as: UTF8.self).contains(#""format":"altbeacon""#))
        #expect(try JSONDecoder().decode(BeaconIdentity.self, from: alt) == altBeacon)
    }

    @Test("Constraints and region specifiers: AltBeacon id1/id2/id3, Eddystone namespace (+ instance)")
    func constraintsAndSpecifiers() throws {
        let eddy = try #require(BeaconIdentity(eddystoneNamespace: Self.namespace, instance: Self.instance))
        let otherInstance = try #require(BeaconIdentity(eddystoneNamespace: Self.namespace, instance: [1, 2, 3, 4, 5, 6]))
        let shop = try BeaconRegion(specifier: "shop:eddystone:8b0ca750e7a74e14bd99")
        #expect(shop.matches(eddy) && shop.matches(otherInstance))
        let shelf = try BeaconRegion(specifier: "shelf:eddystone-uid:8B0CA750E7A74E14BD99:0000000000A1@Room1")
        #expect(shelf.matches(eddy, scanner: "Room1") && !shelf.matches(otherInstance, scanner: "Room1") && shelf.scannerID == "Room1")
        #expect(shelf.constraint.description == "eddystone-uid:8b0ca750e7a74e14bd99:0000000000a1")
        let alt = try BeaconRegion(specifier: "hall:altbeacon:2F234454CF6D4A0FADF2F4911BA9FFA6:1")
        #expect(alt.matches(BeaconIdentity(uuid: Self.id1, major: 1, minor: 9, format: .altBeacon)))
        #expect(!alt.matches(BeaconIdentity(uuid: Self.id1, major: 1, minor: 9)))          // the iBeacon with the same bytes
        let plain = try BeaconRegion(specifier: "lobby:2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6:1:2")
        #expect(plain.constraint.format == .iBeacon && !plain.matches(BeaconIdentity(uuid: Self.id1, major: 1, minor: 2, format: .altBeacon)))
        #expect(try BeaconRegion(specifier: "x:ibeacon:2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6").constraint.format == .iBeacon)
        for bad in ["s:eddystone:8b0c", "s:eddystone:8b0ca750e7a74e14bd99:00", "s:eddystone:8b0ca750e7a74e14bd99:0000000000a1:7",
                    "s:altbeacon:nothex", "s:altbeacon:2F234454CF6D4A0FADF2F4911BA9FFA6:x"] {
            #expect(throws: RegionKitError.self, "\(bad)") { try BeaconRegion(specifier: bad) }
        }
        #expect(throws: RegionKitError.self) { try BeaconIdentityConstraint(uuid: Self.id1, format: .eddystoneUID) }
        // Codable round trip of a namespace-only constraint.
        let data = try JSONEncoder().encode(shop.constraint)
        #expect(try JSONDecoder().decode(BeaconIdentityConstraint.self, from: data) == shop.constraint)
    }
}
