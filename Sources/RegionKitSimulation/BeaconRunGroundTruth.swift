import Foundation
import RegionKit

/// What the README of the gateway recordings (shared/fixtures/beacon-runs/README.md, from the
/// RaspberryPiBeaconParser project) says really happened, transcribed into a table: which beacons
/// never moved and where they sat, and the rooms the carried beacons were in, with times.
///
/// The README's times are rough wall-clock times (PST, UTC−8) when the author left and came back
/// to the computer: between the two the beacon was being carried, so that stretch is marked
/// unknown/transition (`room == nil`) and is not scored, and every scored period gives up a
/// tolerance at each end (``ReplayEvaluator/Options/tolerance``). Each row quotes the README
/// sentence it comes from; what the README tells without times is listed in ``notScored``.
///
/// ```swift
/// let truth = BeaconRunGroundTruth.forRecording(named: "FourScannersRun1-2015-03-07.json.gz")!
/// truth.stationary.count   // 4: the heartbeat beacon on each scanner
/// truth.periods.count      // 6 carried beacons × (rooms and transitions)
/// ```
public struct BeaconRunGroundTruth: Sendable {
    /// A beacon that sat still for the whole run; its own scanner is the one it sat on (or in
    /// whose room it stayed). Any exit of it at that scanner before the scanner stopped is false.
    public struct StationaryBeacon: Hashable, Sendable {
        public var identity: BeaconIdentity
        public var scannerID: String
        /// The README sentence this row comes from.
        public var readme: String

        public init(identity: BeaconIdentity, scannerID: String, readme: String) {
            self.identity = identity
            self.scannerID = scannerID
            self.readme = readme
        }
    }

    /// Where a carried beacon was from `start` to `end` (Unix epoch milliseconds; `nil` = the
    /// recording's own start or end). `room` is a scanner ID, or `nil` while being carried.
    public struct Period: Hashable, Sendable {
        public var identity: BeaconIdentity
        public var start: Int64?
        public var end: Int64?
        public var room: String?
        /// The README sentence this row comes from.
        public var readme: String

        public init(identity: BeaconIdentity, start: Int64?, end: Int64?, room: String?, readme: String) {
            self.identity = identity
            self.start = start
            self.end = end
            self.room = room
            self.readme = readme
        }
    }

    /// The recording's file name as in shared/fixtures/beacon-runs.
    public var fileName: String
    public var stationary: [StationaryBeacon]
    public var periods: [Period]
    /// What the README tells that could not honestly be made into scored ground truth, and why.
    public var notScored: [String]

    /// Ground truth for a recording of your own (the checked-in ones are in ``all``).
    public init(fileName: String, stationary: [StationaryBeacon], periods: [Period], notScored: [String] = []) {
        self.fileName = fileName
        self.stationary = stationary
        self.periods = periods
        self.notScored = notScored
    }

    /// The beacons with a room timeline (not stationary).
    public var carried: [BeaconIdentity] {
        var seen: [BeaconIdentity] = []
        for period in periods where !seen.contains(period.identity) { seen.append(period.identity) }
        return seen
    }

    /// The labelled periods of every beacon on the recording's clock (seconds since
    /// `originMilliseconds`), transitions left out: stationary beacons are in their scanner's room
    /// for the whole recording (`0...duration`).
    public func roomPeriods(originMilliseconds: Int64, duration: Double) -> [BeaconIdentity: [ReplayMetrics.RoomPeriod]] {
        var result: [BeaconIdentity: [ReplayMetrics.RoomPeriod]] = [:]
        for beacon in stationary {
            result[beacon.identity, default: []].append(ReplayMetrics.RoomPeriod(start: 0, end: duration, room: beacon.scannerID))
        }
        for period in periods {
            guard let room = period.room else { continue }
            let start = period.start.map { Double($0 - originMilliseconds) / 1000 } ?? 0
            let end = period.end.map { Double($0 - originMilliseconds) / 1000 } ?? duration
            result[period.identity, default: []].append(ReplayMetrics.RoomPeriod(start: start, end: end, room: room))
        }
        return result
    }

    /// The ground truth for a recording, by file name (`.json` or `.json.gz`; the README's
    /// `#` in names is ignored), `nil` for a recording the README does not describe.
    public static func forRecording(named fileName: String) -> BeaconRunGroundTruth? {
        func stem(_ name: String) -> String {
            var name = name.replacingOccurrences(of: "#", with: "")
            if name.hasSuffix(".gz") { name.removeLast(3) }
            if name.hasSuffix(".json") { name.removeLast(5) }
            return name
        }
        let wanted = stem(String(fileName.split(separator: "/").last ?? Substring(fileName)))
        return all.first { stem($0.fileName) == wanted }
    }

    /// Every recording described.
    public static let all: [BeaconRunGroundTruth] = [twoScanners, fourScanners, fourScannersBeacon5]

    // MARK: - The table

    static let movers = UUID(uuidString: "DAF246CE-8363-11E4-B116-123B93F75CBA")!

    static func beacon(_ major: UInt16, _ minor: UInt16) -> BeaconIdentity {
        BeaconIdentity(uuid: movers, major: major, minor: minor)
    }

    /// The beacon on scanner RoomRR in the four-scanner runs: UUID DAF246CEF[RRR]11E4B116123B93F75CBA, major RRR.
    static func heartbeat(_ room: UInt16) -> BeaconIdentity {
        BeaconIdentity(uuid: UUID(uuidString: "DAF246CE-F\(room)-11E4-B116-123B93F75CBA")!, major: room, minor: 20)
    }

    /// TwoScannersRun#1-2015-03-03: "beginning at around Tue Mar 3 13:16:10 PST 2015 and ending
    /// around Tue Mar 3 13:42:30 PST 2015". Beacon N is identified by its minor (all share one UUID).
    static let twoScanners = BeaconRunGroundTruth(
        fileName: "TwoScannersRun1-2015-03-03.json.gz",
        stationary: [
            StationaryBeacon(identity: beacon(18, 2), scannerID: "Room201",
                             readme: "Beacon 2 {DAF246CE836311E4B116123B93F75CBA,18,2} remained in Room201 and thus closest to that scanner the entire time."),
            StationaryBeacon(identity: beacon(0, 3), scannerID: "Room201",
                             readme: "Beacon 3 {DAF246CE836311E4B116123B93F75CBA,0,3} was situated on top of the Room201 scanner the entire time."),
            StationaryBeacon(identity: beacon(1, 4), scannerID: "Room202",
                             readme: "Beacon 4 {DAF246CE836311E4B116123B93F75CBA,1,4} was situated on top of the Room202 scanner the entire time."),
        ],
        periods: [],
        notScored: [
            "beacon 1 {14,1}: \"It first started nearest to Room201, then travels between Room201 and Room202, then into Room202 where it sat for a couple of minutes. It travels around the two rooms and away from them until it returns walking first past Room202 and ending up in Room201 until the data ends.\" The README gives no times for these moves, so its room timeline is not scored (only its exits and flaps are measured).",
        ]
    )

    /// FourScannersRun#1-2015-03-07. The README says the carried beacons have "a major value equal
    /// to the beacon number (1,2,5,6,7,8)", but the file's counts show the beacon number is the
    /// minor (major 14 = minor 1: 3212 sightings, major 18 = minor 2: 4225, major 1 = minors 5–8),
    /// as in the later runs ("a minor value equal to the beacon number"). "The first time is roughly
    /// when the event begins, and the time after the description is roughly when it ends."
    static let fourScanners: BeaconRunGroundTruth = {
        let day = "2015-03-07"
        func t(_ time: String) -> Int64 { wallClock("\(day) \(time)", utcOffsetHours: -8) }
        let start = "Sat Mar  7 11:46:11 PST 2015: All beacons start in 201"
        let stop = "Sat Mar  7 11:58:43 PST 2015: all scanners stopped"
        let move12 = "Sat Mar  7 11:46:26 PST 2015: 1 and 2 go to 204; Sat Mar  7 11:47:24 PST 2015"
        let move56 = "Sat Mar  7 11:48:23 PST 2015: 5 and 6 go to 202; Sat Mar  7 11:49:40 PST 2015"
        let move78 = "Sat Mar  7 11:50:05 PST 2015: 7 and 8 go to 203; Sat Mar  7 11:51:32 PST 2015"
        let move15 = "Sat Mar  7 11:52:16 PST 2015: 1 goes from 204 to 202 to meet 5, then both return to 201; Sat Mar  7 11:53:39 PST 2015"
        let move2 = "Sat Mar  7 11:54:48 PST 2015: 2 returns to 201; Sat Mar  7 11:55:45 PST 2015"
        let move7 = "Sat Mar  7 11:55:53 PST 2015: 7 returns to 201; Sat Mar  7 11:56:54 PST 2015"
        let move68 = "Sat Mar  7 11:57:06 PST 2015: 6 goes to 203 to meet 8, then both return to 201; Sat Mar  7 11:58:20 PST 2015"
        /// Consecutive periods of one beacon: a room, then alternately a transition and a room.
        func timeline(_ identity: BeaconIdentity, _ steps: [(from: String, to: String, room: String?, readme: String)]) -> [Period] {
            steps.map { Period(identity: identity, start: t($0.from), end: t($0.to), room: $0.room, readme: $0.readme) }
        }
        let stationaryText = "Each scanner has a beacon next to it that has a uuid of the form DAF246CEFRRR11E4B116123B93F75CBA where RRR is the room number. These beacons have a major value equal to the room number"
        return BeaconRunGroundTruth(
            fileName: "FourScannersRun1-2015-03-07.json.gz",
            stationary: [201, 202, 203, 204].map { StationaryBeacon(identity: heartbeat($0), scannerID: "Room\($0)", readme: stationaryText) },
            periods: timeline(beacon(14, 1), [
                ("11:46:11", "11:46:26", "Room201", start), ("11:46:26", "11:47:24", nil, move12),
                ("11:47:24", "11:52:16", "Room204", move12), ("11:52:16", "11:53:39", nil, move15),
                ("11:53:39", "11:58:43", "Room201", move15 + " / " + stop),
            ]) + timeline(beacon(18, 2), [
                ("11:46:11", "11:46:26", "Room201", start), ("11:46:26", "11:47:24", nil, move12),
                ("11:47:24", "11:54:48", "Room204", move12), ("11:54:48", "11:55:45", nil, move2),
                ("11:55:45", "11:58:43", "Room201", move2 + " / " + stop),
            ]) + timeline(beacon(1, 5), [
                ("11:46:11", "11:48:23", "Room201", start), ("11:48:23", "11:49:40", nil, move56),
                ("11:49:40", "11:52:16", "Room202", move56), ("11:52:16", "11:53:39", nil, move15),
                ("11:53:39", "11:58:43", "Room201", move15 + " / " + stop),
            ]) + timeline(beacon(1, 6), [
                ("11:46:11", "11:48:23", "Room201", start), ("11:48:23", "11:49:40", nil, move56),
                ("11:49:40", "11:57:06", "Room202", move56), ("11:57:06", "11:58:20", nil, move68),
                ("11:58:20", "11:58:43", "Room201", move68 + " / " + stop),
            ]) + timeline(beacon(1, 7), [
                ("11:46:11", "11:50:05", "Room201", start), ("11:50:05", "11:51:32", nil, move78),
                ("11:51:32", "11:55:53", "Room203", move78), ("11:55:53", "11:56:54", nil, move7),
                ("11:56:54", "11:58:43", "Room201", move7 + " / " + stop),
            ]) + timeline(beacon(1, 8), [
                ("11:46:11", "11:50:05", "Room201", start), ("11:50:05", "11:51:32", nil, move78),
                ("11:51:32", "11:57:06", "Room203", move78), ("11:57:06", "11:58:20", nil, move68),
                ("11:58:20", "11:58:43", "Room201", move68 + " / " + stop),
            ]),
            notScored: [
                "\"1 goes from 204 to 202 to meet 5\": how long beacon 1 was in 202 is not told, so the whole trip (11:52:16–11:53:39) is a transition; the same for beacon 6's visit to 203 (11:57:06–11:58:20).",
            ]
        )
    }()

    /// FourScannersBeacon5Run1-2015-03-13: "A test run of beacon with minor id 5 that walks between
    /// the room 1-4 scanners." No times, no order of rooms, no stationary beacon.
    static let fourScannersBeacon5 = BeaconRunGroundTruth(
        fileName: "FourScannersBeacon5Run1-2015-03-13.json.gz",
        stationary: [],
        periods: [],
        notScored: [
            "\"A test run of beacon with minor id 5 that walks between the room 1-4 scanners.\": no times and no order of the rooms, so neither room assignment nor false exits can be scored (only exits and flaps are measured).",
        ]
    )

    /// Unix epoch milliseconds of a local wall-clock time `yyyy-MM-dd HH:mm:ss` at a fixed UTC
    /// offset (PST = −8). The table is checked in, so a malformed time is a programming error.
    public static func wallClock(_ text: String, utcOffsetHours: Int) -> Int64 {
        let fields = text.split(whereSeparator: { !$0.isNumber }).compactMap { Int64($0) }
        precondition(fields.count == 6, "wall-clock time '\(text)' is not yyyy-MM-dd HH:mm:ss")
        let (year, month, day) = (fields[0], fields[1], fields[2])
        // Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + fields[3] * 3_600 + fields[4] * 60 + fields[5] - Int64(utcOffsetHours) * 3_600
        return seconds * 1_000
    }
}
