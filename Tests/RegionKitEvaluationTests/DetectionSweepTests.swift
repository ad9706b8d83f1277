import Foundation
import Testing
import RegionKit
import RegionKitSimulation
import RegionKitEvaluation

/// The detection-quality sweep (`regionkit eval detection`) and its loss channel.
@Suite("Detection sweep: loss channels, seeded figures, responsive vs Core Location")
struct DetectionSweepTests {
    /// Frames sent every 100 ms for `seconds` through `channel`: the lost share, and the share of
    /// lost frames that belong to runs of at least 10 consecutive losses (1 s of silence).
    static func measure(_ channel: LossChannel, seconds: Double, seed: UInt64 = 3) -> (loss: Double, inLongRuns: Double) {
        var random = SeededRandom(seed: seed)
        var link = channel.link(random: &random)
        var lost = 0, sent = 0, inLongRuns = 0, run = 0
        var t = 0.0
        while t < seconds {
            sent += 1
            if link.isLost(at: t, random: &random) {
                lost += 1
                run += 1
            } else {
                if run >= 10 { inLongRuns += run }
                run = 0
            }
            t += 0.1
        }
        return (Double(lost) / Double(sent), Double(inLongRuns) / Double(max(lost, 1)))
    }

    @Test("A bursty channel has the requested average loss, much more of it in long runs than independent losses", arguments: [0.1, 0.3, 0.7])
    func burstyChannel(loss: Double) {
        let bursty = LossChannel.bursty(lossRate: loss, meanBurst: 1, burstShare: 0.5)
        #expect(abs(bursty.lossRate - loss) < 1e-12)
        let measured = Self.measure(bursty, seconds: 200_000)
        #expect(abs(measured.loss - loss) < 0.01, "measured \(measured.loss)")
        let independent = Self.measure(.independent(lossRate: loss), seconds: 200_000)
        #expect(abs(independent.loss - loss) < 0.01)
        // Independent losses: a frame is in a run of ≥ 10 with probability q⁹(1 + 9(1 − q)).
        let expected = pow(loss, 9) * (1 + 9 * (1 - loss))
        #expect(abs(independent.inLongRuns - expected) < 0.01, "\(independent.inLongRuns) vs \(expected)")
        // Half the losses fall in blackouts of 1 s on average (10 frames).
        #expect(measured.inLongRuns > 0.25 && measured.inLongRuns > 2 * independent.inLongRuns, "bursty \(measured.inLongRuns)")
    }

    @Test("Bad channel and sweep parameters are refused with the parameter named")
    func validation() {
        #expect(throws: RegionKitError.self) { try LossChannel.independent(lossRate: 1.5).validate("test") }
        #expect(throws: RegionKitError.self) {
            try LossChannel.gilbertElliott(goodLoss: 0.1, burstLoss: 1, meanGood: 0, meanBurst: 1).validate("test")
        }
        var sweep = DetectionSweep(conditions: [.init(advertisingInterval: 0.1, lossRate: 1, shadowing: .none)], profiles: [.responsive])
        do {
            try sweep.validate()
            Issue.record("a loss rate of 1 was accepted")
        } catch let error as RegionKitError {
            #expect(error.message.contains("loss rate 1"), "\(error.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
        sweep.conditions = [.init(advertisingInterval: 0.1, lossRate: 0.3, shadowing: .none)]
        sweep.beaconsPerEngine = 0
        #expect(throws: RegionKitError.self) { try sweep.validate() }
    }

    static func smallSweep(seed: UInt64) -> DetectionSweep {
        var sweep = DetectionSweep(conditions: [.init(advertisingInterval: 0.1, lossRate: 0.3, shadowing: .none),
                                                .init(advertisingInterval: 1, lossRate: 0.5, shadowing: .bursty)],
                                   profiles: [.coreLocation, .altBeacon, .responsive], seed: seed)
        sweep.stationaryHours = 2
        sweep.departures = 40
        sweep.beaconsPerEngine = 8
        sweep.maximumLifetime = 1800
        return sweep
    }

    @Test("Seeded: the same seed gives the same figures, sequentially or concurrently; another seed others")
    func reproducible() async throws {
        let sweep = Self.smallSweep(seed: 11)
        try sweep.validate()
        let first = sweep.run()
        #expect(first.count == 6)
        #expect(first.map(\.profile) == ["corelocation", "altbeacon", "responsive", "corelocation", "altbeacon", "responsive"])
        #expect(first.allSatisfy { abs($0.stationaryHours - 2) < 1e-9 && $0.departures + $0.outsideAtDeparture == 40 })
        let concurrent = await sweep.run(concurrency: 3)
        #expect(first == concurrent)
        #expect(first.map(\.jsonLine.text) == concurrent.map(\.jsonLine.text))
        let other = Self.smallSweep(seed: 12).run()
        #expect(other.map(\.latencies) != first.map(\.latencies))
    }

    @Test("100 ms advertising, 30 % loss: responsive exits within 3 s at p95, far sooner than Core Location and AltBeacon")
    func responsiveBeatsCoreLocation() throws {
        var sweep = DetectionSweep(conditions: [.init(advertisingInterval: 0.1, lossRate: 0.3, shadowing: .none)],
                                   profiles: [.coreLocation, .altBeacon, .responsive], seed: 5)
        sweep.stationaryHours = 8
        sweep.departures = 200
        let reports = sweep.run()
        let ios = try #require(reports.first { $0.profile == "corelocation" })
        let android = try #require(reports.first { $0.profile == "altbeacon" })
        let fast = try #require(reports.first { $0.profile == "responsive" })
        for report in reports {
            #expect(report.departures == 200 && report.missedExits == 0 && report.outsideAtDeparture == 0)
            #expect(report.falseExits == 0 && report.arrivalFalseExits == 0, "\(report.tableRow)")
        }
        // Core Location: 30 s of silence on a 10 s grid; AltBeacon: 10 s checked every 1.1 s scan cycle.
        let iosP50 = try #require(ios.exitLatency(percentile: 0.5)), iosP95 = try #require(ios.exitLatency(percentile: 0.95))
        #expect(iosP50 > 29 && iosP95 <= 40, "\(ios.tableRow)")
        let androidP50 = try #require(android.exitLatency(percentile: 0.5))
        #expect(androidP50 > 9.5 && androidP50 <= 11.1, "\(android.tableRow)")
        let fastP95 = try #require(fast.exitLatency(percentile: 0.95))
        #expect(fastP95 <= 3, "\(fast.tableRow)")
        #expect(fastP95 < androidP50 / 3 && fastP95 < iosP50 / 10)
    }

    @Test("Walking away (--walk-away): departures fade, the evidence profile exits them earlier than responsive, and a bad walk time is refused")
    func walkAwayFades() throws {
        var sweep = DetectionSweep(conditions: [.init(advertisingInterval: 0.1, lossRate: 0.3, shadowing: .none)],
                                   profiles: [.responsive, .evidence], seed: 5)
        sweep.stationaryHours = 2
        sweep.departures = 64
        sweep.walkAway = 8
        try sweep.validate()
        let reports = sweep.run()
        let old = try #require(reports.first { $0.profile == "responsive" })
        let new = try #require(reports.first { $0.profile == "evidence" })
        for report in reports { #expect(report.departures == 64 && report.falseExits == 0 && report.arrivalFalseExits == 0, "\(report.tableRow)") }
        let oldP50 = try #require(old.exitLatency(percentile: 0.5)), newP50 = try #require(new.exitLatency(percentile: 0.5))
        #expect(newP50 < oldP50 - 0.2, "evidence \(newP50) s vs responsive \(oldP50) s")
        sweep.walkAway = -1
        #expect(throws: RegionKitError.self) { try sweep.validate() }
        sweep.walkAway = .nan
        #expect(throws: RegionKitError.self) { try sweep.validate() }
    }

    @Test("Companions (--companions): stationary beacons beside the departing ones inform the scanner but are not scored; periodic exits a 1 Hz, 1 % departure sooner beside them; bad counts are refused")
    func companionsInformTheScanner() throws {
        var sweep = DetectionSweep(conditions: [.init(advertisingInterval: 1, lossRate: 0.01, shadowing: .none)],
                                   profiles: [.periodic], seed: 3)
        sweep.stationaryHours = 0
        sweep.departures = 96
        let alone = try #require(sweep.run().first)
        sweep.companions = 32
        try sweep.validate()
        let beside = try #require(sweep.run().first)
        // The same departures are scored (the companions' seeds come after the beacons'); none of
        // the companions' events counts.
        #expect(alone.departures + alone.outsideAtDeparture == 96 && beside.departures + beside.outsideAtDeparture == 96)
        #expect(beside.falseExits == 0 && beside.arrivalFalseExits == 0 && beside.missedExits == 0, "\(beside.tableRow)")
        let aloneP50 = try #require(alone.exitLatency(percentile: 0.5)), besideP50 = try #require(beside.exitLatency(percentile: 0.5))
        #expect(besideP50 < aloneP50 - 0.3, "beside companions \(besideP50) s, alone \(aloneP50) s")
        sweep.companions = -1
        #expect(throws: RegionKitError.self) { try sweep.validate() }
        sweep.companions = DetectionSweep.maximumCompanions + 1
        #expect(throws: RegionKitError.self) { try sweep.validate() }
    }

    @Test("Table rows show the resolution of a zero false-exit count")
    func tableRow() {
        let condition = DetectionSweep.Condition(advertisingInterval: 0.1, lossRate: 0.3, shadowing: .none)
        let none = DetectionReport(condition: condition, profile: "responsive", latencies: [2, 1, 3], stationaryHours: 1000, arrivals: 3)
        #expect(none.tableRow.contains("0 in 1000 h"))
        #expect(none.exitLatency(percentile: 0.5) == 2)
        let some = DetectionReport(condition: condition, profile: "altbeacon", latencies: [1], missedExits: 1, falseExits: 2,
                                   settledFalseExits: 1, stationaryHours: 1000)
        #expect(some.tableRow.contains("2.00 (2 in 1000 h, 1 settled)"))
        #expect(some.exitLatency(percentile: 0.95) == .infinity, "a missed exit is later than any measured one")
        #expect(some.jsonLine.text.contains("\"exit_p95_s\":null"))
    }
}
