import Foundation
import Testing
@testable import RegionKitEngine

/// A scanner's own word that it is offline (``MonitoringEngine/setScannerStatus(_:online:at:)``:
/// ESPresense's retained `rooms/<room>/status`, a Theengs gateway's will): the beacons only it hears
/// neither leave their regions nor their room while it is away, up to
/// ``ScannerChannel/offlineExcuseLimit``; back, their silence counts from its return.
@Suite("Scanner status: a scanner that says it is offline holds its beacons' exits")
struct ScannerStatusTests {
    /// Beacon `a` heard by the kitchen and `b` by the hall, every 0.5 s for 20 s, each in a
    /// region of its own (`a`, `b`).
    static func engine(_ profile: MonitoringProfile) -> MonitoringEngine {
        var engine = Fixture.engine(profile)
        _ = engine.startMonitoring(Fixture.region("a", major: 0, minor: 1), at: .zero)
        _ = engine.startMonitoring(Fixture.region("b", major: 0, minor: 2), at: .zero)
        for t in stride(from: 0.0, to: 20, by: 0.5) {
            _ = engine.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen"))
            _ = engine.ingest(Fixture.seen(Fixture.b, at: t + 0.2, scanner: "hall"))
        }
        return engine
    }

    static func exitTime(_ events: [LocationEvent], _ region: String) -> Double? {
        events.of("didExitRegion", region).first?.timestamp.seconds
    }

    /// When region `region` exits with no more sightings and no scanner status.
    static func usualExit(_ profile: MonitoringProfile, _ region: String) throws -> Double {
        var engine = engine(profile)
        return try #require(exitTime(engine.advance(to: Timestamp(seconds: 1_000)), region))
    }

    /// Every exit detector: the responsive profile with each one, and Core Location's.
    static let profiles: [MonitoringProfile] = [
        .responsive, .coreLocation, .periodic,
        { var profile = MonitoringProfile.responsive; profile.exitDetector = .adaptive(falseExitProbability: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1); return profile }(),
        { var profile = MonitoringProfile.responsive; profile.exitDetector = .cautiousGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1); return profile }(),
        { var profile = MonitoringProfile.responsive; profile.exitDetector = .evidenceGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1); return profile }(),
    ]

    @Test("Offline from 20.2 s to 100 s: the kitchen's beacon stays inside through it and exits as long after as its silence before it allowed; the hall's exits as usual (every exit detector)",
          arguments: ScannerStatusTests.profiles)
    func heldWhileOffline(profile: MonitoringProfile) throws {
        let usual = try Self.usualExit(profile, "a")
        #expect(usual < 100, "the usual exit comes during the outage: \(usual)")
        var engine = Self.engine(profile)
        var events = engine.setScannerStatus("kitchen", online: false, at: Timestamp(seconds: 20.2))
        #expect(engine.isScannerOffline("kitchen") && !engine.isScannerOffline("hall") && engine.offlineScanners == ["kitchen"])
        events += engine.advance(to: Timestamp(seconds: 100))
        #expect(Self.exitTime(events, "a") == nil, "\(events.summary)")
        #expect(Self.exitTime(events, "b") == (try Self.usualExit(profile, "b")), "the hall said nothing")
        events = engine.setScannerStatus("kitchen", online: true, at: Timestamp(seconds: 100))
        #expect(!engine.isScannerOffline("kitchen") && engine.offlineScanners.isEmpty)
        events += engine.advance(to: Timestamp(seconds: 1_000))
        let exit = try #require(Self.exitTime(events, "a"))
        // The 79.8 s it was away are not the beacon's silence (the evaluation grid of the
        // Core Location profile rounds up to its next 10 s).
        let grid = profile.exitDetector.maximumSilence == 30 ? 10.0 : 1e-6
        #expect(exit >= usual + 79.8 - 1e-6 && exit <= usual + 79.8 + grid, "\(exit) vs \(usual)")
    }

    @Test("Said offline a moment before the beacon's exit was due: held to the end of its excuse in one step (not a step the length of that moment, thousands of them), and exact at its return")
    func statusJustBeforeTheExit() throws {
        let profile = MonitoringProfile.responsive
        let usual = try Self.usualExit(profile, "a")
        var engine = Self.engine(profile)
        var events = engine.setScannerStatus("kitchen", online: false, at: Timestamp(seconds: usual - 0.001))
        events += engine.advance(to: Timestamp(seconds: usual + 0.5))
        #expect(Self.exitTime(events, "a") == nil)
        // The region's next look is at the end of the excuse (the hall's exit is due sooner).
        let slot = try #require(engine.regions.slot(of: "a"))
        let next = try #require(engine.schedule.scheduledTime(slot: slot))
        #expect(next.seconds >= usual + ScannerChannel.offlineExcuseLimit - 0.01, "\(next.seconds) vs \(usual)")
        events = engine.setScannerStatus("kitchen", online: true, at: Timestamp(seconds: 60))
        events += engine.advance(to: Timestamp(seconds: 1_000))
        let exit = try #require(Self.exitTime(events, "a"))
        #expect(abs(exit - 60.001) < 1e-6, "the moment before the exit was due, counted after the return: \(exit)")
        #expect(engine.offlineHolds.isEmpty, "released at the return")
    }

    @Test("Offline for good: its beacons go once the limit of the excuse is spent, not never")
    func limit() throws {
        let profile = MonitoringProfile.responsive
        let usual = try Self.usualExit(profile, "a")
        var engine = Self.engine(profile)
        var events = engine.setScannerStatus("kitchen", online: false, at: Timestamp(seconds: 20.2))
        events += engine.advance(to: Timestamp(seconds: 10_000))
        let exit = try #require(Self.exitTime(events, "a"))
        let limit = ScannerChannel.offlineExcuseLimit
        #expect(exit >= usual + limit - 0.5 && exit <= usual + limit + 0.5, "\(exit) vs \(usual) + \(limit)")
        #expect(engine.isScannerOffline("kitchen"), "it still says so")
    }

    @Test("A scanner heard again is back, whatever it said; a status repeated (retained, at every subscription) changes nothing; one never heard before is remembered")
    func statusEdges() throws {
        var engine = Self.engine(.responsive)
        _ = engine.setScannerStatus("kitchen", online: false, at: Timestamp(seconds: 20.2))
        _ = engine.setScannerStatus("kitchen", online: false, at: Timestamp(seconds: 30))
        #expect(engine.channel(of: "kitchen")?.offlineSince == Timestamp(seconds: 20.2), "the first word counts")
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 40, scanner: "kitchen"))
        #expect(!engine.isScannerOffline("kitchen"))
        let declared = try #require(engine.channel(of: "kitchen")?.gaps.last)
        #expect(declared.isDeclared && declared.from == Timestamp(seconds: 20.2) && declared.to == Timestamp(seconds: 40))
        _ = engine.setScannerStatus("kitchen", online: true, at: Timestamp(seconds: 41))
        #expect(engine.channel(of: "kitchen")?.gaps.filter(\.isDeclared).count == 1, "online again changes nothing")
        _ = engine.setScannerStatus("porch", online: true, at: Timestamp(seconds: 42))
        #expect(engine.channel(of: "porch") == nil, "online from a scanner never heard: nothing to keep")
        _ = engine.setScannerStatus("porch", online: false, at: Timestamp(seconds: 43))
        #expect(engine.offlineScanners == ["porch"])
    }

    @Test("Heard again after it came back: the time it was away is no interval of the beacon's stream nor of its room's track (their exits stay quick; every exit detector)",
          arguments: ScannerStatusTests.profiles)
    func notLearned(profile: MonitoringProfile) throws {
        var profile = profile
        profile.nearestScanner = NearestScannerPolicy()
        var engine = Self.engine(profile)
        _ = engine.setScannerStatus("kitchen", online: false, at: Timestamp(seconds: 20.2))
        _ = engine.advance(to: Timestamp(seconds: 60))
        _ = engine.setScannerStatus("kitchen", online: true, at: Timestamp(seconds: 60))
        for t in stride(from: 60.1, to: 70, by: 0.5) { _ = engine.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen")) }
        let slot = try #require(engine.regions.slot(of: "a"))
        var longest: [Double] = []
        engine.regions.readStreams(slot: slot) { _, streams in
            streams.forEachStream { _, stream, _ in longest.append(stream.longestInterval) }
        }
        #expect(longest.count == 1 && longest.allSatisfy { $0 < 1 }, "\(longest)")
        let track = try #require(engine.nearest[Fixture.a]?.tracks["kitchen"])
        #expect(track.stream.longestInterval < 1, "\(track.stream.longestInterval)")
    }

    @Test("A region heard by two scanners: the kitchen's stream already gone when the kitchen says offline holds nothing; the region exits when the hall's is gone, as without the status")
    func goneBeforeTheStatus() throws {
        func engine() -> MonitoringEngine {
            var engine = Fixture.engine(.responsive)
            _ = engine.startMonitoring(Fixture.region("house", major: 0, minor: 1), at: .zero)
            for t in stride(from: 0.0, to: 10, by: 0.5) { _ = engine.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen")) }
            for t in stride(from: 0.0, to: 20, by: 0.5) { _ = engine.ingest(Fixture.seen(Fixture.a, at: t + 0.1, scanner: "hall")) }
            return engine
        }
        var plain = engine()
        let usual = try #require(Self.exitTime(plain.advance(to: Timestamp(seconds: 1_000)), "house"))
        var held = engine()
        let slot = try #require(held.regions.slot(of: "house"))
        let kitchenDue = try #require(held.regions.readStreams(slot: slot) { _, streams -> Double? in
            var due: Double?
            streams.forEachStream { key, stream, _ in
                if key.scannerID == "kitchen" { due = ExitDetector.learnedGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1).goneDeadline(for: stream, gridOrigin: .zero).seconds }
            }
            return due
        } ?? nil)
        #expect(kitchenDue < 20.5 && usual > 20.5, "the kitchen's stream is gone before the status: \(kitchenDue), \(usual)")
        var events = held.setScannerStatus("kitchen", online: false, at: Timestamp(seconds: 20.5))
        events += held.advance(to: Timestamp(seconds: 1_000))
        #expect(Self.exitTime(events, "house") == usual, "\(events.summary)")
        #expect(held.offlineHolds.isEmpty)
    }

    @Test("Back by a sighting of another beacon (no status): the regions it held are looked at again at once, their exits exact")
    func releasedBySighting() throws {
        let profile = MonitoringProfile.responsive
        let usual = try Self.usualExit(profile, "a")
        var engine = Self.engine(profile)
        _ = engine.startMonitoring(Fixture.region("other", major: 0, minor: 3), at: Timestamp(seconds: 20))
        var events = engine.setScannerStatus("kitchen", online: false, at: Timestamp(seconds: 20.2))
        events += engine.advance(to: Timestamp(seconds: 60))
        #expect(engine.offlineHolds["kitchen"]?.regions == ["a"])
        events += engine.ingest(Fixture.seen(BeaconIdentity(uuid: Fixture.uuid, major: 0, minor: 3), at: 60, scanner: "kitchen"))
        #expect(!engine.isScannerOffline("kitchen") && engine.offlineHolds.isEmpty)
        events += engine.advance(to: Timestamp(seconds: 1_000))
        let exit = try #require(Self.exitTime(events, "a"))
        #expect(abs(exit - (usual + 60 - 20.2)) < 1e-6, "\(exit) vs \(usual) + 39.8")
    }

    @Test("A room held by two offline scanners: each return looks at it again, and it leaves once both are back and its silence is over")
    func roomHeldByTwo() throws {
        var engine = NearestAbsenceTests.engine()
        for t in stride(from: 0.0, to: 20, by: 0.5) {
            _ = engine.ingest(Fixture.seen(Fixture.a, at: t, rssi: -60, scanner: "kitchen"))
            _ = engine.ingest(Fixture.seen(Fixture.a, at: t + 0.1, rssi: -80, scanner: "hall"))
        }
        var plain = engine
        let usual = try #require(NearestAbsenceTests.changes(plain.advance(to: Timestamp(seconds: 1_000))).first?.time)
        var events = engine.setScannerStatus("kitchen", online: false, at: Timestamp(seconds: 20.2))
        events += engine.advance(to: Timestamp(seconds: 40))
        events += engine.setScannerStatus("hall", online: false, at: Timestamp(seconds: 41))
        events += engine.setScannerStatus("kitchen", online: true, at: Timestamp(seconds: 42))
        events += engine.advance(to: Timestamp(seconds: 43))
        events += engine.setScannerStatus("hall", online: true, at: Timestamp(seconds: 44))
        events += engine.advance(to: Timestamp(seconds: 1_000))
        let left = try #require(NearestAbsenceTests.changes(events).first)
        #expect(left.to == nil && left.time < 200, "let go after both returned, not at the end of a projection: \(left.time) (usual \(usual))")
        // The kitchen's track (heard last at 19.5, 0.1 s before the hall's) with its 21.8 s away.
        #expect(abs(left.time - (usual - 0.1 + 21.8)) < 1e-6, "\(left.time) vs \(usual)")
        #expect(engine.offlineHolds.isEmpty)
    }

    @Test("A time that is no time: a status at +∞ or NaN is now (an infinite one stayed offline for good)")
    func infiniteTime() {
        var engine = Self.engine(.responsive)
        _ = engine.setScannerStatus("kitchen", online: false, at: Timestamp(seconds: .infinity))
        #expect(engine.channel(of: "kitchen")?.offlineSince == engine.now)
        _ = engine.setScannerStatus("kitchen", online: true, at: Timestamp(seconds: .nan))
        #expect(!engine.isScannerOffline("kitchen"))
    }

    @Test("A sweep of the scanners' channels (ever new names) keeps the one offline now, though never heard")
    func sweepKeepsOffline() {
        var engine = Self.engine(.responsive)
        _ = engine.setScannerStatus("porch", online: false, at: Timestamp(seconds: 21))
        // Names heard once, long ago; then new ones, more than a sweep waits for.
        for index in 0..<1_000 { _ = engine.ingest(Fixture.seen(Fixture.b, at: 22 + Double(index) * 0.001, scanner: "old-\(index)")) }
        for index in 0..<30 { _ = engine.ingest(Fixture.seen(Fixture.b, at: 5_000 + Double(index) * 0.001, scanner: "new-\(index)")) }
        #expect(engine.channels.count < 100, "a sweep ran: \(engine.channels.count)")
        #expect(engine.isScannerOffline("porch"))
    }

    @Test("A detector that takes nothing from the channels (Core Location's): a sighting from the scanner is its return too, and every scanner heard is known with its last sighting and rate")
    func heardWithoutChannels() {
        var engine = Self.engine(.coreLocation)
        _ = engine.setScannerStatus("kitchen", online: false, at: Timestamp(seconds: 20.2))
        _ = engine.ingest(Fixture.seen(Fixture.b, at: 21, scanner: "hall"))
        #expect(engine.isScannerOffline("kitchen"))
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 22, scanner: "kitchen"))
        #expect(!engine.isScannerOffline("kitchen") && engine.channel(of: "kitchen")?.lastOffline?.to == Timestamp(seconds: 22))
        // The hall never said anything: known by its sightings all the same (`GET /v1/scanners`).
        _ = engine.ingest(Fixture.seen(Fixture.b, at: 22.5, scanner: "hall"))
        let hall = engine.channel(of: "hall")
        #expect(hall?.lastHeard == Timestamp(seconds: 22.5) && (hall?.rate(at: Timestamp(seconds: 22.5)) ?? 0) > 0)
        // The rate people read reaches 0 once the scanner has been silent 30 s (the decay alone
        // never does); the detector's rate is the decay, unchanged.
        #expect((hall?.sightingsPerSecond(at: Timestamp(seconds: 22.5 + 29)) ?? 0) > 0)
        #expect(hall?.sightingsPerSecond(at: Timestamp(seconds: 22.5 + 30)) == 0)
        #expect((hall?.rate(at: Timestamp(seconds: 22.5 + 30)) ?? 0) > 0)
        #expect(Set(engine.scannerChannels.map(\.name)) == ["hall", "kitchen"])
    }

    @Test("The room: a beacon whose only scanner is offline is not 'heard by no scanner' while it is away; back, it leaves as long after as its silence before allowed")
    func roomHeld() throws {
        func placed() -> MonitoringEngine {
            var engine = NearestAbsenceTests.engine()
            for t in stride(from: 0.0, to: 20, by: 0.5) {
                _ = engine.ingest(Fixture.seen(Fixture.a, at: t, scanner: "kitchen"))
                _ = engine.ingest(Fixture.seen(Fixture.b, at: t + 0.2, scanner: "hall"))
            }
            return engine
        }
        var plain = placed()
        let usual = try #require(NearestAbsenceTests.changes(plain.advance(to: Timestamp(seconds: 1_000))).first { $0.beacon == Fixture.a }?.time)
        #expect(usual < 100)
        var engine = placed()
        var events = engine.setScannerStatus("kitchen", online: false, at: Timestamp(seconds: 20.2))
        events += engine.advance(to: Timestamp(seconds: 100))
        var changes = NearestAbsenceTests.changes(events)
        #expect(changes.map(\.beacon) == [Fixture.b], "only the hall's beacon left: \(changes)")
        #expect(engine.nearestScanner(for: Fixture.a) == "kitchen")
        events = engine.setScannerStatus("kitchen", online: true, at: Timestamp(seconds: 100))
        events += engine.advance(to: Timestamp(seconds: 1_000))
        changes = NearestAbsenceTests.changes(events)
        let left = try #require(changes.first { $0.beacon == Fixture.a })
        #expect(left.to == nil && left.from == "kitchen")
        #expect(abs(left.time - (usual + 79.8)) < 1e-6, "\(left.time) vs \(usual) + 79.8")
    }
}

/// ``ScannerChannel``'s declared gaps, byte for byte of their arithmetic.
@Suite("Scanner channel: the times a scanner said it was offline")
struct ScannerChannelOfflineTests {
    @Test("Counted whole, once: the dark time around them as usual, not twice where they meet")
    func countedOnce() {
        var channel = ScannerChannel()
        // 100 sightings/s for 10 s, then silent from 10 s; offline said at 12 s; back at 30 s;
        // heard again at 31 s.
        for step in 0..<1_000 { channel.record(at: Timestamp(seconds: Double(step) * 0.01)) }
        channel.setOnline(false, at: Timestamp(seconds: 12))
        // While offline: its dark silence before (9.99–12) is excused as before, 12–20 declared.
        let during = channel.excusedSilence(from: Timestamp(seconds: 9.5), to: Timestamp(seconds: 20), streamRate: 1)
        #expect(abs(during - (12 - 9.99 + 8)) < 1e-9, "\(during)")
        #expect(channel.offlineSilence(from: Timestamp(seconds: 9.5), to: Timestamp(seconds: 20)) == 8)
        channel.setOnline(true, at: Timestamp(seconds: 30))
        channel.record(at: Timestamp(seconds: 31))
        #expect(channel.gaps.count == 3, "dark 9.99–12, declared 12–30, dark 30–31: \(channel.gaps)")
        let after = channel.excusedSilence(from: Timestamp(seconds: 9.5), to: Timestamp(seconds: 31), streamRate: 1)
        #expect(abs(after - (31 - 9.99)) < 1e-9, "every second of it, once: \(after)")
        #expect(channel.offlineSilence(from: Timestamp(seconds: 9.5), to: Timestamp(seconds: 31)) == 18)
        #expect(channel.longestGap < 3, "the declared time is no dark gap of the radio's: \(channel.longestGap)")
    }

    @Test("Between its return and its first sighting (ESPresense says online, then reports): the time away counted once")
    func backNotYetHeard() {
        var channel = ScannerChannel()
        for step in 0..<1_000 { channel.record(at: Timestamp(seconds: Double(step) * 0.01)) }
        channel.setOnline(false, at: Timestamp(seconds: 12))
        channel.setOnline(true, at: Timestamp(seconds: 30))
        // Dark 9.99–12 and 30–31, declared 12–30: 21.01 s, not the dark silence from 9.99 (capped) plus the declared.
        let excused = channel.excusedSilence(from: Timestamp(seconds: 9.5), to: Timestamp(seconds: 31), streamRate: 1)
        #expect(abs(excused - (31 - 9.99)) < 1e-9, "\(excused)")
    }

    @Test("Offline twice within one silence (a node that flaps): each time counted once, the dark time between them as usual, in time order")
    func flapping() {
        var channel = ScannerChannel()
        for step in 0..<1_000 { channel.record(at: Timestamp(seconds: Double(step) * 0.01)) }
        channel.setOnline(false, at: Timestamp(seconds: 12))
        channel.setOnline(true, at: Timestamp(seconds: 15))
        channel.setOnline(false, at: Timestamp(seconds: 18))
        channel.setOnline(true, at: Timestamp(seconds: 25))
        let before = channel.excusedSilence(from: Timestamp(seconds: 9.5), to: Timestamp(seconds: 28), streamRate: 1)
        #expect(abs(before - (28 - 9.99)) < 1e-9, "before its first sighting: \(before)")
        channel.record(at: Timestamp(seconds: 31))
        #expect(channel.gaps.map { [$0.from.seconds, $0.to.seconds] } == [[9.99, 12], [12, 15], [15, 18], [18, 25], [25, 31]], "\(channel.gaps)")
        let after = channel.excusedSilence(from: Timestamp(seconds: 9.5), to: Timestamp(seconds: 31), streamRate: 1)
        #expect(abs(after - (31 - 9.99)) < 1e-9, "\(after)")
        #expect(channel.offlineSilence(from: Timestamp(seconds: 9.5), to: Timestamp(seconds: 31)) == 10)
        // A silence that began within the first declared time: counted from its start.
        let inside = channel.excusedSilence(from: Timestamp(seconds: 13), to: Timestamp(seconds: 31), streamRate: 1)
        #expect(abs(inside - 18) < 1e-9, "\(inside)")
    }

    @Test("At most the limit, however long it was away")
    func limited() {
        var channel = ScannerChannel()
        channel.record(at: Timestamp(seconds: 0))
        channel.setOnline(false, at: Timestamp(seconds: 1))
        #expect(channel.offlineSilence(from: .zero, to: Timestamp(seconds: 10_000)) == ScannerChannel.offlineExcuseLimit)
        #expect(channel.offlineSilence(from: Timestamp(seconds: 5), to: Timestamp(seconds: 5)) == 0)
    }
}
