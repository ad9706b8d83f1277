import ArgumentParser
import Foundation
import Logging
import RegionKit
import RegionKitConcurrency
import RegionKitMQTT
import RegionKitPostgres
import RegionKitStore

/// `regionkit bench cluster`: the load generator and observer for a running RegionKit cluster
/// (`scripts/bench-cluster.sh` starts the brokers, PostgreSQL and the engines around it).
///
/// 1. Latency, on the idle cluster: one sighting of a beacon not seen before is published (QoS 1)
///    and the time until its region's "inside" (`didDetermineState`, logged with any `didEnterRegion`) is readable in the shared store is measured — the
///    whole path: broker, partition mapping, engine, merge and commit in PostgreSQL.
/// 2. Throughput: a synthetic fleet (`--scanners` scanners × `--beacons` beacons, ESPresense
///    messages) is published as fast as `--publishers` clients can for `--seconds`; the engines'
///    own counts (each member records its sightings in the store every lease round) say how many
///    went through, and when.
struct BenchCluster: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Against a running cluster: publish → logged-event latency (p50/p99) and sightings/s through brokers and engines.",
        discussion: """
            Run scripts/bench-cluster.sh, which starts 3 NATS nodes, PostgreSQL and 1–3 engines (regionkit run with a cluster: \
            block) and calls this. The engines' configuration must monitor one-beacon regions lat-0…lat-(samples-1) for \
            UUID --uuid, major 3 (the latency beacons), and the fleet's beacons are major 2 of the same UUID.
            """
    )

    @Option(help: "The brokers' MQTT URLs, comma-separated (publishers are spread over them).")
    var brokers: String

    @Option(help: "The cluster's store, postgres://user@host:port/database (password in $REGIONKIT_STORE_PASSWORD or the file $REGIONKIT_STORE_PASSWORD_FILE names).")
    var store: String

    @Option(help: "How many engines must be members before measuring.")
    var engines: Int

    @Option(help: "Partitions the broker mapping makes.")
    var partitions: Int = 16

    @Option(help: "Beacons' proximity UUID.")
    var uuid: String = "5A4BCFCE-174E-4BAC-A814-092E77F6B7E5"

    @Option(help: "Latency samples (beacons lat-0… entering one at a time).")
    var samples: Int = 100

    @Option(help: "Seconds of publishing for the throughput.")
    var seconds: Double = 20

    @Option(help: "Synthetic fleet: scanners (rooms).")
    var scanners: Int = 1_000

    @Option(help: "Synthetic fleet: beacons.")
    var beacons: Int = 100

    @Option(help: "Publishing clients.")
    var publishers: Int = 6

    @Option(help: "Offered sightings per second, all publishers together (0: as fast as they can).")
    var rate: Int = 0

    @Option(help: "QoS of the fleet's messages: 1 (default), or 0 as ESPresense publishes (see docs/cluster.md: QoS 0 through the mapping was unreliable on NATS 2.9.10).")
    var qos: Int = 1

    @Flag(help: "One JSON object instead of text.")
    var json = false

    func validate() throws {
        guard (1...64).contains(engines) else { throw ValidationError("--engines must be within 1...64") }
        guard (1...65_536).contains(partitions) else { throw ValidationError("--partitions must be within 1...65536") }
        guard (0...10_000).contains(samples) else { throw ValidationError("--samples must be within 0...10000") }
        guard seconds.isFinite, (1...3600).contains(seconds) else { throw ValidationError("--seconds must be within 1...3600") }
        guard (1...100_000).contains(scanners), (1...65_535).contains(beacons), scanners * beacons <= 10_000_000 else {
            throw ValidationError("--scanners within 1...100000, --beacons within 1...65535, at most 10,000,000 pairs")
        }
        guard (1...64).contains(publishers) else { throw ValidationError("--publishers must be within 1...64") }
        guard (0...10_000_000).contains(rate) else { throw ValidationError("--rate must be within 0...10000000") }
        guard qos == 0 || qos == 1 else { throw ValidationError("--qos must be 0 or 1") }
        guard UUID(uuidString: uuid) != nil else { throw ValidationError("--uuid '\(uuid)' is not a UUID") }
    }

    func run() async throws {
        try await Console.reportingErrors {
            guard let url = try PostgresStoreURL(parsing: store) else {
                throw RegionKitError(.invalidArgument, "--store must be postgres://user@host:port/database")
            }
            let urls = brokers.split(separator: ",").map(String.init)
            guard !urls.isEmpty else { throw RegionKitError(.invalidArgument, "--brokers: give at least one mqtt:// URL") }
            var logger = Logger(label: "regionkit.bench.cluster")
            logger.logLevel = .warning
            let database = try await PostgresRegionStore(host: url.host, port: url.port, username: url.user, password: url.password(),
                                                         database: url.database, tls: url.tls(), logger: logger)
            do {
                let result = try await measure(database, urls: urls, logger: logger)
                await database.shutdown()
                print(json ? result.json : result.text)
            } catch {
                await database.shutdown()
                throw error
            }
        }
    }

    struct Result {
        var engines: Int
        var latencies: [Double]
        var published: Int
        var publishSeconds: Double
        var ingested: Int64
        var ingestSeconds: Double
        var qos: Int
        /// The offered rate (0: as fast as the publishers could).
        var offered: Int

        var publishRate: Double { Double(published) / publishSeconds }
        var ingestRate: Double { ingestSeconds > 0 ? Double(ingested) / ingestSeconds : 0 }

        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return .nan }
            let sorted = latencies.sorted()
            return sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))]
        }

        var text: String {
            """
            engines \(engines): latency publish → event in the store p50 \(String(format: "%.1f", percentile(0.5) * 1000)) ms, \
            p99 \(String(format: "%.1f", percentile(0.99) * 1000)) ms (\(latencies.count) samples); \
            published \(published) QoS \(qos) in \(String(format: "%.1f", publishSeconds)) s (\(Int(publishRate))/s), \
            engines ingested \(ingested) (\(String(format: "%.1f", Double(ingested) / Double(max(1, published)) * 100)) %) \
            at \(Int(ingestRate))/s
            """
        }

        var json: String {
            var line = JSONLine()
            line.add("engines", engines)
            line.add("latencyP50Ms", percentile(0.5) * 1000)
            line.add("latencyP99Ms", percentile(0.99) * 1000)
            line.add("latencySamples", latencies.count)
            line.add("qos", qos)
            line.add("offeredPerSecond", offered)
            line.add("published", published)
            line.add("publishSeconds", publishSeconds)
            line.add("ingested", Int(ingested))
            line.add("ingestSeconds", ingestSeconds)
            line.add("ingestPerSecond", ingestRate)
            return line.text
        }
    }

    func measure(_ database: PostgresRegionStore, urls: [String], logger: Logger) async throws -> Result {
        // Every engine a member and every partition leased.
        let clock = ContinuousClock()
        let ready = clock.now.advanced(by: .seconds(90))
        while true {
            let members = try await database.members().filter { $0.expiresIn > 0 }
            let leases = try await database.leases()
            if members.count >= engines && leases.count == partitions && leases.allSatisfy({ $0.expiresIn > 0 }) { break }
            guard clock.now < ready else {
                throw RegionKitError(.sourceUnavailable, "the cluster is not ready after 90 s: \(members.count) of \(engines) members, \(leases.filter { $0.expiresIn > 0 }.count) of \(partitions) partitions leased")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        let clients = try (0..<publishers).map { index in
            var configuration = try MQTTClientConfiguration(urls: urls.indices.map { urls[(index + $0) % urls.count] })
            configuration.clientID = "regionkit-bench-\(index)-\(UUID().uuidString.prefix(8))"
            return MQTTClient(configuration: configuration, logger: logger, onMessage: { _ in })
        }
        let runs = clients.map { client in Task { await client.run() } }
        defer {
            for run in runs { run.cancel() }
        }
        for client in clients { try await client.waitUntilConnected() }
        let latencies = try await latency(database, clients: clients)
        let throughput = try await throughput(database, clients: clients)
        for client in clients { await client.shutdown() }
        return Result(engines: engines, latencies: latencies, published: throughput.published, publishSeconds: throughput.publishSeconds,
                      ingested: throughput.ingested, ingestSeconds: throughput.ingestSeconds, qos: qos, offered: rate)
    }

    func message(major: Int, minor: Int, scanner: String, qos: MQTTQoS) -> MQTTMessage {
        let id = "iBeacon:\(uuid.lowercased())-\(major)-\(minor)"
        return MQTTMessage(topic: "espresense/devices/\(id)/\(scanner)",
                           payload: Array(#"{"id":"\#(id)","rssi":-63,"rssi@1m":-59,"distance":1.6}"#.utf8), qos: qos, retain: false)
    }

    /// Publish → the region's "inside" readable in the store, one new beacon at a time (idle cluster).
    func latency(_ database: PostgresRegionStore, clients: [MQTTClient]) async throws -> [Double] {
        var results: [Double] = []
        var cursor = try await database.lastEventID()
        for sample in 0..<samples {
            let region = "lat-\(sample)"
            let started = Date()
            try await clients[sample % clients.count].publish(message(major: 3, minor: sample, scanner: "bench", qos: .atLeastOnce))
            let deadline = started.addingTimeInterval(10)
            var seen: Date?
            while seen == nil && Date() < deadline {
                // didEnterRegion, or the first determination when the region had none yet: the first merged "inside".
                let events = try await database.events(since: nil, region: region, type: "didDetermineState", afterID: cursor, limit: 1)
                if let event = events.first(where: { $0.state == "inside" }) {
                    seen = Date()
                    cursor = max(cursor, event.id)
                } else {
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            guard let seen else {
                throw RegionKitError(.sourceUnavailable, "no inside state for \(region) within 10 s: is it in the engines' configuration (UUID \(uuid), major 3, minor \(sample))?")
            }
            results.append(seen.timeIntervalSince(started))
        }
        return results
    }

    /// The fleet at full speed for `seconds`; the engines' counts before and after.
    func throughput(_ database: PostgresRegionStore, clients: [MQTTClient]) async throws
        -> (published: Int, publishSeconds: Double, ingested: Int64, ingestSeconds: Double) {
        let level: MQTTQoS = qos == 0 ? .atMostOnce : .atLeastOnce
        // One message per (beacon, scanner) pair, cycled: the fleet's sightings in round-robin.
        let pairs = scanners * beacons
        let batch = 500
        func total() async throws -> Int64 { try await database.members().reduce(0) { $0 + $1.sightings } }
        let before = try await total()
        let started = Date()
        let deadline = started.addingTimeInterval(seconds)
        let counts = LockedBox(0)
        await withTaskGroup(of: Void.self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    var next = index * (pairs / clients.count)
                    // Paced: this publisher's batch every `period` seconds (the offered rate split evenly).
                    let period = self.rate > 0 ? Double(batch * clients.count) / Double(self.rate) : 0
                    var due = started
                    while Date() < deadline {
                        if period > 0 {
                            let wait = due.timeIntervalSinceNow
                            if wait > 0 { try? await Task.sleep(for: .seconds(wait)) }
                            due = due.addingTimeInterval(period)
                        }
                        let messages = (0..<batch).map { offset -> MQTTMessage in
                            let pair = (next + offset) % pairs
                            return self.message(major: 2, minor: pair % beacons, scanner: "scanner-\(pair / beacons)", qos: level)
                        }
                        next = (next + batch) % pairs
                        do {
                            try await client.publish(messages)
                            counts.withLock { $0 += messages.count }
                        } catch {
                            try? await Task.sleep(for: .milliseconds(50))
                        }
                    }
                }
            }
        }
        let published = counts.withLock { $0 }
        let publishSeconds = Date().timeIntervalSince(started)
        // The engines record their counts once per lease round: wait until they stop growing.
        var last = try await total()
        var lastChange = Date()
        while Date().timeIntervalSince(lastChange) < 4 && Date().timeIntervalSince(started) < seconds + 120 {
            try await Task.sleep(for: .milliseconds(250))
            let now = try await total()
            if now != last {
                last = now
                lastChange = Date()
            }
        }
        return (published, publishSeconds, last - before, lastChange.timeIntervalSince(started))
    }
}
