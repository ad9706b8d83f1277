import Foundation
import Testing
import RegionKitCore
@testable import RegionKitLocation

/// NMEAReader vs gpsd's own output for the same logs (fixtures/gpsd/*.log + .chk).
///
/// How the 1:1 match is defined (see GPSDOracle / OracleComparison for the details):
/// gpsd prints a TPV on every sentence it treats as a possible end of cycle, so one cycle yields
/// one or more TPVs with the same `time`; the last one is gpsd's full view of the cycle and is
/// compared with our single report for that cycle: time exact, mode exact, lat/lon within 1e-6°.
/// TPVs without `time` (no date seen yet) cannot become `LocationFix` values and are counted.
@Suite("NMEA reader against gpsd regression output")
struct NMEAOracleTests {
    /// Exact-match counts measured when this test was written (timed gpsd cycles matched
    /// exactly / timed gpsd cycles). A drop is a regression; a rise means update the table.
    static let expected: [String: (matched: Int, total: Int)] = [
        "bt451.log": (12, 12),
        "bu353-glonass.log": (19, 19),
        // 38 cycles differ in position only, all of class positionFromEarlierSentence: this boat
        // multiplexer relays GLL stamped one second ahead of its GGA/RMC, so a cycle holds two
        // positions; gpsd reports the first (at its learned cycle ender), we report the last.
        "bundg_zeus_9.log": (109, 147),
        "mtk-3301.log": (3, 3),
        "nmea-fuzzy-cases.log": (14, 14),
        "nmea-rtk.log": (122, 122),
        "sirfstarv-nmea.log": (59, 59),
        "ublox-neo-m9n-nmea.log": (61, 61),
        "ublox-zed-f9p-nmea.log": (29, 29),
    ]

    // Skipped loudly (reported as skipped, never passed) when the shared fixtures are absent.
    @Test(
        "every gpsd log matches its .chk TPVs",
        .enabled(if: Fixtures.has("gpsd"), "gpsd fixtures not found: set REGIONKIT_FIXTURES or provide ../shared/fixtures"))
    func oracle() throws {
        let logs = Fixtures.gpsdLogs
        #expect(!logs.isEmpty)
        for name in logs {
            let log = try Fixtures.bytes("gpsd/\(name)")
            let chk = try Data(Fixtures.bytes("gpsd/\(name).chk"))
            let result = NMEAReader.read(bytes: log)
            let cmp = OracleComparison(file: name, oracle: GPSDOracle(chk: chk, log: log), result: result)
            print("ORACLE", cmp)
            #expect(cmp.missing.isEmpty, "\(name): gpsd cycles without a report: \(cmp.missing.prefix(5))")
            #expect(cmp.modeMismatch.isEmpty, "\(name): mode differs: \(cmp.modeMismatch.prefix(5))")
            #expect(cmp.positionUnexplained.isEmpty, "\(name): position differs: \(cmp.positionUnexplained.prefix(5))")
            #expect(cmp.extraUnexplained.isEmpty, "\(name): reports gpsd has no TPV for: \(cmp.extraUnexplained.prefix(5))")
            if name != "bundg_zeus_9.log" {
                #expect(cmp.positionFromEarlierSentence.isEmpty, "\(name): \(cmp.positionFromEarlierSentence.prefix(3))")
            }
            // eph = HDOP × UERE must agree wherever gpsd printed one.
            #expect(cmp.ephMatched == cmp.ephCompared, "\(name): eph \(cmp.ephMatched)/\(cmp.ephCompared)")
            if let e = NMEAOracleTests.expected[name] {
                #expect(cmp.gpsdTimed == e.total, "\(name): gpsd timed cycles \(cmp.gpsdTimed), expected \(e.total)")
                #expect(cmp.matched >= e.matched, "\(name): exact matches \(cmp.matched), expected ≥ \(e.matched)")
            }
            // The only lines the reader rejects in these logs are mtk-3301's three $POLYN lines
            // without checksum, which gpsd rejects too (they are absent from its echo).
            #expect(result.diagnostics.count == (name == "mtk-3301.log" ? 3 : 0), "\(name): \(result.diagnostics.prefix(3))")
        }
    }

    @Test("bt451 golden cycle 15:25:07", .enabled(if: Fixtures.has("gpsd/bt451.log"), "bt451.log missing (set REGIONKIT_FIXTURES or provide ../shared/fixtures)"))
    func bt451Golden() throws {
        let result = NMEAReader.read(bytes: try Fixtures.bytes("gpsd/bt451.log"))
        let t = try #require(UTCCalendar.parseISO8601("2009-12-09T15:25:07.000Z"))
        let fix = try #require(result.fixes.first { $0.timestamp == t })
        // Values from the .chk TPV for this cycle.
        #expect(abs(fix.latitude - 55.797023167) < 1e-6)
        #expect(abs(fix.longitude - 23.569017500) < 1e-6)
        #expect(fix.mode == .threeD)
        #expect(fix.altitude == 36.0)
        #expect(abs((fix.speed ?? 0) - 0.191) < 0.001)
        #expect(fix.course == 16.99)
        #expect(abs((fix.horizontalAccuracy ?? 0) - 51.68) < 1e-9)
        // The log opens indoors without a fix: those cycles are "location unavailable", and none
        // of them is reported as a position.
        #expect(result.reports.prefix(3).allSatisfy { $0.mode == .noFix && !$0.hasPosition })
    }
}
