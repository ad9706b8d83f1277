import Foundation
import Logging
import RegionKitConcurrency
import Testing
import RegionKit
import RegionKitCore
import RegionKitGateway
@testable import RegionKitService

/// Eddystone-TLM through Theengs: the frame has no identity, so the ingest keeps it for the
/// transmitter (the topic's address) and attaches it to that transmitter's sightings, which then
/// range with their telemetry — as the HCI scanner attaches TLM by transmitter address.
@Suite("MQTT ingest: Theengs Eddystone-TLM attached to the same transmitter's sightings")
struct MQTTTelemetryIngestTests {
    final class Collector: LocationManagerDelegate {
        let beacons = LockedBox<[[Beacon]]>([])
        func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {
            if case .didRangeBeacons(let ranged, _, _) = event.kind { beacons.withLock { $0.append(ranged) } }
        }
    }

    // Theengs' raw service data of 0xFEAA (the frame after the UUID), byte by byte:
    /// UID: type 00, ranging data EE (−18 dBm at 0 m), namespace 8b0ca750e7a74e14bd99, instance 0000000000a1, RFU 0000.
    static let uid = "00ee8b0ca750e7a74e14bd990000000000a10000"
    /// TLM: type 20, version 00, VBATT 0bb8 (3000 mV), TEMP 1880 (24.5 °C), ADV_CNT 00000100 (256), SEC_CNT 00000258 (60 s).
    static let tlm = "20000bb818800000010000000258"

    static func message(_ serviceData: String, rssi: Int) -> [UInt8] {
        Array(#"{"id":"C0:A1:B2:C3:D4:E5","rssi":\#(rssi),"servicedatauuid":"0xfeaa","servicedata":"\#(serviceData)"}"#.utf8)
    }

    @Test func tlmFromTheSameAddressRangesWithTheBeacon() throws {
        let clock = VirtualClock()
        let manager = LocationManager(profile: .coreLocation, clock: clock, sources: [.beacon: .authorized])
        let collector = Collector()
        manager.delegate = collector
        let namespace = try BeaconIdentityConstraint(eddystoneNamespace: "8b0ca750e7a74e14bd99")
        manager.startRangingBeacons(satisfying: namespace)
        let ingest = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .theengs)], manager: manager, logger: Logger(label: "test"))

        // Another transmitter's TLM first: it must not attach to this beacon.
        ingest.handle(topic: "home/gw/BTtoMQTT/AABBCCDDEEFF", payload: Self.message("20" + "00" + "0a28" + "1000" + "00000001" + "00000001", rssi: -80))
        ingest.handle(topic: "home/gw/BTtoMQTT/C0A1B2C3D4E5", payload: Self.message(Self.uid, rssi: -60))
        clock.advance(by: 1)
        #expect(collector.beacons.withLock { $0.last?.first?.telemetry } == nil, "no TLM heard from C0A1B2C3D4E5 yet")

        ingest.handle(topic: "home/gw/BTtoMQTT/C0A1B2C3D4E5", payload: Self.message(Self.tlm, rssi: -61))
        ingest.handle(topic: "home/gw/BTtoMQTT/C0A1B2C3D4E5", payload: Self.message(Self.uid, rssi: -60))
        clock.advance(by: 1)
        let beacon = try #require(collector.beacons.withLock { $0.last?.first })
        #expect(beacon.identity.format == .eddystoneUID && BeaconIdentity.hex(beacon.identity.instance) == "0000000000a1")
        let telemetry = try #require(beacon.telemetry)
        #expect(telemetry.batteryMillivolts == 3000 && telemetry.temperature == 24.5 && telemetry.advertisingCount == 256 && telemetry.uptime == 60)
        let statistics = ingest.statistics
        #expect(statistics.telemetry == 2 && statistics.sightings == 2 && statistics.messages == 4 && statistics.rejectedTotal == 0)
    }

    @Test("a transmitter's key is its topic's last level, copied; a level longer than 64 bytes (no address is) keeps no telemetry")
    func transmitterKeys() throws {
        #expect(MQTTSightingIngest.transmitter("home/gw/BTtoMQTT/C0A1B2C3D4E5") == "C0A1B2C3D4E5")
        #expect(MQTTSightingIngest.transmitter("C0A1B2C3D4E5") == "C0A1B2C3D4E5")
        #expect(MQTTSightingIngest.transmitter("a/" + String(repeating: "x", count: 64)) == String(repeating: "x", count: 64))
        #expect(MQTTSightingIngest.transmitter("a/" + String(repeating: "x", count: 65)) == nil)
        let (clock, collector, ingest) = try Self.rangingTheengs()
        let long = "home/gw/BTtoMQTT/" + String(repeating: "C0A1B2C3D4E5", count: 6)
        ingest.handle(topic: long, payload: Self.message(Self.tlm, rssi: -61))
        ingest.handle(topic: long, payload: Self.message(Self.uid, rssi: -60))
        clock.advance(by: 1)
        let beacon = try #require(collector.beacons.withLock { $0.last?.first })
        #expect(beacon.telemetry == nil && ingest.statistics.telemetry == 1 && ingest.statistics.sightings == 1)
    }

    /// A manager ranging the Eddystone namespace of ``uid`` (Core Location profile, virtual clock),
    /// fed by a Theengs ingest; the collector keeps what is ranged.
    static func rangingTheengs() throws -> (VirtualClock, Collector, MQTTSightingIngest) {
        let clock = VirtualClock()
        let manager = LocationManager(profile: .coreLocation, clock: clock, sources: [.beacon: .authorized])
        let collector = Collector()
        manager.delegate = collector
        manager.startRangingBeacons(satisfying: try BeaconIdentityConstraint(eddystoneNamespace: "8b0ca750e7a74e14bd99"))
        return (clock, collector, MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .theengs)], manager: manager, logger: Logger(label: "test")))
    }

    @Test("a retained message (the broker's stored copy, sent at every subscription) is counted as ignored, never ingested as heard now")
    func retainedMessagesAreNotSightings() throws {
        let (clock, collector, ingest) = try Self.rangingTheengs()
        ingest.handle(topic: "home/gw/BTtoMQTT/C0A1B2C3D4E5", payload: Self.message(Self.uid, rssi: -60), retained: true)
        clock.advance(by: 1)
        #expect(collector.beacons.withLock { $0.allSatisfy(\.isEmpty) }, "the retained sighting was ranged")
        #expect(ingest.statistics.sightings == 0 && ingest.statistics.messages == 1)
        #expect(ingest.statistics.ignored == [MQTTSightingIngest.retainedReason: 1])
        // The same message published now is a sighting.
        ingest.handle(topic: "home/gw/BTtoMQTT/C0A1B2C3D4E5", payload: Self.message(Self.uid, rssi: -60))
        clock.advance(by: 1)
        #expect(collector.beacons.withLock { $0.last?.count } == 1 && ingest.statistics.sightings == 1)
    }

    @Test("a transmitter's telemetry expires after telemetryMaximumAge (600 s, manager clock) without a TLM message")
    func telemetryExpires() throws {
        let (clock, collector, ingest) = try Self.rangingTheengs()
        let topic = "home/gw/BTtoMQTT/C0A1B2C3D4E5"
        func rangedTelemetry() -> EddystoneTelemetry?? { collector.beacons.withLock { $0.last?.first.map(\.telemetry) } }

        ingest.handle(topic: topic, payload: Self.message(Self.tlm, rssi: -61))       // TLM at t = 0
        clock.advance(by: 590)
        ingest.handle(topic: topic, payload: Self.message(Self.uid, rssi: -60))       // t = 590: attached
        clock.advance(by: 1)
        #expect(rangedTelemetry()??.batteryMillivolts == 3000)
        clock.advance(by: 10)                                                         // t = 601: the TLM is 601 s old
        ingest.handle(topic: topic, payload: Self.message(Self.uid, rssi: -60))
        clock.advance(by: 1)
        #expect(rangedTelemetry() == .some(nil), "stale telemetry must not be attached")
        ingest.handle(topic: topic, payload: Self.message(Self.tlm, rssi: -61))       // a new TLM: attached again
        ingest.handle(topic: topic, payload: Self.message(Self.uid, rssi: -60))
        clock.advance(by: 1)
        #expect(rangedTelemetry()??.batteryMillivolts == 3000)
    }
}
