import RegionKitCore
/// Aggregates the sightings of one ranging request into a delivery every interval.
///
/// Each beacon heard during the interval is listed with its mean RSSI, a distance estimate from the
/// filtered RSSI and a proximity class; a beacon not heard in the interval stays listed with rssi 0,
/// accuracy −1, proximity unknown until the ranging retention has passed since it was last heard
/// (``Reading/retention(under:)``: the profile's, or longer for a scanner that reports a beacon
/// only every few seconds, such as an ESPresense node). The list is sorted nearest first, unknown last.
///
/// A beacon heard by several scanners (ESPresense room nodes, gateways) is ranged from each
/// scanner's own readings, never from a mix: the RSSI a node two rooms away measures says nothing
/// about the distance to the nearest one, and averaged together they gave a distance that was
/// neither. The delivery reports the scanner whose readings put the beacon nearest
/// (``Track/nearest(at:profile:)``); one scanner (a phone, a local radio) is the same as before.
///
/// ```swift
/// var session = RangingSession(constraint: c, label: "museum", startedAt: .zero, interval: 1)
/// session.record(observation, filter: .latest)
/// let beacons = session.deliver(at: Timestamp(seconds: 1), profile: .responsive)
/// ```
public struct RangingSession: Hashable, Sendable, Codable {
    /// What one scanner measured of a ranged beacon.
    public struct Reading: Hashable, Sendable, Codable {
        /// The scanner (nil: a sighting that names none, e.g. the local radio).
        public var scannerID: String?
        public var filter = RSSIFilterState()
        public var measuredPower: Int
        public var lastHeard: Timestamp
        public var intervalRSSISum: Double = 0
        public var intervalSamples: Int = 0
        /// The scanner's cadence for this beacon: a running mean of the gaps between its sightings,
        /// seconds (0 until its second sighting; each new gap weighs ``gapWeight``). An ESPresense
        /// node that reports a still beacon every ~5 s learns ≈ 5; a radio hearing every
        /// advertisement ≈ 0.1, where one long dropout is forgotten within a second or two.
        public var meanGap: Double = 0

        /// How long this scanner's readings count after it last heard the beacon: the profile's
        /// ``MonitoringProfile/rangingRetention``, or two and a half times ``meanGap`` when that is
        /// longer (one missed report of a steady cadence, and some jitter) — a scanner that reports
        /// a beacon only every 5 s (ESPresense nodes, a gateway's aggregates) had it dropped and
        /// listed again at every report — but never longer than the profile's exit detector waits
        /// (``ExitDetector/maximumSilence``).
        ///
        /// ```swift
        /// // an ESPresense node reporting every 5.2 s, under `.responsive` (5 s retention, 60 s cap)
        /// reading.retention(under: .responsive)   // 13
        /// ```
        public func retention(under profile: MonitoringProfile) -> Double {
            let base = profile.rangingRetention
            let learned = min(Self.retentionGaps * meanGap, profile.exitDetector.maximumSilence)
            return learned > base ? learned : base
        }

        /// Whether the reading counts at `now` (see ``retention(under:)``). A reading past it is
        /// still kept, unused, until the exit detector's longest silence, so that a scanner whose
        /// reports come further apart than the profile's retention learns its cadence.
        public func isCurrent(at now: Timestamp, profile: MonitoringProfile) -> Bool {
            !(now - lastHeard > retention(under: profile))
        }

        /// The filtered RSSI at `now`. A scanner that reports further apart than the filter's
        /// window (an ESPresense node every 5 s beside `.responsive`'s 3 s moving average) has an
        /// empty window between its reports: its value as of its last report stands in while `now`
        /// is within its learned retention (``retentionGaps`` mean gaps; a radio hearing every
        /// advertisement is unchanged) — ranging jumped to whichever other scanner had reported
        /// within the window, and the distance swung between rooms every few seconds.
        ///
        /// ```swift
        /// reading.filteredRSSI(at: now, profile: .responsive)   // −62: the last report's, 4 s ago
        /// ```
        public func filteredRSSI(at now: Timestamp, profile: MonitoringProfile) -> Double? {
            if let value = profile.rssiFilter.value(of: filter, at: now) { return value }
            guard !(now - lastHeard > Self.retentionGaps * meanGap) else { return nil }
            return profile.rssiFilter.value(of: filter, at: lastHeard)
        }

        /// The reading's filtered RSSI and the distance the profile's model puts it at (nil when
        /// the model gives no answer), at `now`: nil when the reading no longer counts
        /// (``isCurrent(at:profile:)``) or has no filtered RSSI (``filteredRSSI(at:profile:)``).
        ///
        /// ```swift
        /// reading.estimate(at: now, profile: .responsive)   // (filtered: -62, distance: 2.4)
        /// ```
        public func estimate(at now: Timestamp, profile: MonitoringProfile) -> (filtered: Double, distance: Double?)? {
            guard isCurrent(at: now, profile: profile), let filtered = filteredRSSI(at: now, profile: profile) else { return nil }
            return (filtered, profile.distanceModel.distance(rssi: filtered, measuredPower: Double(measuredPower)))
        }

        /// The weight of a new gap in ``meanGap``.
        public static let gapWeight = 0.25
        /// How many mean gaps a reading counts for after its scanner last heard the beacon.
        public static let retentionGaps = 2.5

        /// Takes the gap before a sighting at `time` into ``meanGap``.
        mutating func noteSighting(at time: Timestamp) {
            let gap = time - lastHeard
            guard gap > 0, gap.isFinite else { return }
            meanGap = meanGap == 0 ? gap : meanGap + Self.gapWeight * (gap - meanGap)
        }

        /// Whether the reading is kept at all at `now` (counting or not): until the exit
        /// detector's longest silence, or the profile's retention if that is longer.
        func isKept(at now: Timestamp, profile: MonitoringProfile) -> Bool {
            let limit = profile.exitDetector.maximumSilence
            return !(now - lastHeard > (limit > profile.rangingRetention ? limit : profile.rangingRetention))
        }
    }

    /// The running state of one ranged beacon.
    public struct Track: Hashable, Sendable, Codable {
        public var identity: BeaconIdentity
        /// Each scanner's readings, in the order the scanners were first heard (at most
        /// ``RangingSession/maximumReadings``; a scanner silent past its reading's
        /// ``Reading/retention(under:)`` no longer counts, and past the exit detector's longest
        /// silence is dropped).
        public var readings: [Reading] = []
        public var lastHeard: Timestamp
        /// The latest telemetry that came with a sighting.
        public var telemetry: EddystoneTelemetry?

        /// Sightings recorded since the last delivery, from every scanner.
        public var intervalSamples: Int { readings.reduce(0) { $0 + $1.intervalSamples } }

        /// Whether ranging lists the beacon at `now`: some reading still counts
        /// (``Reading/isCurrent(at:profile:)``); otherwise the track is only kept while a reading
        /// may still learn its scanner's cadence.
        public func isListed(at now: Timestamp, profile: MonitoringProfile) -> Bool {
            readings.contains { $0.isCurrent(at: now, profile: profile) }
        }

        /// The distance `scanner`'s readings alone put the beacon at, at `now`: nil when that
        /// scanner has no current reading of it (``Reading/isCurrent(at:profile:)``) or the
        /// profile's distance model gives no answer. A room's distance is its own scanner's,
        /// whichever scanner puts the beacon nearest this second (``nearest(at:profile:)``).
        ///
        /// ```swift
        /// track.distance(from: "kitchen", at: now, profile: .responsive)   // 2.4, the kitchen node's estimate
        /// ```
        public func distance(from scanner: String, at now: Timestamp, profile: MonitoringProfile) -> Double? {
            readings.first { $0.scannerID == scanner }?.estimate(at: now, profile: profile)?.distance
        }

        /// The scanner whose readings put the beacon nearest at `now`: among those still current
        /// (``Reading/isCurrent(at:profile:)``) and with a filtered RSSI (``Reading/filteredRSSI(at:profile:)``), the smallest distance
        /// estimate, then the strongest filtered RSSI (no distance model answer), then the
        /// scanner's name. Its filtered RSSI and distance (nil when the model gives none) with it.
        public func nearest(at now: Timestamp, profile: MonitoringProfile) -> (reading: Reading, filtered: Double, distance: Double?)? {
            var best: (reading: Reading, filtered: Double, distance: Double?)?
            for reading in readings {
                guard let (filtered, distance) = reading.estimate(at: now, profile: profile) else { continue }
                if let current = best {
                    let closer: Bool
                    switch (distance, current.distance) {
                    case (let a?, let b?) where a != b: closer = a < b
                    case (.some, nil): closer = true
                    case (nil, .some): closer = false
                    default:
                        closer = filtered != current.filtered ? filtered > current.filtered
                            : (reading.scannerID ?? "") < (current.reading.scannerID ?? "")
                    }
                    guard closer else { continue }
                }
                best = (reading, filtered, distance)
            }
            return best
        }
    }

    /// The most scanners a beacon's track keeps readings of; a new one then replaces the one
    /// heard longest ago (a beacon heard by more nodes at once is near none of the others).
    public static let maximumReadings = 32

    public let constraint: BeaconIdentityConstraint
    /// The region identifier deliveries are reported under. A session shared by several labels
    /// (same constraint and scanner: regions inside that the helper ranges, regions the app
    /// ranges) is delivered to each of them; its label is the first still holding it, and passes
    /// to the next when that one leaves or is stopped.
    public var label: String
    /// When set, only this scanner's sightings are ranged (a `BeaconRegion.scannerID` room);
    /// `nil`: every scanner's.
    public let scannerID: String?
    public let startedAt: Timestamp
    public var nextDelivery: Timestamp
    /// Held only by the engine's `rangeWhileInside` helper (regions inside), not by the app.
    public var automatic: Bool
    public var tracks: [BeaconIdentity: Track] = [:]

    public init(constraint: BeaconIdentityConstraint, label: String, scannerID: String? = nil, startedAt: Timestamp, interval: Double,
                automatic: Bool = false) {
        self.constraint = constraint
        self.label = label
        self.scannerID = scannerID
        self.startedAt = startedAt
        self.nextDelivery = startedAt + interval
        self.automatic = automatic
    }

    /// Whether this session ranges a sighting of `identity` by `scanner`.
    public func accepts(_ identity: BeaconIdentity, scanner: String?) -> Bool {
        constraint.matches(identity) && (scannerID == nil || scannerID == scanner)
    }

    /// Adds a sighting that matches the constraint, to its scanner's readings (the caller checks
    /// ``accepts(_:scanner:)``).
    public mutating func record(_ observation: BeaconObservation, filter: RSSIFilter) {
        var track = tracks[observation.identity] ?? Track(identity: observation.identity, lastHeard: observation.timestamp)
        let index: Int
        if let found = track.readings.firstIndex(where: { $0.scannerID == observation.scannerID }) {
            index = found
            track.readings[index].noteSighting(at: observation.timestamp)
        } else {
            let reading = Reading(scannerID: observation.scannerID, measuredPower: observation.effectiveMeasuredPower, lastHeard: observation.timestamp)
            if track.readings.count < Self.maximumReadings {
                track.readings.append(reading)
                index = track.readings.count - 1
            } else {
                index = track.readings.indices.min { track.readings[$0].lastHeard < track.readings[$1].lastHeard } ?? 0
                track.readings[index] = reading
            }
        }
        filter.add(Double(observation.rssi), at: observation.timestamp, to: &track.readings[index].filter)
        track.readings[index].measuredPower = observation.effectiveMeasuredPower
        track.readings[index].lastHeard = max(track.readings[index].lastHeard, observation.timestamp)
        track.readings[index].intervalRSSISum += Double(observation.rssi)
        track.readings[index].intervalSamples += 1
        track.lastHeard = max(track.lastHeard, observation.timestamp)
        if let telemetry = observation.telemetry { track.telemetry = telemetry }
        tracks[observation.identity] = track
    }

    /// Produces the delivery due at `now` and starts the next interval.
    public mutating func deliver(at now: Timestamp, profile: MonitoringProfile) -> [Beacon] {
        var beacons: [Beacon] = []
        for identity in tracks.keys.sorted() {
            guard var track = tracks[identity] else { continue }
            if track.intervalSamples > 0 {
                // The nearest scanner's readings; its mean RSSI over the interval when it heard
                // the beacon in it (else its filtered value: another scanner's sightings kept the
                // beacon listed, and their RSSI is not this distance's).
                let accuracy: Double
                let rssi: Double
                func mean(_ reading: Reading) -> Double { reading.intervalRSSISum / Double(reading.intervalSamples) }
                if let nearest = track.nearest(at: now, profile: profile) {
                    accuracy = nearest.distance ?? -1
                    rssi = nearest.reading.intervalSamples > 0 ? mean(nearest.reading) : nearest.filtered
                } else {
                    // No filtered value (the filter's window holds no sample): the interval's mean
                    // RSSI of the scanner heard loudest in it, as the distance's input too.
                    let heard = track.readings.filter { $0.intervalSamples > 0 }
                    let loudest = heard.max { mean($0) < mean($1) } ?? heard[0]
                    rssi = mean(loudest)
                    accuracy = profile.distanceModel.distance(rssi: rssi, measuredPower: Double(loudest.measuredPower)) ?? -1
                }
                beacons.append(Beacon(
                    identity: identity,
                    proximity: profile.proximityThresholds.proximity(forAccuracy: accuracy),
                    accuracy: accuracy,
                    rssi: Int(rssi.rounded()),
                    timestamp: track.lastHeard,
                    telemetry: track.telemetry))
                for index in track.readings.indices {
                    track.readings[index].intervalRSSISum = 0
                    track.readings[index].intervalSamples = 0
                }
                track.readings.removeAll { !$0.isKept(at: now, profile: profile) }
                tracks[identity] = track
            } else if !track.isListed(at: now, profile: profile) {
                // Not listed; kept (unused) while a reading may still learn its scanner's cadence.
                // Its telemetry goes, as it went with a dropped track (a stale battery reading
                // would come back with the next sighting).
                track.readings.removeAll { !$0.isKept(at: now, profile: profile) }
                track.telemetry = nil
                tracks[identity] = track.readings.isEmpty ? nil : track
            } else {
                beacons.append(Beacon(identity: identity, proximity: .unknown, accuracy: -1, rssi: 0, timestamp: track.lastHeard, telemetry: track.telemetry))
            }
        }
        nextDelivery = nextDelivery + profile.rangingInterval
        return Self.sortedNearestFirst(beacons)
    }

    /// After a clock jump: when more than `keeping` deliveries are still due before `time`, moves
    /// ``nextDelivery`` to the last interval at or before `time` (the missed ones are skipped).
    /// Checked arithmetic: a non-finite or absurd gap leaves nothing to replay.
    ///
    /// ```swift
    /// session.skipMissedDeliveries(before: Timestamp(seconds: 86_400), interval: 1, keeping: 60)
    /// session.nextDelivery   // 86_400: one more delivery, not 86,399
    /// ```
    public mutating func skipMissedDeliveries(before time: Timestamp, interval: Double, keeping: Int) {
        guard interval > 0, interval.isFinite else { return }
        let behind = time - nextDelivery
        guard behind.isFinite, behind > interval * Double(keeping) else { return }
        nextDelivery = nextDelivery + (behind / interval).rounded(.down) * interval
    }

    /// Nearest first; beacons without an estimate last; ties by identity.
    public static func sortedNearestFirst(_ beacons: [Beacon]) -> [Beacon] {
        beacons.sorted { a, b in
            let aKnown = a.accuracy >= 0, bKnown = b.accuracy >= 0
            if aKnown != bKnown { return aKnown }
            if aKnown && a.accuracy != b.accuracy { return a.accuracy < b.accuracy }
            return a.identity < b.identity
        }
    }
}
