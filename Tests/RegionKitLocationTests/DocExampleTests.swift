import Foundation
import Testing
import RegionKitCore
@testable import RegionKitLocation

/// The examples in the DocC comments, executed, so the documentation cannot drift.
@Suite("DocC examples")
struct DocExampleTests {
    @Test func examples() throws {
        let result = NMEAReader.read("$GPGGA,123519,4807.038,N*00\n")
        #expect(result.diagnostics.map(\.description) == ["line 1:25: badChecksum: checksum *00 does not match computed *27"])

        let text = """
        $GPRMC,152506.00,A,5547.82126,N,02334.14117,E,0.340,,091209,,,A*79
        $GPGGA,152506.00,5547.82126,N,02334.14117,E,1,04,2.72,36.5,M,26.9,M,,*6F
        """
        let fix = NMEAReader.read(text).fixes[0]
        #expect(abs(fix.latitude - 55.797021) < 1e-9 && fix.mode == .threeD && abs(fix.horizontalAccuracy! - 51.68) < 1e-9)

        let s = try NMEASentence.parse("$GPGLL,4916.45,N,12311.12,W,225444,A,A*5C")
        #expect(s.talker == "GP" && s.type == "GLL" && s.fields == ["4916.45", "N", "12311.12", "W", "225444", "A", "A"])

        #expect(UTCCalendar.timestamp(year: 2009, month: 12, day: 9, secondsOfDay: 55505)?.seconds == 1_260_372_305)

        var splitter = LineSplitter(maximumLineLength: 1024)
        splitter.append(Array("{\"class\":\"TPV\"}\n{\"cla".utf8))
        #expect(splitter.nextLine() == .line("{\"class\":\"TPV\"}"))
        #expect(splitter.nextLine() == nil)

        let line = #"{"class":"TPV","mode":3,"time":"2009-12-09T15:25:05.000Z","lat":55.797,"lon":23.569,"eph":51.68}"#
        guard case .tpv(let tpv) = try GPSDMessage.decode(line) else { Issue.record("TPV"); return }
        #expect(tpv.locationFix(receivedAt: .zero).mode == .threeD && tpv.locationFix(receivedAt: .zero).horizontalAccuracy == 51.68)

        let gga = try NMEASentence.parse("$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47")
        guard case .gga(let g) = try NMEAMessage.decode(gga) else { Issue.record("GGA"); return }
        #expect(abs(g.latitude! - 48.1173) < 1e-12 && g.fixQuality == 1 && g.hdop == 0.9)
    }
}
