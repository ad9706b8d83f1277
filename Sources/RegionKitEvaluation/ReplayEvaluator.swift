import RegionKitConcurrency
import RegionKit
import RegionKitSimulation

/// Measures a monitoring profile's detection quality on a recording of gateway sightings, by
/// replaying it through a real `LocationManager` / `MonitoringEngine` in virtual time
/// (`ReplaySession`) with one beacon region per stream — each beacon identity bound to each
/// scanner that heard it (`UUID:MAJOR:MINOR@SCANNER`) — and the nearest-scanner policy on.
///
/// The profile is used as given except that its region limit is lifted (a four-scanner run has
/// 22 streams, Core Location's limit is 20: the limit is not what is measured) and, when it has
/// none, the default `NearestScannerPolicy` is used. From the events it computes (see
/// ``ReplayEvaluation``):
/// - false exits of the stationary beacons at their own scanner (``ReplayMetrics/falseExits(exits:lastSighting:)``),
///   and exits of carried beacons at the scanner of the room the timeline has them sitting in;
/// - exit latency for every stream end: a silence of at least ``Options/silence`` seconds, or the
///   stream's last sighting (the replay runs ``Options/tail`` seconds past the recording);
/// - flaps: exits undone by a re-entry within ``Options/flapWindow`` seconds, on every stream;
/// - room assignment: the `didChangeNearestScanner` decisions against the ground truth's periods.
///
/// ```swift
/// let recording = try GatewayRecording(path: path)
/// let result = try ReplayEvaluator(profile: .responsive).evaluate(
///     recording: recording.fileName, observations: recording.observations,
///     originMilliseconds: recording.originMilliseconds,
///     groundTruth: try GroundTruthCatalog.beaconRuns().truth(forRecording: recording.fileName))
/// print(result.falseExits?.count ?? 0, result.latency(.tenHertz).p50 ?? .nan)
/// ```
public struct ReplayEvaluator: Sendable {
    public struct Options: Hashable, Sendable {
        /// A gap between sightings at least this long (seconds) is a stream ending (and later
        /// resuming); shorter gaps are reception. It also bounds the intervals used to measure a
        /// stream's rate.
        public var silence: Double
        /// Seconds the replay runs past the last sighting, so that exits at the end can fire.
        public var tail: Double
        /// An exit followed by a re-entry of the same region within this many seconds is a flap.
        public var flapWindow: Double
        /// Seconds each ground-truth period gives up at both ends (the README's times are rough,
        /// and the scanners' clocks are not the author's).
        public var tolerance: Double
        /// Seconds before a stream end over which its longest gap is reported
        /// (``ReplayEvaluation/StreamEnd/history``).
        public var recentWindow: Double

        public init(silence: Double = 60, tail: Double = 300, flapWindow: Double = 30, tolerance: Double = 15, recentWindow: Double = 120) {
            self.silence = silence
            self.tail = tail
            self.flapWindow = flapWindow
            self.tolerance = tolerance
            self.recentWindow = recentWindow
        }
    }

    public var profile: MonitoringProfile
    public var options: Options

    public init(profile: MonitoringProfile, options: Options = Options()) {
        self.profile = profile
        self.options = options
    }

    /// The profile as replayed: no region limit, nearest scanner tracked.
    public var replayedProfile: MonitoringProfile {
        var replayed = profile
        replayed.regionLimit = nil
        replayed.nearestScanner = replayed.nearestScanner ?? NearestScannerPolicy()
        return replayed
    }

    /// Replays `observations` (times in seconds since `originMilliseconds`, any order: they are
    /// put in time order, ties keeping their order) and measures the result.
    /// - Parameter groundTruth: the README's facts for this recording; without them, false exits
    ///   and room assignment are not measured (`nil` in the result).
    public func evaluate(recording name: String, observations: [BeaconObservation], originMilliseconds: Int64,
                         groundTruth: BeaconRunGroundTruth?) throws -> ReplayEvaluation {
        let ordered = observations.enumerated()
            .sorted { ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset) }
            .map(\.element)
        let streams = SightingStream.group(ordered)
        let start = ordered.first?.timestamp.seconds ?? 0
        let end = ordered.last?.timestamp.seconds ?? 0
        var notes: [String] = []

        // Replay: one region per stream, registered at t = 0.
        let regions = try streams.map { stream in
            Region.beacon(try BeaconRegion(identifier: stream.key.description, constraint: BeaconIdentityConstraint(exactly: stream.key.identity),
                                           scannerID: stream.key.scannerID))
        }
        let collected = LockedBox<[LocationEvent]>([])
        let session = ReplaySession(profile: replayedProfile, regions: regions) { event in
            collected.withLock { $0.append(event) }
        }
        for observation in ordered { session.feed(observation) }
        session.finish(tail: options.tail)
        let events = collected.withLock { $0 }

        var exits: [String: [Double]] = [:]
        var entries: [String: [Double]] = [:]
        var decisions: [BeaconIdentity: [ReplayMetrics.RoomDecision]] = [:]
        for event in events {
            switch event.kind {
            case .didExitRegion(let region): exits[region.identifier, default: []].append(event.timestamp.seconds)
            case .didEnterRegion(let region): entries[region.identifier, default: []].append(event.timestamp.seconds)
            case .didChangeNearestScanner(let identity, let scanner?, _):
                decisions[identity, default: []].append(ReplayMetrics.RoomDecision(time: event.timestamp.seconds, room: scanner))
            case .monitoringDidFail(let region, let error):
                notes.append("region \(region.identifier) could not be monitored: \(error.message)")
            default: break
            }
        }

        // Streams, their ends and their flaps.
        var summaries: [ReplayEvaluation.Stream] = []
        var ends: [ReplayEvaluation.StreamEnd] = []
        var flaps: [ReplayEvaluation.Flap] = []
        for stream in streams {
            let id = stream.key.description
            let rateClass = stream.rateClass(silence: options.silence)
            summaries.append(ReplayEvaluation.Stream(key: stream.key, sightings: stream.times.count, first: stream.first, last: stream.last,
                                                     rate: stream.receptionRate(below: options.silence), medianInterval: stream.medianInterval,
                                                     rateClass: rateClass))
            for silence in stream.silences(atLeast: options.silence) {
                ends.append(ReplayEvaluation.StreamEnd(
                    key: stream.key, rateClass: rateClass, lastSighting: silence.lastSighting, resumed: silence.resumed,
                    exit: ReplayMetrics.exit(during: silence, exits: exits[id] ?? []),
                    endOfRecording: silence.resumed == nil && end - silence.lastSighting < options.silence,
                    history: stream.history(before: silence.lastSighting, silence: options.silence, window: options.recentWindow)))
            }
            let regionEntries = entries[id] ?? []
            for exit in ReplayMetrics.flaps(exits: exits[id] ?? [], entries: regionEntries, window: options.flapWindow) {
                let reentry = regionEntries.filter { $0 >= exit }.min() ?? exit
                flaps.append(ReplayEvaluation.Flap(key: stream.key, rateClass: rateClass, exit: exit, reentry: reentry))
            }
        }

        // False exits of the beacons that never moved.
        var falseExits: ReplayEvaluation.FalseExits?
        if let truth = groundTruth, !truth.stationary.isEmpty {
            var found = ReplayEvaluation.FalseExits(events: [], beaconHours: 0, streams: 0)
            for beacon in truth.stationary {
                let key = SightingStream.Key(identity: beacon.identity, scannerID: beacon.scannerID)
                guard let stream = streams.first(where: { $0.key == key }) else {
                    notes.append("stationary beacon \(key) is never heard by its scanner in this recording")
                    continue
                }
                found.streams += 1
                found.beaconHours += (stream.last - stream.first) / 3600
                found.hoursByStream[key, default: 0] += (stream.last - stream.first) / 3600
                found.events += ReplayMetrics.falseExits(exits: exits[key.description] ?? [], lastSighting: stream.last)
                    .map { ReplayEvaluation.FalseExit(key: key, time: $0) }
            }
            falseExits = found
        }

        // Exits of carried beacons while the timeline has them sitting in a scanner's room.
        var stayExits: ReplayEvaluation.FalseExits?
        if let truth = groundTruth, !truth.labels.isEmpty {
            var found = ReplayEvaluation.FalseExits(events: [], beaconHours: 0, streams: 0)
            for label in truth.labels {
                let period = label.period.onRecordingClock(originMilliseconds: originMilliseconds)
                guard let room = period.room else { continue }
                let from = max(start, (period.start ?? start) + options.tolerance)
                let until = min(end, (period.end ?? end) - options.tolerance)
                guard until > from else { continue }
                let key = SightingStream.Key(identity: label.identity, scannerID: room)
                found.streams += 1
                found.beaconHours += (until - from) / 3600
                found.hoursByStream[key, default: 0] += (until - from) / 3600
                found.events += (exits[key.description] ?? []).filter { $0 >= from && $0 <= until }
                    .map { ReplayEvaluation.FalseExit(key: key, time: $0) }
            }
            stayExits = found
        }

        // Room assignment against the timeline.
        var carriedRooms: ReplayEvaluation.RoomAssignment?
        var stationaryRooms: ReplayEvaluation.RoomAssignment?
        if let truth = groundTruth {
            let periods = truth.roomPeriods(originMilliseconds: originMilliseconds, duration: end)
            let carried = Set(truth.carried)
            var carriedScores: [BeaconIdentity: ReplayMetrics.RoomScore] = [:]
            var stationaryScores: [BeaconIdentity: ReplayMetrics.RoomScore] = [:]
            for (identity, labelled) in periods {
                let score = ReplayMetrics.roomScore(decisions: decisions[identity] ?? [], periods: labelled,
                                                    tolerance: options.tolerance, within: start...max(start, end))
                if carried.contains(identity) { carriedScores[identity] = score } else { stationaryScores[identity] = score }
            }
            if !truth.labels.isEmpty { carriedRooms = ReplayEvaluation.RoomAssignment(beacons: carriedScores) }
            if !truth.stationary.isEmpty { stationaryRooms = ReplayEvaluation.RoomAssignment(beacons: stationaryScores) }
            notes += truth.notScored
        } else {
            notes.append("\(name): no ground truth (not described by the beacon-runs README): false exits and room assignment not measured")
        }

        return ReplayEvaluation(recording: name, profile: profile.name, options: options, sightings: ordered.count, duration: end - start,
                                streams: summaries, falseExits: falseExits, stayExits: stayExits, ends: ends, flaps: flaps,
                                carriedRooms: carriedRooms, stationaryRooms: stationaryRooms, notes: notes)
    }
}
