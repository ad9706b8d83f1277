import Foundation
import RegionKit
import RegionKitSimulation

/// Detection quality in simulation: how late each profile notices that a beacon left, and how
/// often it says a beacon left that never did, across advertising intervals, loss rates and
/// loss patterns.
///
/// Every condition is simulated with the real `MonitoringEngine`, one engine per profile, all fed
/// the same sightings in time order (paired comparison: every profile sees exactly the same
/// radio). Each engine monitors many beacons at once, one beacon region per beacon:
/// - **stationary** beacons arrive at the start and never leave: every exit they get is false.
///   They give ``stationaryHours`` beacon-hours per condition, each beacon present for at most
///   ``maximumLifetime`` (so a beacon's first minutes, while the detector is still learning its
///   stream, count once per lifetime, not once an hour);
/// - **departing** beacons arrive, stay a random time in ``presence``, then stop being heard at
///   once (switched off, or out of range behind a wall) for ``absence`` seconds, and come back as a
///   new arrival. The exit latency is the time from the moment it stopped to `didExitRegion`;
///   exits while it was present are counted as false exits after arrival.
///
/// Frames are sent every advertising interval plus 0–10 ms of random advertising delay (as BLE
/// does), from a random phase; `LossChannel` decides which are lost; a received frame's RSSI
/// is the log-distance mean at 3 m plus 4 dB of Gaussian noise (it does not affect exits).
/// Everything is seeded: the same sweep gives the same figures, whatever the concurrency.
///
/// ```swift
/// var sweep = DetectionSweep(profiles: [.coreLocation, .altBeacon, .responsive], seed: 1)
/// sweep.stationaryHours = 100
/// for report in await sweep.run(concurrency: 2) { print(report.jsonLine.text) }
/// ```
public struct DetectionSweep: Sendable {
    /// How losses are distributed in time.
    public enum Shadowing: String, Sendable, Codable, CaseIterable {
        /// Independent losses (`LossChannel.independent(lossRate:)`).
        case none
        /// Losses in bursts (`LossChannel.bursty(lossRate:meanBurst:burstShare:)`), each
        /// beacon's link with blackouts of its own.
        case bursty
        /// The same average loss and blackouts as ``bursty``, but the blackouts are the scanner's:
        /// every beacon of an engine (one scanner) is blacked out at the same times (a person
        /// next to the scanner, a Wi-Fi burst), with independent losses of each link in between.
        case shared
    }

    /// One simulated radio condition.
    public struct Condition: Hashable, Sendable, Codable, CustomStringConvertible {
        /// Seconds between advertisements.
        public var advertisingInterval: Double
        /// Long-run share of frames lost.
        public var lossRate: Double
        public var shadowing: Shadowing

        public init(advertisingInterval: Double, lossRate: Double, shadowing: Shadowing) {
            self.advertisingInterval = advertisingInterval
            self.lossRate = lossRate
            self.shadowing = shadowing
        }

        public var description: String {
            "\(Self.format(advertisingInterval)) s, \(Int((lossRate * 100).rounded()))% loss, shadowing \(shadowing.rawValue)"
        }

        static func format(_ value: Double) -> String {
            value.compactDescription
        }
    }

    /// The conditions of the standard sweep: advertising every 100 ms and 1 s × loss 10, 30, 50,
    /// 70 % × independent and bursty losses; a periodic 1 Hz stream with 1 % loss (a gateway
    /// aggregating on a fixed period); and blackouts shared by the scanner's beacons at 100 ms
    /// (10, 30, 50 % loss) and 1 s (30 %).
    public static let standardConditions: [Condition] = [0.1, 1.0].flatMap { interval in
        [Shadowing.none, .bursty].flatMap { shadowing in
            [0.1, 0.3, 0.5, 0.7].map { Condition(advertisingInterval: interval, lossRate: $0, shadowing: shadowing) }
        }
    } + [Condition(advertisingInterval: 1, lossRate: 0.01, shadowing: .none)]
      + [0.1, 0.3, 0.5].map { Condition(advertisingInterval: 0.1, lossRate: $0, shadowing: .shared) }
      + [Condition(advertisingInterval: 1, lossRate: 0.3, shadowing: .shared)]

    public var conditions: [Condition]
    /// The profiles compared (their region limit is lifted: the sweep measures timing).
    public var profiles: [MonitoringProfile]
    /// Beacon-hours of stationary beacons per condition.
    public var stationaryHours: Double = 1_000
    /// Departures (exit-latency samples) per condition.
    public var departures: Int = 1_000
    /// Beacons monitored by each engine.
    public var beaconsPerEngine: Int = 32
    public var seed: UInt64
    /// Longest time one stationary beacon is simulated, seconds (default 24 h).
    public var maximumLifetime: Double = 24 * 3600
    /// How long a departing beacon stays before it leaves, seconds (uniform).
    public var presence: ClosedRange<Double> = 60...300
    /// How long a departed beacon stays away before arriving again, seconds.
    public var absence: Double = 180
    /// Departing beacons walk away over the last this many seconds of each stay, at
    /// ``walkSpeed`` from 3 m: their mean RSSI follows the path loss down before they stop being
    /// heard (0: they stop at once, as if switched off). Stationary beacons are not affected.
    public var walkAway: Double = 0
    /// Walking speed of a departing beacon, m/s.
    public static let walkSpeed = 1.0
    /// Stationary beacons heard throughout each departing shard, beside its departing beacons, by
    /// the same scanner (a gateway's fixed beacons among visitors): each has its region, so its
    /// stream informs the scanner's channel, but its events are not scored (0: none, the
    /// departing beacons' scanner hears only them).
    public var companions: Int = 0
    /// Upper bound of ``companions``.
    public static let maximumCompanions = 1_000
    /// Bursty shadowing: mean blackout length, seconds.
    public var meanBurst: Double = 1
    /// Bursty shadowing: share of the lost frames that fall in blackouts.
    public var burstShare: Double = 0.5

    public init(conditions: [Condition] = DetectionSweep.standardConditions, profiles: [MonitoringProfile], seed: UInt64 = 1) {
        self.conditions = conditions
        self.profiles = profiles
        self.seed = seed
    }

    /// The loss channel of `condition` with this sweep's burst parameters.
    public func channel(for condition: Condition) -> LossChannel {
        switch condition.shadowing {
        case .none: .independent(lossRate: condition.lossRate)
        case .bursty, .shared: .bursty(lossRate: condition.lossRate, meanBurst: meanBurst, burstShare: burstShare)
        }
    }

    /// Checks every parameter; the error names the one at fault.
    /// Upper bounds of the sweep's sizes: beyond them a run would take years (or overflow counts).
    public static let maximumStationaryHours: Double = 10_000_000
    public static let maximumDepartures = 100_000_000
    /// Upper bound of every duration parameter (a week).
    public static let maximumSeconds: Double = 604_800

    public func validate() throws {
        func bad(_ message: String) -> RegionKitError { RegionKitError(.invalidArgument, "detection sweep: \(message)") }
        guard !profiles.isEmpty else { throw bad("no profile to evaluate") }
        guard !conditions.isEmpty else { throw bad("no condition to simulate") }
        guard walkAway.isFinite, (0...Self.maximumSeconds).contains(walkAway) else { throw bad("walk-away \(walkAway) s must be within 0...\(Self.maximumSeconds)") }
        guard stationaryHours.isFinite, (0...Self.maximumStationaryHours).contains(stationaryHours) else {
            throw bad("stationary hours \(stationaryHours) must be within 0...\(Int(Self.maximumStationaryHours))")
        }
        guard (0...Self.maximumDepartures).contains(departures) else { throw bad("departures \(departures) must be within 0...\(Self.maximumDepartures)") }
        guard stationaryHours > 0 || departures > 0 else { throw bad("nothing to simulate: 0 stationary hours and 0 departures") }
        guard (1...65_535).contains(beaconsPerEngine) else { throw bad("beacons per engine \(beaconsPerEngine) must be within 1...65535") }
        guard (0...Self.maximumCompanions).contains(companions) else { throw bad("companions \(companions) must be within 0...\(Self.maximumCompanions)") }
        guard beaconsPerEngine + companions <= 65_535 else { throw bad("beacons per engine \(beaconsPerEngine) plus companions \(companions) must be at most 65535") }
        guard maximumLifetime.isFinite, maximumLifetime > 0, maximumLifetime <= Self.maximumSeconds else {
            throw bad("maximum lifetime \(maximumLifetime) s must be within (0, \(Int(Self.maximumSeconds))]")
        }
        guard presence.lowerBound.isFinite, presence.upperBound <= Self.maximumSeconds, presence.lowerBound > 0 else {
            throw bad("presence \(presence) s must be within (0, \(Int(Self.maximumSeconds))]")
        }
        guard absence.isFinite, absence > 0, absence <= Self.maximumSeconds else { throw bad("absence \(absence) s must be within (0, \(Int(Self.maximumSeconds))]") }
        guard meanBurst.isFinite, meanBurst > 0, meanBurst <= 3600 else { throw bad("mean burst \(meanBurst) s must be within (0, 3600]") }
        guard burstShare.isFinite, (0...1).contains(burstShare) else { throw bad("burst share \(burstShare) must be within 0...1") }
        for condition in conditions {
            guard condition.advertisingInterval.isFinite, (0.02...3600).contains(condition.advertisingInterval) else {
                throw bad("advertising interval \(condition.advertisingInterval) s must be within 0.02...3600 (BLE's minimum is 20 ms)")
            }
            guard condition.lossRate.isFinite, (0..<1).contains(condition.lossRate) else {
                throw bad("loss rate \(condition.lossRate) must be within 0..<1")
            }
            try channel(for: condition).validate("detection sweep (\(condition))")
        }
    }

    /// The time a run takes is dominated by sightings × profiles, each one `MonitoringEngine.ingest`.
    /// An estimate of the sightings per condition, for progress messages.
    public func estimatedSightings(for condition: Condition) -> Double {
        let perSecond = (1 - condition.lossRate) / (condition.advertisingInterval + 0.005)
        let stay = (presence.lowerBound + presence.upperBound) / 2
        let departing = Double(departures) * stay
        // Companions are heard for the whole of each departing shard: its beacons' stays and absences.
        let departingShards = companions == 0 ? 0 : self.shards.filter { $0.kind == .departing && $0.condition == 0 }.count
        let accompanied = Double(companions * departingShards * Self.departuresPerBeacon) * (stay + absence)
        return perSecond * (stationaryHours * 3600 + departing + accompanied)
    }
}
