import Testing
@testable import RegionKitHTTP

/// ``ScannerReport/merged(_:)``: a cluster member's partitions each know part of what a scanner
/// hears (its beacons hash to any partition); `GET /v1/scanners` answers one line per scanner.
@Suite("Scanner reports: one per scanner across a member's partitions")
struct ScannerReportTests {
    static func report(_ name: String, _ status: String = ScannerReport.online, offlineSince: Double? = nil, lastHeard: Double?,
                       rate: Double = 0, inRoom: Int = 0) -> ScannerReport {
        ScannerReport(name: name, status: status, offlineSince: offlineSince, lastHeard: lastHeard, sightingsPerSecond: rate,
                      beaconsInRoom: inRoom)
    }

    @Test("Per name: the latest sighting, the sums of rates and rooms; offline when any partition knows it, since the earliest, unless a sighting came after it")
    func merged() {
        let first = [Self.report("hall", lastHeard: 100, rate: 2, inRoom: 3),
                     Self.report("kitchen", ScannerReport.offline, offlineSince: 90, lastHeard: 80, rate: 0.5, inRoom: 1)]
        let second = [Self.report("hall", lastHeard: 104, rate: 1, inRoom: 2),
                      Self.report("kitchen", ScannerReport.offline, offlineSince: 95, lastHeard: 85),
                      Self.report("porch", ScannerReport.offline, offlineSince: 70, lastHeard: nil)]
        let third = [Self.report("kitchen", lastHeard: 60, rate: 0.25)]   // a partition that has not read the status yet
        #expect(ScannerReport.merged([first, second, third]) == [
            Self.report("hall", lastHeard: 104, rate: 3, inRoom: 5),
            Self.report("kitchen", ScannerReport.offline, offlineSince: 90, lastHeard: 85, rate: 0.75, inRoom: 1),
            Self.report("porch", ScannerReport.offline, offlineSince: 70, lastHeard: nil),
        ])
        #expect(ScannerReport.merged([third, second, first]) == ScannerReport.merged([first, second, third]), "whatever the partitions' order")
        // Back by a sighting one partition heard after the word: online (the others still say offline).
        let back = [Self.report("kitchen", lastHeard: 99, rate: 1)]
        #expect(ScannerReport.merged([first, second, back]).first { $0.name == "kitchen" }
                == Self.report("kitchen", lastHeard: 99, rate: 1.5, inRoom: 1))
    }

    @Test("Most recently heard first; those never heard after them, by name")
    func order() {
        let reports = [Self.report("b", lastHeard: nil), Self.report("x", lastHeard: 5), Self.report("a", lastHeard: nil),
                       Self.report("y", lastHeard: 9), Self.report("c", lastHeard: 5)]
        #expect(ScannerReport.sorted(reports).map(\.name) == ["y", "c", "x", "a", "b"])
    }
}
