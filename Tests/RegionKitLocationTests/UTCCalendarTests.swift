import Foundation
import Testing
@testable import RegionKitLocation

@Suite("UTC calendar")
struct UTCCalendarTests {
    @Test("ISO 8601 parsing and formatting")
    func iso() {
        #expect(UTCCalendar.parseISO8601("1970-01-01T00:00:00Z")?.seconds == 0)
        #expect(UTCCalendar.parseISO8601("2009-12-09T15:25:05.500Z")?.seconds == 1_260_372_305.5)
        #expect(UTCCalendar.parseISO8601("2009-12-09T17:25:05+02:00")?.seconds == 1_260_372_305)
        #expect(UTCCalendar.parseISO8601("2000-02-29T00:00:00Z") != nil)
        for bad in ["", "2001-02-29T00:00:00Z", "2009-12-09", "2009-12-09T25:00:00Z", "2009-12-09T15:25:05.Z", "x2009-12-09T15:25:05Z"] {
            #expect(UTCCalendar.parseISO8601(bad) == nil, "\(bad)")
        }
        #expect(UTCCalendar.formatISO8601(.init(seconds: 1_260_372_305.5)) == "2009-12-09T15:25:05.500Z")
        #expect(UTCCalendar.formatISO8601(.init(seconds: -2_147_483_648)) == "1901-12-13T20:45:52.000Z")
    }
}
