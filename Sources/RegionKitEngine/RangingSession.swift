import RegionKitCore
/// Aggregates the sightings of one ranging request into a delivery every interval.
///
/// Each beacon heard during the interval is listed with its mean RSSI, a distance estimate from the
/// filtered RSSI and a proximity class; a beacon not heard in the interval stays listed with rssi 0,
/// accuracy −1, proximity unknown until `retention` seconds after it was last heard. The list is
/// sorted nearest first, unknown last.
///
/// ```swift
/// var session = RangingSession(constraint: c, label: "museum", startedAt: .zero, interval: 1)
/// session.record(observation, filter: .latest)
/// let beacons = session.deliver(at: Timestamp(seconds: 1), profile: .responsive)
/// ```
public struct RangingSession: Hashable, Sendable, Codable {
    /// The running state of one ranged beacon.
    public struct Track: Hashable, Sendable, Codable {
        public var identity: BeaconIdentity
        public var filter = RSSIFilterState()
        public var measuredPower: Int
        public var lastHeard: Timestamp
        public var intervalRSSISum: Double = 0
        public var intervalSamples: Int = 0
        /// The latest telemetry that came with a sighting.
        public var telemetry: EddystoneTelemetry?
    }

    public let constraint: BeaconIdentityConstraint
    public let label: String
    public let startedAt: Timestamp
    public var nextDelivery: Timestamp
    /// Started by the engine's `rangeWhileInside` helper rather than by the app.
    public var automatic: Bool
    public var tracks: [BeaconIdentity: Track] = [:]

    public init(constraint: BeaconIdentityConstraint, label: String, startedAt: Timestamp, interval: Double, automatic: Bool = false) {
        self.constraint = constraint
        self.label = label
        self.startedAt = startedAt
        self.nextDelivery = startedAt + interval
        self.automatic = automatic
    }

    /// Adds a sighting that matches the constraint.
    public mutating func record(_ observation: BeaconObservation, filter: RSSIFilter) {
        var track = tracks[observation.identity]
            ?? Track(identity: observation.identity, measuredPower: observation.effectiveMeasuredPower, lastHeard: observation.timestamp)
        filter.add(Double(observation.rssi), at: observation.timestamp, to: &track.filter)
        track.measuredPower = observation.effectiveMeasuredPower
        track.lastHeard = max(track.lastHeard, observation.timestamp)
        track.intervalRSSISum += Double(observation.rssi)
        track.intervalSamples += 1
        if let telemetry = observation.telemetry { track.telemetry = telemetry }
        tracks[observation.identity] = track
    }

    /// Produces the delivery due at `now` and starts the next interval.
    public mutating func deliver(at now: Timestamp, profile: MonitoringProfile) -> [Beacon] {
        var beacons: [Beacon] = []
        for identity in tracks.keys.sorted() {
            guard var track = tracks[identity] else { continue }
            if track.intervalSamples > 0 {
                let meanRSSI = track.intervalRSSISum / Double(track.intervalSamples)
                let filtered = profile.rssiFilter.value(of: track.filter, at: now) ?? meanRSSI
                let accuracy = profile.distanceModel.distance(rssi: filtered, measuredPower: Double(track.measuredPower)) ?? -1
                beacons.append(Beacon(
                    identity: identity,
                    proximity: profile.proximityThresholds.proximity(forAccuracy: accuracy),
                    accuracy: accuracy,
                    rssi: Int(meanRSSI.rounded()),
                    timestamp: track.lastHeard,
                    telemetry: track.telemetry))
                track.intervalRSSISum = 0
                track.intervalSamples = 0
                tracks[identity] = track
            } else if now - track.lastHeard > profile.rangingRetention {
                tracks[identity] = nil
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
