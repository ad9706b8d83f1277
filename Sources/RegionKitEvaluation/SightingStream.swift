import RegionKit

/// The sightings of one beacon identity by one scanner, in time order: the unit whose exits the
/// replay evaluation measures, with its measured reporting rate.
///
/// ```swift
/// let streams = SightingStream.group(observations)           // one per beacon × scanner
/// streams[0].receptionRate(below: 60)                        // 8.7 sightings/s while heard
/// streams[0].silences(atLeast: 60)                          // where it stopped for a long time, and its end
/// ```
public struct SightingStream: Hashable, Sendable {
    /// Which beacon, at which scanner (`nil`: a local radio without scanner name).
    public struct Key: Hashable, Comparable, Sendable, CustomStringConvertible {
        public var identity: BeaconIdentity
        public var scannerID: String?

        public init(identity: BeaconIdentity, scannerID: String?) {
            self.identity = identity
            self.scannerID = scannerID
        }

        public static func < (lhs: Key, rhs: Key) -> Bool {
            lhs.identity != rhs.identity ? lhs.identity < rhs.identity : (lhs.scannerID ?? "") < (rhs.scannerID ?? "")
        }

        /// `UUID:MAJOR:MINOR@SCANNER`, also the region identifier the evaluation uses.
        public var description: String { scannerID.map { "\(identity)@\($0)" } ?? identity.description }
    }

    /// A stretch without sightings: from the last sighting before it to the next one (`nil`: the
    /// stream never came back before the recording ended).
    public struct Silence: Hashable, Sendable {
        public var lastSighting: Double
        public var resumed: Double?

        public init(lastSighting: Double, resumed: Double?) {
            self.lastSighting = lastSighting
            self.resumed = resumed
        }
    }

    public var key: Key
    /// Sighting times, seconds, ascending.
    public var times: [Double]

    public init(key: Key, times: [Double]) {
        self.key = key
        self.times = times.sorted()
    }

    /// Splits observations into streams, sorted by beacon then scanner.
    public static func group(_ observations: [BeaconObservation]) -> [SightingStream] {
        var times: [Key: [Double]] = [:]
        for observation in observations {
            times[Key(identity: observation.identity, scannerID: observation.scannerID), default: []].append(observation.timestamp.seconds)
        }
        return times.map { SightingStream(key: $0.key, times: $0.value) }.sorted { $0.key < $1.key }
    }

    public var first: Double { times.first ?? 0 }
    public var last: Double { times.last ?? 0 }

    /// Sightings per second while the stream is heard: the intervals shorter than `silence`
    /// seconds, counted and divided by their total length (longer gaps are absences, not slow
    /// reporting). 0 when there is no such interval.
    public func receptionRate(below silence: Double) -> Double {
        var count = 0
        var total = 0.0
        for (previous, next) in zip(times, times.dropFirst()) where next - previous < silence {
            count += 1
            total += next - previous
        }
        guard count > 0 else { return 0 }
        // Sightings in the same millisecond: the rate is bounded by the time resolution.
        return Double(count) / max(total, Double(count) * 0.001)
    }

    /// The median time between consecutive sightings (`nil` with fewer than two).
    public var medianInterval: Double? {
        let intervals = zip(times, times.dropFirst()).map { $1 - $0 }.sorted()
        guard !intervals.isEmpty else { return nil }
        return intervals[(intervals.count - 1) / 2]
    }

    /// The stream's class from ``receptionRate(below:)``.
    public func rateClass(silence: Double) -> StreamRateClass {
        StreamRateClass(rate: receptionRate(below: silence))
    }

    /// Every gap of at least `minimum` seconds between sightings, and the final silence after
    /// the last sighting (whatever its length: the replay runs on after the recording ends).
    public func silences(atLeast minimum: Double) -> [Silence] {
        var found: [Silence] = []
        for (previous, next) in zip(times, times.dropFirst()) where next - previous >= minimum {
            found.append(Silence(lastSighting: previous, resumed: next))
        }
        if let last = times.last { found.append(Silence(lastSighting: last, resumed: nil)) }
        return found
    }

    /// What the stream had shown up to its sighting at `last` (one of ``times``), since it was
    /// last silent for `silence` seconds or more: when that stretch began, how many sightings it
    /// has, and the longest interval between them that ended within `window` seconds before
    /// `last` (0 with a single sighting; a window of 0 still counts the interval that ends at
    /// `last`). Any detector that would have declared the stream gone
    /// after a shorter silence than that interval would have exited during it and been heard
    /// again (a flap, when the interval was within its threshold plus the flap window), unless
    /// the beacon really was away during it or the threshold had shrunk since: for a detector
    /// that does not flap, that interval is a rough floor of the exit latency after `last`.
    ///
    /// ```swift
    /// let stream = SightingStream(key: key, times: [0, 1, 2, 12, 13])
    /// stream.history(before: 13, silence: 60, window: 120)   // since 0, 5 sightings, longest gap 10 s
    /// ```
    public func history(before last: Double, silence: Double, window: Double) -> History {
        // The stretch ending at `last`: back from it until a gap of `silence` or more.
        var end = times.count
        while end > 0, times[end - 1] > last { end -= 1 }
        guard end > 0 else { return History(heardSince: last, sightings: 0, longestRecentGap: 0) }
        var start = end - 1
        var longest = 0.0
        while start > 0 {
            let gap = times[start] - times[start - 1]
            if gap >= silence { break }
            if times[start] >= last - window { longest = max(longest, gap) }
            start -= 1
        }
        return History(heardSince: times[start], sightings: end - start, longestRecentGap: longest)
    }

    /// See ``history(before:silence:window:)``.
    public struct History: Hashable, Sendable {
        /// The first sighting after the last silence of at least the evaluator's `silence`.
        public var heardSince: Double
        /// Sightings from then up to the end, both included.
        public var sightings: Int
        /// The longest interval between those sightings that ended within the window before the end.
        public var longestRecentGap: Double
    }
}
