import Foundation
import Testing
import RegionKitEngine
@testable import RegionKitEvaluation

@Suite("Distance samples: CSV time,rssi,distance (cm)")
struct DistanceSampleParserTests {
    @Test("Herald rows: header, float RSSI, distance in cm → metres, second-resolution UTC times")
    func heraldRows() throws {
        let text = "time,rssi,distance\n2021-01-03 10:26:48,-54.0,20\n2021-01-03 10:26:48,-55.0,20\n2021-01-03 10:26:49,-47.5,0\n"
        let samples = try DistanceSampleParser.parse(text, source: "a.csv")
        #expect(samples.count == 3)
        #expect(samples.map(\.rssi) == [-54, -55, -47.5])
        #expect(samples.map(\.distance) == [0.2, 0.2, 0])
        // 2021-01-03 10:26:48 UTC = 1609669608 s since the Unix epoch.
        #expect(samples[0].time.seconds == 1_609_669_608)
        #expect(samples[2].time - samples[0].time == 1)
    }

    @Test("No header, reordered header, blank lines, comments, CRLF, spaces, fractional and numeric times")
    func tolerantLayout() throws {
        let plain = try DistanceSampleParser.parse("\n12.5,-60,100\r\n\n# a comment\n13, -61 ,100\n", source: "p.csv")
        #expect(plain.map(\.time.seconds) == [12.5, 13])
        #expect(plain.map(\.rssi) == [-60, -61])
        #expect(plain.map(\.distance) == [1, 1])
        let reordered = try DistanceSampleParser.parse("distance,time,rssi\r\n250,2021-01-05T17:54:02.250Z,-73\r\n", source: "r.csv")
        #expect(reordered.first?.distance == 2.5)
        #expect(reordered.first?.rssi == -73)
        #expect(reordered.first?.time.seconds == 1_609_869_242.25)
    }

    @Test("Fractional seconds: any number of digits is read (the first nine count), never an overflow")
    func longFractions() throws {
        let digits = String(repeating: "9", count: 40)
        let samples = try DistanceSampleParser.parse("2021-01-03 10:26:48.5,-54,20\n2021-01-03 10:26:48.\(digits),-54,20\n", source: "a.csv")
        #expect(samples.count == 2)
        #expect(abs(samples[1].time.seconds - samples[0].time.seconds - 0.499_999_999) < 1e-6)
        #expect(DistanceSampleParser.time("2021-01-03 10:26:48.\(digits)x") == nil, "a non-digit after the ninth is still an error")
    }

    @Test("Bad rows: an error naming the file and the line", arguments: [
        ("time,rssi,distance\n2021-01-03 10:26:48,-54.0,20\n2021-01-03 10:26:49,abc,20\n", "b.csv:3: rssi 'abc' is not a number"),
        ("time,rssi,distance\n2021-01-03 10:26:48,nan,20\n", "b.csv:2: rssi 'nan' must be within"),
        ("time,rssi,distance\n2021-01-03 10:26:48,-inf,20\n", "b.csv:2: rssi '-inf' must be within"),
        ("1,-50,20\n2,-50\n", "b.csv:2: expected 3 comma-separated fields"),
        ("1,-50,-20\n", "b.csv:1: distance '-20' must be within 0...10000000 centimetres"),
        ("1,-50,inf\n", "b.csv:1: distance 'inf' must be within"),
        // Huge but finite values and long digit runs: errors, not traps.
        ("1,-50,1e300\n", "b.csv:1: distance '1e300' must be within 0...10000000 centimetres"),
        ("1,-1e300,20\n", "b.csv:1: rssi '-1e300' must be within -200...50 dBm"),
        ("1e300,-50,20\n", "b.csv:1: time '1e300' is neither"),
        ("1,-50,twenty\n", "b.csv:1: distance 'twenty' is not a number"),
        ("time,rssi,distance\n2021-13-03 10:26:48,-50,20\n", "b.csv:2: time '2021-13-03 10:26:48' is neither"),
        // Found by the distance-samples fuzz target (session 10): 19 bytes only with the "Z"; once
        // the "Z" was dropped the seconds were read past the end (an index trap).
        ("time,rssi,distance\n2021-01-03 10:26:4Z,-54.0,20\n", "b.csv:2: time '2021-01-03 10:26:4Z' is neither"),
        ("time,rssi,distance\n\n5,-50,20\n4,-50,20\n", "b.csv:4: time '4' goes backwards"),
        ("time,rssi,range\n1,-50,20\n", "b.csv:1: header 'time,rssi,range' must name the columns time, rssi and distance"),
        ("time,rssi,distance\n\n", "b.csv: no samples"),
    ])
    func badRows(text: String, message: String) {
        #expect {
            _ = try DistanceSampleParser.parse(text, source: "b.csv")
        } throws: { error in
            guard let error = error as? RegionKitError else { return false }
            return error.code == .malformedInput && error.message.hasPrefix(message)
        }
    }
}
