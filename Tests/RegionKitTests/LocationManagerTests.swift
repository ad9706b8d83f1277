import Foundation
import RegionKitConcurrency
import Testing
@testable import RegionKit

/// Records every callback with its name, so tests can check order and content.
final class RecordingDelegate: LocationManagerDelegate {
    let log = LockedBox<[String]>([])
    let events = LockedBox<[LocationEvent]>([])
    let onEnter: (@Sendable (LocationManager, Region) -> Void)?

    init(onEnter: (@Sendable (LocationManager, Region) -> Void)? = nil) {
        self.onEnter = onEnter
    }

    func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {
        events.withLock { $0.append(event) }
    }
    func locationManager(_ manager: LocationManager, didStartMonitoringFor region: Region) { record("start \(region.identifier)") }
    func locationManager(_ manager: LocationManager, monitoringDidFailFor region: Region, withError error: RegionKitError) { record("fail \(region.identifier) \(error.code)") }
    func locationManager(_ manager: LocationManager, didEnterRegion region: Region) {
        record("enter \(region.identifier)")
        onEnter?(manager, region)
    }
    func locationManager(_ manager: LocationManager, didExitRegion region: Region) { record("exit \(region.identifier)") }
    func locationManager(_ manager: LocationManager, didDetermineState state: RegionState, for region: Region) { record("state \(region.identifier) \(state.rawValue)") }
    func locationManager(_ manager: LocationManager, didRange beacons: [Beacon], satisfying constraint: BeaconIdentityConstraint) { record("range \(beacons.count)") }
    func locationManager(_ manager: LocationManager, didFailRangingFor constraint: BeaconIdentityConstraint, error: RegionKitError) { record("rangingFail") }
    func locationManagerDidChangeAuthorization(_ manager: LocationManager) { record("auth \(manager.authorizationStatus)") }

    private func record(_ text: String) { log.withLock { $0.append(text) } }
    var lines: [String] { log.withLock { $0 } }
}

@Suite("LocationManager facade on a virtual clock")
struct LocationManagerTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let lobby = try! BeaconRegion(identifier: "lobby", uuid: uuid)
    static let beacon = BeaconIdentity(uuid: uuid, major: 1, minor: 1)

    static func seen(at t: Double, rssi: Int = -65) -> BeaconObservation {
        BeaconObservation(identity: beacon, rssi: rssi, measuredPower: -59, timestamp: Timestamp(seconds: t))
    }

    @Test("Delegate callbacks arrive in order, timers fire as the virtual clock advances (spec §2 timings)")
    func delegateTimeline() {
        let clock = VirtualClock()
        let manager = LocationManager(profile: .coreLocation, clock: clock, sources: [.beacon: .authorized])
        let delegate = RecordingDelegate()
        manager.delegate = delegate
        manager.startMonitoring(for: Self.lobby)
        clock.advance(by: 5)
        manager.ingest(Self.seen(at: 6))
        for t in stride(from: 6.1, to: 10, by: 0.1) { clock.advance(to: Timestamp(seconds: t)); manager.ingest(Self.seen(at: t)) }
        clock.advance(by: 60)
        #expect(delegate.lines == ["start lobby", "enter lobby", "state lobby inside", "exit lobby", "state lobby outside"])
        let exit = delegate.events.withLock { $0.first { $0.typeName == "didExitRegion" } }!
        #expect(exit.timestamp.seconds >= 9.9 + 30 && exit.timestamp.seconds <= 9.9 + 40)
        #expect(manager.state(for: .beacon(Self.lobby)) == .outside)
    }

    @Test("A delegate may call back into the manager; its events follow the current one")
    func reentrantDelegate() {
        let clock = VirtualClock()
        let manager = LocationManager(profile: .coreLocation, clock: clock, sources: [.beacon: .authorized])
        let delegate = RecordingDelegate { manager, region in
            manager.startRangingBeacons(in: region.beaconRegion!)
            manager.requestState(for: region)
        }
        manager.delegate = delegate
        manager.startMonitoring(for: Self.lobby)
        clock.advance(by: 4)
        manager.ingest(Self.seen(at: 4))
        clock.advance(by: 3)
        #expect(delegate.lines == ["start lobby", "enter lobby", "state lobby inside", "state lobby inside", "range 0", "range 0", "range 0"])
        #expect(manager.rangedBeaconConstraints == [Self.lobby.constraint])
    }

    @Test("stopRangingBeacons(in:) stops that region's ranging only: another region of the same UUID goes on")
    func stopRangingOneRegion() async throws {
        let clock = VirtualClock()
        let manager = LocationManager(profile: .coreLocation, clock: clock, sources: [.beacon: .authorized])
        let hall = try BeaconRegion(identifier: "hall", uuid: Self.uuid)
        manager.startRangingBeacons(in: Self.lobby)
        manager.startRangingBeacons(in: hall)
        let stream = manager.events()
        clock.advance(by: 2)
        manager.stopRangingBeacons(in: Self.lobby)
        clock.advance(by: 2)
        manager.stopRangingBeacons(in: hall)
        clock.advance(by: 2)
        manager.startMonitoring(for: Self.lobby)   // ends the stream's reading below
        var labels: [String] = []
        for await event in stream {
            if case .didRangeBeacons(_, _, let label) = event.kind { labels.append(label) }
            if event.typeName == "didStartMonitoring" { break }
        }
        #expect(labels == ["lobby", "hall", "lobby", "hall", "hall", "hall"], "\(labels)")
        #expect(manager.rangedBeaconConstraints.isEmpty)
    }

    @Test("Events are also an AsyncStream")
    func asyncEvents() async {
        let clock = VirtualClock()
        let manager = LocationManager(profile: .coreLocation, clock: clock, sources: [.beacon: .authorized])
        let stream = manager.events()
        manager.startMonitoring(for: Self.lobby)
        manager.requestState(for: .beacon(Self.lobby))
        clock.advance(by: 5)
        var received: [String] = []
        for await event in stream {
            received.append(event.typeName)
            if received.count == 2 { break }
        }
        #expect(received == ["didStartMonitoring", "didDetermineState"])
    }

    @Test("Capabilities and authorization (spec §2: check availability first)")
    func capabilities() {
        let clock = VirtualClock()
        let manager = LocationManager(profile: .coreLocation, clock: clock, sources: [.beacon: .restricted(reason: "adapter hci0 is powered off")])
        let delegate = RecordingDelegate()
        manager.delegate = delegate
        #expect(manager.isMonitoringAvailable(for: .beacon))
        #expect(!manager.isMonitoringAvailable(for: .circular))
        #expect(!manager.isRangingAvailable)
        #expect(manager.authorizationStatus == .restricted(reason: "adapter hci0 is powered off"))
        #expect(manager.maximumRegionMonitoringDistance == 400_000)
        manager.startMonitoring(for: Self.lobby)
        #expect(delegate.lines == ["fail lobby sourceUnavailable"])
        manager.setSourceStatus(.authorized, for: .beacon)
        #expect(manager.isRangingAvailable)
        #expect(delegate.lines.last == "auth authorized")
    }

    @Test("monitoredRegions lists what was registered, replacing by identifier")
    func monitoredRegions() throws {
        let manager = LocationManager(clock: VirtualClock(), sources: [.beacon: .authorized, .circular: .authorized])
        manager.startMonitoring(for: Self.lobby)
        manager.startMonitoring(for: try CircularRegion(identifier: "park", latitude: 1, longitude: 2, radius: 50))
        manager.startMonitoring(for: try BeaconRegion(identifier: "lobby", uuid: Self.uuid, major: 4))
        #expect(manager.monitoredRegions.map(\.identifier) == ["park", "lobby"])
        manager.stopMonitoring(for: .beacon(Self.lobby))
        #expect(manager.monitoredRegions.map(\.identifier) == ["park"])
    }

    @Test("A real clock drives timers too (bounded wait)")
    func systemClockTimers() async throws {
        let manager = LocationManager(profile: .coreLocation, clock: SystemClock(), sources: [.beacon: .authorized])
        let stream = manager.events()
        manager.startRangingBeacons(satisfying: Self.lobby.constraint)
        let started = Date()
        // Two 1 s deliveries, or give up after 30 s so a broken clock fails instead of hanging.
        let deliveries = await withTaskGroup(of: Int.self) { group in
            group.addTask {
                var count = 0
                for await event in stream where event.typeName == "didRangeBeacons" {
                    count += 1
                    if count == 2 { break }
                }
                return count
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return -1
            }
            let first = await group.next() ?? -1
            group.cancelAll()
            return first
        }
        #expect(deliveries == 2, "no two ranging deliveries within 30 s")
        #expect(Date().timeIntervalSince(started) >= 1.9, "deliveries are 1 s apart, not early")
    }
}

@Suite("VirtualClock")
struct VirtualClockTests {
    @Test func firesInDeadlineThenSchedulingOrder() {
        let clock = VirtualClock()
        let log = LockedBox<[String]>([])
        _ = clock.schedule(at: Timestamp(seconds: 2)) { log.withLock { $0.append("b@\(clock.now.seconds)") } }
        _ = clock.schedule(at: Timestamp(seconds: 1)) { log.withLock { $0.append("a@\(clock.now.seconds)") } }
        _ = clock.schedule(at: Timestamp(seconds: 2)) { log.withLock { $0.append("c") } }
        let cancelled = clock.schedule(at: Timestamp(seconds: 1.5)) { log.withLock { $0.append("never") } }
        cancelled.cancel()
        clock.advance(by: 1.5)
        #expect(log.withLock { $0 } == ["a@1.0"])
        clock.advance(by: 10)
        #expect(log.withLock { $0 } == ["a@1.0", "b@2.0", "c"])
        #expect(clock.now == Timestamp(seconds: 11.5))
    }

    @Test func timersScheduledWhileAdvancingRunInTheSameAdvance() {
        let clock = VirtualClock()
        let count = LockedBox(0)
        @Sendable func tick() {
            count.withLock { $0 += 1 }
            _ = clock.schedule(at: clock.now + 1, tick)
        }
        _ = clock.schedule(at: Timestamp(seconds: 1), tick)
        clock.advance(by: 10)
        #expect(count.withLock { $0 } == 10)
    }
}

@Suite("JSON lines")
struct JSONLineTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test func contractShapes() throws {
        let region = Region.beacon(try BeaconRegion(identifier: "lobby", uuid: Self.uuid))
        let t = Timestamp(seconds: 12.3456)
        #expect(LocationEvent(timestamp: t, kind: .didEnterRegion(region)).jsonLine(origin: Timestamp(seconds: 2))
                == #"{"t":10.346,"type":"didEnterRegion","region":"lobby"}"#)
        #expect(LocationEvent(timestamp: t, kind: .didDetermineState(.outside, region)).jsonLine(origin: .zero)
                == #"{"t":12.346,"type":"didDetermineState","region":"lobby","state":"outside"}"#)
        let failure = LocationEvent(timestamp: .zero, kind: .monitoringDidFail(region, RegionKitError(.regionMonitoringFailure, "limit \"20\"")))
        #expect(failure.jsonLine(origin: .zero)
                == #"{"t":0,"type":"monitoringDidFail","region":"lobby","error":{"code":"regionMonitoringFailure","message":"limit \"20\""}}"#)
        let beacon = Beacon(identity: BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2), proximity: .near, accuracy: 1.23456, rssi: -63, timestamp: t)
        let ranging = LocationEvent(timestamp: t, kind: .didRangeBeacons([beacon], region.beaconRegion!.constraint, label: "lobby"))
        let decoded = try JSONSerialization.jsonObject(with: Data(ranging.jsonLine(origin: .zero).utf8)) as! [String: Any]
        let beacons = decoded["beacons"] as! [[String: Any]]
        #expect(decoded["type"] as? String == "didRangeBeacons")
        #expect(beacons[0]["uuid"] as? String == Self.uuid.uuidString)
        #expect(beacons[0]["major"] as? Int == 1 && beacons[0]["minor"] as? Int == 2)
        #expect(beacons[0]["proximity"] as? String == "near")
        #expect(beacons[0]["accuracy"] as? Double == 1.235)
        #expect(beacons[0]["rssi"] as? Int == -63)
    }

    @Test func escapingAndNumbers() {
        #expect(JSONLine.quote("a\"b\\c\nd\u{1}") == #""a\"b\\c\nd\u0001""#)
        // Nothing to escape: copied whole, non-ASCII as it is (the fast path).
        #expect(JSONLine.quote("Küche キッチン 🐙 lobby-1") == "\"Küche キッチン 🐙 lobby-1\"")
        #expect(JSONLine.quote("") == "\"\"")
        // An escape after multi-byte characters: the slow path, the same text otherwise.
        #expect(JSONLine.quote("キッチン\"🐙\u{7f}\t") == #""キッチン\"🐙\#u{7f}\t""#)
        for text in ["Room 204/b", "кухня", "a\u{1f}b", "\u{2028}"] {
            let data = Data(JSONLine.quote(text).utf8)
            #expect((try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)) as? String == text, "\(text)")
        }
        #expect(JSONLine.number(.nan) == "null")
        #expect(JSONLine.number(3) == "3")
        #expect(JSONLine.number(-0.5) == "-0.5")
    }
}
