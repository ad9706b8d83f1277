import Foundation
import RegionKit

/// What really happened during one gateway recording: which beacons never moved and where they
/// sat, and the rooms the carried beacons were in, with times. The README of the shared recordings
/// (shared/fixtures/beacon-runs) is transcribed as data in ``GroundTruthCatalog/beaconRuns()``
/// (loaded by ``GroundTruthCatalog``); a recording of your own gets its own file or value.
///
/// The README's times are rough wall-clock times (PST, UTC−8) when the author left and came back
/// to the computer: between the two the beacon was being carried, so that stretch is marked
/// unknown/transition (`room == nil`) and is not scored, and every scored period gives up a
/// tolerance at each end (``ReplayEvaluator/Options/tolerance``). Each row quotes the README
/// sentence it comes from; what the README tells without times is listed in ``notScored``.
///
/// ```swift
/// let truth = try GroundTruthCatalog.beaconRuns().truth(forRecording: "FourScannersRun1-2015-03-07.json.gz")
/// truth?.stationary.count   // 4: the heartbeat beacon on each scanner
/// truth?.carried.count      // 6 carried beacons, each with rooms and transitions in `labels`
/// ```
public struct BeaconRunGroundTruth: Hashable, Sendable {
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

    /// Where a carried beacon was during `period` (Unix epoch seconds; `room == nil` while it was
    /// being carried).
    public struct Label: Hashable, Sendable {
        public var identity: BeaconIdentity
        public var period: RoomPeriod
        /// The README sentence this row comes from.
        public var readme: String

        public init(identity: BeaconIdentity, period: RoomPeriod, readme: String) {
            self.identity = identity
            self.period = period
            self.readme = readme
        }
    }

    /// The recording's file name as in shared/fixtures/beacon-runs.
    public var fileName: String
    public var stationary: [StationaryBeacon]
    /// The carried beacons' timelines, in order per beacon.
    public var labels: [Label]
    /// What the README tells that could not honestly be made into scored ground truth, and why.
    public var notScored: [String]

    public init(fileName: String, stationary: [StationaryBeacon], labels: [Label], notScored: [String] = []) {
        self.fileName = fileName
        self.stationary = stationary
        self.labels = labels
        self.notScored = notScored
    }

    /// The beacons with a room timeline (not stationary).
    public var carried: [BeaconIdentity] {
        var seen: [BeaconIdentity] = []
        for label in labels where !seen.contains(label.identity) { seen.append(label.identity) }
        return seen
    }

    /// The labelled periods of every beacon on the recording's clock (seconds since
    /// `originMilliseconds`), transitions left out: stationary beacons are in their scanner's room
    /// for the whole recording (`0...duration`), and an open end is the recording's start or end.
    public func roomPeriods(originMilliseconds: Int64, duration: Double) -> [BeaconIdentity: [RoomPeriod]] {
        var result: [BeaconIdentity: [RoomPeriod]] = [:]
        for beacon in stationary {
            result[beacon.identity, default: []].append(RoomPeriod(start: 0, end: duration, room: beacon.scannerID))
        }
        for label in labels where label.period.room != nil {
            let period = label.period.onRecordingClock(originMilliseconds: originMilliseconds)
            result[label.identity, default: []].append(RoomPeriod(start: period.start ?? 0, end: period.end ?? duration, room: period.room))
        }
        return result
    }

    /// Whether this describes the recording `fileName` (`.json` or `.json.gz`, any folder; the
    /// README's `#` in names is ignored).
    public func describes(recording fileName: String) -> Bool {
        func stem(_ name: String) -> String {
            var name = String(name.split(separator: "/").last ?? Substring(name)).replacingOccurrences(of: "#", with: "")
            if name.hasSuffix(".gz") { name.removeLast(3) }
            if name.hasSuffix(".json") { name.removeLast(5) }
            return name
        }
        return stem(self.fileName) == stem(fileName)
    }
}
