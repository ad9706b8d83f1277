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
        var engine = Self.roomEngine()
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

    /// The responsive profile placing beacons in rooms.
    static func roomEngine(automation: Automation = Automation()) -> MonitoringEngine {
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        return Fixture.engine(profile, automation: automation)
    }

    /// An engine placing rooms (responsive profile) with alice (the phone's region) and keys,
    /// the phone placed in the kitchen; `extra` regions registered too.
    static func placedPhone(_ extra: [String] = [], automation: Automation = Automation()) throws -> (engine: MonitoringEngine, phone: BeaconIdentity) {
        var engine = Self.roomEngine(automation: automation)
        let phone = try #require(BeaconIdentity(deviceID: "irk:0123456789abcdef0123456789abcdef"))
        for specifier in ["alice:device:irk:0123456789abcdef0123456789abcdef", "keys:device:c80f104dc7eb"] + extra {
            _ = engine.startMonitoring(.beacon(try BeaconRegion(specifier: specifier)), at: .zero)
        }
        for t in stride(from: 0.5, through: 5, by: 0.5) { _ = engine.ingest(Fixture.seen(phone, at: t, scanner: "kitchen")) }
        #expect(engine.nearestScanner(for: phone) == "kitchen")
        return (engine, phone)
    }

    static func rooms(_ events: [LocationEvent]) -> [String] {
        events.compactMap { event in
            guard case .didChangeNearestScanner(let identity, let scanner, let previous) = event.kind else { return nil }
            return "\(identity.deviceID ?? "?") \(previous ?? "-")→\(scanner ?? "none") at \(event.timestamp.seconds): \(event.evidence?.reason ?? "")"
        }
    }

    @Test("Removing the only region naming a device takes the device out of its room at once, with the reason; it is not placed again while no region names it")
    func removedDeviceRegionLeavesTheRoom() throws {
        var (engine, phone) = try Self.placedPhone()
        let removed = engine.stopMonitoring(identifier: "alice", at: Timestamp(seconds: 5.2))
        // Was: nothing here, the kitchen kept until the absence timer (up to 60 s later) said
        // "heard by no scanner" of a phone still heard.
        #expect(Self.rooms(removed) == ["irk:0123456789abcdef0123456789abcdef kitchen→none at 5.2: no region names it any more"])
        #expect(engine.nearestScanner(for: phone) == nil && engine.nearest[phone] == nil)
        var later: [LocationEvent] = []
        for t in stride(from: 5.5, through: 30, by: 0.5) { later += engine.ingest(Fixture.seen(phone, at: t, scanner: "hall")) }
        later += engine.advance(to: Timestamp(seconds: 200))
        #expect(Self.rooms(later).isEmpty, "\(Self.rooms(later))")
        #expect(engine.nearestScanner(for: phone) == nil)
        // Named again, it is placed again.
        _ = engine.startMonitoring(.beacon(try BeaconRegion(specifier: "alice:device:irk:0123456789abcdef0123456789abcdef")), at: Timestamp(seconds: 201))
        for t in stride(from: 201.5, through: 206, by: 0.5) { _ = engine.ingest(Fixture.seen(phone, at: t, scanner: "hall")) }
        #expect(engine.nearestScanner(for: phone) == "hall")
    }

    @Test("A device another region still names keeps its room when one of its regions is removed; redefined to name another device, the region releases the first")
    func deviceStillNamedKeepsItsRoom() throws {
        var (engine, phone) = try Self.placedPhone(["alice-home:device:irk:0123456789abcdef0123456789abcdef"])
        #expect(Self.rooms(engine.stopMonitoring(identifier: "alice", at: Timestamp(seconds: 5.2))).isEmpty)
        #expect(engine.nearestScanner(for: phone) == "kitchen")
        // alice-home now names the keys: the phone is named by no region.
        let redefined = engine.startMonitoring(.beacon(try BeaconRegion(specifier: "alice-home:device:c80f104dc7eb")), at: Timestamp(seconds: 5.4))
        #expect(Self.rooms(redefined) == ["irk:0123456789abcdef0123456789abcdef kitchen→none at 5.4: no region names it any more"])
        #expect(engine.nearestScanner(for: phone) == nil)
        // Removing a region that names a beacon, or a device with no room, says nothing of rooms.
        #expect(Self.rooms(engine.stopMonitoring(identifier: "keys", at: Timestamp(seconds: 5.6))).isEmpty)
    }

    @Test("A device whose room is set aside for a source outage is released too when its region, waiting for the source, is removed; an outage alone releases nothing")
    func deviceRoomSetAsideIsReleased() throws {
        var automation = Automation()
        automation.retry = .init(delay: 1, maximumAttempts: 5)   // the daemon's: alice waits for the source
        var (engine, phone) = try Self.placedPhone(automation: automation)
        let outage = engine.setSourceStatus(.restricted(reason: "the adapter is unplugged"), for: .beacon, at: Timestamp(seconds: 5.2))
        #expect(Self.rooms(outage).isEmpty, "an outage is not a departure: \(Self.rooms(outage))")
        #expect(engine.waitingRegion("alice") != nil && engine.suspendedRooms[phone] == "kitchen")
        let removed = engine.stopMonitoring(identifier: "alice", at: Timestamp(seconds: 5.4))
        #expect(Self.rooms(removed) == ["irk:0123456789abcdef0123456789abcdef kitchen→none at 5.4: no region names it any more"], "\(Self.rooms(removed))")
        #expect(engine.suspendedRooms[phone] == nil)
        _ = engine.setSourceStatus(.authorized, for: .beacon, at: Timestamp(seconds: 6))
        var later: [LocationEvent] = []
        for t in stride(from: 6.5, through: 10, by: 0.5) { later += engine.ingest(Fixture.seen(phone, at: t, scanner: "kitchen")) }
        #expect(Self.rooms(later).isEmpty && engine.nearestScanner(for: phone) == nil)
    }

    @Test("A region bound to a scanner names its device too: waiting for the source, it keeps the device's room set aside when the other region naming it is removed")
    func boundWaitingRegionKeepsTheRoom() throws {
        var automation = Automation()
        automation.retry = .init(delay: 1, maximumAttempts: 5)
        var (engine, phone) = try Self.placedPhone(["alice-kitchen:device:irk:0123456789abcdef0123456789abcdef@kitchen"], automation: automation)
        _ = engine.setSourceStatus(.restricted(reason: "the broker restarts"), for: .beacon, at: Timestamp(seconds: 5.2))
        #expect(engine.waitingRegion("alice-kitchen") != nil)
        #expect(Self.rooms(engine.stopMonitoring(identifier: "alice", at: Timestamp(seconds: 5.4))).isEmpty)
        #expect(engine.suspendedRooms[phone] == "kitchen")
        // Monitored, the bound region names it as well.
        var (monitored, _) = try Self.placedPhone(["alice-kitchen:device:irk:0123456789abcdef0123456789abcdef@kitchen"])
        #expect(Self.rooms(monitored.stopMonitoring(identifier: "alice", at: Timestamp(seconds: 5.4))).isEmpty)
        #expect(monitored.nearestScanner(for: phone) == "kitchen")
    }

    @Test("A device's stored room is restored before its region is registered (the daemon's order at a start), and kept once the region is: no departure at every restart")
    func restoredRoomBeforeTheRegions() throws {
        var engine = Self.roomEngine()
        let phone = try #require(BeaconIdentity(deviceID: "irk:0123456789abcdef0123456789abcdef"))
        var events = engine.restoreNearestScanner(phone, scanner: "kitchen", at: Timestamp(seconds: 0.1))
        events += engine.startMonitoring(contentsOf: [.beacon(try BeaconRegion(specifier: "alice:device:irk:0123456789abcdef0123456789abcdef"))],
                                         at: Timestamp(seconds: 0.2))
        events += engine.restore(.beacon(try BeaconRegion(specifier: "keys:device:c80f104dc7eb")), state: .inside, since: nil, at: Timestamp(seconds: 0.3))
        #expect(Self.rooms(events).isEmpty, "\(Self.rooms(events))")
        #expect(engine.nearestScanner(for: phone) == "kitchen")
    }

    @Test("One batch moving a device from an earlier region to a later one keeps its room; a batch leaving it unnamed releases it once, at the end")
    func batchMovesADevice() throws {
        var (engine, phone) = try Self.placedPhone(["other:device:c80f104dc7ec"])
        let moved = engine.startMonitoring(contentsOf: [
            .beacon(try BeaconRegion(specifier: "alice:device:c80f104dc7ed")),
            .beacon(try BeaconRegion(specifier: "other:device:irk:0123456789abcdef0123456789abcdef")),
        ], at: Timestamp(seconds: 5.2))
        #expect(Self.rooms(moved).isEmpty, "\(Self.rooms(moved))")
        #expect(engine.nearestScanner(for: phone) == "kitchen")
        let unnamed = engine.startMonitoring(contentsOf: [.beacon(try BeaconRegion(specifier: "other:device:c80f104dc7ee"))], at: Timestamp(seconds: 5.4))
        #expect(Self.rooms(unnamed) == ["irk:0123456789abcdef0123456789abcdef kitchen→none at 5.4: no region names it any more"])
    }
}
