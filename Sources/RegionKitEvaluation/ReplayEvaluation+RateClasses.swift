import RegionKit

extension ReplayEvaluation {
    /// The exit figures of the streams of one ``StreamRateClass`` (≈10 Hz, ≈1 Hz, sparse ≈0.2 Hz):
    /// false exits of stationary beacons and exits during the README's stays, each with its
    /// observed hours, exit latency over the class's stream ends, and flaps. Figures of several
    /// recordings merge into one (``merge(_:)``), so `eval replay` can report each class over all
    /// recordings.
    ///
    /// ```swift
    /// var total = ReplayEvaluation.ClassFigures(rateClass: .tenHertz)
    /// for result in results { total.merge(result.figures(.tenHertz)) }
    /// total.falseExits; total.p95 // count; seconds
    /// ```
    public struct ClassFigures: Hashable, Sendable {
        public var rateClass: StreamRateClass
        public var streams = 0
        /// Stationary streams of this class and their hours.
        public var stationaryStreams = 0
        public var stationaryHours = 0.0
        /// False exits of those streams.
        public var falseExits = 0
        /// Streams (beacon at its room's scanner) with README stays, of this class; the stays' hours and exits.
        public var stays = 0
        public var stayHours = 0.0
        public var stayExits = 0
        /// Stream ends, those without an exit, and the latencies of the others (seconds, unsorted).
        public var ends = 0
        public var missed = 0
        public var latencies: [Double] = []
        /// The latencies of the ends that are not the recording's end (``StreamEnd/endOfRecording``):
        /// the stream stopped while its scanner went on. At the recording's end every stream of a
        /// scanner stops at once, which a detector that excuses a scanner's shared silences
        /// (`ExitDetector.periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)`)
        /// rightly takes for a blackout first.
        public var departureLatencies: [Double] = []
        /// For the same ends (with or without an exit), the longest gap each stream was heard again
        /// after in the recent window before it ended (``ReplayEvaluation/StreamEnd/history``): a
        /// rough floor of the latency of a detector that does not flap (see
        /// ``SightingStream/history(before:silence:window:)`` for when it is not one).
        public var departureRecentGaps: [Double] = []
        public var flaps = 0

        public init(rateClass: StreamRateClass) {
            self.rateClass = rateClass
        }

        public var p50: Double? { ReplayMetrics.percentile(latencies, 0.5) }
        public var p95: Double? { ReplayMetrics.percentile(latencies, 0.95) }
        public var max: Double? { latencies.max() }
        /// p50 and p95 of ``departureLatencies``.
        public var departureP50: Double? { ReplayMetrics.percentile(departureLatencies, 0.5) }
        public var departureP95: Double? { ReplayMetrics.percentile(departureLatencies, 0.95) }
        /// p50 and p95 of ``departureRecentGaps``.
        public var recentGapP50: Double? { ReplayMetrics.percentile(departureRecentGaps, 0.5) }
        public var recentGapP95: Double? { ReplayMetrics.percentile(departureRecentGaps, 0.95) }
        /// False exits per 1000 stationary beacon-hours (`nil` without hours).
        public var falseExitsPerThousandHours: Double? { stationaryHours > 0 ? Double(falseExits) / stationaryHours * 1000 : nil }
        /// Exits during stays per 1000 stay-hours (`nil` without hours).
        public var stayExitsPerThousandHours: Double? { stayHours > 0 ? Double(stayExits) / stayHours * 1000 : nil }

        /// Adds another recording's figures of the same class.
        public mutating func merge(_ other: ClassFigures) {
            streams += other.streams
            stationaryStreams += other.stationaryStreams
            stationaryHours += other.stationaryHours
            falseExits += other.falseExits
            stays += other.stays
            stayHours += other.stayHours
            stayExits += other.stayExits
            ends += other.ends
            missed += other.missed
            latencies += other.latencies
            departureLatencies += other.departureLatencies
            departureRecentGaps += other.departureRecentGaps
            flaps += other.flaps
        }
    }

    /// The class of each stream of this recording.
    public var rateClasses: [SightingStream.Key: StreamRateClass] {
        Dictionary(streams.map { ($0.key, $0.rateClass) }, uniquingKeysWith: { first, _ in first })
    }

    /// This recording's exit figures for the streams of `rateClass`. A stay whose beacon was never
    /// heard by its room's scanner has no stream and so no class: it is in no class's figures.
    public func figures(_ rateClass: StreamRateClass) -> ClassFigures {
        let classes = rateClasses
        var figures = ClassFigures(rateClass: rateClass)
        figures.streams = streamCount(rateClass)
        if let falseExits {
            let keys = falseExits.hoursByStream.filter { classes[$0.key] == rateClass }
            figures.stationaryStreams = keys.count
            figures.stationaryHours = keys.values.reduce(0, +)
            figures.falseExits = falseExits.events.filter { classes[$0.key] == rateClass }.count
        }
        if let stayExits {
            let keys = stayExits.hoursByStream.filter { classes[$0.key] == rateClass }
            figures.stays = keys.count
            figures.stayHours = keys.values.reduce(0, +)
            figures.stayExits = stayExits.events.filter { classes[$0.key] == rateClass }.count
        }
        let classEnds = ends.filter { $0.rateClass == rateClass }
        figures.ends = classEnds.count
        figures.latencies = classEnds.compactMap(\.latency)
        figures.departureLatencies = classEnds.filter { !$0.endOfRecording }.compactMap(\.latency)
        figures.departureRecentGaps = classEnds.filter { !$0.endOfRecording }.map(\.history.longestRecentGap)
        figures.missed = figures.ends - figures.latencies.count
        figures.flaps = flapCount(rateClass)
        return figures
    }
}
