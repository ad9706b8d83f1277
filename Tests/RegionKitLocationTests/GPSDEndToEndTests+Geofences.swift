import Foundation
import RegionKitConcurrency
import Testing
import RegionKit
@testable import RegionKitLocation
#if canImport(Glibc)
import Glibc
import RegionKitTestSupport
#endif

/// Geofences end to end through a real gpsd: `gpsfake` replays a moving regression log into gpsd
/// on a free loopback port, ``GPSDClient`` reads it, and a ``LocationManager`` (responsive profile,
/// real ``SystemClock``) monitors a geofence placed on the track — computed from the log's `.chk`
/// TPVs — and one far off it. Fixes are stamped with their arrival time, as a live monitor does
/// (gpsd replays 2009/2018 dates, even shifted by a GPS week rollover), so dwell times run on the
/// wall clock at gpsfake's pace. gpsfake is stopped by PID; each run is bounded.
///
/// These tests extend the `.serialized` gpsfake suite so that no two gpsfake runs overlap (run
/// side by side, the other suite's client missed gpsd's first no-fix reports).
extension GPSDEndToEndTests {
    enum Geofence {}
}

extension GPSDEndToEndTests.Geofence {
    struct Observed: Sendable {
        var wall: Double
        var fix: LocationFix
        /// The receiver's time of day (seconds since midnight), when gpsd reported a time.
        var trackSecondOfDay: Double?
    }

    struct Outcome {
        var fixes: [Observed]
        var events: [LocationEvent]
        var start: Double
    }

    /// A value shared between the reading tasks and the test.
    final class Locked<Value: Sendable>: Sendable {
        private let mutex: LockedBox<Value>
        init(_ value: Value) { mutex = LockedBox(value) }
        func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
    }

    static let profile = MonitoringProfile.responsive

    /// The track as gpsd computed it in the regression run (.chk), one point per timed cycle.
    static func track(_ log: String) throws -> [GPSDOracle.TPV] {
        let oracle = GPSDOracle(chk: Data(try Fixtures.bytes("gpsd/\(log).chk")), log: [])
        return oracle.timedCycles.filter { $0.mode >= 2 && $0.lat != nil && $0.lon != nil }
    }

    static func secondOfDay(_ t: Timestamp) -> Double { t.seconds.truncatingRemainder(dividingBy: 86_400) }

    /// Runs gpsfake on `log` and feeds every fix into a manager monitoring `regions` until `done`
    /// says so (checked every 100 ms) or `timeout` seconds pass.
    static func run(log: String, cycle: Double, loop: Bool, regions: [CircularRegion], timeout: Double,
                    done: @escaping @Sendable (_ fixes: [Observed], _ events: [LocationEvent]) -> Bool) async throws -> Outcome {
        let url = try #require(Fixtures.url("gpsd/\(log)"))
        let port = try Loopback.freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: GPSDEndToEndTests.gpsfake!)
        // -P port on loopback, -c seconds between sentences, -q quiet; without -1 the log repeats.
        process.arguments = ["-P", String(port), "-c", String(cycle), "-q"] + (loop ? [] : ["-1"]) + [url.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { GPSDEndToEndTests.stop(process) }

        let clock = SystemClock()
        let manager = LocationManager(profile: profile, clock: clock, sources: [.circular: .authorized])
        let events = Locked<[LocationEvent]>([])
        let stream = manager.events()
        let listener = Task { for await event in stream { events.withLock { $0.append(event) } } }
        for region in regions { manager.startMonitoring(for: region) }
        let start = clock.now.seconds
        let fixes = Locked<[Observed]>([])
        let client = GPSDClient(configuration: .init(port: port, initialBackoff: 0.2, maximumBackoff: 1, maximumReconnectAttempts: 20))
        let reader = Task {
            for await fix in client.fixes() {
                var live = fix
                live.timestamp = clock.now                 // arrival time: the wall clock drives the dwell
                let observed = Observed(wall: live.timestamp.seconds - start, fix: live,
                                        trackSecondOfDay: fix.mode == .noFix ? nil : secondOfDay(fix.timestamp))
                fixes.withLock { $0.append(observed) }
                manager.ingest(live)
            }
        }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let (f, e) = (fixes.withLock { $0 }, events.withLock { $0 })
            if done(f, e) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        reader.cancel()
        listener.cancel()
        return Outcome(fixes: fixes.withLock { $0 }, events: events.withLock { $0 }, start: start)
    }

    /// Arrival (seconds since start) of the first fix after `after` that is convincingly on `side`
    /// of `region` — past the boundary by the buffer for that fix's accuracy.
    static func crossing(into side: RegionState, of region: CircularRegion, in fixes: [Observed], after: Double) -> Observed? {
        fixes.first { observed in
            guard observed.wall > after, observed.fix.mode != .noFix else { return false }
            let distance = region.distance(latitude: observed.fix.latitude, longitude: observed.fix.longitude)
            return profile.geoHysteresis.side(distance: distance, radius: region.radius, accuracy: observed.fix.horizontalAccuracy) == side
        }
    }

    /// Checks enter-then-exit on `on` and silence on `off`, and prints the observed times.
    static func check(_ outcome: Outcome, log: String, on: CircularRegion, off: CircularRegion) {
        let dwell = profile.geoHysteresis.dwell
        let crossings = outcome.events.filter { $0.regionIdentifier == on.identifier && ($0.typeName == "didEnterRegion" || $0.typeName == "didExitRegion") }
        #expect(crossings.prefix(2).map(\.typeName) == ["didEnterRegion", "didExitRegion"], "\(log): \(crossings.map(\.typeName))")
        var after = -1.0
        for (event, side) in zip(crossings.prefix(2), [RegionState.inside, .outside]) {
            let t = event.timestamp.seconds - outcome.start
            guard let cross = crossing(into: side, of: on, in: outcome.fixes, after: after) else {
                Issue.record("\(log): no fix \(side) '\(on.identifier)' before \(event.typeName)")
                return
            }
            let trackTime = outcome.fixes.last { $0.wall <= t && $0.trackSecondOfDay != nil }?.trackSecondOfDay
            print(String(format: "E2E geofence %@: track %@ '%@' (buffer passed) at +%.2f s (track %@); %@ at +%.2f s (track %@), %.2f s later (dwell %.0f s)",
                         log, side == .inside ? "into" : "out of", on.identifier, cross.wall, clockText(cross.trackSecondOfDay),
                         event.typeName, t, clockText(trackTime), t - cross.wall, dwell))
            #expect(t - cross.wall >= dwell - 0.05, "\(log): \(event.typeName) \(t - cross.wall) s after the crossing, before the dwell")
            #expect(t - cross.wall <= dwell + 3, "\(log): \(event.typeName) \(t - cross.wall) s after the crossing")
            after = t
        }
        let offEvents = outcome.events.filter { $0.regionIdentifier == off.identifier && $0.typeName != "didStartMonitoring" }
        #expect(offEvents.isEmpty, "\(log): the off-track geofence got \(offEvents.map(\.typeName))")
        let positions = outcome.fixes.filter { $0.fix.mode != .noFix }
        let nearest = positions.map { off.distance(latitude: $0.fix.latitude, longitude: $0.fix.longitude) }.min() ?? .nan
        print(String(format: "E2E geofence %@: %d fixes (%d positions) in %.1f s; off-track '%@' never closer than %.0f m: no event",
                     log, outcome.fixes.count, positions.count, outcome.fixes.last?.wall ?? 0, off.identifier, nearest))
        #expect(positions.count > 10)
    }

    static func clockText(_ secondOfDay: Double?) -> String {
        guard let s = secondOfDay else { return "?" }
        return String(format: "%02d:%02d:%04.1f", Int(s / 3600), Int(s.truncatingRemainder(dividingBy: 3600) / 60), s.truncatingRemainder(dividingBy: 60))
    }
}

extension GPSDEndToEndTests {
    @Test(
        "bundg_zeus_9.log: enter then exit a geofence mid-track, nothing for one 5 km off it",
        .enabled(if: GPSDEndToEndTests.gpsfake != nil, "gpsfake not on PATH: apt-get install -y gpsd gpsd-clients"),
        .enabled(if: Fixtures.has("gpsd/bundg_zeus_9.log.chk"), "gpsd fixtures missing (set REGIONKIT_FIXTURES)"),
        .timeLimit(.minutes(2)))
    func geofenceZeus() async throws {
        let track = try Geofence.track("bundg_zeus_9.log")
        try #require(track.count > 100)
        // The point halfway through the track (~3 m/s, straight): a 60 m geofence there is
        // crossed in the middle of the run; the start and the end are > 200 m away.
        let mid = track[track.count / 2]
        let on = try CircularRegion(identifier: "on-track", latitude: mid.lat!, longitude: mid.lon!, radius: 60)
        let side = Geodesy.destination(latitude: track[0].lat!, longitude: track[0].lon!, distance: 5_000, bearing: 135)
        let off = try CircularRegion(identifier: "off-track", latitude: side.latitude, longitude: side.longitude, radius: 200)
        #expect(on.distance(latitude: track[0].lat!, longitude: track[0].lon!) > 150)
        #expect(on.distance(latitude: track.last!.lat!, longitude: track.last!.lon!) > 150)
        // 5,009 sentences at 7 ms: ~40 s, ~10 s of it inside the geofence (twice the dwell); done
        // a second after the exit. (It waited for the end of the track first: ≈ 13 s more of a
        // track leaving both geofences behind, while `check` judges the first enter and exit.)
        let outcome = try await Geofence.run(log: "bundg_zeus_9.log", cycle: 0.007, loop: false, regions: [on, off], timeout: 90) { _, events in
            guard let exit = events.first(where: { $0.regionIdentifier == "on-track" && $0.typeName == "didExitRegion" }) else { return false }
            return Date().timeIntervalSince1970 - exit.timestamp.seconds > 1
        }
        Geofence.check(outcome, log: "bundg_zeus_9.log", on: on, off: off)
    }

    @Test(
        "bt451.log (looped): enter the geofence on the moving segment, exit when the track jumps back",
        .enabled(if: GPSDEndToEndTests.gpsfake != nil, "gpsfake not on PATH: apt-get install -y gpsd gpsd-clients"),
        .enabled(if: Fixtures.has("gpsd/bt451.log.chk"), "gpsd fixtures missing (set REGIONKIT_FIXTURES)"),
        .timeLimit(.minutes(2)))
    func geofenceBT451() async throws {
        // The log: no fix (indoors), a stationary stretch at B (15:25), then a 16 m/s stretch at A
        // (14:33) 1.9 km away. Looped, the track goes B → A → (no fix) → B → A …, so a 100 m
        // geofence on the moving stretch A is entered there and exited at B on the next loop.
        let track = try Geofence.track("bt451.log")
        let moving = track.filter { ($0.speed ?? 0) > 5 }
        try #require(moving.count >= 3)
        let lat = moving.map { $0.lat! }.reduce(0, +) / Double(moving.count)
        let lon = moving.map { $0.lon! }.reduce(0, +) / Double(moving.count)
        let on = try CircularRegion(identifier: "on-track", latitude: lat, longitude: lon, radius: 100)
        let off = try CircularRegion(identifier: "off-track", latitude: 55.70, longitude: 23.70, radius: 300)   // ~11 km south-east
        let stationary = try #require(track.first { ($0.speed ?? 0) < 1 })
        #expect(on.distance(latitude: stationary.lat!, longitude: stationary.lon!) > 1_500)
        // 156 sentences at 0.15 s: 23 s per loop, ~7 s of it on the moving stretch (> the 5 s dwell).
        let outcome = try await Geofence.run(log: "bt451.log", cycle: 0.15, loop: true, regions: [on, off], timeout: 75) { _, events in
            guard let exit = events.first(where: { $0.regionIdentifier == "on-track" && $0.typeName == "didExitRegion" }) else { return false }
            return Date().timeIntervalSince1970 - exit.timestamp.seconds > 1
        }
        Geofence.check(outcome, log: "bt451.log", on: on, off: off)
    }
}
