import Foundation
import Logging
import Testing
import RegionKit
import RegionKitConcurrency
import RegionKitHTTP
import RegionKitMQTT
import RegionKitPostgres
import RegionKitService
import RegionKitStore
import RegionKitTestSupport

/// The HTTP API of a cluster member, in process, against a real PostgreSQL and a real broker: one
/// `ClusterEngine` ("engine-a", partitions taken from the store's leases, fed by Mosquitto on the
/// partition topics) with its server on ``ClusterMemberBackend``, beside a second member ("other")
/// that writes its partitions' contributions straight into the store, as a member in another
/// process would. What the API shows must come from the shared store, not from engine-a.
@Suite("HTTP API of a cluster member: merged states, shared log, configuration-only regions", .serialized, .tags(.endToEnd),
       .enabled(if: PostgresServer.isAvailable && MosquittoBroker.isAvailable,
                "PostgreSQL or Mosquitto not found: apt-get install -y postgresql mosquitto mosquitto-clients (./scripts/test.sh does): SKIPPED, not passed"))
struct ClusterHTTPTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let partitions = 4

    static func token(_ minor: Int) -> String { "iBeacon:\(uuid.lowercased())-1-\(minor)" }
    static func partition(_ minor: Int) -> Int { NATSPartition.partition(of: token(minor), count: partitions) }

    static func beaconRegion(_ identifier: String, major: UInt16? = nil, minor: UInt16? = nil) throws -> Region {
        .beacon(try BeaconRegion(identifier: identifier, uuid: try #require(UUID(uuidString: uuid)), major: major, minor: minor))
    }

    /// An SSE stream read on a thread of its own (its reads block), so the test does not hold one
    /// of the few cooperative threads the server and the engine need.
    final class Stream: @unchecked Sendable {
        let reader: EventStreamReader
        init(_ reader: EventStreamReader) { self.reader = reader }

        struct Frame: @unchecked Sendable {
            var id: Int64
            var type: String
            var data: [String: Any]
        }

        func next(timeout: Double = 15) async throws -> Frame {
            try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(with: Result { let frame = try self.reader.next(timeout: timeout); return Frame(id: frame.id, type: frame.type, data: frame.data) })
                }
            }
        }
    }


    @Test("Regions from the merged states, SSE with events another member caused, beacons of this member's partitions, 405 on region changes, request-state from the store, readiness and metrics",
          .timeLimit(.minutes(4)))
    func clusterMember() async throws {
        let postgres = try PostgresServer()
        try await postgres.start()
        defer { postgres.stop() }
        try await postgres.createDatabase("http")
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let store = try await PostgresRegionStore(host: "127.0.0.1", port: postgres.port, username: postgres.user, database: "http")
        let engineStore = try await PostgresRegionStore(host: "127.0.0.1", port: postgres.port, username: postgres.user, database: "http")

        // "other" holds every partition first (the only member), then hands two back: engine-a takes them.
        let otherLeases = try await store.balanceLeases(member: "other", partitions: Self.partitions, ttl: 120).held
        #expect(otherLeases.count == Self.partitions)
        let mine: Set<Int> = [2, 3]
        // One beacon in each half: engine-a hears `local` through the broker; "other" decides `remote`.
        let local = try #require((1...64).first { mine.contains(Self.partition($0)) })
        let remote = try #require((1...64).first { !mine.contains(Self.partition($0)) })
        let regions = [try Self.beaconRegion("site"), try Self.beaconRegion("local", major: 1, minor: UInt16(local)),
                       try Self.beaconRegion("remote", major: 1, minor: UInt16(remote)), try Self.beaconRegion("quiet", major: 9, minor: 9)]

        var logger = Logger(label: "cluster-http-test")
        logger.logLevel = .notice
        var mqtt = try MQTTClientConfiguration(url: broker.url)
        mqtt.reconnectMinimumDelay = .milliseconds(50)
        let engine = ClusterEngine(store: engineStore, configuration: ClusterConfiguration(partitions: Self.partitions, member: "engine-a", leaseSeconds: 3),
                                   mqtt: mqtt, profile: .responsive, regions: regions, site: "httptest", logger: logger)
        try await engine.start()
        let running = Task { await engine.run() }
        try await store.releaseLeases(member: "other", partitions: mine.sorted())
        let server = RegionKitServer(backend: ClusterMemberBackend(engine: engine, pollInterval: .milliseconds(100), logger: logger),
                                     configuration: HTTPConfiguration(host: "127.0.0.1", port: 0, token: "test-token", isPublic: false,
                                                                      maxBodyBytes: 1_024, keepAliveInterval: 5),
                                     events: EventBroadcaster(), sources: { engine.partitionStatuses }, outputs: { engine.outputStatuses }, logger: logger)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let serving = Task { try await server.run { port in portContinuation.yield(port) } }
        var portIterator = ports.makeAsyncIterator()
        let port = try #require(await portIterator.next())
        let client = LoopbackClient(port: port, token: "test-token")

        let publisher = MQTTClient(configuration: mqtt, onMessage: { _ in })
        let publishing = Task { await publisher.run() }
        defer { publishing.cancel() }
        do {
            let took = await waitUntil(timeout: 30) {
                Set(engine.partitions.map(\.partition)) == mine && engine.partitionStatuses.allSatisfy { $0.state == .up }
            }
            #expect(took, "engine-a holds \(engine.partitions) (\(engine.partitionStatuses.map { "\($0.name): \($0.state)" }))")

            // Before anything is decided: every region unknown, the same list as configured, and why it is read-only.
            let before = try await client.request("GET", "/v1/regions")
            #expect(before.status == 200)
            let listed = before.json["regions"] as? [[String: Any]] ?? []
            #expect(listed.compactMap { $0["identifier"] as? String } == ["site", "local", "remote", "quiet"])
            #expect(listed.allSatisfy { $0["origin"] as? String == "config" })
            // Nothing was heard yet: no region is inside (engine-a's partitions may have said outside).
            #expect(listed.allSatisfy { $0["state"] as? String != "inside" }, "\(before.text)")
            #expect((before.json["changesRefused"] as? String)?.contains("regions are configuration in cluster mode") == true)

            // An SSE client on engine-a sees an event that "other" caused (it never went through engine-a).
            let stream = Stream(try EventStreamReader(port: port, token: "test-token"))
            #expect(stream.reader.status == 200)
            let otherLease = try #require(otherLeases.first { $0.partition == Self.partition(remote) })
            let now = Date().timeIntervalSince1970
            let remoteRegion = regions[2]
            let outcome = try await store.applyContribution(region: "remote", lease: otherLease, member: "other", state: .inside, since: now, time: now) {
                previous, merged, _ in ClusterEvents.rows(previous: previous, merged: merged, region: remoteRegion, time: now, evidence: nil)
            }
            guard case .changed(let written) = outcome else {
                Issue.record("the contribution of 'other' was not written: \(outcome)")
                throw TestFailure("no event")
            }
            // (engine-a's partitions may log other events meanwhile, e.g. 'quiet' determined outside.)
            var frame = try await stream.next()
            var streamed: [(id: Int64, type: String, region: String?)] = [(frame.id, frame.type, frame.data["region"] as? String)]
            while frame.data["region"] as? String != "remote", streamed.count < 50 {
                frame = try await stream.next()
                streamed.append((frame.id, frame.type, frame.data["region"] as? String))
            }
            #expect(frame.id == written.last?.id && frame.type == "didDetermineState", "\(streamed)")
            #expect(frame.data["region"] as? String == "remote" && frame.data["state"] as? String == "inside")

            // engine-a hears `local` through the broker: its partition decides it inside.
            let topic = "regionkit/part/\(Self.partition(local))/espresense/devices/\(Self.token(local))/hall"
            let payload = Array(#"{"id":"\#(Self.token(local))","rssi":-62,"rssi@1m":-59,"distance":1.4}"#.utf8)
            try await publisher.waitUntilConnected()
            let inside = try await waitUntil(timeout: 30) {
                try await publisher.publish([MQTTMessage(topic: topic, payload: payload, qos: .atLeastOnce, retain: false)])
                let states = try await store.states()
                return states["local"]?.state == .inside && states["site"]?.state == .inside
            }
            let statesNow = try await store.states().mapValues(\.state)
            #expect(inside, "local/site not inside: \(statesNow)")
            // The stream goes on in log order with engine-a's own events (each once).
            while !streamed.contains(where: { $0.region == "local" && $0.type == "didDetermineState" }) {
                let next = try await stream.next()
                streamed.append((next.id, next.type, next.data["region"] as? String))
            }
            #expect(streamed.map(\.id) == streamed.map(\.id).sorted() && Set(streamed.map(\.id)).count == streamed.count, "\(streamed)")

            // Regions: the store's merged states, whichever member decided them.
            let after = try await client.request("GET", "/v1/regions").json["regions"] as? [[String: Any]] ?? []
            let states = Dictionary(uniqueKeysWithValues: after.compactMap { region in
                (region["identifier"] as? String).map { ($0, region["state"] as? String ?? "-") }
            })
            let stored = try await store.states()
            #expect(states == Dictionary(uniqueKeysWithValues: regions.map { ($0.identifier, stored[$0.identifier]?.state.rawValue ?? "unknown") }),
                    "the API says \(states), the store \(stored.mapValues(\.state))")
            #expect(states["site"] == "inside" && states["local"] == "inside" && states["remote"] == "inside" && states["quiet"] != "inside")
            // In pages (identifier order), the same reports, and the refusal on every page.
            var paged: [[String: Any]] = []
            var cursor: String?
            repeat {
                let page = try await client.request("GET", "/v1/regions?limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")).json
                #expect(page["total"] as? Int == 4 && page["preceding"] as? Int == paged.count && page["changesRefused"] is String, "\(page)")
                paged += page["regions"] as? [[String: Any]] ?? []
                cursor = page["nextCursor"] as? String
            } while cursor != nil && paged.count < 8
            #expect(paged.compactMap { $0["identifier"] as? String } == ["local", "quiet", "remote", "site"])
            #expect(paged.compactMap { region in (region["identifier"] as? String).map { ($0, region["state"] as? String ?? "-") } }
                        .allSatisfy { states[$0.0] == $0.1 }, "\(paged)")
            let remoteReport = try await client.request("GET", "/v1/regions/remote")
            #expect(remoteReport.status == 200 && remoteReport.json["state"] as? String == "inside")
            // (JSON numbers parsed back may differ in the last bits.)
            let since = try #require(remoteReport.json["since"] as? Double), storedSince = try #require(stored["remote"]?.since)
            #expect(abs(since - storedSince) < 1e-3 && remoteReport.json["stale"] as? Bool == false, "\(since) vs \(storedSince)")
            #expect(try await client.request("GET", "/v1/regions/nowhere").status == 404)

            // Region changes are configuration: 405 with Allow, saying why; auth still first.
            let put = try await client.request("PUT", "/v1/regions/extra", body: #"{"uuid": "\#(Self.uuid)", "major": 5}"#)
            #expect(put.status == 405 && put.headers["allow"] == "GET" && put.headers["content-type"] == "application/problem+json")
            #expect((put.json["detail"] as? String)?.contains("regions are configuration in cluster mode") == true, "\(put.text)")
            let delete = try await client.request("DELETE", "/v1/regions/local")
            #expect(delete.status == 405 && (delete.json["detail"] as? String)?.contains("configuration") == true)
            #expect(try await LoopbackClient(port: port, token: nil).request("PUT", "/v1/regions/extra", body: "{}").status == 401)
            #expect(try await store.storedRegions().map(\.region.identifier) == ["site", "local", "remote", "quiet"], "nothing changed")
            // request-state answers the stored merged state (200) and logs nothing.
            let lastBefore = try await store.lastEventID()
            let requested = try await client.request("POST", "/v1/regions/remote/request-state")
            #expect(requested.status == 200 && requested.json["state"] as? String == "inside")
            #expect(try await client.request("POST", "/v1/regions/nowhere/request-state").status == 404)
            #expect(try await store.lastEventID() == lastBefore)

            // Beacons: engine-a's partitions only, and it says so.
            let beacons = try await client.request("GET", "/v1/beacons")
            #expect(beacons.json["member"] as? String == "engine-a" && beacons.json["partitions"] as? [Int] == mine.sorted())
            #expect(beacons.json["partitionCount"] as? Int == Self.partitions)
            let heard = (beacons.json["beacons"] as? [[String: Any]] ?? []).compactMap { $0["minor"] as? Int }
            #expect(heard == [local], "engine-a heard \(heard); the remote beacon belongs to 'other'")
            // Scanners: the hall, as engine-a's partitions know it (merged across them), and who answered.
            let scanners = try await client.request("GET", "/v1/scanners")
            #expect(scanners.status == 200 && scanners.json["member"] as? String == "engine-a" && scanners.json["total"] as? Int == 1, "\(scanners.text)")
            let hall = (scanners.json["scanners"] as? [[String: Any]])?.first
            #expect(hall?["name"] as? String == "hall" && hall?["status"] as? String == "online" && hall?["lastHeard"] is Double, "\(scanners.text)")

            // The cluster from the shared store: both members, who holds which partition, the outputs.
            let cluster = try await client.request("GET", "/v1/cluster")
            #expect(cluster.status == 200, "\(cluster.text)")
            #expect(cluster.json["member"] as? String == "engine-a" && cluster.json["instance"] as? String == engine.instance)
            #expect(cluster.json["partitionCount"] as? Int == Self.partitions)
            let members = cluster.json["members"] as? [[String: Any]] ?? []
            #expect(members.compactMap { $0["member"] as? String } == ["engine-a", "other"], "\(cluster.text)")
            let engineA = members.first { $0["member"] as? String == "engine-a" }
            #expect(engineA?["instance"] as? String == engine.instance && engineA?["live"] as? Bool == true)
            #expect(engineA?["partitions"] as? [Int] == mine.sorted(), "\(cluster.text)")
            let partitionLeases = cluster.json["partitions"] as? [[String: Any]] ?? []
            #expect(partitionLeases.compactMap { $0["partition"] as? Int } == Array(0..<Self.partitions))
            #expect(partitionLeases.allSatisfy { lease in
                let partition = lease["partition"] as? Int ?? -1
                return lease["owner"] as? String == (mine.contains(partition) ? "engine-a" : "other") && lease["live"] as? Bool == true
            }, "\(cluster.text)")
            // Exactly the keys /openapi.yaml documents (its objects allow no others).
            #expect(Set(cluster.json.keys) == ["member", "instance", "partitionCount", "members", "partitions", "outputs"])
            // engine-a records its region definitions' digest; "other" (rounds run by the test) none.
            let memberKeys: Set<String> = ["member", "instance", "live", "expiresIn", "sightings", "partitions"]
            #expect(members.allSatisfy { Set($0.keys) == ($0["member"] as? String == "engine-a" ? memberKeys.union(["regions"]) : memberKeys) },
                    "\(cluster.text)")
            #expect(engineA?["regions"] as? String == engine.regionDefinitions && engine.regionDefinitions?.hasPrefix("4 regions ") == true,
                    "\(cluster.text)")
            #expect(partitionLeases.allSatisfy { Set($0.keys) == ["partition", "owner", "epoch", "live", "expiresIn"] }, "\(cluster.text)")
            let outputs = cluster.json["outputs"] as? [String: Any]
            #expect(outputs.map { Set($0.keys) == ["owner", "epoch", "live", "expiresIn"] } == true, "\(cluster.text)")
            #expect(outputs?["owner"] as? String == "engine-a" && outputs?["live"] as? Bool == true && outputs?["partition"] == nil, "\(cluster.text)")

            // Sources and readiness: each partition's MQTT session.
            let sources = try await client.request("GET", "/v1/sources").json["sources"] as? [[String: Any]] ?? []
            #expect(sources.compactMap { $0["name"] as? String } == mine.sorted().map { "partition-\($0)" })
            #expect((sources.first { $0["name"] as? String == "partition-\(Self.partition(local))" }?["sightings"] as? Int ?? 0) >= 1)
            let ready = try await client.request("GET", "/readyz")
            #expect(ready.status == 200 && ready.json["status"] as? String == "ready", "\(ready.text)")
            let checks = (ready.json["checks"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(checks == ["store"] + mine.sorted().map { "source:partition-\($0)" })

            // Metrics from the store: regions by merged state, the member's partitions.
            let metrics = try await client.request("GET", "/metrics").text
            #expect(metrics.contains(#"regionkit_regions{state="inside"} 3"#), "\(metrics)")
            #expect(metrics.contains("regionkit_cluster_partitions_held 2"))
            let lines = Set(metrics.split(separator: "\n").map(String.init))
            #expect(!lines.isDisjoint(with: ["regionkit_cluster_members_live 2.0", "regionkit_cluster_members_live 2"]), "\(metrics)")
            #expect(!lines.isDisjoint(with: ["regionkit_cluster_partitions_unheld 0.0", "regionkit_cluster_partitions_unheld 0"]), "\(metrics)")
            #expect(!lines.isDisjoint(with: ["regionkit_cluster_region_definitions 1.0", "regionkit_cluster_region_definitions 1"]), "\(metrics)")
            #expect(metrics.contains(#"regionkit_events_total{type="didDetermineState"}"#))
            #expect(!metrics.contains("regionkit_persistence_failures_total"), "not counted in cluster mode")
            // This member holds the outputs: its MQTT events output, connected, with its cursor.
            let output = #"{output="mqtt:httptest",kind="mqtt"}"#
            #expect(!lines.isDisjoint(with: ["regionkit_output_connected\(output) 1.0", "regionkit_output_connected\(output) 1"]), "\(metrics)")
            #expect(metrics.contains("regionkit_output_events_published_total\(output) "), "\(metrics)")
            #expect(metrics.contains("regionkit_output_events_behind\(output) "), "\(metrics)")
            let events = try await client.request("GET", "/v1/events?type=didDetermineState").json["events"] as? [[String: Any]] ?? []
            #expect(Set(events.compactMap { $0["region"] as? String }).isSuperset(of: ["site", "local", "remote"]))
            // The dashboard is served as for one daemon.
            #expect(try await client.request("GET", "/").status == 200)
            #expect(try await client.request("GET", "/openapi.yaml").text.contains("RegionsAreConfiguration"))

            // The store down: not ready (503, naming the store); back: ready again, and the regions read as before.
            postgres.stop()
            let down = try await client.request("GET", "/readyz", timeout: 30)
            #expect(down.status == 503 && down.json["status"] as? String == "not ready", "\(down.text)")
            #expect((down.json["checks"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "store" }?["ok"] as? Bool == false)
            try await postgres.start()
            let back = await waitUntil(timeout: 30) {
                (try? await client.request("GET", "/readyz"))?.status == 200
            }
            #expect(back, "not ready again after PostgreSQL came back")
            #expect(try await client.request("GET", "/v1/regions/remote").json["state"] as? String == "inside")
        } catch {
            Issue.record("\(error)")
        }
        serving.cancel()
        _ = await serving.result
        await publisher.shutdown()
        await engine.stop(reason: "test over")
        running.cancel()
        await running.value
        await engineStore.shutdown()
        await store.shutdown()
    }
}
