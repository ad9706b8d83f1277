import Foundation
import Testing
@testable import RegionKitEngine

/// The engine's identity key is format-aware: an AltBeacon region is entered by AltBeacons only
/// (not by an iBeacon transmitting the same 20 bytes), an Eddystone namespace region by every
/// instance of the namespace, and ranging lists each beacon with its format and telemetry.
@Suite("Monitoring and ranging across beacon formats")
struct BeaconFormatMonitoringTests {
    static let id1 = Fixture.uuid
    static let namespace: [UInt8] = [0x8B, 0x0C, 0xA7, 0x50, 0xE7, 0xA7, 0x4E, 0x14, 0xBD, 0x99]

    @Test("an AltBeacon region ignores the iBeacon with the same bytes, an iBeacon region the AltBeacon; Eddystone namespace and instance regions")
    func formatAwareRegions() throws {
        var engine = Fixture.engine(.coreLocation)
        let iBeacon = BeaconIdentity(uuid: Self.id1, major: 1, minor: 2)
        let altBeacon = BeaconIdentity(uuid: Self.id1, major: 1, minor: 2, format: .altBeacon)
        let eddyA = try #require(BeaconIdentity(eddystoneNamespace: Self.namespace, instance: [0, 0, 0, 0, 0, 1]))
        let eddyB = try #require(BeaconIdentity(eddystoneNamespace: Self.namespace, instance: [0, 0, 0, 0, 0, 2]))
        let regions = try [
            BeaconRegion(specifier: "ib:\(Self.id1.uuidString):1"),
            BeaconRegion(specifier: "alt:altbeacon:\(Self.id1.uuidString):1:2"),
            BeaconRegion(specifier: "ns:eddystone:8b0ca750e7a74e14bd99"),
            BeaconRegion(specifier: "inst:eddystone:8b0ca750e7a74e14bd99:000000000002"),
        ]
        for region in regions { _ = engine.startMonitoring(.beacon(region), at: .zero) }
        _ = engine.advance(to: Timestamp(seconds: 0.5))
        // The AltBeacon and one namespace member only: the iBeacon region and the other instance stay out.
        _ = engine.ingest(Fixture.seen(altBeacon, at: 1.1))
        _ = engine.ingest(Fixture.seen(eddyA, at: 1.2))
        #expect(engine.state(of: "alt") == .inside && engine.state(of: "ns") == .inside)
        #expect(engine.state(of: "ib") != .inside && engine.state(of: "inst") != .inside)
        _ = engine.ingest(Fixture.seen(iBeacon, at: 1.3))
        _ = engine.ingest(Fixture.seen(eddyB, at: 1.4))
        for region in regions { #expect(engine.state(of: region.identifier) == .inside, "\(region.identifier)") }
    }

    @Test("ranging lists each format with its identity and the transmitter's telemetry")
    func rangingWithFormatsAndTelemetry() throws {
        var engine = Fixture.engine(.coreLocation)
        let eddy = try #require(BeaconIdentity(eddystoneNamespace: Self.namespace, instance: [0, 0, 0, 0, 0, 1]))
        let constraint = try BeaconIdentityConstraint(eddystoneNamespace: "8b0ca750e7a74e14bd99")
        _ = engine.startRanging(constraint, label: "shop", at: .zero)
        let telemetry = EddystoneTelemetry(batteryMillivolts: 2950, temperatureRaw: 0x1600, advertisingCount: 9, uptimeDeciseconds: 40)
        var observation = Fixture.seen(eddy, at: 0.5, rssi: -60)
        _ = engine.ingest(observation)
        observation.timestamp = Timestamp(seconds: 0.6)
        observation.telemetry = telemetry
        _ = engine.ingest(observation)
        _ = engine.ingest(Fixture.seen(BeaconIdentity(uuid: Self.id1, major: 1, minor: 2), at: 0.7))   // an iBeacon: not this constraint
        let delivery = try #require(engine.advance(to: Timestamp(seconds: 1)).rangings.last)
        #expect(delivery.beacons.map(\.identity) == [eddy])
        #expect(delivery.beacons.first?.format == .eddystoneUID && delivery.beacons.first?.telemetry == telemetry)
        #expect(delivery.beacons.first?.telemetry?.temperature == 22)
    }
}
