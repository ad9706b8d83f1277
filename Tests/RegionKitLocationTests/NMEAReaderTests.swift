import Foundation
import Testing
import RegionKitCore
@testable import RegionKitLocation

@Suite("NMEA sentences and cycles")
struct NMEAReaderTests {
    @Test("GGA fields, hand-checked")
    func gga() throws {
        // The textbook example; its checksum *47 is the published one.
        let s = try NMEASentence.parse("$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47")
        #expect(s.talker == "GP" && s.type == "GGA")
        guard case .gga(let g) = try NMEAMessage.decode(s) else { Issue.record("not GGA"); return }
        #expect(g.timeOfDay == Double(12 * 3600 + 35 * 60 + 19))           // 12:35:19 UTC
        #expect(abs(g.latitude! - (48 + 7.038 / 60)) < 1e-12)      // 48°07.038' N
        #expect(abs(g.longitude! - (11 + 31.0 / 60)) < 1e-12)      // 11°31.000' E
        #expect(g.fixQuality == 1)                                  // GPS fix
        #expect(g.satellitesUsed == 8)                              // 08 satellites
        #expect(g.hdop == 0.9)                                      // HDOP 0.9
        #expect(g.altitudeMSL == 545.4)                             // 545.4 m MSL
        #expect(g.geoidSeparation == 46.9)                          // geoid 46.9 m
    }

    @Test("RMC fields, hand-checked, other talkers")
    func rmc() throws {
        // GN talker, southern/western hemispheres, fractional seconds.
        let line = NMEASentence.frame("GNRMC,225446.33,A,4916.4500,S,12311.1200,W,000.5,054.7,191194,020.3,E,D")
        guard case .rmc(let r) = try NMEAMessage.decode(try NMEASentence.parse(line)) else { Issue.record("not RMC"); return }
        #expect(abs(r.timeOfDay! - (22 * 3600 + 54 * 60 + 46.33)) < 1e-9) // 22:54:46.33
        #expect(r.isValid)                                                 // status A
        #expect(abs(r.latitude! - -(49 + 16.45 / 60)) < 1e-12)             // 49°16.45' S → negative
        #expect(abs(r.longitude! - -(123 + 11.12 / 60)) < 1e-12)           // 123°11.12' W → negative
        #expect(abs(r.speed! - 0.5 * 1852 / 3600) < 1e-12)                 // 0.5 kn → 0.2572 m/s
        #expect(r.course == 54.7)                                           // 54.7° true
        #expect(r.date == NMEADate(year: 1994, month: 11, day: 19))         // 191194
        #expect(r.faaMode == "D")                                           // differential
        for talker in ["GP", "GL", "GA", "BD", "GB", "GQ"] {
            let s = try NMEASentence.parse(NMEASentence.frame("\(talker)RMC,000000,V,,,,,,,010120,,,N"))
            #expect(s.talker == talker && s.type == "RMC")
        }
    }

    @Test("GLL and GSA fields, hand-checked")
    func gllGsa() throws {
        let s = try NMEASentence.parse("$GPGLL,4916.45,N,12311.12,W,225444,A,*1D")
        guard case .gll(let l) = try NMEAMessage.decode(s) else { Issue.record("not GLL"); return }
        #expect(abs(l.latitude! - (49 + 16.45 / 60)) < 1e-12)   // 49°16.45' N
        #expect(abs(l.longitude! + (123 + 11.12 / 60)) < 1e-12) // 123°11.12' W
        #expect(l.timeOfDay == Double(22 * 3600 + 54 * 60 + 44))        // 22:54:44
        #expect(l.isValid && l.faaMode == nil)                  // A, empty FAA field
        let a = try NMEASentence.parse("$GPGSA,A,3,04,05,,09,12,,,24,,,,,2.5,1.3,2.1*39")
        guard case .gsa(let g) = try NMEAMessage.decode(a) else { Issue.record("not GSA"); return }
        #expect(g.fixMode == 3)                                 // 3D
        #expect(g.satellites == [4, 5, 9, 12, 24])              // PRNs used
        #expect(g.pdop == 2.5 && g.hdop == 1.3 && g.vdop == 2.1)
    }

    @Test("a cycle merges RMC+GGA+GSA into one fix; accuracy = HDOP × 19 m")
    func cycleMerge() throws {
        let text = [
            "GPRMC,081836,A,3751.65,S,14507.36,E,000.0,360.0,130998,011.3,E",
            "GPGGA,081836,3751.65,S,14507.36,E,1,05,1.5,20.0,M,-34.0,M,,",
            "GPGSA,A,3,01,02,03,04,05,,,,,,,,2.0,1.5,1.3",
            "GPRMC,081837,A,3751.66,S,14507.37,E,010.0,090.0,130998,011.3,E",
        ].map(NMEASentence.frame).joined(separator: "\r\n")
        let result = NMEAReader.read(text)
        #expect(result.diagnostics.isEmpty)
        #expect(result.reports.count == 2)
        let f = try #require(result.fixes.first)
        #expect(f.timestamp == UTCCalendar.parseISO8601("1998-09-13T08:18:36Z"))
        #expect(abs(f.latitude - -(37 + 51.65 / 60)) < 1e-12)
        #expect(f.mode == .threeD)              // GSA says 3D
        #expect(f.altitude == 20.0)
        #expect(f.horizontalAccuracy == 1.5 * 19)
        #expect(f.speed == 0 && f.course == 360)
        let g = result.fixes[1]                 // RMC only, GGA-less cycle, previous mode 3D
        let tenKnots: Double = 10 * 1852.0 / 3600
        #expect(g.speed == tenKnots)
        #expect(g.timestamp - f.timestamp == 1)
    }

    @Test("no fix is reported as location unavailable, never as a position")
    func noFix() throws {
        let text = [
            "GPRMC,120000,V,4807.038,N,01131.000,E,,,010120,,,N",  // void, even with coordinates
            "GPGGA,120000,4807.038,N,01131.000,E,0,00,99.9,,M,,M,,",
            "GPGSA,A,1,,,,,,,,,,,,,99.9,99.9,99.9",
            "GPRMC,120001,A,4807.038,N,01131.000,E,,,010120,,,A",  // a valid one for the date
        ].map(NMEASentence.frame).joined(separator: "\n")
        let result = NMEAReader.read(text)
        #expect(result.reports.count == 2)
        let first = result.reports[0]
        #expect(first.mode == .noFix && !first.hasPosition && first.estimatedHorizontalError == nil)
        // The void RMC carries no trustworthy date (gpsd ignores it too), so the first cycle has
        // no absolute time; with a reference date it becomes a timed "unavailable" fix.
        #expect(first.time == nil)
        var reader = NMEAReader(configuration: .init(referenceDate: NMEADate(year: 2020, month: 1, day: 1)))
        var fixes: [LocationFix] = []
        for line in text.split(separator: "\n") {
            for case .report(let r) in reader.consume(line: String(line)) { fixes += [r.locationFix].compactMap { $0 } }
        }
        for case .report(let r) in reader.finish() { fixes += [r.locationFix].compactMap { $0 } }
        #expect(fixes.count == 2)
        #expect(fixes[0].mode == .noFix && fixes[0].latitude.isNaN && fixes[0].longitude.isNaN)
        #expect(fixes[1].mode == .twoD && fixes[1].timestamp == UTCCalendar.parseISO8601("2020-01-01T12:00:01Z"))
    }

    @Test("date rolls over at midnight for GGA-only cycles")
    func midnight() throws {
        let text = [
            "GPRMC,235959,A,4807.038,N,01131.000,E,,,311299,,,A",
            "GPGGA,000000,4807.038,N,01131.000,E,1,05,1.0,1.0,M,0,M,,",
        ].map(NMEASentence.frame).joined(separator: "\n")
        let fixes = NMEAReader.read(text).fixes
        #expect(fixes.map(\.timestamp) == [
            UTCCalendar.parseISO8601("1999-12-31T23:59:59Z")!, UTCCalendar.parseISO8601("2000-01-01T00:00:00Z")!,
        ])
    }

    /// Malformed input: each line gets one diagnostic with its line number and a specific code;
    /// good lines around them still produce fixes.
    @Test("malformed sentences give clear errors with line numbers")
    func malformed() throws {
        let good = NMEASentence.frame("GPRMC,120000,A,4807.038,N,01131.000,E,,,010120,,,A")
        let cases: [(String, LocationInputError.Code, String)] = [
            ("$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*48", .badChecksum, "does not match"),
            ("$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,", .badChecksum, "missing"),
            ("$GPGGA,123519*ZZ", .badChecksum, "hex"),
            ("\u{01}\u{02}binary\u{FF}junk", .badFraming, "does not start"),
            ("GPGGA,123519,4807.038,N*00", .badFraming, "does not start"),
            ("$", .badChecksum, "missing"),
            (NMEASentence.frame("gpgga,1"), .badFraming, "address"),
            (NMEASentence.frame("GPGG,1"), .badFraming, "address"),
            (NMEASentence.frame("GPGGA,123519,9107.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"), .badField, "exceeds 90"),
            (NMEASentence.frame("GPGGA,123519,4807.038,X,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"), .badField, "hemisphere"),
            (NMEASentence.frame("GPGGA,256000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"), .badField, "out of range"),
            (NMEASentence.frame("GPGGA,123519,4807.038,N,01131.000,E,1,08,nan,545.4,M,46.9,M,,"), .badField, "not a number"),
            (NMEASentence.frame("GPGGA,123519,4807.038,N,01131.000,E,1,08,1e3,545.4,M,46.9,M,,"), .badField, "not a number"),
            (NMEASentence.frame("GPGGA,123519,48x7.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"), .badField, "ddmm"),
            (NMEASentence.frame("GPGGA,123519,4875.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"), .badField, "minutes"),
            (NMEASentence.frame("GPRMC,123519,A,4807.038,N,01131.000,E,1.0,2.0,320199,,"), .badField, "calendar"),
            (NMEASentence.frame("GPRMC,123519,X,4807.038,N,01131.000,E,1.0,2.0,010199,,"), .badField, "status"),
            (NMEASentence.frame("GPRMC,123519,A"), .missingField, "needs at least 9"),
            (NMEASentence.frame("GPGSA,A,7,,,,,,,,,,,,,1,1,1"), .badField, "outside"),
            (NMEASentence.frame("GPZDA,123519,30,02,2020,,"), .badField, "does not exist"),
            ("$GPGGA," + String(repeating: "9", count: 10_000) + "*00", .badFraming, "longer than"),
            (NMEASentence.frame("GPGGA,12:35:19,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"), .badField, "hhmmss"),
        ]
        var lines = [good]
        for c in cases { lines.append(c.0) }
        lines.append(NMEASentence.frame("GPRMC,120001,A,4807.038,N,01131.000,E,,,010120,,,A"))
        let result = NMEAReader.read(lines.joined(separator: "\n"))
        #expect(result.fixes.count == 2)
        try #require(result.diagnostics.count == cases.count, "\(result.diagnostics)")
        for (i, (d, c)) in zip(result.diagnostics, cases).enumerated() {
            #expect(d.line == i + 2, "\(d)")
            #expect(d.code == c.1, "line \(i + 2): \(d)")
            #expect(d.message.contains(c.2), "line \(i + 2): '\(d.message)' should mention '\(c.2)'")
            #expect(d.description.hasPrefix("line \(i + 2)"))
        }
    }

    /// Random corruption of real sentences (seeded): never a crash, every rejected line is
    /// reported with its number, and any accepted position is a valid coordinate.
    @Test("fuzzed fixtures never crash", .enabled(if: Fixtures.has("gpsd/bt451.log"), "gpsd fixtures missing (set REGIONKIT_FIXTURES or provide ../shared/fixtures)"))
    func fuzz() throws {
        var rng = SeededRandom(seed: 0x5EED)
        var source: [[UInt8]] = []
        for name in ["bt451.log", "nmea-rtk.log", "ublox-zed-f9p-nmea.log", "mtk-3301.log"] where Fixtures.has("gpsd/\(name)") {
            source += try Fixtures.bytes("gpsd/\(name)").split(separator: 10).map(Array.init)
        }
        var corrupted: [UInt8] = []
        var lineCount = 0
        for _ in 0..<20_000 {
            var line = source[Int.random(in: 0..<source.count, using: &rng)]
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: if !line.isEmpty { line[Int.random(in: 0..<line.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            case 1: line = Array(line.prefix(Int.random(in: 0...line.count, using: &rng)))
            case 2: line.insert(UInt8.random(in: 32...126, using: &rng), at: Int.random(in: 0...line.count, using: &rng))
            case 3:
                // Corrupt a field but keep the checksum right, so field decoders are exercised.
                if let star = line.lastIndex(of: 42), star > 1 {
                    var body = Array(line[1..<star])
                    if !body.isEmpty { body[Int.random(in: 0..<body.count, using: &rng)] = UInt8.random(in: 32...126, using: &rng) }
                    line = Array(NMEASentence.frame(String(decoding: body, as: UTF8.self)).utf8)
                }
            default: break
            }
            line.removeAll { $0 == 10 || $0 == 13 }
            corrupted += line + [10]
            lineCount += 1
        }
        let result = NMEAReader.read(bytes: corrupted)
        #expect(result.diagnostics.count > 1000)
        #expect(result.diagnostics.allSatisfy { ($0.line ?? 0) >= 1 && ($0.line ?? 0) <= lineCount })
        for r in result.reports where r.hasPosition {
            #expect(abs(r.latitude!) <= 90 && abs(r.longitude!) <= 180)
        }
    }

    @Test("nmea-fuzzy-cases.log: exact arithmetic on 8-decimal minutes, no errors",
          .enabled(if: Fixtures.has("gpsd/nmea-fuzzy-cases.log"), "nmea-fuzzy-cases.log missing (set REGIONKIT_FIXTURES or provide ../shared/fixtures)"))
    func fuzzyCases() throws {
        // Despite its name this file is well-formed: it holds sentences that broke gpsd's
        // floating-point decoding. All must parse, with positions equal to gpsd's to 1e-9°.
        let result = NMEAReader.read(bytes: try Fixtures.bytes("gpsd/nmea-fuzzy-cases.log"))
        #expect(result.diagnostics.isEmpty)
        #expect(result.fixes.count == 14)
        let first = try #require(result.fixes.first)
        #expect(abs(first.latitude - 41.574970205) < 1e-9)   // 4134.49821229 N
        #expect(abs(first.longitude - -93.750558641) < 1e-9) // 09345.03351845 W
        #expect(first.horizontalAccuracy == 4.75)            // DGPS (quality 2): HDOP 1.0 × 4.75 m
    }
}
