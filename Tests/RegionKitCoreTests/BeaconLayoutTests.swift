import Foundation
import Testing
@testable import RegionKitCore

/// The Android Beacon Library layout syntax: parsing (errors name the term and position) and the
/// built-in formats expressed as layouts decoding identically to the hand-written codecs.
@Suite("Beacon layouts (Android Beacon Library syntax)")
struct BeaconLayoutTests {
    @Test("the built-in layouts parse to the fields they spell")
    func builtIns() {
        #expect(BeaconLayout.iBeacon.identifiers.map(\.length) == [16, 2, 2] && BeaconLayout.iBeacon.format == .iBeacon)
        #expect(BeaconLayout.altBeacon.identifiers.map(\.length) == [16, 2, 2] && BeaconLayout.altBeacon.dataFields.count == 1)
        #expect(BeaconLayout.eddystoneUID.identifiers.map(\.length) == [10, 6] && BeaconLayout.eddystoneUID.powerCorrection == -41)
        #expect(BeaconLayout.eddystoneUID.serviceUUID?.bytes == [0xAA, 0xFE])
        #expect(BeaconLayout.eddystoneURL.identifiers.first?.variableLength == true && BeaconLayout.eddystoneURL.format == nil)
        #expect(BeaconLayout.eddystoneTLM.isExtraFrame && BeaconLayout.eddystoneTLM.dataFields.map(\.length) == [1, 2, 2, 4, 4])
        #expect(BeaconLayout.eddystoneTLM.adType == 0x16 && BeaconLayout.altBeacon.adType == 0xFF)
    }

    @Test("a custom layout's format follows its identifier shape and iBeacon's 02 15; little-endian fields are reversed")
    func customLayouts() throws {
        // The Android Beacon Library's iBeacon layout (any company): iBeacon, so iBeacon regions match it.
        #expect(try BeaconLayout("m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24").format == .iBeacon)
        #expect(try BeaconLayout("m:0-3=59000215,i:4-19,i:20-21,i:22-23,p:24-24").format == .iBeacon)
        #expect(try BeaconLayout("m:3-3=15,i:4-19,i:20-21,i:22-23,p:24-24").format == .altBeacon)   // 0x15 alone is not iBeacon's code
        #expect(try BeaconLayout("m:2-3=1502,i:4-19,i:20-21,i:22-23,p:24-24").format == .altBeacon)
        #expect(try BeaconLayout("s:0-1=fe9a,m:2-3=0215,i:4-19,i:20-21,i:22-23").format == .altBeacon)  // service data, not iBeacon's manufacturer data
        #expect(try BeaconLayout("m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24").format == .altBeacon)
        #expect(try BeaconLayout("m:2-3=1234,i:4-13,i:14-19,p:20-20").format == .eddystoneUID)
        #expect(try BeaconLayout("m:2-3=1234,i:4-7").format == nil)
        // A vendor frame: company 0x0059, matcher 0xABCD, a 4-byte little-endian id, power, 2-byte LE data.
        let layout = try BeaconLayout("m:2-3=abcd,i:4-7l,p:8-8,d:9-10l")
        let data: [UInt8] = [0x0C, 0xFF, 0x59, 0x00, 0xAB, 0xCD, 0x01, 0x02, 0x03, 0x04, 0xC4, 0x34, 0x12]
        let decoded = try layout.decode(data)
        #expect(decoded.identifiers == [[0x04, 0x03, 0x02, 0x01]] && decoded.measuredPower == -60 && decoded.dataFields == [0x1234])
        var wrong = data
        wrong[5] = 0xCE
        do { _ = try layout.decode(wrong); Issue.record("decoded") } catch { #expect(error.code == .matcherMismatch && error.offset == 4) }
        do { _ = try layout.decode(Array(data.prefix(11)).enumerated().map { $0.offset == 0 ? 0x0A : $0.element }); Issue.record("decoded") } catch {
            #expect(error.code == .wrongLength && error.offset == 0)
        }
    }

    @Test("an iBeacon-shaped vendor frame decodes to an iBeacon identity, which an iBeacon constraint matches")
    func iBeaconShapedVendorFrame() throws {
        let layout = try BeaconLayout("m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24")
        let uuid: [UInt8] = [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0]
        let data: [UInt8] = [0x1A, 0xFF,                  // Manufacturer Specific Data, 26 bytes
                             0x59, 0x00,                  // company 0x0059 (Nordic), not Apple: the iBeacon codec refuses it
                             0x02, 0x15]                  // iBeacon type, length 21
            + uuid                                        // proximity UUID
            + [0x00, 0x07,                                // major 7
               0x00, 0x09,                                // minor 9
               0xC5]                                      // measured power -59
        let identity = try #require(layout.identity(of: try layout.decode(data)))
        #expect(identity.format == .iBeacon && identity.major == 7 && identity.minor == 9)
        let proximity = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        #expect(try BeaconIdentityConstraint(uuid: proximity, major: 7).matches(identity))
        #expect(try !BeaconIdentityConstraint(uuid: proximity, major: 7, format: .altBeacon).matches(identity))
    }

    @Test("a format can be given: FORMAT:EXPRESSION or init(_:format:); the identifiers must have its shape")
    func explicitFormat() throws {
        #expect(try BeaconLayout(tagged: "altbeacon:m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24").format == .altBeacon)
        #expect(try BeaconLayout(tagged: "iBeacon:m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24").format == .iBeacon)
        #expect(try BeaconLayout(tagged: "eddystone-uid:m:2-3=1234,i:4-13,i:14-19").format == .eddystoneUID)
        #expect(try BeaconLayout(tagged: "m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24").format == .iBeacon)
        #expect(try BeaconLayout(tagged: "x,s:0-1=feaa,m:2-2=20,d:3-3").isExtraFrame)   // starts with a term, not a format
        #expect(try BeaconLayout(tagged: " altbeacon:m:2-3=0215,i:4-19,i:20-21,i:22-23").expression == "m:2-3=0215,i:4-19,i:20-21,i:22-23")
        for (text, message) in [("zigbee:m:2-3=0215,i:4-19", "'zigbee' is not a format (ibeacon, altbeacon, eddystone-uid)"),
                                ("ibeacon:m:2-3=1234,i:4-7", "cannot be ibeacon: its identifiers (i:) must be 16+2+2 bytes, fixed length; they are 4"),
                                ("eddystone-uid:m:2-3=1234,i:4-19,i:20-21,i:22-23", "cannot be eddystone-uid: its identifiers (i:) must be 10+6 bytes, fixed length; they are 16+2+2"),
                                ("altbeacon:m:2-3=1234,i:4-19v,i:20-21,i:22-23", "they are 16v+2+2"),
                                ("ibeacon:m:2-3=1234,i:4-19,q:1-1", "unknown kind 'q'")] {
            do {
                _ = try BeaconLayout(tagged: text)
                Issue.record("'\(text)' parsed")
            } catch {
                #expect(error.message.contains(message), "\(error.message)")
            }
        }
    }

    @Test("layout syntax errors name the term and where it starts", arguments: [
        ("", "term 1"), ("i:4-19", "no matcher"), ("m:2-3=beac", "no identifier"), ("m:2-3=bea", "term 1"),
        ("m:2-3=beac,i:19-4", "term 2 'i:19-4' at character 11"), ("m:2-3=beac,q:1-2", "unknown kind 'q'"),
        ("m:2-3=beac,i:4-19,p:24-25", "one signed byte"), ("m:2-3=beac,i:4-19,d:4-19", "at most 8 bytes"),
        ("m:2-3=beac,m:2-3=beac,i:4-5", "one matcher"), ("m:2-3=beac,i:4-19,p:24-24:x", "power correction"),
        ("m:2-3=beac,i:4-300", "0 <= START <= END <= 254"), ("m:2-3=beac,d:4-5v,i:6-7", "variable length"),
        // Only 16-bit service data UUIDs (AD type 0x16) are read: longer ones would never match.
        ("s:0-3=0000feaa,m:4-4=00,i:5-20", "term 1 's:0-3=0000feaa' at character 0: the service UUID must be 2 bytes"),
        ("m:18-18=00,s:0-15=0000feaa00001000800000805f9b34fb,i:19-20", "term 2"),
    ])
    func syntaxErrors(expression: String, expected: String) {
        do {
            _ = try BeaconLayout(expression)
            Issue.record("'\(expression)' parsed")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    /// One random frame of a built-in format, sometimes mutated.
    static func randomFrame(_ rng: inout SeededRandom) -> [UInt8] {
        var uuidBytes = [UInt8](repeating: 0, count: 16)
        for index in uuidBytes.indices { uuidBytes[index] = UInt8.random(in: 0...255, using: &rng) }
        let b = uuidBytes
        let uuid = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        let major = UInt16.random(in: 0...UInt16.max, using: &rng), minor = UInt16.random(in: 0...UInt16.max, using: &rng)
        let power = Int8.random(in: Int8.min...Int8.max, using: &rng)
        var data: [UInt8]
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: data = IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), measuredPower: power).advertisingData()
        case 1: data = AltBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), referenceRSSI: power,
                                      manufacturerID: major, reserved: UInt8(minor & 0xFF)).advertisingData()
        case 2: data = EddystoneFrame.uid(EddystoneUIDFrame(identity: BeaconIdentity(uuid: uuid, major: 0, minor: 0, format: .eddystoneUID),
                                                            rangingData: power)).advertisingData()
        case 3:
            let host = String((0..<Int.random(in: 1...10, using: &rng)).map { _ in "abcdefghij".randomElement(using: &rng) ?? "a" })
            data = EddystoneFrame.url((try? EddystoneURLFrame(url: "https://" + host + [".com/", ".org", "/x"].randomElement(using: &rng)!, txPower: power))
                                      ?? EddystoneURLFrame(txPower: power, encodedURL: [0])).advertisingData()
        default:
            data = EddystoneFrame.tlm(EddystoneTelemetry(batteryMillivolts: major, temperatureRaw: Int16(bitPattern: minor),
                                                         advertisingCount: UInt32(major) << 16 | UInt32(minor), uptimeDeciseconds: UInt32(minor))).advertisingData()
        }
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: data[Int.random(in: 0..<data.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)   // one byte changed
        case 1: data = Array(data.prefix(Int.random(in: 0..<data.count, using: &rng)))                     // cut short
        case 2: data[3] = UInt8.random(in: 0...40, using: &rng)                                             // a second structure's length changed
        default: break
        }
        return data
    }

    @Test("built-in formats as layouts decode exactly what the hand codecs decode (20,000 seeded frames, mutated)")
    func layoutsAgreeWithCodecs() throws {
        var rng = SeededRandom(seed: 16)
        var agreements = [String: Int]()
        for _ in 0..<20_000 {
            let data = Self.randomFrame(&rng)
            // iBeacon: identifiers and power.
            let hand = try? IBeaconFrame.decode(data)
            let layout = try? BeaconLayout.iBeacon.decode(data)
            if let hand {
                let decoded = try #require(layout, "iBeacon layout rejected \(BeaconIdentity.hex(data))")
                #expect(BeaconLayout.iBeacon.identity(of: decoded) == hand.identity && decoded.measuredPower == Int(hand.measuredPower))
                agreements["ibeacon", default: 0] += 1
            } else if let layout {
                // The only frames the layout accepts and the codec refuses: an Apple 0x0215 structure longer than 25 bytes
                // (the Android Beacon Library reads the fields and ignores the tail; the codec wants exactly 21 payload bytes).
                // Or a truncated structure after it: the codec walks every structure, the layout stops at its match.
                let s = try #require(structure(containing: layout.offset, in: data))
                #expect(s.count > 25 || hasTruncation(data), "iBeacon layout accepted what the codec refused: \(BeaconIdentity.hex(data))")
            }
            // AltBeacon.
            let handAlt = try? AltBeaconFrame.decode(data)
            let layoutAlt = try? BeaconLayout.altBeacon.decode(data)
            if let handAlt {
                let decoded = try #require(layoutAlt, "AltBeacon layout rejected \(BeaconIdentity.hex(data))")
                #expect(BeaconLayout.altBeacon.identity(of: decoded) == handAlt.identity && decoded.measuredPower == Int(handAlt.referenceRSSI)
                        && decoded.dataFields == [UInt64(handAlt.reserved)])
                agreements["altbeacon", default: 0] += 1
            } else if let layoutAlt {
                let s = try #require(structure(containing: layoutAlt.offset, in: data))
                #expect(s.count > 26, "AltBeacon layout accepted what the codec refused: \(BeaconIdentity.hex(data))")
            }
            // Eddystone UID / URL / TLM.
            let handEddy = try? EddystoneFrame.decode(data)
            switch handEddy {
            case .uid(let uid)?:
                let decoded = try #require(try? BeaconLayout.eddystoneUID.decode(data))
                #expect(BeaconLayout.eddystoneUID.identity(of: decoded) == uid.identity && decoded.measuredPower == uid.measuredPower)
                agreements["uid", default: 0] += 1
            case .url(let url)?:
                let decoded = try #require(try? BeaconLayout.eddystoneURL.decode(data))
                #expect(decoded.identifiers == [url.encodedURL] && decoded.measuredPower == url.measuredPower)
                agreements["url", default: 0] += 1
            case .tlm(let tlm)?:
                let decoded = try #require(try? BeaconLayout.eddystoneTLM.decode(data))
                #expect(decoded.dataFields == [0, UInt64(tlm.batteryMillivolts ?? 0), UInt64(UInt16(bitPattern: tlm.temperatureRaw)),
                                               UInt64(tlm.advertisingCount ?? 0), UInt64(tlm.uptimeDeciseconds ?? 0)])
                agreements["tlm", default: 0] += 1
            case nil:
                // The layouts may accept what the codec refuses only for the codec's extra checks:
                // exact lengths, RFU zero, reserved URL codes (the Android Beacon Library checks none).
                if let decoded = try? BeaconLayout.eddystoneUID.decode(data) {
                    let s = try #require(structure(containing: decoded.offset, in: data))
                    let rfuSet = s.count == 22 && (data[s.body + 20] != 0 || data[s.body + 21] != 0)
                    #expect(s.count != 20 && s.count != 22 || rfuSet, "UID layout accepted what the codec refused: \(BeaconIdentity.hex(data))")
                }
            }
        }
        #expect(agreements.values.allSatisfy { $0 > 1_000 } && agreements.count == 5, "\(agreements)")
    }

    func hasTruncation(_ data: [UInt8]) -> Bool {
        data.withUnsafeBytes { raw in AdvertisingDataWalker.walk(raw) { _ in true } } != nil
    }

    func structure(containing offset: Int, in data: [UInt8]) -> AdvertisingDataWalker.Structure? {
        var found: AdvertisingDataWalker.Structure?
        _ = data.withUnsafeBytes { raw in
            AdvertisingDataWalker.walk(raw) { s in
                if s.offset == offset { found = s; return false }
                return true
            }
        }
        return found
    }
}
