import Foundation
import Testing
import RegionKitCore
@testable import RegionKitGateway

@Suite("MQTT sighting messages: ESPresense, Theengs, RegionKit batches")
struct SightingMessageDecoderTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let identity = BeaconIdentity(uuid: uuid, major: 1, minor: 2)
    static let now = Timestamp(seconds: 1000)

    func decode(_ format: SightingMessageFormat, _ topic: String, _ json: String, scanner: String? = nil) throws -> SightingMessageDecoder.Outcome {
        try SightingMessageDecoder(format: format, scannerOverride: scanner).decode(topic: topic, payload: Array(json.utf8), receivedAt: Self.now)
    }

    func error(_ format: SightingMessageFormat, _ topic: String, _ payload: [UInt8]) -> SightingMessageError? {
        do {
            _ = try SightingMessageDecoder(format: format).decode(topic: topic, payload: payload, receivedAt: Self.now)
            return nil
        } catch {
            return error
        }
    }

    // MARK: ESPresense

    @Test func espresenseIBeaconWithRoomAsScanner() throws {
        // A v4 payload as BleFingerprint::fill() writes it (extra fields are ignored).
        let json = #"{"mac":"c3ad6e1f3a21","id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","int":102,"rxAdj":0,"rssi@1m":-59,"rssi":-71.56,"rssiVar":1.2,"raw":3.1,"distance":3.05,"var":0.1}"#
        let outcome = try decode(.espresense, "espresense/devices/iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2/kitchen", json)
        #expect(outcome == .sightings([BeaconObservation(identity: Self.identity, rssi: -72, measuredPower: -59, timestamp: Self.now, scannerID: "kitchen")]))
    }

    @Test func espresenseOldFirmwareIntegerRSSIAndNoPower() throws {
        let outcome = try decode(.espresense, "espresense/devices/x/hall", #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-80}"#)
        #expect(outcome == .sightings([BeaconObservation(identity: Self.identity, rssi: -80, measuredPower: nil, timestamp: Self.now, scannerID: "hall")]))
    }

    @Test("Any other ESPresense id names a device (the engine keeps it only while a device region names it)", arguments: [
        ("apple:1005:9-26", "apple:1005:9-26"),                                              // a phone's fingerprint
        ("md:0059:26", "md:0059:26"),                                                        // other manufacturer data
        ("my-keys", "my-keys"),                                                              // a user alias
        ("irk:0123456789abcdef0123456789abcdef", "irk:0123456789abcdef0123456789abcdef"),    // a phone resolved by its IRK
        ("known:c80f104dc7eb", "C8:0F:10:4D:C7:EB"),                                         // a known address
    ])
    func espresenseOtherIdsAreDevices(id: String, device: String) throws {
        let json = #"{"id":"\#(id)","rssi":-60.4,"rssi@1m":-65,"distance":1.2}"#
        let outcome = try decode(.espresense, "espresense/devices/\(id)/hall", json)
        let identity = try #require(BeaconIdentity(deviceID: device))
        #expect(outcome == .sightings([BeaconObservation(identity: identity, rssi: -60, measuredPower: -65, timestamp: Self.now, scannerID: "hall")]))
    }

    @Test("ESPresense's own distance estimate is not used, so no value of it costs the sighting", arguments: [
        "-1", "0", "1e999", "-1e999", "\"far\"", "null",
    ])
    func espresenseDistanceNeverCostsTheSighting(distance: String) throws {
        let json = #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-71,"rssi@1m":-59,"distance":\#(distance)}"#
        let outcome = try decode(.espresense, "espresense/devices/x/kitchen", json)
        #expect(outcome == .sightings([BeaconObservation(identity: Self.identity, rssi: -71, measuredPower: -59, timestamp: Self.now, scannerID: "kitchen")]))
    }

    @Test("An ESPresense id that cannot name a device is ignored, not an error", arguments: [
        #"{"id":"msft:cdp:0109e5b1a2c3d4e5f6a7b8c9d0e1","rssi":-60}"#,   // longer than 20 bytes
        #"{"id":"tractive:c80f104dc7eb","rssi":-60}"#,                    // 21 bytes: give it an alias
        #"{"id":"alice phone","rssi":-60}"#,                              // a space
    ])
    func espresenseIdsNamingNoDeviceAreIgnored(json: String) throws {
        guard case .ignored = try decode(.espresense, "espresense/devices/x/hall", json) else {
            Issue.record("expected ignored")
            return
        }
    }

    @Test(arguments: [
        (#"{"rssi":-60}"#, SightingMessageError.Kind.missingField, "id"),
        (#"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2"}"#, .missingField, "rssi"),
        (#"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":"loud"}"#, .wrongType, "rssi"),
        (#"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":1e300}"#, .outOfRange, "rssi"),
        (#"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-60,"rssi@1m":[1]}"#, .wrongType, "rssi@1m"),
        (#"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-70000-2","rssi":-60}"#, .malformedField, "id"),
        (#"{"id":"iBeacon:zz-1-2","rssi":-60}"#, .malformedField, "id"),
        (#"{"id":42,"rssi":-60}"#, .wrongType, "id"),
        (#"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-60"#, .invalidJSON, "JSON"),
        (#"[1,2]"#, .invalidJSON, "object"),
        (#""#, .invalidJSON, "JSON"),
    ])
    func espresenseDamageNamesTheField(json: String, kind: SightingMessageError.Kind, mention: String) {
        let error = error(.espresense, "espresense/devices/x/hall", Array(json.utf8))
        #expect(error?.kind == kind, "\(json)")
        #expect(error?.message.contains(mention) == true, "\(error?.message ?? "no error")")
    }

    @Test func invalidUTF8AndOversizedPayloadsAreRejectedUnread() {
        #expect(error(.espresense, "espresense/devices/x/hall", [0x7B, 0xFF, 0xFE, 0x7D])?.kind == .invalidUTF8)
        #expect(error(.theengs, "home/gw/BTtoMQTT/AA", Array(repeating: 0x20, count: 1 << 20))?.kind == .tooLarge)
    }

    @Test func espresenseIdRoundTrip() {
        #expect(ESPresenseMessage.id(for: Self.identity) == "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")
        #expect(ESPresenseMessage.identity(fromID: ESPresenseMessage.id(for: Self.identity)) == Self.identity)
        #expect(ESPresenseMessage.identity(fromID: "iBeacon:E2C56DB5DFFB48D2B060D0F5A71096E0-1-2") == Self.identity)
        #expect(ESPresenseMessage.identity(fromID: "iBeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-65535-0")?.major == 65535)
        for bad in ["iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-65536-2", "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-",
                    "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1", "iBeacon:e2c56db5-dffb48d2-b060-d0f5a71096e0-1-2",
                    "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2-3", "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e-1-2",
                    "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-+1-2", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2", "iBeacon:"] {
            #expect(ESPresenseMessage.identity(fromID: bad) == nil, "\(bad)")
        }
    }

    // MARK: Theengs

    @Test func theengsRawManufacturerDataDecodedWithOurCodec() throws {
        // 4c00 = Apple (little-endian), 02 = iBeacon, 15 = 21 bytes: UUID, major 0001, minor 0002, power c5 (-59).
        let json = #"{"id":"60:87:57:4C:9B:C2","mac_type":1,"rssi":-78,"manufacturerdata":"4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5"}"#
        let outcome = try decode(.theengs, "home/TheengsGateway/BTtoMQTT/6087574C9BC2", json)
        #expect(outcome == .sightings([BeaconObservation(identity: Self.identity, rssi: -78, measuredPower: -59, timestamp: Self.now, scannerID: "TheengsGateway")]))
        #expect(TheengsMessage.manufacturerData(for: IBeaconFrame(identity: Self.identity, measuredPower: -59)) == "4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
    }

    @Test func theengsDecodedFieldsAndScannerOverride() throws {
        // OpenMQTTGateway's decoded form.
        let json = #"{"id":"60:87:57:4C:9B:C2","rssi":-78,"distance":7.85,"model_id":"IBEACON","mfid":"4c00","uuid":"e2c56db5dffb48d2b060d0f5a71096e0","major":1,"minor":2,"txpower":-66}"#
        let outcome = try decode(.theengs, "home/OMG_ESP32/BTtoMQTT/6087574C9BC2", json, scanner: "garage")
        #expect(outcome == .sightings([BeaconObservation(identity: Self.identity, rssi: -78, measuredPower: -66, timestamp: Self.now, scannerID: "garage")]))
        // Theengs Decoder before July 2022 named the measured power `power`.
        let older = #"{"id":"60:87:57:4C:9B:C2","rssi":-78,"model_id":"IBEACON","mfid":"4c00","uuid":"e2c56db5dffb48d2b060d0f5a71096e0","major":1,"minor":2,"power":-61}"#
        #expect(try decode(.theengs, "home/OMG_ESP32/BTtoMQTT/6087574C9BC2", older, scanner: "garage")
            == .sightings([BeaconObservation(identity: Self.identity, rssi: -78, measuredPower: -61, timestamp: Self.now, scannerID: "garage")]))
        #expect(error(.theengs, "home/gw/BTtoMQTT/AA", Array(older.replacingOccurrences(of: "-61", with: "\"x\"").utf8))?.message.contains("'power'") == true)
    }

    @Test func theengsNonIBeaconIgnoredAndBadHexRejected() throws {
        guard case .ignored = try decode(.theengs, "home/gw/BTtoMQTT/AA", #"{"id":"AA","rssi":-70,"manufacturerdata":"06000109"}"#) else {
            Issue.record("a Microsoft frame is not an iBeacon, and AA is no address")
            return
        }
        #expect(error(.theengs, "home/gw/BTtoMQTT/AA", Array(#"{"rssi":-70,"manufacturerdata":"4c0g"}"#.utf8))?.kind == .malformedField)
        #expect(error(.theengs, "home/gw/BTtoMQTT/AA", Array(#"{"rssi":-70,"manufacturerdata":"4c0"}"#.utf8))?.kind == .malformedField)
        #expect(error(.theengs, "somewhere/else", Array(#"{"rssi":-70,"uuid":"e2c56db5dffb48d2b060d0f5a71096e0","major":1,"minor":2}"#.utf8))?.kind == .badTopic)
    }

    @Test("Any other Theengs advertisement is a sighting of the device its id (an address) names; its txpower (TX Power Level, dBm at the antenna) is not a measured power at 1 m")
    func theengsDeviceByAddress() throws {
        // OpenMQTTGateway's `txpower` for a device is NimBLE's getTXPower(): the advertisement's TX Power Level.
        for txpower in ["12", "-8", "-62"] {
            let json = #"{"id":"c8:0f:10:4d:c7:eb","mac_type":0,"rssi":-70,"name":"Mi Band","txpower":\#(txpower),"manufacturerdata":"5701001122"}"#
            let outcome = try decode(.theengs, "home/gw/BTtoMQTT/C80F104DC7EB", json)
            let identity = try #require(BeaconIdentity(deviceID: "C8:0F:10:4D:C7:EB"))
            #expect(outcome == .sightings([BeaconObservation(identity: identity, rssi: -70, measuredPower: nil, timestamp: Self.now, scannerID: "gw")]), "txpower \(txpower)")
        }
        // Not read, so not refused either: a gateway's odd txpower does not lose the sighting.
        let odd = try decode(.theengs, "home/gw/BTtoMQTT/C80F104DC7EB", #"{"id":"c8:0f:10:4d:c7:eb","rssi":-70,"txpower":"high"}"#)
        #expect(odd == .sightings([BeaconObservation(identity: try #require(BeaconIdentity(deviceID: "C8:0F:10:4D:C7:EB")), rssi: -70, measuredPower: nil, timestamp: Self.now, scannerID: "gw")]))
        // No rssi (a gateway's decoded sensor message): ignored, as before, not an error.
        guard case .ignored = try decode(.theengs, "home/gw/BTtoMQTT/C80F104DC7EB", #"{"id":"C8:0F:10:4D:C7:EB","tempc":21.5}"#) else {
            Issue.record("expected ignored")
            return
        }
    }

    // MARK: Measured power

    @Test("A measured power no radio could report (the beacon's byte used for something else) is not set, in every format: the sighting and its RSSI are kept, and a RegionKit scanner's batch is not refused for one such beacon (it lost every sighting of the batch)")
    func implausibleMeasuredPowerIsNotSet() throws {
        // ESPresense relays the beacon's power byte as `rssi@1m`: +30 (a battery voltage), −128.
        for power in ["30", "-128", "21"] {
            let json = #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi@1m":\#(power),"rssi":-71}"#
            let outcome = try decode(.espresense, "espresense/devices/iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2/kitchen", json)
            #expect(outcome == .sightings([BeaconObservation(identity: Self.identity, rssi: -71, measuredPower: nil, timestamp: Self.now, scannerID: "kitchen")]), "rssi@1m \(power)")
        }
        // Theengs' raw manufacturer data without `volt`: power byte 1e = +30.
        let raw = #"{"id":"60:87:57:4C:9B:C2","rssi":-78,"manufacturerdata":"4c000215e2c56db5dffb48d2b060d0f5a71096e0000100021e"}"#
        #expect(try decode(.theengs, "home/TheengsGateway/BTtoMQTT/6087574C9BC2", raw)
                == .sightings([BeaconObservation(identity: Self.identity, rssi: -78, measuredPower: nil, timestamp: Self.now, scannerID: "TheengsGateway")]))
        // A RegionKit batch: the beacon with power +30 and the one with −59 both arrive.
        let batch = #"{"v":1,"scanner":"hall","time":1000,"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"rssi":-60,"power":30,"dt":0},{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":3,"rssi":-61,"power":-59,"dt":0}]}"#
        #expect(try ScannerBatch(json: Array(batch.utf8)).sightings.map(\.measuredPower) == [nil, -59])
        // The range's ends are powers.
        for power in [-127, 20] {
            let edge = #"{"v":1,"scanner":"hall","time":1000,"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"rssi":-60,"power":\#(power),"dt":0}]}"#
            #expect(try ScannerBatch(json: Array(edge.utf8)).sightings.map(\.measuredPower) == [power])
        }
        // Still errors: not an integer, or absurd.
        for bad in [#""loud""#, "1e12", "-59.5e10"] {
            let payload = #"{"v":1,"scanner":"hall","time":1000,"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"rssi":-60,"power":\#(bad),"dt":0}]}"#
            #expect(throws: SightingMessageError.self, "power \(bad)") { try ScannerBatch(json: Array(payload.utf8)) }
        }
        // The engine's distance ignores such a power wherever it came from (a local scanner).
        #expect(BeaconObservation(identity: Self.identity, rssi: -60, measuredPower: 30, timestamp: Self.now).effectiveMeasuredPower == IBeaconFrame.defaultMeasuredPower)
        #expect(BeaconObservation(identity: Self.identity, rssi: -60, measuredPower: -169, timestamp: Self.now).effectiveMeasuredPower == IBeaconFrame.defaultMeasuredPower)
        #expect(BeaconObservation(identity: Self.identity, rssi: -60, measuredPower: -75, timestamp: Self.now).effectiveMeasuredPower == -75)
    }

    // MARK: RegionKit batches

    @Test("Batch times are carried to the millisecond: finer digits are rounded on decoding, so a decoded batch encodes back to itself (fuzz find: 170000.00005 s came back as 170000.000 s)")
    func batchMilliseconds() throws {
        let payload = #"{"v":1,"scanner":"hall","time":170000.00005,"sightings":[{"uuid":"E3C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"rssi":-60,"power":-59,"dt":-0.2504}]}"#
        let batch = try ScannerBatch(json: Array(payload.utf8))
        #expect(batch.time == 170_000.0)
        #expect(batch.sightings.map(\.offset) == [-0.25])
        #expect(try ScannerBatch(json: batch.json()) == batch)
        // Rounding happens before the range checks: a time that rounds to the bound is refused.
        let edge = #"{"v":1,"scanner":"hall","time":99999999999.9996,"sightings":[]}"#
        #expect(throws: SightingMessageError.self) { try ScannerBatch(json: Array(edge.utf8)) }
        let early = #"{"v":1,"scanner":"hall","time":1.0,"sightings":[{"uuid":"E3C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"rssi":-60,"dt":-60.0004}]}"#
        #expect(try ScannerBatch(json: Array(early.utf8)).sightings.map(\.offset) == [-60])
    }

    @Test func batchRoundTripKeepsSpacingRelativeToArrival() throws {
        let batch = ScannerBatch(scanner: "lobby \"A\"", time: 1_763_884_800.25, sightings: [
            .init(identity: Self.identity, rssi: -67, measuredPower: -59, offset: -0.18),
            .init(identity: Self.identity, rssi: -70, measuredPower: nil, offset: 0),
        ])
        #expect(try ScannerBatch(json: batch.json()) == batch)
        let outcome = try SightingMessageDecoder(format: .regionkit).decode(topic: "regionkit/scanners/lobby", payload: batch.json(), receivedAt: Self.now)
        guard case .sightings(let observations) = outcome else { Issue.record("no sightings"); return }
        #expect(observations.map(\.timestamp.seconds) == [999.82, 1000])
        #expect(observations.map(\.scannerID) == ["lobby \"A\"", "lobby \"A\""])
    }

    @Test("A scanner named 'status' is heard (its batches were dropped as statuses: the topic ends in /status); a status beside a scanner's batches is still no batch")
    func scannerNamedStatus() throws {
        let batch = ScannerBatch(scanner: "status", time: 1_000, sightings: [.init(identity: Self.identity, rssi: -67, measuredPower: -59, offset: 0)])
        let decoder = SightingMessageDecoder(format: .regionkit)
        #expect(ScannerBatch.topic(scanner: "status") == "regionkit/scanners/status")
        guard case .sightings(let observations) = try decoder.decode(topic: "regionkit/scanners/status", payload: batch.json(), receivedAt: Self.now) else {
            Issue.record("the batch of the scanner 'status' was not read"); return
        }
        #expect(observations.map(\.scannerID) == ["status"])
        for payload in ["online", "offline", "", " offline\n"] {
            guard case .ignored = try decoder.decode(topic: "regionkit/scanners/kitchen/status", payload: Array(payload.utf8), receivedAt: Self.now) else {
                Issue.record("the status \(payload.debugDescription) was read as a batch"); continue
            }
        }
    }

    @Test(arguments: [
        (#"{"v":2,"scanner":"a","time":1,"sightings":[]}"#, SightingMessageError.Kind.outOfRange, "'v'"),
        (#"{"v":1,"time":1,"sightings":[]}"#, .missingField, "scanner"),
        (#"{"v":1,"scanner":"a","time":-1,"sightings":[]}"#, .outOfRange, "time"),
        (#"{"v":1,"scanner":"a","time":1,"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"rssi":-60,"dt":5}]}"#, .outOfRange, "sightings[0].dt"),
        (#"{"v":1,"scanner":"a","time":1,"sightings":[{"uuid":"x","major":1,"minor":2,"rssi":-60,"dt":0}]}"#, .malformedField, "sightings[0].uuid"),
        (#"{"v":1,"scanner":"a","time":1,"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":-1,"minor":2,"rssi":-60,"dt":0}]}"#, .outOfRange, "sightings[0].major"),
        // A number beyond a Double is a number out of range (it read as "an object or array, not a number").
        (#"{"v":1,"scanner":"a","time":1,"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1e400,"minor":2,"rssi":-60,"dt":0}]}"#, .outOfRange, "sightings[0].major"),
        (#"{"v":1,"scanner":"","time":1,"sightings":[]}"#, .badTopic, "scanner"),
        // A name the hub would publish as a topic level Mosquitto refuses (it disconnected the hub), or forge log lines with.
        (#"{"v":1,"scanner":"bad\ufdd0room","time":1,"sightings":[]}"#, .badTopic, "noncharacter U+FDD0"),
        (#"{"v":1,"scanner":"ev\u0000il\nline","time":1,"sightings":[]}"#, .badTopic, "control character U+0000"),
    ])
    func batchDamageNamesTheSighting(json: String, kind: SightingMessageError.Kind, mention: String) {
        let error = error(.regionkit, "regionkit/scanners/a", Array(json.utf8))
        #expect(error?.kind == kind, "\(json)")
        #expect(error?.message.contains(mention) == true, "\(error?.message ?? "no error")")
    }

    @Test("A room or gateway level holding a control character names no scanner, in every format")
    func controlCharactersInTopicLevels() {
        let espresense = error(.espresense, "espresense/devices/x/kit\nchen", Array(#"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-80}"#.utf8))
        #expect(espresense?.kind == .badTopic && espresense?.message.contains(#"room "kit\nchen" is not a scanner name"#) == true, "\(String(describing: espresense))")
    }

    @Test func seededGarbageNeverCrashes() {
        var random = SeededRandom(seed: 7)
        let base = Array(#"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-71.5,"rssi@1m":-59}"#.utf8)
        var decoded = 0, rejected = 0
        for _ in 0..<3000 {
            var bytes = base
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let index = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 3 {
                case 0: bytes[index] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.remove(at: index)
                default: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: index)
                }
            }
            for format in SightingMessageFormat.allCases {
                do {
                    _ = try SightingMessageDecoder(format: format).decode(topic: "espresense/devices/x/hall", payload: bytes, receivedAt: Self.now)
                    decoded += 1
                } catch {
                    rejected += 1   // typed: a SightingMessageError with a kind, never a trap
                }
            }
        }
        // Small mutations leave some ESPresense messages decodable and break many others.
        #expect(decoded > 100 && rejected > 3000, "decoded \(decoded), rejected \(rejected)")
    }
}
