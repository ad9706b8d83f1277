import RegionKit

/// The detection quality of one profile on one recording, as measured by ``ReplayEvaluator``:
/// false exits of beacons that never moved, exit latency when a stream ends, flaps, and room
/// assignment against the README's timeline. Times are seconds on the recording's clock.
///
/// ```swift
/// let result = try ReplayEvaluator(profile: .responsive).evaluate(recording: "run.json.gz", observations: observations,
///                                                                 originMilliseconds: origin, groundTruth: truth)
/// result.falseExits?.count                        // 0
/// result.latency(.tenHertz).p95                    // seconds from last sighting to didExitRegion
/// result.carriedRooms?.total.fraction              // share of scored time in the right room
/// ```
public struct ReplayEvaluation: Sendable {
    /// One beacon × scanner stream and its measured rate.
    public struct Stream: Hashable, Sendable {
        public var key: SightingStream.Key
        public var sightings: Int
        public var first: Double
        public var last: Double
        /// Sightings per second while heard (see ``SightingStream/receptionRate(below:)``).
        public var rate: Double
        public var medianInterval: Double?
        public var rateClass: StreamRateClass
    }

    /// A stream that stopped (a silence of at least the evaluator's `silence`, or its last sighting).
    public struct StreamEnd: Hashable, Sendable {
        public var key: SightingStream.Key
        public var rateClass: StreamRateClass
        public var lastSighting: Double
        /// When it was heard again (`nil`: never, before the recording ended).
        public var resumed: Double?
        /// The first `didExitRegion` of its region during the silence (`nil`: none, a miss).
        public var exit: Double?
        /// Whether this is the stream's last sighting and it came within `silence` seconds of the
        /// recording's end: the scanners stopped, not necessarily the beacon.
        public var endOfRecording: Bool
        /// What the stream had shown before this end (``SightingStream/history(before:silence:window:)``,
        /// the window being the evaluator's ``ReplayEvaluator/Options/recentWindow``): how long it had
        /// been heard, and the longest gap it was heard again after, recently — a latency shorter
        /// than that gap would have meant an exit during it.
        public var history: SightingStream.History

        /// Seconds from the last sighting to the exit.
        public var latency: Double? { exit.map { $0 - lastSighting } }
        /// How long the stream had been heard without a long silence when it ended, seconds.
        public var age: Double { lastSighting - history.heardSince }
    }

    /// An exit of a stationary beacon at its own scanner before that scanner's last sighting of it.
    public struct FalseExit: Hashable, Sendable {
        public var key: SightingStream.Key
        public var time: Double
    }

    public struct FalseExits: Hashable, Sendable {
        public var events: [FalseExit]
        /// Σ over stationary streams of (last − first sighting), hours.
        public var beaconHours: Double
        /// Stationary streams heard (a stationary beacon never heard at its scanner adds none).
        public var streams: Int
        /// Hours observed per stream (stationary stream, or the stream of a stay's beacon at its room's scanner).
        public var hoursByStream: [SightingStream.Key: Double] = [:]

        public var count: Int { events.count }
        /// False exits per 1000 beacon-hours, `nil` without observed hours.
        public var perThousandBeaconHours: Double? { beaconHours > 0 ? Double(count) / beaconHours * 1000 : nil }
    }

    /// Latency summary of the stream ends of one rate class.
    public struct Latency: Hashable, Sendable {
        /// Stream ends in the class.
        public var ends: Int
        /// Ends during which the region never exited.
        public var missed: Int
        public var p50: Double?
        public var p95: Double?
        public var max: Double?
    }

    /// An exit undone by a re-entry within the evaluator's flap window.
    public struct Flap: Hashable, Sendable {
        public var key: SightingStream.Key
        public var rateClass: StreamRateClass
        public var exit: Double
        public var reentry: Double
    }

    /// Room assignment scores, per beacon and in total.
    public struct RoomAssignment: Hashable, Sendable {
        public var beacons: [BeaconIdentity: ReplayMetrics.RoomScore]
        public var total: ReplayMetrics.RoomScore {
            beacons.values.reduce(ReplayMetrics.RoomScore(), +)
        }
    }

    /// The recording's name (file name).
    public var recording: String
    /// The profile's name.
    public var profile: String
    public var options: ReplayEvaluator.Options
    public var sightings: Int
    /// Seconds from the first to the last sighting.
    public var duration: Double
    public var streams: [Stream]
    /// `nil` when the ground truth names no stationary beacon for this recording.
    public var falseExits: FalseExits?
    /// Exits of carried beacons at the scanner of the room the timeline has them sitting in
    /// (each stay minus the tolerance at both ends); `streams` counts the stays scored and
    /// `beaconHours` their length. `nil` without a timeline.
    public var stayExits: FalseExits?
    public var ends: [StreamEnd]
    public var flaps: [Flap]
    /// Carried beacons against the README's timeline; `nil` without a timeline.
    public var carriedRooms: RoomAssignment?
    /// Stationary beacons: the whole run in their scanner's room; `nil` without stationary beacons.
    public var stationaryRooms: RoomAssignment?
    /// What could not be measured, and anything odd met on the way.
    public var notes: [String]

    /// Exit latency over the stream ends of one rate class.
    public func latency(_ rateClass: StreamRateClass) -> Latency {
        let ends = ends.filter { $0.rateClass == rateClass }
        let latencies = ends.compactMap(\.latency)
        return Latency(ends: ends.count, missed: ends.count - latencies.count,
                       p50: ReplayMetrics.percentile(latencies, 0.5), p95: ReplayMetrics.percentile(latencies, 0.95), max: latencies.max())
    }

    /// Flaps of the streams of one rate class.
    public func flapCount(_ rateClass: StreamRateClass) -> Int {
        flaps.filter { $0.rateClass == rateClass }.count
    }

    /// Streams of one rate class.
    public func streamCount(_ rateClass: StreamRateClass) -> Int {
        streams.filter { $0.rateClass == rateClass }.count
    }
}
