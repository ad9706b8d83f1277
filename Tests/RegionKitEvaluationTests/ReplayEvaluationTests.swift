import Foundation
import Testing
import RegionKit
import RegionKitSimulation
@testable import RegionKitEvaluation

/// The measures of `regionkit eval replay` on small hand-made sighting sequences: pure metric
/// functions first, then whole replays through the real engine with a fixed 3 s exit threshold
/// (so the expected exits are known exactly, whatever the shipped profiles become).
@Suite("Replay evaluation: false exits, latency, flaps, room scoring")
struct ReplayEvaluationTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let stationary = BeaconIdentity(uuid: uuid, major: 1, minor: 1)
    static let carried = BeaconIdentity(uuid: uuid, major: 1, minor: 2)
    static let slow = BeaconIdentity(uuid: uuid, major: 1, minor: 3)
    static let slowest = BeaconIdentity(uuid: uuid, major: 1, minor: 4)
    static let origin: Int64 = 1_425_757_567_000

    // MARK: - Pure functions

    @Test("An exit before the stream's last sighting is false; one after it is the scanner stopping")
    func falseExitDefinition() {
        #expect(ReplayMetrics.falseExits(exits: [12, 900], lastSighting: 800) == [12])
        #expect(ReplayMetrics.falseExits(exits: [801], lastSighting: 800).isEmpty)
    }

    @Test("A flap is an exit followed by a re-entry within the window")
    func flapDefinition() {
        #expect(ReplayMetrics.flaps(exits: [10, 50, 100], entries: [12, 200], window: 30) == [10])
        #expect(ReplayMetrics.flaps(exits: [10], entries: [40], window: 30) == [10])
        #expect(ReplayMetrics.flaps(exits: [10], entries: [40.5], window: 30).isEmpty)
        #expect(ReplayMetrics.flaps(exits: [10], entries: [], window: 30).isEmpty)
    }

    @Test("The exit of a silence is the first one after its last sighting and before it resumed")
    func exitDuringSilence() {
        let silence = SightingStream.Silence(lastSighting: 100, resumed: 200)
        #expect(ReplayMetrics.exit(during: silence, exits: [50, 131, 250]) == 131)
        #expect(ReplayMetrics.exit(during: silence, exits: [50, 250]) == nil)
        #expect(ReplayMetrics.exit(during: SightingStream.Silence(lastSighting: 100, resumed: nil), exits: [50, 400]) == 400)
    }

    @Test("Room scoring: tolerance trims each period, unlabelled transitions are not scored, time before a decision is wrong")
    func roomScoring() {
        let periods = [RoomPeriod(start: 0, end: 100, room: "A"),
                       // 100...160: carried, not labelled.
                       RoomPeriod(start: 160, end: 300, room: "B")]
        let decisions = [ReplayMetrics.RoomDecision(time: 20, room: "A"),
                         ReplayMetrics.RoomDecision(time: 130, room: "B"),   // inside the transition: no penalty
                         ReplayMetrics.RoomDecision(time: 250, room: "A")]   // wrong from 250 on
        let score = ReplayMetrics.roomScore(decisions: decisions, periods: periods, tolerance: 10, within: 0...1000)
        // Scored: 10...90 (80 s) + 170...290 (120 s). Correct: 20...90 (70 s) + 170...250 (80 s).
        #expect(abs(score.scored - 200) < 1e-9)
        #expect(abs(score.correct - 150) < 1e-9)
        #expect(abs((score.fraction ?? 0) - 0.75) < 1e-9)
        // Clipped to the recording; a period shorter than twice the tolerance scores nothing.
        let clipped = ReplayMetrics.roomScore(decisions: decisions, periods: periods, tolerance: 10, within: 0...200)
        #expect(abs(clipped.scored - 110) < 1e-9)
        #expect(ReplayMetrics.roomScore(decisions: decisions, periods: [.init(start: 0, end: 15, room: "A")], tolerance: 10, within: 0...100).fraction == nil)
    }

    @Test("Nearest-rank percentiles")
    func percentiles() {
        #expect(ReplayMetrics.percentile([4, 1, 3, 2], 0.5) == 2)
        #expect(ReplayMetrics.percentile([4, 1, 3, 2], 0.95) == 4)
        #expect(ReplayMetrics.percentile([7], 0.5) == 7)
        #expect(ReplayMetrics.percentile([], 0.5) == nil)
    }

    @Test("Rate classes by nearest on a log scale; reception rate ignores long gaps")
    func rates() {
        #expect(StreamRateClass(rate: 8.7) == .tenHertz)
        #expect(StreamRateClass(rate: 3.2) == .tenHertz)
        #expect(StreamRateClass(rate: 3.1) == .oneHertz)
        #expect(StreamRateClass(rate: 0.5) == .oneHertz)
        #expect(StreamRateClass(rate: 0.4) == .fifthHertz)
        #expect(StreamRateClass(rate: 0) == .fifthHertz)
        // 11 sightings 0.1 s apart, a 100 s absence, 11 more: 10 Hz while heard.
        let times: [Double] = (0...10).map { (index: Int) -> Double in Double(index) / 10 } + (0...10).map { (index: Int) -> Double in 101 + Double(index) / 10 }
        let stream = SightingStream(key: .init(identity: Self.stationary, scannerID: "A"), times: times)
        #expect(abs(stream.receptionRate(below: 60) - 10) < 1e-6)
        #expect(stream.rateClass(silence: 60) == .tenHertz)
        #expect(stream.silences(atLeast: 60) == [.init(lastSighting: 1, resumed: 101), .init(lastSighting: 102, resumed: nil)])
    }

    @Test("A stream end's history: the stretch since the last long silence, and its longest gap within the window")
    func endHistory() {
        // 0, 1, 2 · a 10 s gap · 12, 13 · a 100 s absence · 113, 113.5 · a 30 s gap · 143.5, 144.
        let stream = SightingStream(key: .init(identity: Self.stationary, scannerID: "A"), times: [0, 1, 2, 12, 13, 113, 113.5, 143.5, 144])
        // Ending at 13: heard since 0 (5 sightings); the 10 s gap ended at 12, inside a 120 s window.
        #expect(stream.history(before: 13, silence: 60, window: 120) == .init(heardSince: 0, sightings: 5, longestRecentGap: 10))
        // The window counts the gap by when it ended: at 12, 1 s before 13 (in a 1 s window), not in a 0.5 s one.
        #expect(stream.history(before: 13, silence: 60, window: 1).longestRecentGap == 10)
        #expect(stream.history(before: 13, silence: 60, window: 0.5).longestRecentGap == 1)
        // Ending at 144: the 100 s absence starts a new stretch (at 113: 4 sightings), whose longest gap is 30 s.
        #expect(stream.history(before: 144, silence: 60, window: 120) == .init(heardSince: 113, sightings: 4, longestRecentGap: 30))
        // With a silence of 20 s the 30 s gap is an absence too: heard since 143.5, two sightings.
        #expect(stream.history(before: 144, silence: 20, window: 120) == .init(heardSince: 143.5, sightings: 2, longestRecentGap: 0.5))
        // A single sighting has no gap; a time before the first sighting has no history.
        #expect(stream.history(before: 0, silence: 60, window: 120) == .init(heardSince: 0, sightings: 1, longestRecentGap: 0))
        #expect(stream.history(before: -5, silence: 60, window: 120) == .init(heardSince: -5, sightings: 0, longestRecentGap: 0))
    }

    @Test("The ground-truth file's ISO 8601 times are the recording's epoch (PST = UTC−8), moved onto its clock in whole milliseconds")
    func groundTruthTimes() throws {
        // FourScannersRun1-2015-03-07 starts at 1425757567417 ms = 11:46:07.417 PST.
        #expect(try GroundTruthCatalog.time("2015-03-07T11:46:07-08:00", "test") == 1_425_757_567)
        #expect(try GroundTruthCatalog.time("1970-01-01T00:00:00Z", "test") == 0)
        #expect(try GroundTruthCatalog.time("2000-03-01T00:00:00+00:00", "test") == 951_868_800)
        let period = RoomPeriod(start: 1_425_757_571, end: nil, room: "Room201").onRecordingClock(originMilliseconds: 1_425_757_567_417)
        #expect(period.start == 3.583 && period.end == nil && period.room == "Room201")
    }

    @Test("The transcribed timelines are consistent: each beacon's periods follow each other, rooms alternate with transitions")
    func groundTruthTable() throws {
        let catalog = try GroundTruthCatalog.beaconRuns()
        #expect(catalog.recordings.count == 3)
        let four = try #require(catalog.truth(forRecording: "/x/FourScannersRun#1-2015-03-07.json"))
        #expect(four.stationary.count == 4 && four.carried.count == 6)
        // Heartbeat beacons: UUID DAF246CEF[RRR]11E4B116123B93F75CBA, major RRR, minor 20.
        #expect(four.stationary.map(\.identity.description).first == "DAF246CE-F201-11E4-B116-123B93F75CBA:201:20")
        for identity in four.carried {
            let periods = four.labels.filter { $0.identity == identity }.map(\.period)
            #expect(periods.count == 5, "\(identity)")
            for (previous, next) in zip(periods, periods.dropFirst()) {
                #expect(previous.end == next.start, "\(identity): gap or overlap at \(String(describing: previous.end))")
                #expect((previous.room == nil) != (next.room == nil), "\(identity): rooms and transitions alternate")
                #expect(try #require(previous.start) < (try #require(previous.end)))
            }
            #expect(periods.first?.room == "Room201" && periods.last?.room == "Room201", "all beacons start and end in 201")
            // 11:46:11 to 11:58:43 PST.
            #expect(periods.first?.start == 1_425_757_571 && periods.last?.end == 1_425_758_323)
        }
        #expect(catalog.truth(forRecording: "TwoScannersRun1-2015-03-03.json.gz")?.stationary.count == 3)
        #expect(catalog.truth(forRecording: "unknown.json.gz") == nil)
    }

    @Test("A malformed ground-truth file is a malformedInput error naming the row")
    func malformedGroundTruth() throws {
        let badBeacon = #"{"recordings":[{"file":"r.json","stationary":[{"beacon":"nope:1:2","scanner":"A","readme":"x"}],"periods":[]}]}"#
        let error = try #require(throws: RegionKitError.self) { try GroundTruthCatalog(data: Data(badBeacon.utf8), source: "t.json") }
        #expect(error.code == .malformedInput && error.message.contains("stationary[0]") && error.message.contains("nope:1:2"))
        let badTime = #"{"recordings":[{"file":"r.json","stationary":[],"periods":[{"beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2","start":"11:46","room":"A","readme":"x"}]}]}"#
        let timeError = try #require(throws: RegionKitError.self) { try GroundTruthCatalog(data: Data(badTime.utf8), source: "t.json") }
        #expect(timeError.message.contains("periods[0].start"))
        let backwards = #"{"recordings":[{"file":"r.json","stationary":[],"periods":[{"beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2","start":"2015-03-07T11:46:11Z","end":"2015-03-07T11:46:10Z","readme":"x"}]}]}"#
        #expect(throws: RegionKitError.self) { try GroundTruthCatalog(data: Data(backwards.utf8), source: "t.json") }
        #expect(throws: RegionKitError.self) { try GroundTruthCatalog(data: Data("[]".utf8), source: "t.json") }
    }

    // MARK: - Whole replays through the engine

    /// A profile whose exits are exactly 3 s after the last sighting.
    static var threeSecondProfile: MonitoringProfile {
        var profile = MonitoringProfile.coreLocation
        profile.name = "fixed3"
        profile.exitDetector = .fixedSilence(seconds: 3, evaluationInterval: nil)
        return profile
    }

    static func sightings(_ identity: BeaconIdentity, _ scanner: String, every tenths: Int, from start: Int, to end: Int, rssi: Int,
                          skipping hole: Range<Int>? = nil) -> [BeaconObservation] {
        stride(from: start, to: end, by: tenths).compactMap { tenth in
            if let hole, hole.contains(tenth) { return nil }
            return BeaconObservation(identity: identity, rssi: rssi, timestamp: Timestamp(seconds: Double(tenth) / 10), scannerID: scanner)
        }
    }

    /// - stationary: at A, 10 Hz for 300 s, with a 6 s hole at 100 s (one false exit, one flap);
    /// - carried: 10 Hz at A until 120 s, carried (120–130 s), 10 Hz at B from 130 s with a 10 s hole
    ///   at 200 s (an exit during its stay in B, and a flap);
    /// - slow: 1 Hz at A until 200 s; slowest: every 5 s at B until 200 s (flaps at every sighting).
    static var scenario: [BeaconObservation] {
        let all = sightings(stationary, "A", every: 1, from: 0, to: 3000, rssi: -50, skipping: 1001..<1060)
            + sightings(carried, "A", every: 1, from: 0, to: 1200, rssi: -60)
            + sightings(carried, "B", every: 1, from: 1300, to: 3000, rssi: -55, skipping: 2000..<2100)
            + sightings(slow, "A", every: 10, from: 0, to: 2001, rssi: -70)
            + sightings(slowest, "B", every: 50, from: 0, to: 2001, rssi: -80)
        var random = SeededRandom(seed: 7)
        return all.shuffled(using: &random)   // the evaluator puts them in time order
    }

    static func truth(carriedInBFrom roomBStart: Double) -> BeaconRunGroundTruth {
        func epoch(_ seconds: Double) -> Double { Double(origin) / 1000 + seconds }
        return BeaconRunGroundTruth(
            fileName: "synthetic.json",
            stationary: [.init(identity: stationary, scannerID: "A", readme: "sat on A")],
            labels: [.init(identity: carried, period: RoomPeriod(start: nil, end: epoch(120), room: "A"), readme: "in A"),
                     .init(identity: carried, period: RoomPeriod(start: epoch(120), end: epoch(roomBStart), room: nil), readme: "carried"),
                     .init(identity: carried, period: RoomPeriod(start: epoch(roomBStart), end: nil, room: "B"), readme: "in B")])
    }

    @Test("A replay counts the false exit and the flap, measures latency per rate class, scores rooms")
    func syntheticReplay() throws {
        let options = ReplayEvaluator.Options(silence: 60, tail: 60, flapWindow: 30, tolerance: 5)
        let result = try ReplayEvaluator(profile: Self.threeSecondProfile, options: options)
            .evaluate(recording: "synthetic.json", observations: Self.scenario, originMilliseconds: Self.origin,
                      groundTruth: Self.truth(carriedInBFrom: 130))
        #expect(result.profile == "fixed3")
        #expect(abs(result.duration - 299.9) < 1e-9)
        #expect(result.streams.map(\.rateClass) == [.tenHertz, .tenHertz, .tenHertz, .oneHertz, .fifthHertz])

        // False exit: the stationary stream's last sighting before the hole is 100.0 s, exit at 103.0 s.
        let falseExits = try #require(result.falseExits)
        let exitTimes: [Double] = falseExits.events.map { (event) -> Double in (event.time * 1000).rounded() / 1000 }
        #expect(exitTimes == [103])
        #expect(falseExits.streams == 1)
        #expect(abs(falseExits.beaconHours - 299.9 / 3600) < 1e-9)
        #expect(abs((falseExits.perThousandBeaconHours ?? 0) - 1000 / (299.9 / 3600)) < 1e-6)

        // The carried beacon's exit in the middle of its stay in B: last sighting 199.9 s, exit 202.9 s.
        let stays = try #require(result.stayExits)
        #expect(stays.streams == 2)
        #expect(abs(stays.beaconHours - ((115 - 5) + (294.9 - 135)) / 3600) < 1e-9)
        #expect(stays.events.map { ($0.time * 1000).rounded() / 1000 } == [202.9])
        #expect(stays.events.first?.key == .init(identity: Self.carried, scannerID: "B"))

        // Flaps: the stationary one (103 → 106), the carried one (202.9 → 210), and the every-5-s
        // stream after each of its 40 first sightings.
        #expect(result.flapCount(.tenHertz) == 2)
        #expect(result.flapCount(.oneHertz) == 0)
        #expect(result.flapCount(.fifthHertz) == 40)
        #expect(result.flaps.first { $0.rateClass == .tenHertz }.map { ($0.exit * 1000).rounded() / 1000 } == 103)

        // Latency: every stream end is noticed 3 s after its last sighting.
        let ends = result.ends
        #expect(ends.count == 5)
        #expect(ends.allSatisfy { abs(($0.latency ?? 0) - 3) < 1e-6 }, "\(ends)")
        let carriedEnd = try #require(ends.first { $0.key == .init(identity: Self.carried, scannerID: "A") })
        #expect(abs(carriedEnd.lastSighting - 119.9) < 1e-9 && !carriedEnd.endOfRecording)
        #expect(ends.first { $0.key == .init(identity: Self.stationary, scannerID: "A") }?.endOfRecording == true)
        let tenHertz = result.latency(.tenHertz)
        #expect(tenHertz.ends == 3 && tenHertz.missed == 0)
        #expect(abs((tenHertz.p50 ?? 0) - 3) < 1e-6 && abs((tenHertz.max ?? 0) - 3) < 1e-6)

        // Rooms: the carried beacon's room changes at 130 s, when B first hears it (A's stream gone).
        let rooms = try #require(result.carriedRooms?.beacons[Self.carried])
        #expect(abs(rooms.scored - ((115 - 5) + (294.9 - 135))) < 1e-6)
        #expect(abs((rooms.fraction ?? 0) - 1) < 1e-9)
        #expect(result.stationaryRooms?.total.fraction == 1)
    }

    @Test("Labelling the transition as a room is penalised: the transition window is what keeps it out of the score")
    func transitionExcluded() throws {
        let options = ReplayEvaluator.Options(silence: 60, tail: 60, flapWindow: 30, tolerance: 5)
        let evaluator = ReplayEvaluator(profile: Self.threeSecondProfile, options: options)
        // The same run, but the truth claims the beacon was in B from 120 s (no transition).
        let result = try evaluator.evaluate(recording: "synthetic.json", observations: Self.scenario, originMilliseconds: Self.origin,
                                            groundTruth: Self.truth(carriedInBFrom: 120))
        let rooms = try #require(result.carriedRooms?.beacons[Self.carried])
        // 125...130 is now scored and wrong (still A).
        #expect(abs(rooms.scored - ((115 - 5) + (294.9 - 125))) < 1e-6)
        #expect(abs(rooms.correct - (rooms.scored - 5)) < 1e-6)
    }

    @Test("Without ground truth only latency and flaps are measured; the JSON line says so with nulls")
    func noGroundTruth() throws {
        let result = try ReplayEvaluator(profile: Self.threeSecondProfile)
            .evaluate(recording: "other.json", observations: Self.scenario, originMilliseconds: Self.origin, groundTruth: nil)
        #expect(result.falseExits == nil && result.carriedRooms == nil && result.stationaryRooms == nil)
        #expect(result.ends.count == 5)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.jsonLine().text.utf8)) as? [String: Any])
        #expect(object["false_exits"] is NSNull)
        #expect(object["room_assignment_carried"] is NSNull)
        #expect((object["streams"] as? [Any])?.count == 5)
        let latency = try #require(object["exit_latency"] as? [String: Any])
        #expect(Set(latency.keys) == ["10Hz", "1Hz", "0.2Hz"])
    }
}
