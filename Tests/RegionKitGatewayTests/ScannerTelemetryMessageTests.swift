import Foundation
import Testing
import RegionKitCore
@testable import RegionKitGateway

/// What the MQTT scanners decode for us: ESPresense's `mV`/`temp` (from the transmitter's
/// Eddystone-TLM frames) and Theengs Decoder's iBeacon fields (`txpower` or `volt`), as sighting
/// telemetry and measured power.
@Suite("MQTT sighting messages: the scanners' decoded fields (battery, temperature, Theengs iBeacon model)")
struct ScannerTelemetryMessageTests {
    static let now = Timestamp(seconds: 1000)
    static let eddy = BeaconIdentity(eddystoneNamespace: [0x8B, 0x0C, 0xA7, 0x50, 0xE7, 0xA7, 0x4E, 0x14, 0xBD, 0x99],
                                     instance: [0, 0, 0, 0, 0, 0xA1])

    func decode(_ format: SightingMessageFormat, _ topic: String, _ json: String) throws -> SightingMessageDecoder.Outcome {
        try SightingMessageDecoder(format: format).decode(topic: topic, payload: Array(json.utf8), receivedAt: Self.now)
    }

    func observation(_ outcome: SightingMessageDecoder.Outcome) throws -> BeaconObservation {
        guard case .sightings(let sightings) = outcome, sightings.count == 1 else { throw RegionKitError(.malformedFrame, "\(outcome)") }
        return sightings[0]
    }

    // MARK: ESPresense

    /// ESPresense publishes no sample message with these fields; this one follows the firmware's
    /// `BleFingerprint::fill()` (ESPresense/ESPresense src/BleFingerprint.cpp at a6f1105e, the
    /// members in its order: `mac`, `id`, `rssi@1m`, `rssi` and `distance` with two decimals,
    /// `rxAdj`, `int`, `mV` as an integer, `temp` as `String(temp, 2)`), for a transmitter whose
    /// TLM frame is the Eddystone-TLM example of BeaconFormatTests (VBATT 3000 mV, TEMP 0x1880 =
    /// 24.5 °C), which the node reads with NimBLE's `getVolt()`/`getTemp()`.
    @Test func espresenseBatteryAndTemperatureBecomeTelemetry() throws {
        let json = #"{"mac":"c0a1b2c3d4e5","id":"eddy:8b0ca750e7e7a74e14bd99-0000000000a1","rssi@1m":-59,"rssi":-66.25,"rxAdj":0,"distance":2.10,"int":1000,"mV":3000,"temp":24.50}"#
        let seen = try observation(decode(.espresense, "espresense/devices/eddy:8b0ca750e7e7a74e14bd99-0000000000a1/shop", json))
        #expect(seen.identity == Self.eddy && seen.rssi == -66 && seen.measuredPower == -59 && seen.scannerID == "shop")
        let telemetry = try #require(seen.telemetry)
        #expect(telemetry.batteryMillivolts == 3000)
        #expect(telemetry.temperatureRaw == 0x1880 && telemetry.temperature == 24.5)
        #expect(telemetry.advertisingCount == nil && telemetry.uptime == nil, "ESPresense does not forward the counters")
    }

    @Test func espresenseTemperatureOnlyOrNothing() throws {
        // fill() omits mV when 0 and temp when 0; a negative temperature keeps its sign (−0.5 °C = 0xFF80).
        let cold = try observation(decode(.espresense, "espresense/devices/x/cellar",
                                          #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-70,"temp":-0.50}"#))
        #expect(cold.telemetry?.batteryMillivolts == nil && cold.telemetry?.temperatureRaw == Int16(bitPattern: 0xFF80))
        let plain = try observation(decode(.espresense, "espresense/devices/x/cellar",
                                           #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-70}"#))
        #expect(plain.telemetry == nil)
        // "mV":0 is "not supported", as VBATT 0 in the TLM frame.
        let zero = try observation(decode(.espresense, "espresense/devices/x/cellar",
                                          #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-70,"mV":0}"#))
        #expect(zero.telemetry == nil)
    }

    @Test(arguments: [
        (#""mV":"lots""#, SightingMessageError.Kind.wrongType, "mV"),
        (#""temp":[1]"#, .wrongType, "temp"),
        (#""temp":true"#, .wrongType, "temp"),
    ])
    func espresenseTelemetryThatIsNoNumberNamesTheField(member: String, kind: SightingMessageError.Kind, field: String) {
        let json = #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-70,"# + member + "}"
        do {
            _ = try decode(.espresense, "espresense/devices/x/cellar", json)
            Issue.record("accepted \(json)")
        } catch let error as SightingMessageError {
            #expect(error.kind == kind && error.message.contains("'\(field)'"), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// What ESPresense sends for TEMP 0x8000 ("not supported") and for negative temperatures
    /// depends on the NimBLE-Arduino build's `getTemp()` (see ``ESPresenseMessage/temperature(fromTemp:)``):
    /// unsigned in 1.4.0/1.4.1 (0x8000 → 128.00, 0xFF80 → 255.50), signed from 1.4.2 (0x8000 →
    /// −128.00, 0xFF80 → −0.50). A temperature that is "not supported" or cannot be TEMP is dropped;
    /// the sighting and its `mV` stay.
    @Test(arguments: [
        // (temp as fill() prints it, the TEMP kept (nil: dropped))
        ("128.00", nil),                               // unsigned build, 0x8000: not supported
        ("-128.00", nil),                              // signed build, 0x8000: not supported
        ("255.50", Int16(bitPattern: 0xFF80)),         // unsigned build, −0.5 °C
        ("-0.50", Int16(bitPattern: 0xFF80)),          // signed build, −0.5 °C
        ("235.00", Int16(bitPattern: 0xEB00)),         // unsigned build, −21 °C (0xEB00)
        ("128.50", Int16(bitPattern: 0x8080)),         // unsigned build, −127.5 °C (0x8080)
        ("256.00", Int16(0)),                          // unsigned build, 0xFFFF (−0.004 °C) printed with two decimals
        ("24.50", Int16(0x1880)),                      // either build, 24.5 °C
        ("300", nil),                                  // no TEMP reading: dropped
        ("-200.25", nil),                              // no TEMP reading: dropped
        ("1e999", nil),                                // not finite: dropped
    ] as [(String, Int16?)])
    func espresenseTemperatureOfEitherNimBLEBuildKeepsTheSighting(temp: String, raw: Int16?) throws {
        let json = #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-70,"mV":2950,"temp":"# + temp + "}"
        let seen = try observation(decode(.espresense, "espresense/devices/x/cellar", json))
        #expect(seen.rssi == -70 && seen.identity.major == 1 && seen.identity.minor == 2)
        let telemetry = try #require(seen.telemetry, "the battery must survive temp \(temp)")
        #expect(telemetry.batteryMillivolts == 2950)
        #expect(telemetry.temperatureRaw == (raw ?? Int16.min), "temp \(temp)")
    }

    @Test func espresenseOutOfRangeBatteryIsDroppedNotTheSighting() throws {
        for member in [#""mV":70000"#, #""mV":-3"#, #""mV":1e999"#] {
            let json = #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-70,"temp":21.00,"# + member + "}"
            let seen = try observation(decode(.espresense, "espresense/devices/x/cellar", json))
            #expect(seen.rssi == -70 && seen.telemetry?.batteryMillivolts == nil && seen.telemetry?.temperature == 21, "\(member)")
        }
        // Nothing usable left: no telemetry at all, the sighting still there.
        let bare = try observation(decode(.espresense, "espresense/devices/x/cellar",
                                          #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-70,"mV":70000,"temp":128.00}"#))
        #expect(bare.rssi == -70 && bare.telemetry == nil)
    }

    // MARK: Theengs

    /// Theengs Decoder's own test vectors (theengs/decoder tests/BLE/test_ble.cpp at d6fdd205:
    /// inputs lines 523–524, expected outputs lines 25–26), published by a gateway with the
    /// advertisement's `id` and `rssi` added. The iBeacon model reads the byte after the minor as
    /// `txpower` when negative (0xC5 = −59) and else as `volt` in tenths (0x1A = 2.6 V).
    static let blueCharm = (raw: "4c000215426c7565436861726d426561636f6e730efe1355c5",
                            decoded: #""brand":"GENERIC","model":"iBeacon","model_id":"IBEACON","type":"BCON","mfid":"4c00","uuid":"426c7565436861726d426561636f6e73","major":3838,"minor":4949,"txpower":-59"#)
    static let nrf51822 = (raw: "4c000215fda50693a4e24fb1afcfc6eb07647825000100021a",
                           decoded: #""brand":"GENERIC","model":"iBeacon","model_id":"IBEACON","type":"BCON","mfid":"4c00","uuid":"fda50693a4e24fb1afcfc6eb07647825","major":1,"minor":2,"volt":2.6"#)

    @Test func theengsDecoderTxPowerVector() throws {
        // uuid "426c7565436861726d426561636f6e73" is ASCII "BlueCharmBeacons"; major 0x0EFE = 3838, minor 0x1355 = 4949.
        let identity = BeaconIdentity(uuid: try #require(UUID(flexibleString: "426c7565436861726d426561636f6e73")), major: 3838, minor: 4949)
        for json in [#"{"id":"AA:BB:CC:DD:EE:FF","rssi":-71,"# + Self.blueCharm.decoded + "}",
                     #"{"id":"AA:BB:CC:DD:EE:FF","rssi":-71,"manufacturerdata":""# + Self.blueCharm.raw + #"","# + Self.blueCharm.decoded + "}"] {
            let seen = try observation(decode(.theengs, "home/TheengsGateway/BTtoMQTT/AABBCCDDEEFF", json))
            #expect(seen.identity == identity && seen.measuredPower == -59 && seen.telemetry == nil && seen.scannerID == "TheengsGateway", "\(json)")
        }
    }

    @Test func theengsDecoderVoltVector() throws {
        let identity = BeaconIdentity(uuid: try #require(UUID(flexibleString: "fda50693a4e24fb1afcfc6eb07647825")), major: 1, minor: 2)
        for json in [#"{"id":"AA:BB:CC:DD:EE:FF","rssi":-80,"# + Self.nrf51822.decoded + "}",
                     #"{"id":"AA:BB:CC:DD:EE:FF","rssi":-80,"manufacturerdata":""# + Self.nrf51822.raw + #"","# + Self.nrf51822.decoded + "}"] {
            let seen = try observation(decode(.theengs, "home/TheengsGateway/BTtoMQTT/AABBCCDDEEFF", json))
            // The power byte was a voltage: no measured power (the default −59 dBm is used for distance), 2.6 V as battery.
            #expect(seen.identity == identity && seen.measuredPower == nil, "\(json)")
            #expect(seen.telemetry?.batteryMillivolts == 2600 && seen.telemetry?.temperature == nil, "\(json)")
        }
        // Without Theengs' reading, the raw frame alone says +26 dBm (the iBeacon codec's reading
        // of the byte): a power no radio could measure, so not set either (it was taken as +26).
        let raw = try observation(decode(.theengs, "home/gw/BTtoMQTT/AA", #"{"id":"AA","rssi":-80,"manufacturerdata":""# + Self.nrf51822.raw + #""}"#))
        #expect(raw.measuredPower == nil && raw.telemetry == nil)
        #expect(throws: SightingMessageError.self) { try decode(.theengs, "home/gw/BTtoMQTT/AA", #"{"id":"AA","rssi":-80,"# + Self.nrf51822.decoded.replacingOccurrences(of: "2.6", with: "-1") + "}") }
    }
}
