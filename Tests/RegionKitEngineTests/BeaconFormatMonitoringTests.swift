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

    @Test("A device region is entered and left by its device only; a device no region names gets no room, one a region names does, and leaves its room when no scanner hears it")
    func deviceRegions() throws {
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        var engine = Fixture.engine(profile)
        let phone = try #require(BeaconIdentity(deviceID: "irk:0123456789abcdef0123456789abcdef"))
        let stranger = try #require(BeaconIdentity(deviceID: "apple:1005:9-26"))
        let tag = try #require(BeaconIdentity(deviceID: "C8:0F:10:4D:C7:EB"))
        let twin = BeaconIdentity(uuid: phone.uuid, major: phone.major, minor: phone.minor)   // an iBeacon with the same 20 bytes
        _ = engine.startMonitoring(.beacon(try BeaconRegion(specifier: "alice:device:irk:0123456789ABCDEF0123456789ABCDEF")), at: .zero)
        _ = engine.startMonitoring(.beacon(try BeaconRegion(specifier: "keys:device:c80f104dc7eb@hall")), at: .zero)
        var events: [LocationEvent] = []
        for t in stride(from: 0.5, to: 10, by: 0.5) {
            events += engine.ingest(Fixture.seen(stranger, at: t, scanner: "kitchen"))
            events += engine.ingest(Fixture.seen(twin, at: t + 0.1, scanner: "kitchen"))
            events += engine.ingest(Fixture.seen(tag, at: t + 0.2, scanner: "kitchen"))   // keys is bound to the hall
        }
        #expect(engine.state(of: "alice") != .inside && engine.state(of: "keys") != .inside)
        events += engine.ingest(Fixture.seen(phone, at: 10, scanner: "kitchen"))
        events += engine.ingest(Fixture.seen(tag, at: 10.1, scanner: "hall"))
        #expect(engine.state(of: "alice") == .inside && engine.state(of: "keys") == .inside)
        let entered = events.compactMap { event -> String? in if case .didEnterRegion(let region) = event.kind { region.identifier } else { nil } }
        #expect(entered == ["alice", "keys"])
        // Rooms: the devices regions name, and the iBeacon twin (beacons are placed whoever names
        // them); not the stranger, which only the scanner's channel counts.
        #expect(engine.nearestScanner(for: phone) == "kitchen" && engine.nearestScanner(for: twin) == "kitchen")
        #expect(engine.nearestScanner(for: stranger) == nil && engine.nearest[stranger] == nil)
        #expect(engine.nearestScanner(for: tag) != nil)
        // The phone goes quiet: alice exits (the responsive detector, seconds after a 1 Hz-ish stream).
        events = engine.advance(to: Timestamp(seconds: 200))
        #expect(engine.state(of: "alice") == .outside)
        #expect(engine.nearestScanner(for: phone) == nil)
    }
}
