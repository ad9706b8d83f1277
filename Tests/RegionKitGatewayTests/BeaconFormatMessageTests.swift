import Foundation
import Testing
import RegionKitCore
@testable import RegionKitGateway

/// AltBeacon and Eddystone sightings from the MQTT sources: ESPresense's `altBeacon:` and `eddy:`
/// ids, Theengs' raw manufacturer and service data, and RegionKit batches with a `format`.
@Suite("MQTT sighting messages: AltBeacon and Eddystone")
struct BeaconFormatMessageTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let now = Timestamp(seconds: 1000)
    static let eddy = BeaconIdentity(eddystoneNamespace: [0x8B, 0x0C, 0xA7, 0x50, 0xE7, 0xA7, 0x4E, 0x14, 0xBD, 0x99],
                                     instance: [0, 0, 0, 0, 0, 0xA1])

    func decode(_ format: SightingMessageFormat, _ topic: String, _ json: String) throws -> SightingMessageDecoder.Outcome {
        try SightingMessageDecoder(format: format).decode(topic: topic, payload: Array(json.utf8), receivedAt: Self.now)
    }

    @Test func espresenseAltBeaconId() throws {
        let outcome = try decode(.espresense, "espresense/devices/x/kitchen", #"{"id":"altBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-70,"rssi@1m":-59}"#)
        let identity = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2, format: .altBeacon)
        #expect(outcome == .sightings([BeaconObservation(identity: identity, rssi: -70, measuredPower: -59, timestamp: Self.now, scannerID: "kitchen")]))
        #expect(ESPresenseMessage.id(for: identity) == "altBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")
    }

    @Test func espresenseEddystoneIdAsTheFirmwarePrintsIt() throws {
        // BleFingerprint prints namespace byte 4 twice: 8b0ca750e7 e7 a74e14bd99.
        let outcome = try decode(.espresense, "espresense/devices/x/hall", #"{"id":"eddy:8b0ca750e7e7a74e14bd99-0000000000a1","rssi":-65,"rssi@1m":-59}"#)
        let identity = try #require(Self.eddy)
        #expect(outcome == .sightings([BeaconObservation(identity: identity, rssi: -65, measuredPower: -59, timestamp: Self.now, scannerID: "hall")]))
        #expect(ESPresenseMessage.eddystoneIdentity(fromID: "eddy:8b0ca750e7a74e14bd99-0000000000a1") == identity)   // the correct 20 digits too
        #expect(ESPresenseMessage.id(for: identity) == "eddy:8b0ca750e7e7a74e14bd99-0000000000a1")
        #expect(ESPresenseMessage.eddystoneIdentity(fromID: "eddy:8b0ca750e7e8a74e14bd99-0000000000a1") == nil)       // not a repeat
    }

    @Test(arguments: ["eddy:8b0c-0000000000a1", "eddy:8b0ca750e7a74e14bd99-00", "eddy:8b0ca750e7a74e14bd99", "altBeacon:e2c56db5-1-2"])
    func espresenseMalformedIdsNameTheField(id: String) {
        do {
            _ = try decode(.espresense, "espresense/devices/x/hall", #"{"id":"\#(id)","rssi":-65}"#)
            Issue.record("accepted \(id)")
        } catch let error as SightingMessageError {
            #expect(error.kind == .malformedField && error.message.contains("field 'id'"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func theengsAltBeaconManufacturerData() throws {
        // Company 0x0118 (LE 1801), BEAC, id1, id2 = 1, id3 = 2, reference RSSI 0xC5 (−59), reserved 00.
        let json = #"{"id":"AA:BB","rssi":-71,"manufacturerdata":"1801beace2c56db5dffb48d2b060d0f5a71096e000010002c500"}"#
        let outcome = try decode(.theengs, "home/gw/BTtoMQTT/AABB", json)
        #expect(outcome == .sightings([BeaconObservation(identity: BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2, format: .altBeacon),
                                                         rssi: -71, measuredPower: -59, timestamp: Self.now, scannerID: "gw")]))
    }

    @Test func theengsEddystoneServiceData() throws {
        // UID frame: type 00, ranging data 0xEE (−18 → −59 at 1 m), namespace, instance, RFU.
        let json = #"{"id":"AA:BB","rssi":-64,"servicedatauuid":"0xfeaa","servicedata":"00ee8b0ca750e7a74e14bd990000000000a10000"}"#
        let outcome = try decode(.theengs, "home/gw/BTtoMQTT/AABB", json)
        #expect(outcome == .sightings([BeaconObservation(identity: try #require(Self.eddy), rssi: -64, measuredPower: -59, timestamp: Self.now, scannerID: "gw")]))
        let tlm = #"{"id":"AA:BB","rssi":-64,"servicedatauuid":"0xfeaa","servicedata":"20000bb818800000010000000258"}"#
        // TLM: no identity, so no sighting; the telemetry for the ingest to attach by transmitter.
        guard case .telemetry(let telemetry) = try decode(.theengs, "home/gw/BTtoMQTT/AABB", tlm) else { Issue.record("TLM is not telemetry"); return }
        #expect(telemetry.batteryMillivolts == 3000 && telemetry.temperature == 24.5 && telemetry.advertisingCount == 256 && telemetry.uptime == 60)
        let url = #"{"id":"AA:BB","rssi":-64,"servicedatauuid":"0xfeaa","servicedata":"10ee016578616d706c6500"}"#   // https://www.example.com/
        guard case .ignored = try decode(.theengs, "home/gw/BTtoMQTT/AABB", url) else { Issue.record("URL became a sighting"); return }
        #expect(throws: SightingMessageError.self) {
            try decode(.theengs, "home/gw/BTtoMQTT/AABB", #"{"id":"AA","rssi":-64,"servicedatauuid":"0xfeaa","servicedata":"00zz"}"#)
        }
    }

    @Test func batchCarriesTheFormat() throws {
        var batch = ScannerBatch(scanner: "lobby", time: 1_763_884_800.25)
        let alt = BeaconIdentity(uuid: Self.uuid, major: 3, minor: 4, format: .altBeacon)
        let eddy = try #require(Self.eddy)
        batch.sightings = [.init(identity: alt, rssi: -60, measuredPower: -59, offset: -0.1), .init(identity: eddy, rssi: -61, measuredPower: nil, offset: 0),
                           .init(identity: BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2), rssi: -62, measuredPower: nil, offset: 0)]
        let text = String(decoding: batch.json(), as: UTF8.self)
        #expect(text.contains(#""format":"altbeacon""#) && text.contains(#""format":"eddystone-uid""#))
        #expect(try ScannerBatch(json: batch.json()).sightings.map(\.identity) == [alt, eddy, BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2)])
        let bad = #"{"v":1,"scanner":"s","time":1.0,"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":0,"minor":0,"rssi":-60,"dt":0,"format":"bluetooth"}]}"#
        #expect(throws: SightingMessageError.self) { try ScannerBatch(json: Array(bad.utf8)) }
    }
}
