import Foundation
import Testing
import RegionKitCore
@testable import RegionKitLocation

@Suite("GPX reader")
struct GPXReaderTests {
    @Test("Mojstrovka.gpx: 184 track points, golden values, degenerate times detected",
          .enabled(if: Fixtures.has("gpx/Mojstrovka.gpx"), "gpx fixture missing (set REGIONKIT_FIXTURES)"))
    func mojstrovka() throws {
        let doc = try GPXReader.read(data: Data(try Fixtures.bytes("gpx/Mojstrovka.gpx")))
        #expect(doc.tracks.count == 1 && doc.waypoints.isEmpty && doc.routes.isEmpty)
        let pts = doc.tracks[0].points
        #expect(pts.count == 184)
        let first = try #require(pts.first), last = try #require(pts.last)
        #expect(first.latitude == 46.434981 && first.longitude == 13.748273 && first.elevation == 1614.678)
        #expect(first.line == 12)
        #expect(last.latitude == 46.435231 && last.longitude == 13.748253 && last.elevation == 1643.51208)
        // Every point is stamped 1901-12-13T20:45:52.2073437Z: -2^31 s + 0.2073437 s, a classic
        // 32-bit "no time" sentinel. The times parse (7 fractional digits, before 1970) ...
        #expect(abs(first.time!.seconds - (-2_147_483_648 + 0.2073437)) < 1e-6)
        // ... but are useless, so .automatic falls back to constant speed and says why.
        let timed = GPXReader.fixes(pts, timing: .automatic(speed: 1.0, start: Timestamp(seconds: 1000)))
        #expect(!timed.usedRecordedTimes)
        #expect(timed.note?.contains("same time") == true)
        #expect(timed.fixes.count == 184)
        // Path length by haversine (R = 6,371,008.8 m), computed independently: 2697.6267 m.
        #expect(abs(timed.fixes.last!.timestamp.seconds - 1000 - 2697.6266693) < 1e-3)
        #expect(timed.fixes.allSatisfy { $0.mode == .threeD && $0.speed == 1.0 })
        #expect(zip(timed.fixes, timed.fixes.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp })
        // .recorded keeps the recorded (equal) times as they are.
        let recorded = GPXReader.fixes(pts, timing: .recorded)
        #expect(recorded.usedRecordedTimes && recorded.fixes.count == 184)
    }

    static let inline = """
    <?xml version="1.0" encoding="UTF-8"?>
    <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
      <wpt lat="-33.8568" lon="151.2153"><ele>4</ele><name>Opera House</name></wpt>
      <rte><name>Harbour</name>
        <rtept lat="-33.8523" lon="151.2108"/>
        <rtept lat="-33.8568" lon="151.2153"/>
      </rte>
      <trk><name>Walk</name>
        <trkseg>
          <trkpt lat="0.0" lon="0.0"><time>2020-01-01T00:00:00Z</time><hdop>1.5</hdop></trkpt>
          <trkpt lat="0.0" lon="0.001"><time>2020-01-01T00:01:00.5Z</time></trkpt>
        </trkseg>
        <trkseg>
          <trkpt lat="0.001" lon="0.001"/>
        </trkseg>
      </trk>
    </gpx>
    """

    @Test("inline document: wpt, rte, trk with segments; hand-checked")
    func inlineDocument() throws {
        let doc = try GPXReader.read(GPXReaderTests.inline)
        #expect(doc.waypoints.count == 1)
        #expect(doc.waypoints[0].name == "Opera House" && doc.waypoints[0].elevation == 4)
        #expect(doc.routes.count == 1 && doc.routes[0].name == "Harbour" && doc.routes[0].points.count == 2)
        #expect(doc.tracks.count == 1 && doc.tracks[0].name == "Walk")
        #expect(doc.tracks[0].segments.map(\.count) == [2, 1])
        let pts = doc.tracks[0].points
        #expect(pts[1].time == UTCCalendar.parseISO8601("2020-01-01T00:01:00.5Z"))
        // Third point has no time → .automatic uses constant speed; .recorded skips it.
        let auto = GPXReader.fixes(pts, timing: .automatic(speed: 2, start: .zero))
        #expect(!auto.usedRecordedTimes && auto.note == "1 of 3 points have no time")
        // 0.001° of longitude on the equator = R·π/180·0.001 = 111.19508 m; at 2 m/s: 55.5975 s.
        let leg = 6_371_008.8 * Double.pi / 180 * 0.001
        #expect(abs(auto.fixes[1].timestamp.seconds - leg / 2) < 1e-6)
        #expect(abs(auto.fixes[2].timestamp.seconds - leg) < 1e-6)
        #expect(auto.fixes[0].course == 90)                    // due east to the next point
        #expect(auto.fixes[0].horizontalAccuracy == 1.5 * 19)  // hdop × UERE
        #expect(auto.fixes[0].mode == .twoD)                    // no elevation
        let rec = GPXReader.fixes(pts, timing: .recorded)
        #expect(rec.usedRecordedTimes && rec.fixes.count == 2)
        // Route without times: constant speed along the great circle.
        let route = GPXReader.fixes(doc.routes[0].points, timing: .constantSpeed(metresPerSecond: 1, start: Timestamp(seconds: 5)))
        let d = Geodesy.distance(latitude1: -33.8523, longitude1: 151.2108, latitude2: -33.8568, longitude2: 151.2153)
        #expect(route.fixes.map(\.timestamp.seconds) == [5, 5 + d])
        #expect(GPXReader.fixes(pts, timing: .constantSpeed(metresPerSecond: 0, start: .zero)).fixes.isEmpty)
    }

    @Test("Invalid UTF-8 (in an element name, an attribute, text) is malformedXML at its line and column, checked before XMLParser")
    func invalidUTF8() {
        for (bytes, line, column) in [
            (Array("<gpx>\n<trk><".utf8) + [0xC3, 0x28] + Array("/></trk></gpx>".utf8), 2, 7),   // element name: C3 needs a continuation byte
            (Array("<gpx>\n\n<wpt lat=\"1\" lon=\"2\"><name>".utf8) + [0xFF] + Array("</name></wpt></gpx>".utf8), 3, 28),
            (Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?><gpx><wpt lat=\"1\" lon=\"2\"><".utf8) + [0xED, 0xA0, 0x80] + Array("/></wpt></gpx>".utf8), 1, 66),   // a surrogate
        ] {
            do {
                _ = try GPXReader.read(data: Data(bytes))
                Issue.record("accepted \(bytes)")
            } catch {
                #expect(error.code == .malformedXML && error.message.contains("invalid UTF-8"), "\(error)")
                #expect(error.line == line && error.column == column, "\(error)")
            }
        }
        // Latin-1 declared: libxml2 transcodes it, the check leaves it alone.
        let latin1 = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><gpx><wpt lat=\"1\" lon=\"2\"><name>".utf8) + [0xE9] + Array("</name></wpt></gpx>".utf8)
        #expect((try? GPXReader.read(data: Data(latin1)))?.waypoints.first?.name == "é")
    }

    @Test("malformed GPX gives clear errors with line numbers")
    func malformed() {
        let cases: [(String, LocationInputError.Code, Int)] = [
            ("<gpx>\n<trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\">\n</trkseg></trk></gpx>", .malformedXML, 4),  // mismatched tag
            ("<gpx>\n<wpt lat=\"1\"/>\n</gpx>", .missingAttribute, 2),                                     // no lon
            ("<gpx>\n\n<wpt lat=\"95\" lon=\"2\"/>\n</gpx>", .missingAttribute, 3),                          // lat > 90
            ("<gpx>\n<wpt lat=\"1\" lon=\"2\"><ele>high</ele></wpt>\n</gpx>", .badField, 2),
            ("<gpx>\n<wpt lat=\"1\" lon=\"2\">\n<time>yesterday</time></wpt></gpx>", .badField, 3),
            ("<kml></kml>", .malformedXML, 1),
            ("", .malformedXML, 1),
            ("<gpx><wpt lat=\"1\" lon=\"2\"", .malformedXML, 1),                                             // truncated
        ]
        for (text, code, line) in cases {
            do {
                _ = try GPXReader.read(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.code == code, "\(text): \(error)")
                #expect(error.line == line, "\(text): \(error)")
                print("GPX error:", error)
            }
        }
    }
}
