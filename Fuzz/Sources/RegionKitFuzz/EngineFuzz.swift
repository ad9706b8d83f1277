import FuzzSupport
import Foundation
import RegionKitCore
@testable import RegionKitEngine

/// Structure-aware target for the monitoring engine: the input is read as a program of operations
/// — beacon and circular regions started, replaced, stopped and restored, sightings from several
/// scanners, location fixes (including invalid ones), time jumps forwards and backwards, source
/// outages, profile switches, ranging. It runs on the indexed engine and on the brute-force
/// reference (`usesSpatialIndex = false`) side by side, and requires what the engine's property
/// tests (Tests/RegionKitEngineTests: BeaconTimerQueueTests, IndexedMonitoringTests) require after
/// every step: identical events, identical records (without `lastDistance`) and identical deadlines.
/// Also: no event is stamped with a non-finite time, and a region's state is only ever unknown,
/// inside or outside of a region that is monitored.
enum EngineFuzz {
    static let uuids = [UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!]
    static let scanners: [String?] = [nil, "hall", "shop"]
    static let centre = (latitude: 48.8566, longitude: 2.3522)
    /// Every exit detector: fixed silences (coreLocation), learned gaps (responsive), periodic
    /// streams with shared silences (periodic), RSSI trend and other scanners (evidence).
    static let profiles: [MonitoringProfile] = [.responsive, .coreLocation, .periodic, .evidence]

    static func run(_ data: [UInt8]) {
        var input = FuzzInput(data)
        let automation = input.bool() ? Automation.all : Automation()
        // The profile byte's high bit: the nearest-scanner policy (rooms; a beacon heard by no
        // scanner leaves its room through the absence queue). The low bits pick the profile, as before.
        let first = input.byte()
        var profile = profiles[Int(first) % profiles.count]
        if first & 0x80 != 0 { profile.nearestScanner = NearestScannerPolicy() }
        profile.regionLimit = input.bool() ? nil : 4
        var indexed = MonitoringEngine(profile: profile, automation: automation, sources: [.beacon: .authorized, .circular: .authorized])
        var brute = indexed
        brute.usesSpatialIndex = false
        var t = 0.0
        var steps = 0
        while !input.isAtEnd, steps < 400 {
            steps += 1
            let operation = input.byte() % 16
            let events: ([LocationEvent], [LocationEvent])
            func both(_ body: (inout MonitoringEngine) -> [LocationEvent]) -> ([LocationEvent], [LocationEvent]) {
                (body(&indexed), body(&brute))
            }
            switch operation {
            case 0, 1:
                guard let region = region(&input) else { continue }
                events = both { $0.startMonitoring(region, at: Timestamp(seconds: t)) }
            case 2:
                let id = "r\(input.byte() % 8)"
                events = both { $0.stopMonitoring(identifier: id, at: Timestamp(seconds: t)) }
            case 3:
                guard let region = region(&input) else { continue }
                let state = [RegionState.inside, .outside, .unknown][Int(input.byte() % 3)]
                let since = input.bool() ? nil : Timestamp(seconds: t - input.double(in: 0...100))
                events = both { $0.restore(region, state: state, since: since, at: Timestamp(seconds: t)) }
            case 4:
                guard let region = region(&input) else { continue }
                events = both { $0.requestState(for: region, at: Timestamp(seconds: t)) }
            case 5:
                let kind: RegionKind = input.bool() ? .beacon : .circular
                let status: AuthorizationStatus = [.authorized, .restricted(reason: "fuzz"), .denied(reason: "fuzz"), .notDetermined][Int(input.byte() % 4)]
                events = both { $0.setSourceStatus(status, for: kind, at: Timestamp(seconds: t)) }
            case 6:
                // A time jump: usually forwards, sometimes backwards or to an awkward value.
                t = input.bool() ? t + input.double(in: 0...3_600) : input.double(in: -1_000...1_000_000)
                if !t.isFinite { t = 0 }
                events = both { $0.advance(to: Timestamp(seconds: t)) }
            case 7:
                events = both { $0.wake(at: Timestamp(seconds: t)) }
            case 8:
                let pick = input.byte()
                var next = profiles[Int(pick) % profiles.count]
                if pick & 0x80 != 0 { next.nearestScanner = NearestScannerPolicy() }
                indexed.profile = next
                brute.profile = next
                events = both { $0.advance(to: Timestamp(seconds: t)) }
            case 9:
                // The app's ranging under its own label or a region's (sharing the helper's
                // session), from every scanner or one; stopped by constraint, or one label's.
                guard let constraint = constraint(&input) else { continue }
                let label = input.bool() ? "fuzz" : "r\(input.byte() % 8)"
                let scanner = scanners[Int(input.byte() % 3)]
                switch input.byte() % 3 {
                case 0: events = both { $0.startRanging(constraint, label: label, scannerID: scanner, at: Timestamp(seconds: t)) }
                case 1: events = both { $0.stopRanging(constraint, scannerID: scanner, label: label, at: Timestamp(seconds: t)) }
                default: events = both { $0.stopRanging(constraint, at: Timestamp(seconds: t)) }
                }
            case 10, 11, 12:
                t += input.double(in: 0...10)
                if !t.isFinite { t = 0 }
                let identity = BeaconIdentity(uuid: uuids[Int(input.byte() % 2)], major: UInt16(input.byte() % 3), minor: UInt16(input.byte() % 3))
                let observation = BeaconObservation(identity: identity, rssi: Int(Int8(bitPattern: input.byte())),
                                                    measuredPower: input.bool() ? nil : Int(Int8(bitPattern: input.byte())),
                                                    timestamp: Timestamp(seconds: input.byte() == 0 ? input.double(in: -10...10) : t),
                                                    scannerID: scanners[Int(input.byte() % 3)])
                events = both { $0.ingest(observation) }
            default:
                t += input.double(in: 0...60)
                if !t.isFinite { t = 0 }
                let distance = input.double(in: 0...5_000)
                let bearing = input.double(in: 0...360)
                var point = Geodesy.destination(latitude: centre.latitude, longitude: centre.longitude,
                                                distance: distance.isFinite ? distance : 0, bearing: bearing.isFinite ? bearing : 0)
                if input.byte() == 0 { point = (input.double(in: -100...100), input.double(in: -200...200)) }
                let fix = LocationFix(timestamp: Timestamp(seconds: input.byte() == 0 ? input.double(in: -10...10) : t),
                                      latitude: point.latitude, longitude: point.longitude,
                                      horizontalAccuracy: input.bool() ? nil : input.double(in: 0...500))
                events = both { $0.ingest(fix) }
            }
            check(events, indexed, brute, step: steps)
        }
    }

    static func region(_ input: inout FuzzInput) -> Region? {
        let id = "r\(input.byte() % 8)"
        if input.bool() {
            let shape = input.byte() % 3
            guard var beacon = try? BeaconRegion(identifier: id, uuid: uuids[Int(input.byte() % 2)],
                                                 major: shape >= 1 ? UInt16(input.byte() % 3) : nil,
                                                 minor: shape == 2 ? UInt16(input.byte() % 3) : nil) else { return nil }
            beacon.notifyOnEntry = input.byte() % 6 != 0
            beacon.notifyOnExit = input.byte() % 6 != 0
            beacon.notifyEntryStateOnDisplay = input.bool()
            beacon.scannerID = input.byte() % 4 == 0 ? scanners[1 + Int(input.byte() % 2)] : nil
            return .beacon(beacon)
        }
        let distance = input.double(in: 0...3_000)
        let point = Geodesy.destination(latitude: centre.latitude, longitude: centre.longitude,
                                        distance: distance.isFinite ? distance : 0, bearing: Double(input.byte()) * 360 / 256)
        let radius = input.double(in: 0...2_000)
        guard let circle = try? CircularRegion(identifier: id, latitude: point.latitude, longitude: point.longitude, radius: radius,
                                               notifyOnEntry: input.byte() % 8 != 0, notifyOnExit: input.byte() % 8 != 0) else { return nil }
        return .circular(circle)
    }

    static func constraint(_ input: inout FuzzInput) -> BeaconIdentityConstraint? {
        let shape = input.byte() % 3
        return try? BeaconIdentityConstraint(uuidString: uuids[Int(input.byte() % 2)].uuidString,
                                             major: shape >= 1 ? UInt16(input.byte() % 3) : nil,
                                             minor: shape == 2 ? UInt16(input.byte() % 3) : nil)
    }

    static func records(_ engine: MonitoringEngine) -> [MonitoredRegion] {
        engine.monitoredRegions.compactMap { region in
            var record = engine.monitoredRegion(region.identifier)
            record?.lastDistance = nil
            return record
        }
    }

    static func check(_ events: ([LocationEvent], [LocationEvent]), _ indexed: MonitoringEngine, _ brute: MonitoringEngine, step: Int) {
        guard events.0 == events.1 else {
            FuzzTarget.fail("step \(step): indexed \(events.0) vs brute force \(events.1)")
        }
        let (a, b) = (records(indexed), records(brute))
        guard a == b else {
            let first = zip(a, b).first { $0.0 != $0.1 }
            FuzzTarget.fail("step \(step): records differ (\(a.count) vs \(b.count) regions); first: indexed \(first.map { "\($0.0)" } ?? "-") vs brute force \(first.map { "\($0.1)" } ?? "-")")
        }
        guard indexed.nextDeadline == brute.nextDeadline else {
            FuzzTarget.fail("step \(step): deadlines differ (\(String(describing: indexed.nextDeadline)) vs \(String(describing: brute.nextDeadline)))")
        }
        for event in events.0 where !event.timestamp.seconds.isFinite {
            FuzzTarget.fail("step \(step): event \(event) has a non-finite time")
        }
        // The absence queue is lazy but never late: each tracked beacon's entry is filed at or
        // before the time its last track is gone (with the policy on), or, its tracks gone, at or
        // before the time its own streams in the regions it is inside of are (the room departure
        // waits for the regions' exit: `regionStreamsDeadline(of:)`).
        if indexed.profile.nearestScanner != nil {
            var probe = indexed
            for (identity, state) in indexed.nearest {
                guard let deadline = state.absentDeadline(detector: indexed.profile.exitDetector) else { continue }
                guard let at = state.absentAt else {
                    FuzzTarget.fail("step \(step): \(identity)'s absence is not filed (its tracks are gone at \(deadline))")
                }
                guard at > deadline else { continue }
                let held = probe.regionStreamsDeadline(of: identity)
                guard let held, !(at > held) else {
                    FuzzTarget.fail("step \(step): \(identity)'s absence is filed at \(at), after its tracks' \(deadline) and its regions' streams' \(String(describing: held))")
                }
            }
        }
    }
}
