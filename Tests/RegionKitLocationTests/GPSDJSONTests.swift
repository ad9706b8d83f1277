import Foundation
import Testing
import RegionKitCore
@testable import RegionKitLocation

@Suite("gpsd JSON decoding")
struct GPSDJSONTests {
    @Test("TPV with every field, hand-checked")
    func tpv() throws {
        let line = #"{"class":"TPV","device":"/dev/pts/1","status":2,"mode":3,"time":"2020-03-18T13:28:20.600Z","ept":0.005,"lat":41.574970205,"lon":-93.750558641,"altHAE":246.5780,"altMSL":278.0200,"alt":278.0200,"track":92.3080,"magtrack":103.9065,"speed":1.673,"eph":4.750,"epx":3.1,"epy":4.2}"#
        guard case .tpv(let t) = try GPSDMessage.decode(line) else { Issue.record("not TPV"); return }
        #expect(t.device == "/dev/pts/1" && t.status == 2 && t.mode == 3)
        #expect(t.timestamp == UTCCalendar.parseISO8601("2020-03-18T13:28:20.6Z"))
        let f = t.locationFix(receivedAt: .zero)
        #expect(f.timestamp.seconds == 1_584_538_100.6)           // 2020-03-18T13:28:20.600Z
        #expect(f.latitude == 41.574970205 && f.longitude == -93.750558641)
        #expect(f.altitude == 278.02)                              // altMSL, not altHAE
        #expect(f.horizontalAccuracy == 4.75)                      // eph wins over epx/epy
        #expect(f.speed == 1.673 && f.course == 92.308)
        #expect(f.mode == .threeD)
    }

    @Test("TPV without eph uses epx/epy; 2D drops altitude; mode ≤ 1 is unavailable")
    func tpvVariants() throws {
        guard case .tpv(let t) = try GPSDMessage.decode(#"{"class":"TPV","mode":2,"time":"2009-12-09T15:25:05Z","lat":1.5,"lon":2.5,"alt":10,"epx":3,"epy":4}"#)
        else { Issue.record("not TPV"); return }
        let f = t.locationFix(receivedAt: .zero)
        #expect(f.horizontalAccuracy == 5)        // sqrt(3² + 4²)
        #expect(f.altitude == nil && f.mode == .twoD)
        for json in [#"{"class":"TPV","mode":1}"#, #"{"class":"TPV","mode":0,"lat":1,"lon":2}"#, #"{"class":"TPV","mode":3}"#,
                     #"{"class":"TPV","mode":3,"lat":95,"lon":2}"#] {
            guard case .tpv(let u) = try GPSDMessage.decode(json) else { Issue.record("not TPV"); continue }
            let g = u.locationFix(receivedAt: Timestamp(seconds: 42))
            #expect(g.mode == .noFix && g.latitude.isNaN && g.timestamp.seconds == 42, "\(json)")
        }
    }

    @Test("VERSION, DEVICES, WATCH, SKY and unknown classes")
    func otherClasses() throws {
        guard case .version(let v) = try GPSDMessage.decode(#"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#)
        else { Issue.record("VERSION"); return }
        #expect(v.release == "3.22" && v.proto_major == 3 && v.proto_minor == 14)
        guard case .devices(let d) = try GPSDMessage.decode(#"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/1","activated":"2026-01-01T00:00:00.000Z","native":0,"bps":4800}]}"#)
        else { Issue.record("DEVICES"); return }
        #expect(d.map(\.path) == ["/dev/pts/1"])
        guard case .watch(let w) = try GPSDMessage.decode(#"{"class":"WATCH","enable":true,"json":true,"nmea":false}"#)
        else { Issue.record("WATCH"); return }
        #expect(w.enable == true && w.json == true)
        guard case .sky(let s) = try GPSDMessage.decode(#"{"class":"SKY","hdop":2.72,"uSat":4,"satellites":[{"PRN":26,"used":true}]}"#)
        else { Issue.record("SKY"); return }
        #expect(s.hdop == 2.72 && s.uSat == 4)
        #expect(try GPSDMessage.decode(#"{"class":"GST","rms":1.0}"#) == .unknown(class: "GST"))
    }

    @Test("malformed JSON gives malformedJSON with the line number")
    func malformed() {
        let bad = ["", "not json", "[1,2]", #"{"mode":3}"#, #"{"class":3}"#, #"{"class":"TPV","mode":"three"}"#,
                   #"{"class":"TPV","lat":"north"}"#, #"{"class":"TPV""#, "{\"class\":\"TPV\",\"lat\":1e999}"]
        for (i, line) in bad.enumerated() {
            do {
                _ = try GPSDMessage.decode(line, lineNumber: i + 1)
                Issue.record("accepted: \(line)")
            } catch {
                #expect(error.code == .malformedJSON && error.line == i + 1, "\(line): \(error)")
            }
        }
    }

    @Test("every object of every .chk decodes; TPV fixes keep gpsd's values",
          .enabled(if: Fixtures.has("gpsd"), "gpsd fixtures missing (set REGIONKIT_FIXTURES)"))
    func chkFiles() throws {
        for name in Fixtures.gpsdLogs {
            let text = String(decoding: try Fixtures.bytes("gpsd/\(name).chk"), as: UTF8.self)
            var tpvs = 0, unavailable = 0
            for (i, line) in text.split(whereSeparator: \.isNewline).enumerated() where line.hasPrefix("{") {
                let message = try GPSDMessage.decode(line, lineNumber: i + 1)
                if case .tpv(let t) = message {
                    tpvs += 1
                    let f = t.locationFix(receivedAt: .zero)
                    if t.mode <= 1 || t.lat == nil { unavailable += 1; #expect(f.mode == .noFix) }
                    else { #expect(f.latitude == t.lat && f.horizontalAccuracy == t.eph, "\(name):\(i + 1)") }
                }
            }
            let oracle = GPSDOracle(chk: Data(text.utf8), log: [])
            #expect(tpvs == oracle.tpvs.count && tpvs > 0, "\(name)")
            print("CHK \(name): \(tpvs) TPVs, \(unavailable) location-unavailable")
        }
    }

    @Test("line splitter bounds memory and handles CRLF and partial lines")
    func splitter() {
        var s = LineSplitter(maximumLineLength: 16)
        s.append(Array("abc\r\nde".utf8))
        #expect(s.nextLine() == .line("abc"))
        #expect(s.nextLine() == nil)
        s.append(Array("f\n".utf8) + Array(repeating: UInt8(ascii: "x"), count: 40))
        #expect(s.nextLine() == .line("def"))
        #expect(s.nextLine() == nil)
        #expect(s.pendingByteCount <= 16)
        s.append(Array("yy\nok\n".utf8))
        #expect(s.nextLine() == .overlong(prefix: String(repeating: "x", count: 40), length: 42))
        #expect(s.nextLine() == .line("ok"))
    }

    @Test("Lines read in place across appends: empty lines, a CR at the start of the next read, a line split over three reads; the pending count is what is not a line yet")
    func splitterInPlace() {
        var s = LineSplitter(maximumLineLength: 16)
        s.append(Array("\n\n\na\r".utf8))
        #expect(s.nextLine() == .line("") && s.nextLine() == .line("") && s.nextLine() == .line(""))
        #expect(s.nextLine() == nil && s.pendingByteCount == 2)
        s.append(Array("\nbc".utf8))
        #expect(s.nextLine() == .line("a") && s.nextLine() == nil && s.pendingByteCount == 2)
        s.append(Array("d".utf8))
        s.append(Array("e\r\n\n".utf8))
        #expect(s.nextLine() == .line("bcde") && s.nextLine() == .line("") && s.nextLine() == nil && s.pendingByteCount == 0)
        // 100,000 empty lines in one read: each taken in place.
        s.append(Array(repeating: UInt8(ascii: "\n"), count: 100_000) + Array("last\n".utf8))
        var lines = 0
        while case .line(let text)? = s.nextLine() { lines += 1; if text == "last" { break } }
        #expect(lines == 100_001 && s.pendingByteCount == 0)
    }
}
