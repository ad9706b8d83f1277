import Foundation
import RegionKit
import RegionKitSimulation

/// Running a ``DetectionSweep``: independent, seeded shards (one group of engines each), run in
/// any order or concurrently, merged per condition and profile.
extension DetectionSweep {
    /// One independent piece of a sweep: a group of beacons simulated through one engine per profile.
    public struct Shard: Hashable, Sendable {
        public enum Kind: Int, Hashable, Sendable { case stationary = 1, departing = 2 }
        /// Index into ``DetectionSweep/conditions``.
        public var condition: Int
        public var kind: Kind
        public var index: Int
        /// Beacons in this shard.
        public var beacons: Int
        /// Stationary shards: how long each beacon is present, seconds. Departing shards: unused.
        public var lifetime: Double
        /// Departing shards: departures per beacon (the last beacon may have fewer: `lastBeaconDepartures`).
        public var departuresPerBeacon: Int
        public var lastBeaconDepartures: Int
    }

    /// Seconds after which a stationary beacon's false exits also count as "settled".
    public static let settlingTime = 600.0

    /// Departures simulated per departing beacon (each a fresh arrival, stay and departure).
    static let departuresPerBeacon = 16

    /// Every shard of the sweep, condition by condition.
    public var shards: [Shard] {
        var shards: [Shard] = []
        for condition in conditions.indices {
            if stationaryHours > 0 {
                let seconds = stationaryHours * 3600
                let count = max(1, Int((seconds / (Double(beaconsPerEngine) * maximumLifetime)).rounded(.up)))
                let lifetime = seconds / Double(count * beaconsPerEngine)
                for index in 0..<count {
                    shards.append(Shard(condition: condition, kind: .stationary, index: index, beacons: beaconsPerEngine,
                                        lifetime: lifetime, departuresPerBeacon: 0, lastBeaconDepartures: 0))
                }
            }
            if departures > 0 {
                let perBeacon = Self.departuresPerBeacon
                let beacons = (departures + perBeacon - 1) / perBeacon
                let last = departures - (beacons - 1) * perBeacon
                let count = (beacons + beaconsPerEngine - 1) / beaconsPerEngine
                for index in 0..<count {
                    let inShard = min(beaconsPerEngine, beacons - index * beaconsPerEngine)
                    shards.append(Shard(condition: condition, kind: .departing, index: index, beacons: inShard, lifetime: 0,
                                        departuresPerBeacon: perBeacon, lastBeaconDepartures: index == count - 1 ? last : perBeacon))
                }
            }
        }
        return shards
    }

    /// Runs every shard in turn and merges the results: one report per condition × profile, in
    /// condition order then profile order.
    public func run() -> [DetectionReport] {
        merge(shards.map { run($0) })
    }

    /// Runs the shards `concurrency` at a time (the figures do not depend on it). `progress` is
    /// called after each shard with the number done and the total.
    public func run(concurrency: Int, progress: (@Sendable (Int, Int) -> Void)? = nil) async -> [DetectionReport] {
        let shards = self.shards
        var results = [[DetectionReport]?](repeating: nil, count: shards.count)
        await withTaskGroup(of: (Int, [DetectionReport]).self) { group in
            var next = 0
            var done = 0
            func start() {
                let index = next
                let shard = shards[index]
                group.addTask { (index, self.run(shard)) }
                next += 1
            }
            while next < shards.count && next < max(1, concurrency) { start() }
            while let (index, reports) = await group.next() {
                results[index] = reports
                done += 1
                progress?(done, shards.count)
                if next < shards.count { start() }
            }
        }
        return merge(results.compactMap { $0 })
    }

    /// Adds up shard results per condition and profile.
    public func merge(_ results: [[DetectionReport]]) -> [DetectionReport] {
        var merged = conditions.flatMap { condition in
            profiles.map { DetectionReport(condition: condition, profile: $0.name, absence: absence) }
        }
        for reports in results {
            for report in reports {
                guard let conditionIndex = conditions.firstIndex(of: report.condition),
                      let profileIndex = profiles.firstIndex(where: { $0.name == report.profile }) else { continue }
                merged[conditionIndex * profiles.count + profileIndex].merge(report)
            }
        }
        return merged
    }

    /// Simulates one shard: one report per profile.
    public func run(_ shard: Shard) -> [DetectionReport] {
        let condition = conditions[shard.condition]
        let interval = condition.advertisingInterval
        let channel = channel(for: condition)
        var schedule = SeededRandom(seed: seed, stream: streamKey(condition, shard, beacon: 0xFFFF))

        // Who is present when.
        var windows: [[Window]] = []
        var end = 0.0
        switch shard.kind {
        case .stationary:
            windows = (0..<shard.beacons).map { _ in [Window(from: 0, to: shard.lifetime)] }
            end = shard.lifetime
        case .departing:
            for beacon in 0..<shard.beacons {
                let count = beacon == shard.beacons - 1 ? shard.lastBeaconDepartures : shard.departuresPerBeacon
                // First arrival after the 3 s initial determination, staggered so departures do not line up.
                var t = 5 + schedule.uniform() * (presence.upperBound + absence)
                var list: [Window] = []
                for _ in 0..<count {
                    let stay = presence.lowerBound + schedule.uniform() * (presence.upperBound - presence.lowerBound)
                    list.append(Window(from: t, to: t + stay))
                    t += stay + absence
                }
                windows.append(list)
                end = max(end, t)
            }
            // Companions: present throughout, after the scored beacons (their numbers, and so
            // their minors, are past the log's: their events are not scored).
            for _ in 0..<companions { windows.append([Window(from: 0, to: end)]) }
        }

        // The engines, one per profile, each monitoring one region per beacon.
        let identities = windows.indices.map { Self.identity(beacon: $0) }
        var engines: [MonitoringEngine] = profiles.map { profile in
            var unlimited = profile
            unlimited.regionLimit = nil
            return MonitoringEngine(profile: unlimited, sources: [.beacon: .authorized])
        }
        for index in engines.indices {
            for (beacon, identity) in identities.enumerated() {
                let region = try! BeaconRegion(identifier: "beacon-\(beacon)", uuid: identity.uuid, major: identity.major, minor: identity.minor)
                _ = engines[index].startMonitoring(.beacon(region), at: .zero)
            }
        }

        // Shared shadowing: the scanner's blackouts, the same for every beacon; each link keeps
        // only the independent losses between them.
        var linkChannel = channel
        var blackouts: [Window] = []
        if condition.shadowing == .shared, case .gilbertElliott(let goodLoss, _, let meanGood, let meanBurst) = channel {
            var random = SeededRandom(seed: seed, stream: streamKey(condition, shard, beacon: 0xFFFE))
            var scanner = channel.link(random: &random)
            blackouts = Self.blackouts(of: &scanner, until: end, meanGood: meanGood, meanBurst: meanBurst, random: &random)
            linkChannel = .independent(lossRate: goodLoss)
        }

        // Transmitters, merged in time order through a heap of next sighting times.
        var transmitters: [Transmitter] = identities.indices.map { beacon in
            var random = SeededRandom(seed: seed, stream: streamKey(condition, shard, beacon: beacon))
            let link = linkChannel.link(random: &random)
            return Transmitter(random: random, link: link, windows: windows[beacon], interval: interval, blackouts: blackouts)
        }
        var heap = MinHeap<NextSighting>()
        for beacon in transmitters.indices {
            if let t = transmitters[beacon].nextSighting() { heap.push(NextSighting(time: t, beacon: beacon)) }
        }
        let radio = RadioModel(pathLossExponent: 2.2, shadowingSigma: 4, lossRate: 0, sensitivity: -200)
        let meanRSSI = radio.meanRSSI(measuredPower: -59, distance: 3)
        var log = EventLog(profiles: profiles.count, beacons: shard.beacons)
        while let (time, beacon) = heap.popMin().map({ ($0.time, $0.beacon) }) {
            var mean = meanRSSI
            if walkAway > 0, shard.kind == .departing, beacon < shard.beacons, transmitters[beacon].window < windows[beacon].count {
                // Walking away over the stay's last seconds: from 3 m at walkSpeed.
                let walked = time - (windows[beacon][transmitters[beacon].window].to - walkAway)
                if walked > 0 { mean = radio.meanRSSI(measuredPower: -59, distance: 3 + Self.walkSpeed * walked) }
            }
            let rssi = Int((mean + transmitters[beacon].random.gaussian(sigma: radio.shadowingSigma)).rounded())
            let observation = BeaconObservation(identity: identities[beacon], rssi: rssi, measuredPower: -59, timestamp: Timestamp(seconds: time))
            for index in engines.indices {
                let events = engines[index].ingest(observation)
                if !events.isEmpty { log.record(events, profile: index) }
            }
            if let next = transmitters[beacon].nextSighting() { heap.push(NextSighting(time: next, beacon: beacon)) }
        }
        for index in engines.indices {
            log.record(engines[index].advance(to: Timestamp(seconds: end)), profile: index)
        }
        let scored = Array(windows.prefix(shard.beacons))   // not the companions
        return profiles.indices.map { index in
            log.report(profile: index, name: profiles[index].name, condition: condition, kind: shard.kind, windows: scored, end: end, absence: absence)
        }
    }

    /// The burst periods of a Gilbert–Elliott `link` from time 0 to `end`, in order.
    static func blackouts(of link: inout LossChannel.Link, until end: Double, meanGood: Double, meanBurst: Double,
                          random: inout SeededRandom) -> [Window] {
        var list: [Window] = []
        var t = 0.0
        var inBurst = link.inBurst
        var next = -(inBurst ? meanBurst : meanGood) * log(1 - random.uniform())
        while t < end {
            if inBurst { list.append(Window(from: t, to: min(next, end))) }
            t = next
            inBurst.toggle()
            next = t - (inBurst ? meanBurst : meanGood) * log(1 - random.uniform())
        }
        return list
    }

    /// A seed stream for one beacon of one shard, from the condition's values (not its position,
    /// so a condition gives the same figures whichever other conditions run with it).
    func streamKey(_ condition: Condition, _ shard: Shard, beacon: Int) -> UInt64 {
        var key = UInt64((condition.advertisingInterval * 1_000_000).rounded())
        for part in [UInt64((condition.lossRate * 1_000_000).rounded()), Self.shadowingKey(condition.shadowing),
                     UInt64(shard.kind.rawValue), UInt64(shard.index), UInt64(beacon)] {
            key = (key ^ part) &* 0x100_0000_01B3 &+ 0x9E37_79B9
        }
        return key
    }

    static func shadowingKey(_ shadowing: Shadowing) -> UInt64 {
        switch shadowing {
        case .none: 1
        case .bursty: 2
        case .shared: 3
        }
    }

    /// The identity of simulated beacon `beacon`: a UUID of its own, so every region indexes apart.
    static func identity(beacon: Int) -> BeaconIdentity {
        let uuid = UUID(uuidString: String(format: "D1A6E0C5-5EE9-4B7E-A000-%012X", beacon))!
        return BeaconIdentity(uuid: uuid, major: 1, minor: UInt16(truncatingIfNeeded: beacon))
    }

    struct Window: Sendable {
        var from: Double
        var to: Double
    }

    /// One beacon's advertisements through its link: the times of the frames that get through.
    struct Transmitter {
        var random: SeededRandom
        var link: LossChannel.Link
        let windows: [Window]
        let interval: Double
        /// The scanner's blackouts (shared shadowing), in order; empty otherwise.
        let blackouts: [Window]
        var window = 0
        var blackout = 0
        var nextFrame: Double

        init(random: SeededRandom, link: LossChannel.Link, windows: [Window], interval: Double, blackouts: [Window] = []) {
            var random = random
            self.nextFrame = windows.first.map { $0.from + random.uniform() * interval } ?? .infinity
            self.random = random
            self.link = link
            self.windows = windows
            self.interval = interval
            self.blackouts = blackouts
        }

        /// Whether `time` (never earlier than the previous query) falls in one of the scanner's blackouts.
        mutating func isBlackedOut(at time: Double) -> Bool {
            while blackout < blackouts.count && blackouts[blackout].to <= time { blackout += 1 }
            return blackout < blackouts.count && blackouts[blackout].from <= time
        }

        /// The time of the next received frame, or `nil` when the beacon is gone for good.
        mutating func nextSighting() -> Double? {
            while window < windows.count {
                let t = nextFrame
                guard t < windows[window].to else {
                    window += 1
                    if window < windows.count { nextFrame = windows[window].from + random.uniform() * interval }
                    continue
                }
                // BLE adds 0–10 ms of random delay to every advertising event.
                nextFrame = t + interval + random.uniform() * 0.01
                let lost = link.isLost(at: t, random: &random)
                if !lost && !isBlackedOut(at: t) { return t }
            }
            return nil
        }
    }

    /// A transmitter's next sighting; ties go to the lower beacon index.
    struct NextSighting: Comparable, Sendable {
        var time: Double
        var beacon: Int

        static func < (lhs: NextSighting, rhs: NextSighting) -> Bool {
            lhs.time < rhs.time || (lhs.time == rhs.time && lhs.beacon < rhs.beacon)
        }
    }

    /// Enter and exit times per profile and beacon, turned into figures at the end of a shard.
    struct EventLog {
        /// [profile][beacon] → (time, isExit), in time order.
        var crossings: [[[(time: Double, exit: Bool)]]]

        init(profiles: Int, beacons: Int) {
            crossings = Array(repeating: Array(repeating: [], count: beacons), count: profiles)
        }

        mutating func record(_ events: [LocationEvent], profile: Int) {
            for event in events {
                let region: Region
                let exit: Bool
                switch event.kind {
                case .didEnterRegion(let r): region = r; exit = false
                case .didExitRegion(let r): region = r; exit = true
                default: continue
                }
                guard let beacon = region.beaconRegion?.minor.map(Int.init), beacon < crossings[profile].count else { continue }
                crossings[profile][beacon].append((event.timestamp.seconds, exit))
            }
        }

        func report(profile: Int, name: String, condition: Condition, kind: Shard.Kind, windows: [[Window]], end: Double, absence: Double) -> DetectionReport {
            var report = DetectionReport(condition: condition, profile: name, absence: absence)
            for (beacon, list) in windows.enumerated() {
                let events = crossings[profile][beacon]
                switch kind {
                case .stationary:
                    let exits = events.filter { $0.exit && $0.time < end }
                    report.falseExits += exits.count
                    report.settledFalseExits += exits.filter { $0.time >= list[0].from + DetectionSweep.settlingTime }.count
                    report.stationaryHours += list.reduce(0) { $0 + ($1.to - $1.from) } / 3600
                case .departing:
                    var next = 0
                    var inside = false
                    for (index, window) in list.enumerated() {
                        report.arrivals += 1
                        report.arrivalHours += (window.to - window.from) / 3600
                        let returns = index + 1 < list.count ? list[index + 1].from : .infinity
                        // Crossings before the departure: the arrival's enter, false exits and re-entries.
                        while next < events.count && events[next].time < window.to {
                            if events[next].exit && events[next].time >= window.from { report.arrivalFalseExits += 1 }
                            inside = !events[next].exit
                            next += 1
                        }
                        guard inside else {
                            report.outsideAtDeparture += 1
                            continue
                        }
                        if next < events.count && events[next].exit && events[next].time < returns {
                            report.latencies.append(events[next].time - window.to)
                            inside = false
                            next += 1
                        } else {
                            report.missedExits += 1
                        }
                    }
                }
            }
            report.latencies.sort()
            return report
        }
    }
}
