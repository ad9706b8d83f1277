import Foundation
import Testing
import RegionKit
@testable import RegionKitEvaluation

/// `eval replay`'s figures per stream rate class, on the hand-made replay of
/// ``ReplayEvaluationTests`` (fixed 3 s exits, so every figure is known).
@Suite("Replay evaluation: exit figures per stream rate class")
struct ReplayRateClassTests {
    static func result() throws -> ReplayEvaluation {
        let options = ReplayEvaluator.Options(silence: 60, tail: 60, flapWindow: 30, tolerance: 5)
        return try ReplayEvaluator(profile: ReplayEvaluationTests.threeSecondProfile, options: options)
            .evaluate(recording: "synthetic.json", observations: ReplayEvaluationTests.scenario, originMilliseconds: ReplayEvaluationTests.origin,
                      groundTruth: ReplayEvaluationTests.truth(carriedInBFrom: 130))
    }

    @Test("Each class gets its own streams, false exits, stay exits with their hours, latencies and flaps")
    func perClass() throws {
        let result = try Self.result()
        // ≈10 Hz: the stationary beacon at A (its false exit at 103 s), the carried one at A and at B
        // (the stays in A 5–115 s and in B 135–294.9 s; the exit at 202.9 s in B).
        let ten = result.figures(.tenHertz)
        #expect(ten.streams == 3 && ten.stationaryStreams == 1 && ten.falseExits == 1)
        #expect(abs(ten.stationaryHours - 299.9 / 3600) < 1e-9)
        #expect(ten.stays == 2 && ten.stayExits == 1)
        #expect(abs(ten.stayHours - (110 + 159.9) / 3600) < 1e-9)
        #expect(ten.ends == 3 && ten.missed == 0 && ten.flaps == 2)
        #expect(abs((ten.p95 ?? 0) - 3) < 1e-6)
        // Departures: the carried beacon leaving A at 119.9 s while A went on; not the ends at
        // the recording's end (the stationary beacon at A, the carried one at B).
        #expect(ten.departureLatencies.count == 1 && abs((ten.departureP95 ?? 0) - 3) < 1e-6)
        #expect(result.ends.filter { $0.rateClass == .tenHertz && $0.endOfRecording }.count == 2)
        #expect(abs((ten.falseExitsPerThousandHours ?? 0) - 1000 / (299.9 / 3600)) < 1e-6)
        // ≈1 Hz: the slow beacon alone, no stationary stream, no stay.
        let one = result.figures(.oneHertz)
        #expect(one.streams == 1 && one.stationaryStreams == 0 && one.falseExits == 0 && one.stays == 0 && one.ends == 1 && one.flaps == 0)
        #expect(one.falseExitsPerThousandHours == nil)
        // Sparse (≈0.2 Hz): a flap after each of its first 40 sightings.
        let sparse = result.figures(.fifthHertz)
        #expect(sparse.streams == 1 && sparse.ends == 1 && sparse.flaps == 40)
        // The classes partition the recording.
        let all = StreamRateClass.allCases.map(result.figures)
        #expect(all.map(\.streams).reduce(0, +) == result.streams.count)
        #expect(all.map(\.falseExits).reduce(0, +) == result.falseExits?.count)
        #expect(all.map(\.stayExits).reduce(0, +) == result.stayExits?.count)
        #expect(all.map(\.flaps).reduce(0, +) == result.flaps.count)
    }

    @Test("Every end has its stream's history; departures carry their longest recent gap into the class figures")
    func endHistories() throws {
        let result = try Self.result()
        func end(_ identity: BeaconIdentity, _ scanner: String) throws -> ReplayEvaluation.StreamEnd {
            try #require(result.ends.first { $0.key == SightingStream.Key(identity: identity, scannerID: scanner) })
        }
        // The carried beacon at B: heard from 130.0 s, 1,600 sightings (the 10 s hole left out), the
        // hole (199.9 → 210.0 s) ended within 120 s of its last sighting at 299.9 s.
        let carriedB = try end(ReplayEvaluationTests.carried, "B")
        #expect(carriedB.history.heardSince == 130 && carriedB.history.sightings == 1600)
        #expect(abs(carriedB.history.longestRecentGap - 10.1) < 1e-9 && abs(carriedB.age - 169.9) < 1e-9)
        // The stationary beacon: its 6 s hole ended at 106.0 s, more than 120 s before 299.9 s.
        let stationary = try end(ReplayEvaluationTests.stationary, "A")
        #expect(stationary.history.sightings == 2941 && abs(stationary.history.longestRecentGap - 0.1) < 1e-9)
        // The slowest stream (every 5 s), a departure of the sparse class: its floor is 5 s.
        let slowest = try end(ReplayEvaluationTests.slowest, "B")
        #expect(!slowest.endOfRecording && slowest.history.sightings == 41 && abs(slowest.history.longestRecentGap - 5) < 1e-9)
        #expect(result.figures(.fifthHertz).departureRecentGaps.count == 1 && abs((result.figures(.fifthHertz).recentGapP95 ?? 0) - 5) < 1e-9)
        // ≈10 Hz: one departure (the carried beacon leaving A at 119.9 s), 10 Hz all along.
        let ten = result.figures(.tenHertz)
        #expect(ten.departureRecentGaps.count == 1 && abs((ten.recentGapP50 ?? 0) - 0.1) < 1e-9)
        // A longer window reaches the stationary beacon's hole.
        let wide = try ReplayEvaluator(profile: ReplayEvaluationTests.threeSecondProfile,
                                       options: .init(silence: 60, tail: 60, flapWindow: 30, tolerance: 5, recentWindow: 200))
            .evaluate(recording: "synthetic.json", observations: ReplayEvaluationTests.scenario, originMilliseconds: ReplayEvaluationTests.origin,
                      groundTruth: ReplayEvaluationTests.truth(carriedInBFrom: 130))
        let wideStationary = try #require(wide.ends.first { $0.key == stationary.key })
        #expect(abs(wideStationary.history.longestRecentGap - 6) < 1e-9)
    }

    @Test("Figures of several recordings merge: counts and hours add, percentiles are over all latencies")
    func merge() throws {
        let ten = try Self.result().figures(.tenHertz)
        var total = ReplayEvaluation.ClassFigures(rateClass: .tenHertz)
        total.merge(ten)
        total.merge(ten)
        #expect(total.streams == 6 && total.falseExits == 2 && total.stayExits == 2 && total.ends == 6 && total.latencies.count == 6)
        #expect(total.departureLatencies.count == 2 && total.departureRecentGaps.count == 2)
        #expect(abs(total.stationaryHours - 2 * 299.9 / 3600) < 1e-9)
        #expect(total.falseExitsPerThousandHours == ten.falseExitsPerThousandHours)
    }

    @Test("The JSON line has the figures per class")
    func json() throws {
        let result = try Self.result()
        let text = result.jsonLine().text
        let object = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let perClass = try #require(object["per_class"] as? [String: [String: Any]])
        #expect(Set(perClass.keys) == ["10Hz", "1Hz", "0.2Hz"])
        #expect(perClass["10Hz"]?["false_exits"] as? Int == 1 && perClass["10Hz"]?["stay_exits"] as? Int == 1)
        #expect(perClass["0.2Hz"]?["flaps"] as? Int == 40 && perClass["1Hz"]?["stationary_streams"] as? Int == 0)
        #expect(perClass["10Hz"]?["p95_s"] as? Double == 3)
        #expect(perClass["10Hz"]?["departure_exits"] as? Int == 1 && perClass["10Hz"]?["departure_p50_s"] as? Double == 3)
        #expect(perClass["0.2Hz"]?["departures"] as? Int == 1 && perClass["0.2Hz"]?["departure_recent_gap_p95_s"] as? Double == 5)
        let ends = try #require(object["ends"] as? [[String: Any]])
        #expect(ends.count == result.ends.count)
        #expect(ends.contains { $0["segment_sightings"] as? Int == 1600 && $0["heard_since_s"] as? Double == 130 && $0["longest_recent_gap_s"] as? Double == 10.1 })
        #expect((object["options"] as? [String: Any])?["recent_window_s"] as? Double == 120)
    }
}
