import Foundation
import RegionKitConcurrency
import Testing
import RegionKit
import RegionKitCore
import RegionKitGateway
import RegionKitMQTT
import RegionKitSimulation
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// Cluster mode decides what one engine decides: the real gateway recordings replayed through one
/// engine (as `regionkit replay`), and through 16 partition engines — each fed the sightings the
/// broker's mapping gives its partition (FNV-1a of the ESPresense id), each monitoring the regions
/// ``PartitionWorker`` gives it — whose `didDetermineState` contributions are merged as the shared
/// store merges them (``RegionContribution/merged(_:)``, ``ClusterEvents``). On virtual time, so the
/// comparison is exact; the store's transactions and the broker are tested end to end elsewhere.
@Suite("Cluster mode decides as one engine (real recordings, 16 partitions)",
       .enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
struct ClusterEquivalenceTests {
    static let partitions = 16

    /// The crossings and determinations of a run, one line each, in time order.
    static func line(_ time: Double, _ type: String, _ region: String, _ state: String) -> String {
        "\(String(format: "%.3f", time)) \(type) \(region) \(state)"
    }

    static let files = ["TwoScannersRun1-2015-03-03.json.gz", "FourScannersRun1-2015-03-07.json.gz"]

    /// `corelocation` and `altbeacon` judge each stream on its own: a partition engine, which
    /// hears only its beacons, decides exactly what one engine decides.
    @Test("Per-stream detectors (corelocation, altbeacon): every region's enter, exit and state at the same times as one engine",
          arguments: files, ["corelocation", "altbeacon"])
    func sameDecisions(file: String, profileName: String) throws {
        var profile = try #require(MonitoringProfile.named(profileName))
        profile.nearestScanner = NearestScannerPolicy()
        let (single, cluster, regions) = try Self.run(file: file, profile: profile)
        #expect(single.filter { $0.contains(" exit ") }.count >= 3, "the recording has exits to compare")
        for region in regions {
            let a = Self.lines(single, region), b = Self.lines(cluster, region)
            #expect(a == b, "\(region): one engine \(a.prefix(6)) vs cluster \(b.prefix(6))")
        }
    }

    /// `responsive` also uses what a scanner's other streams show (a silence every stream of the
    /// scanner shares is a blackout; a new stream takes the scanner's learned burst scale). A
    /// partition engine sees only its own beacons' streams of each scanner, so some exits come at
    /// other times, and rarely a brief exit–enter pair is decided by one side only. Measured
    /// (docs/cluster.md quotes the printed figures); the bounds below are the measured ones with a
    /// margin, a guard against the partitioned decisions drifting further from one engine's.
    @Test("responsive: the decisions of one engine, most at the same times; the differences measured",
          arguments: files)
    func responsiveDecisions(file: String) throws {
        let (single, cluster, regions) = try Self.run(file: file, profile: MQTTReplayEquivalenceTests.profile)
        var deltas: [Double] = []
        var same = 0
        var differentSequences: [String] = []
        let kinds = { (lines: [String]) in lines.map { $0.split(separator: " ").dropFirst().joined(separator: " ") } }
        for region in regions {
            let a = Self.lines(single, region), b = Self.lines(cluster, region)
            guard kinds(a) == kinds(b) else {
                differentSequences.append("\(region): one engine \(a.count) decisions, cluster \(b.count)")
                continue
            }
            for (x, y) in zip(a, b) {
                let dt = abs((Double(x.split(separator: " ")[0]) ?? 0) - (Double(y.split(separator: " ")[0]) ?? 0))
                if dt < 0.0005 { same += 1 } else { deltas.append(dt) }
            }
        }
        deltas.sort()
        let median = deltas.isEmpty ? 0 : deltas[deltas.count / 2]
        print("""
            cluster-equivalence \(file) responsive: \(regions.count - differentSequences.count) of \(regions.count) regions with the same \
            decisions in the same order (\(differentSequences)); of their \(same + deltas.count) decisions \(same) at the same time, \
            \(deltas.count) at another (median \(String(format: "%.1f", median)) s, max \(String(format: "%.1f", deltas.last ?? 0)) s)
            """)
        #expect(single.count > 20 && cluster.count > 20)
        #expect(differentSequences.count <= 1, "\(differentSequences)")
        #expect(Double(same) >= 0.75 * Double(same + deltas.count), "\(same) of \(same + deltas.count) at the same time")
        #expect((deltas.last ?? 0) <= 60, "no exit moves by more than the detector's longest silence")
    }

    static func lines(_ all: [String], _ region: String) -> [String] {
        all.filter { $0.split(separator: " ")[2] == region }
    }

    /// The decisions of one engine and of 16 merged partition engines on a recording, and its regions.
    static func run(file: String, profile: MonitoringProfile) throws -> (single: [String], cluster: [String], regions: [String]) {
        let recording = try GatewayRecording(path: SharedFixtures.beaconRun(file))
        let regions = try MQTTReplayEquivalenceTests.regions(recording)
        let observations = recording.sightings.map { $0.observation(originMilliseconds: recording.originMilliseconds) }

        // One engine.
        let single = LockedBox<[String]>([])
        let replay = ReplaySession(profile: profile, automation: .all, regions: regions) { event in
            switch event.kind {
            case .didEnterRegion(let region): single.withLock { $0.append(Self.line(event.timestamp.seconds, "enter", region.identifier, "inside")) }
            case .didExitRegion(let region): single.withLock { $0.append(Self.line(event.timestamp.seconds, "exit", region.identifier, "outside")) }
            case .didDetermineState(let state, let region) where state != .unknown:
                single.withLock { $0.append(Self.line(event.timestamp.seconds, "state", region.identifier, state.rawValue)) }
            default: break
            }
        }
        for observation in observations { replay.feed(observation) }
        replay.finish(tail: 60)

        // 16 partition engines, each with its share of the sightings.
        struct Contribution { var time: Double; var partition: Int; var sequence: Int; var region: Region; var state: RegionState; var since: Double }
        let contributions = LockedBox<[Contribution]>([])
        var partitionOf: [BeaconIdentity: Int] = [:]
        var fed = 0
        for partition in 0..<Self.partitions {
            let mine = PartitionWorker.regions(regions, partition: partition, count: Self.partitions)
            let session = LockedBox<ReplaySession?>(nil)
            let replay = ReplaySession(profile: profile, automation: .all, regions: mine) { event in
                guard case .didDetermineState(let state, let region) = event.kind, state != .unknown else { return }
                let since = session.withLock { $0 }?.manager.monitoredRegion(region.identifier)?.stateSince?.seconds ?? event.timestamp.seconds
                contributions.withLock {
                    $0.append(Contribution(time: event.timestamp.seconds, partition: partition, sequence: $0.count, region: region, state: state, since: since))
                }
            }
            session.withLock { $0 = replay }
            for observation in observations {
                let owner = partitionOf[observation.identity] ?? {
                    let token = "iBeacon:\(observation.identity.uuid.uuidString.lowercased())-\(observation.identity.major)-\(observation.identity.minor)"
                    let owner = NATSPartition.partition(of: token, count: Self.partitions)
                    partitionOf[observation.identity] = owner
                    return owner
                }()
                guard owner == partition else { continue }
                replay.feed(observation)
                fed += 1
            }
            // Every partition runs to the same end as the single engine (its last sighting may be earlier).
            let end = (observations.last?.timestamp.seconds ?? 0) + 60
            replay.finish(tail: end - replay.clock.now.seconds)
        }
        #expect(fed == observations.count, "every sighting goes to exactly one partition")
        #expect(Set(partitionOf.values).count > 1, "the recording's beacons spread over partitions")

        // The store's merge, in time order (ties: the order each engine delivered them).
        var byRegion: [String: [Int: RegionContribution]] = [:]
        var merged: [String: RegionState] = [:]
        var cluster: [String] = []
        for contribution in contributions.withLock({ $0 }).sorted(by: { ($0.time, $0.sequence) < ($1.time, $1.sequence) }) {
            let id = contribution.region.identifier
            byRegion[id, default: [:]][contribution.partition] = RegionContribution(partition: contribution.partition, state: contribution.state, since: contribution.since)
            let union = RegionContribution.merged(Array(byRegion[id]!.values))
            guard union.state != .unknown, union.state != merged[id] else { continue }
            for row in ClusterEvents.rows(previous: merged[id], merged: union.state, region: contribution.region, time: contribution.time, evidence: nil) {
                let type = row.type == "didEnterRegion" ? "enter" : row.type == "didExitRegion" ? "exit" : "state"
                cluster.append(Self.line(row.time, type, id, row.state ?? "-"))
            }
            merged[id] = union.state
        }

        return (single.withLock { $0 }, cluster, regions.map(\.identifier))
    }
}
