import Foundation
import Logging
import Testing
import RegionKit
import RegionKitCore
import RegionKitGateway
import RegionKitMQTT
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// Cluster mode's pure parts: how contributions merge, the events a merged change logs, which
/// partition decides which region, and the `cluster:` block's rules.
@Suite("Cluster mode: merging, partition routing, configuration")
struct ClusterModeTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    static func region(_ identifier: String, major: UInt16? = nil, minor: UInt16? = nil) throws -> Region {
        .beacon(try BeaconRegion(identifier: identifier, uuidString: uuid, major: major, minor: minor))
    }

    @Test("A region is inside while any partition sees it inside (since the earliest), outside once all that reported are outside (since the latest)")
    func union() {
        typealias C = RegionContribution
        #expect(C.merged([]) == (.unknown, nil))
        #expect(C.merged([C(partition: 0, state: .unknown, since: nil)]) == (.unknown, nil))
        #expect(C.merged([C(partition: 0, state: .outside, since: 10), C(partition: 3, state: .inside, since: 12),
                          C(partition: 5, state: .inside, since: 11)]) == (.inside, 11))
        #expect(C.merged([C(partition: 0, state: .outside, since: 10), C(partition: 3, state: .outside, since: 14),
                          C(partition: 5, state: .unknown, since: nil)]) == (.outside, 14))
    }

    @Test("A merged change logs the crossing (when the state was known and the region notifies it) and didDetermineState, as one engine's JSON lines")
    func eventRows() throws {
        let lobby = try Self.region("lobby", major: 1)
        let evidence = EventEvidence(rssi: -61, scannerID: "hall", reason: "sighted")
        let enter = ClusterEvents.rows(previous: .outside, merged: .inside, region: lobby, time: 12.5, evidence: evidence)
        #expect(enter.map(\.type) == ["didEnterRegion", "didDetermineState"])
        #expect(enter.map(\.state) == ["inside", "inside"])
        #expect(enter.allSatisfy { $0.region == "lobby" && $0.reason == "sighted" && $0.time == 12.5 })
        let expected = LocationEvent(timestamp: Timestamp(seconds: 12.5), kind: .didEnterRegion(lobby), evidence: evidence).jsonLine(origin: .zero)
        #expect(enter[0].json == expected)
        #expect(ClusterEvents.rows(previous: .inside, merged: .outside, region: lobby, time: 20, evidence: nil).map(\.type)
                == ["didExitRegion", "didDetermineState"])
        // The first determination is not a crossing (as a single engine starting inside).
        #expect(ClusterEvents.rows(previous: nil, merged: .inside, region: lobby, time: 1, evidence: nil).map(\.type) == ["didDetermineState"])
        #expect(ClusterEvents.rows(previous: .unknown, merged: .outside, region: lobby, time: 1, evidence: nil).map(\.type) == ["didDetermineState"])
        var quiet = try BeaconRegion(identifier: "quiet", uuidString: Self.uuid, major: 2)
        quiet.notifyOnEntry = false
        #expect(ClusterEvents.rows(previous: .outside, merged: .inside, region: .beacon(quiet), time: 1, evidence: nil).map(\.type) == ["didDetermineState"])
        let hooks = HookConfiguration(onEnter: ["true"])
        #expect(ClusterEvents.rows(previous: .outside, merged: .inside, region: lobby, time: 1, evidence: nil, hooks: hooks).map(\.hooks)
                == [["command:true"], []])
    }

    @Test("A one-beacon region lives in the partition its ESPresense id hashes to (the broker's partition), a region spanning beacons in every partition")
    func partitionRouting() throws {
        let count = 16
        var regions: [Region] = [try Self.region("site"), try Self.region("floor-1", major: 1)]
        for minor in UInt16(1)...40 { regions.append(try Self.region("b\(minor)", major: 1, minor: minor)) }
        var owners: [String: [Int]] = [:]
        for partition in 0..<count {
            for region in PartitionWorker.regions(regions, partition: partition, count: count) { owners[region.identifier, default: []].append(partition) }
        }
        #expect(owners["site"] == Array(0..<count))
        #expect(owners["floor-1"] == Array(0..<count))
        let decoder = SightingMessageDecoder(format: .espresense)
        for minor in UInt16(1)...40 {
            let token = "iBeacon:\(Self.uuid.lowercased())-1-\(minor)"
            #expect(PartitionWorker.partitionToken(of: try Self.region("x", major: 1, minor: minor)) == token)
            #expect(owners["b\(minor)"] == [NATSPartition.partition(of: token, count: count)], "b\(minor) in exactly the broker's partition")
            // The sighting the broker routes there matches the region.
            let outcome = try decoder.decode(topic: "regionkit/part/0/espresense/devices/\(token)/hall",
                                             payload: Array(#"{"id":"\#(token)","rssi":-60}"#.utf8), receivedAt: .zero)
            guard case .sightings(let sightings) = outcome, case .beacon(let region) = try Self.region("b", major: 1, minor: minor) else {
                Issue.record("no sighting decoded for \(token)")
                continue
            }
            #expect(sightings.count == 1 && region.matches(sightings[0].identity))
        }
        // Spread: 40 beacons over 16 partitions touch most of them.
        #expect(Set(owners.filter { $0.key.hasPrefix("b") }.values.flatMap { $0 }).count >= 12)
        // What a re-partition seeds: the same partitions, asked region by region.
        for region in regions {
            #expect(PartitionWorker.partitions(deciding: region, count: count) == owners[region.identifier], "\(region.identifier)")
        }
    }

    static let clusterBase = """
    store: postgres://regionkit@127.0.0.1:5432/regionkit
    regions:
      - {identifier: site, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}
    sources: [{mqtt: {format: espresense}}]
    mqtt: {urls: ["mqtt://127.0.0.1:1883", "mqtt://127.0.0.1:1884"], site: airport}
    """

    /// A partition reads many scanners' sightings: its beacons' rooms are what clears a beacon's
    /// distance when it leaves and what the next holder starts from. The documented example
    /// passes `.responsive`, which tracks no rooms: the engine adds the default policy (and keeps
    /// one given).
    @Test("Every partition tracks its beacons' rooms: a profile without a nearest-scanner policy gets the default one")
    func partitionsTrackRooms() throws {
        #expect(MonitoringProfile.responsive.nearestScanner == nil)
        let store = UnleasedClusterStore(try RegionStore(path: temporaryStorePath()))
        let mqtt = try MQTTClientConfiguration(url: "mqtt://127.0.0.1:1")
        let configuration = ClusterConfiguration(partitions: 2, member: "engine-a")
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let engine = ClusterEngine(store: store, configuration: configuration, mqtt: mqtt, profile: .responsive, regions: [], logger: logger)
        let given = try #require(engine.profile.nearestScanner)
        let standard = NearestScannerPolicy()
        #expect(given.margin == standard.margin && given.dwell == standard.dwell && given.halfLife == standard.halfLife)
        var custom = MonitoringProfile.responsive
        custom.nearestScanner = NearestScannerPolicy(margin: 9, dwell: 2, halfLife: 1)
        let kept = ClusterEngine(store: store, configuration: configuration, mqtt: mqtt, profile: custom, regions: [], logger: logger)
        let policy = try #require(kept.profile.nearestScanner)
        #expect(policy.margin == 9 && policy.dwell == 2 && policy.halfLife == 1)
    }

    @Test("The cluster block: defaults, and every rule an error naming the field")
    func configuration() throws {
        let configuration = try ServiceConfiguration.decode(Self.clusterBase + "\ncluster: {member: engine-a}\n", path: "c.yaml")
        let cluster = try #require(configuration.cluster)
        // Hooks and Home Assistant's region discovery are served (by the member holding the outputs lease).
        _ = try ServiceConfiguration.decode(Self.clusterBase + "\ncluster: {}\nhooks: {onExit: [\"true\"]}\n", path: "c.yaml")
        _ = try ServiceConfiguration.decode(Self.clusterBase + "\ncluster: {}\nhomeAssistant: {discovery: true, mqttRoom: true}\n", path: "c.yaml")
        // So is the HTTP API (every member, from the shared store).
        let served = try ServiceConfiguration.decode(Self.clusterBase + "\ncluster: {}\nhttp: {listen: \"127.0.0.1:0\"}\n", path: "c.yaml")
        #expect(served.http?.listen == "127.0.0.1:0")
        #expect(cluster.partitionCount == 16 && cluster.leaseDuration == 5 && cluster.memberName == "engine-a")
        #expect(cluster.topicFilter(partition: 7) == "regionkit/part/7/espresense/devices/+/+")
        #expect(cluster.statusFilter == "espresense/rooms/+/status", "the nodes' status, unpartitioned, by default")
        #expect(try ServiceConfiguration.decode(Self.clusterBase + "\ncluster: {status: none}\n", path: "c.yaml").cluster?.statusFilter == nil)
        #expect(try ServiceConfiguration.decode(Self.clusterBase + "\ncluster: {status: \"lab/+/status\"}\n", path: "c.yaml").cluster?.statusFilter == "lab/+/status")
        let cases: [(String, String)] = [
            ("cluster: {partitions: 0}", "c.yaml: cluster.partitions 0 must be within 1...65536"),
            ("cluster: {leaseSeconds: 0.5}", "c.yaml: cluster.leaseSeconds 0.5 must be within 1...600 seconds"),
            ("cluster: {member: \"\"}", "c.yaml: cluster.member must be 1 to 200 characters"),
            ("cluster: {topic: \"regionkit/part/+/x\"}", "c.yaml: cluster.topic 'regionkit/part/+/x' must contain {partition} exactly once"),
            ("cluster: {topic: \"a/{partition}/#/b\"}", "c.yaml: cluster.topic 'a/{partition}/#/b': "),
            ("cluster: {status: \"espresense/rooms/#\"}", "c.yaml: cluster.status 'espresense/rooms/#': no '#'"),
            ("cluster: {status: \"espresense/rooms/kitchen/status\"}", "c.yaml: cluster.status 'espresense/rooms/kitchen/status': one '+' level must name the scanner"),
        ]
        for (block, message) in cases {
            let error = #expect(throws: RegionKitError.self) { try ServiceConfiguration.decode(Self.clusterBase + "\n" + block + "\n", path: "c.yaml") }
            #expect(error?.message.hasPrefix(message) == true, "\(block): \(error?.message ?? "no error")")
        }
        let sourceStatus = Self.clusterBase.replacingOccurrences(of: "format: espresense", with: "format: espresense, status: none") + "\ncluster: {}\n"
        let sourceStatusError = #expect(throws: RegionKitError.self) { try ServiceConfiguration.decode(sourceStatus, path: "c.yaml") }
        #expect(sourceStatusError?.message.hasPrefix("c.yaml: sources[0].mqtt.status: in cluster mode the nodes' status topic comes from cluster.status") == true,
                "\(sourceStatusError?.message ?? "no error")")
        let theengs = Self.clusterBase.replacingOccurrences(of: "format: espresense", with: "format: theengs") + "\ncluster: {}\n"
        let wrongSource = #expect(throws: RegionKitError.self) { try ServiceConfiguration.decode(theengs, path: "c.yaml") }
        #expect(wrongSource?.message.hasPrefix("c.yaml: sources[0]: cluster mode reads partitioned ESPresense sightings only") == true)
        let circular = Self.clusterBase.replacingOccurrences(
            of: "regions:\n", with: "regions:\n  - {identifier: depot, latitude: 35.6, longitude: 139.7, radius: 100}\n") + "\ncluster: {}\n"
        let circularError = #expect(throws: RegionKitError.self) { try ServiceConfiguration.decode(circular, path: "c.yaml") }
        #expect(circularError?.message.hasPrefix("c.yaml: regions[0]: cluster mode partitions beacon sightings") == true, "\(circularError?.message ?? "")")
        let noBroker = """
        regions: [{identifier: site, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}]
        sources: [{simulator: {scenario: museum}}]
        cluster: {}
        """
        let brokerError = #expect(throws: RegionKitError.self) { try ServiceConfiguration.decode(noBroker, path: "c.yaml") }
        #expect(brokerError?.message.hasPrefix("c.yaml: cluster needs the broker") == true)
        // A webhook for a type a cluster never delivers to hooks (it fired nothing, silently).
        _ = try ServiceConfiguration.decode(Self.clusterBase + "\ncluster: {}\nhooks: {webhooks: [{url: \"http://127.0.0.1:9/x\", events: [didDetermineState, didChangeNearestScanner]}]}\n",
                                            path: "c.yaml")
        let undelivered = #expect(throws: RegionKitError.self) {
            try ServiceConfiguration.decode(Self.clusterBase + "\ncluster: {}\nhooks: {webhooks: [{url: \"http://127.0.0.1:9/x\", events: [didEnterRegion, processStarted]}]}\n",
                                            path: "c.yaml")
        }
        #expect(undelivered?.message.hasPrefix("c.yaml: hooks.webhooks[0].events[1]: a cluster delivers didEnterRegion, didExitRegion, didDetermineState, didChangeNearestScanner to hooks, not 'processStarted'") == true,
                "\(undelivered?.message ?? "")")
    }
}
