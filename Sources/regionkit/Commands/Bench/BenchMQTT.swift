import ArgumentParser
import Foundation
import Logging
import RegionKitConcurrency
import Synchronization
import RegionKit
import RegionKitGateway
import RegionKitMQTT
import RegionKitService
import RegionKitStore

/// `regionkit bench mqtt`: RegionKit as an MQTT presence hub against the broker's own client.
///
/// 1. Throughput: the same ESPresense messages, blasted by `mosquitto_pub -l` publishers, are
///    received once by `mosquitto_sub` alone and once by RegionKit's MQTT source feeding the engine
///    (decode, match against the regions, nearest-scanner tracking); each side's rate is messages
///    divided by the time from the publishers' start to its last message; the ratio says whether
///    RegionKit keeps up with the broker.
/// 2. Latency: the daemon's whole path, one sighting at a time: published sighting → broker →
///    MQTT source → engine → event durably logged (SQLite) → events topic → broker → a subscriber.
struct BenchMQTT: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mqtt",
        abstract: "MQTT ingest vs mosquitto_sub (messages/s, ratio) and sighting → published event latency (p50/p99), on a private Mosquitto.",
        discussion: "Needs Debian's mosquitto and mosquitto-clients. Run a release build: swift run -c release regionkit bench mqtt."
    )

    @Option(help: "Messages for the throughput runs.")
    var messages: Int = 200_000

    @Option(help: "Distinct beacons in those messages.")
    var beacons: Int = 1_000

    @Option(help: "Sightings to time for the latency (each enters its own region).")
    var samples: Int = 300

    @Option(help: "Logged events in the events-topic backlog run (published from the log one per round, then 64 per round; 0 skips it).")
    var backlog: Int = 4_000

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard (1_000...10_000_000).contains(messages) else { throw ValidationError("--messages must be within 1000...10000000") }
        guard (1...65_535).contains(beacons) else { throw ValidationError("--beacons must be within 1...65535") }
        guard (10...10_000).contains(samples) else { throw ValidationError("--samples must be within 10...10000") }
        guard (0...1_000_000).contains(backlog) else { throw ValidationError("--backlog must be within 0...1000000") }
    }

    static let uuid = UUID(uuidString: "B0A7E5E1-0000-4000-8000-00000000BE4C")!
    static let rooms = ["kitchen", "hall"]

    func run() async throws {
        try await Console.reportingErrors {
            guard let pub = PrivateBroker.tool("mosquitto_pub"), let sub = PrivateBroker.tool("mosquitto_sub") else {
                throw RegionKitError(.invalidArgument, "mosquitto_pub/mosquitto_sub not found (apt-get install mosquitto-clients)")
            }
            let broker = try PrivateBroker()
            defer { broker.stop() }
            let files = try writeMessages(into: broker.directory)
            let reference = try await timeMosquittoSub(sub, publisher: pub, files: files, broker: broker)
            let clientOnly = try await timeClientOnly(publisher: pub, files: files, broker: broker)
            let ours = try await timeRegionKit(publisher: pub, files: files, broker: broker)
            let latency = try await timeLatency(broker: broker)
            var backlogs: [(eventsPerRound: Int, throughput: Throughput)] = []
            for perRound in backlog == 0 ? [] : [1, 64] { backlogs.append(try await timeEventBacklog(broker: broker, eventsPerRound: perRound)) }
            report(reference: reference, clientOnly: clientOnly, ours: ours, latency: latency, backlogs: backlogs)
        }
    }

    // MARK: Throughput

    /// One file of ESPresense payloads per room (for `mosquitto_pub -l`), beacons round-robin.
    func writeMessages(into directory: String) throws -> [(topic: String, path: String)] {
        try Self.rooms.enumerated().map { roomIndex, room in
            var text = ""
            text.reserveCapacity(messages / Self.rooms.count * 120)
            for index in stride(from: roomIndex, to: messages, by: Self.rooms.count) {
                let beacon = index % beacons
                let id = ESPresenseMessage.id(for: BeaconIdentity(uuid: Self.uuid, major: UInt16(beacon / 256 + 1), minor: UInt16(beacon % 256)))
                text += #"{"id":"\#(id)","rssi":\#(-55 - index % 30).5,"rssi@1m":-59,"int":100}"# + "\n"
            }
            let path = directory + "/\(room).lines"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return ("espresense/devices/bench/\(room)", path)
        }
    }

    /// Starts the publishers; returns when they have exited.
    func publish(_ publisher: String, files: [(topic: String, path: String)], broker: PrivateBroker) async throws {
        let processes = try files.map { file -> Process in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: publisher)
            process.arguments = ["-h", "127.0.0.1", "-p", "\(broker.port)", "-V", "mqttv311", "-t", file.topic, "-l", "-q", "0"]
            process.standardInput = FileHandle(forReadingAtPath: file.path)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        for process in processes { while process.isRunning { try await Task.sleep(for: .milliseconds(2)) } }
    }

    struct Throughput {
        var received: Int
        var seconds: Double
        var perSecond: Double { Double(received) / seconds }
    }

    func timeMosquittoSub(_ sub: String, publisher: String, files: [(topic: String, path: String)], broker: PrivateBroker) async throws -> Throughput {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sub)
        process.arguments = ["-h", "127.0.0.1", "-p", "\(broker.port)", "-V", "mqttv311", "-t", "espresense/devices/+/+", "-q", "0",
                             "-C", "\(messages)", "-W", "300"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try await Task.sleep(for: .milliseconds(500))     // connected and subscribed on loopback
        let start = ContinuousClock.now
        try await publish(publisher, files: files, broker: broker)
        while process.isRunning { try await Task.sleep(for: .milliseconds(1)) }
        let seconds = start.duration(to: .now).inSeconds
        // mosquitto_sub exits 0 after -C messages, non-zero on its -W timeout.
        return Throughput(received: process.terminationStatus == 0 ? messages : 0, seconds: seconds)
    }

    /// RegionKit's MQTT client alone, counting messages: what the protocol side costs.
    func timeClientOnly(publisher: String, files: [(topic: String, path: String)], broker: PrivateBroker) async throws -> Throughput {
        var logger = Logger(label: "regionkit.bench")
        logger.logLevel = .error
        let count = Atomic<Int>(0)
        let client = MQTTClient(configuration: try MQTTClientConfiguration(url: broker.url), logger: logger,
                                onMessage: { _ in count.add(1, ordering: .relaxed) })
        let running = Task { await client.run() }
        try await client.waitUntilConnected()
        try await client.subscribe("espresense/devices/+/+", qos: .atMostOnce)
        let start = ContinuousClock.now
        try await publish(publisher, files: files, broker: broker)
        let deadline = ContinuousClock.now + .seconds(300)
        while count.load(ordering: .relaxed) < messages && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        let seconds = start.duration(to: .now).inSeconds
        await client.shutdown()
        await running.value
        return Throughput(received: count.load(ordering: .relaxed), seconds: seconds)
    }

    func timeRegionKit(publisher: String, files: [(topic: String, path: String)], broker: PrivateBroker) async throws -> Throughput {
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        let manager = LocationManager(profile: profile, automation: Automation(), sources: [.beacon: .authorized])
        // A region per major (256 beacons each) and one for the whole UUID.
        manager.startMonitoring(for: try BeaconRegion(identifier: "all", uuid: Self.uuid))
        for major in 1...(beacons - 1) / 256 + 1 {
            manager.startMonitoring(for: try BeaconRegion(identifier: "major-\(major)", uuid: Self.uuid, major: UInt16(major)))
        }
        var logger = Logger(label: "regionkit.bench")
        logger.logLevel = .error
        let ingest = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .espresense)], manager: manager, logger: logger)
        let client = MQTTClient(configuration: try MQTTClientConfiguration(url: broker.url), logger: logger,
                                onMessage: { ingest.handle(topic: $0.topic, payload: $0.payload) })
        let running = Task { await client.run() }
        try await client.waitUntilConnected()
        try await client.subscribe("espresense/devices/+/+", qos: .atMostOnce)
        let start = ContinuousClock.now
        try await publish(publisher, files: files, broker: broker)
        let deadline = ContinuousClock.now + .seconds(300)
        while ingest.statistics.messages < messages && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        let seconds = start.duration(to: .now).inSeconds
        let statistics = ingest.statistics
        await client.shutdown()
        await running.value
        guard statistics.rejectedTotal == 0, statistics.sightings == statistics.messages else {
            throw RegionKitError(.malformedInput, "bench messages were not all decoded: \(statistics)")
        }
        return Throughput(received: statistics.messages, seconds: seconds)
    }

    // MARK: Latency

    struct Latency {
        var microseconds: [Double]
        func percentile(_ p: Double) -> Double {
            microseconds[min(microseconds.count - 1, max(0, Int((p * Double(microseconds.count)).rounded(.up)) - 1))]
        }
    }

    func timeLatency(broker: PrivateBroker) async throws -> Latency {
        let path = broker.directory + "/latency.sqlite"
        let store = try RegionStore(path: path)
        var logger = Logger(label: "regionkit.bench")
        logger.logLevel = .error
        let hubBox = LockedBox<PresenceHub?>(nil)
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()
        let service = MonitoringService(store: store, profile: profile, automation: Automation(), sources: [.beacon: .authorized],
                                        logger: logger, onLogged: { _ in hubBox.withLock { $0 }?.eventLogged() })
        let hub = try PresenceHub(configuration: MQTTHubConfiguration(url: broker.url, site: "bench"), homeAssistant: nil,
                                  sources: [MQTTSourceConfiguration(format: .espresense)], service: service, logger: logger)
        hubBox.withLock { $0 = hub }
        try await hub.prepare()
        let hubTask = Task { await hub.run() }
        let identities = (0..<samples).map { BeaconIdentity(uuid: Self.uuid, major: 7, minor: UInt16($0)) }
        try await service.start(regions: try identities.enumerated().map { index, identity in
            .beacon(try BeaconRegion(identifier: "r\(index)", uuid: identity.uuid, major: identity.major, minor: identity.minor))
        })

        // The observer stamps the first didEnterRegion of each region on the events topic.
        let (arrivals, arrived) = AsyncStream.makeStream(of: (String, ContinuousClock.Instant).self)
        let observer = MQTTClient(configuration: try MQTTClientConfiguration(url: broker.url), logger: logger, onMessage: { message in
            let now = ContinuousClock.now
            guard let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any],
                  object["type"] as? String == "didEnterRegion", let region = object["region"] as? String else { return }
            arrived.yield((region, now))
        })
        let observing = Task { await observer.run() }
        try await observer.waitUntilConnected()
        try await observer.subscribe(hub.topics.events, qos: .atLeastOnce)
        let publisher = MQTTClient(configuration: try MQTTClientConfiguration(url: broker.url), logger: logger, onMessage: { _ in })
        let publishing = Task { await publisher.run() }
        try await publisher.waitUntilConnected()

        // Every region first determined outside (3 s without a sighting), so each sighting enters.
        let deadline = ContinuousClock.now + .seconds(30)
        while service.manager.monitoredRegions.count < samples
                || service.manager.monitoredRegions.contains(where: { service.manager.state(for: $0) != .outside }) {
            guard ContinuousClock.now < deadline else { throw RegionKitError(.sourceUnavailable, "the latency regions were not determined outside in 30 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
        var iterator = arrivals.makeAsyncIterator()
        var latencies: [Double] = []
        for (index, identity) in identities.enumerated() {
            let payload = Array(#"{"id":"\#(ESPresenseMessage.id(for: identity))","rssi":-60,"rssi@1m":-59}"#.utf8)
            let start = ContinuousClock.now
            try await publisher.publish(MQTTMessage(topic: "espresense/devices/bench/kitchen", payload: payload, qos: .atMostOnce))
            guard let (region, time) = await iterator.next() else { break }
            guard region == "r\(index)" else { throw RegionKitError(.malformedInput, "expected the enter of r\(index), got \(region)") }
            latencies.append(start.duration(to: time).inSeconds * 1e6)
        }
        arrived.finish()
        await hub.shutdown()
        hubTask.cancel()
        for client in [observer, publisher] { await client.shutdown() }
        _ = await (hubTask.value, observing.value, publishing.value)
        return Latency(microseconds: latencies.sorted())
    }

    // MARK: Events topic backlog

    /// A backlog of ``backlog`` logged `didDetermineState` events (two messages each: the event and
    /// the region's retained state) published from the log by a hub that connects once they are
    /// logged; a subscriber counts the events topic. Rate = events / time from the hub's start to
    /// the last one received.
    func timeEventBacklog(broker: PrivateBroker, eventsPerRound: Int) async throws -> (eventsPerRound: Int, throughput: Throughput) {
        var logger = Logger(label: "regionkit.bench")
        logger.logLevel = .error
        let store = try RegionStore(path: broker.directory + "/backlog-\(eventsPerRound).sqlite")
        let service = MonitoringService(store: store, automation: Automation(), clock: VirtualClock(), sources: [.beacon: .authorized], logger: logger)
        let site = "backlog\(eventsPerRound)"
        let hub = try PresenceHub(configuration: MQTTHubConfiguration(url: broker.url, site: site), homeAssistant: nil, sources: [],
                                  service: service, logger: logger, eventsPerRound: eventsPerRound)
        try await hub.prepare()     // the cursor at the log's end: the backlog below is new to it
        for start in stride(from: 0, to: backlog, by: 1_000) {
            _ = try store.apply((start..<min(start + 1_000, backlog)).map { index in
                let state = index % 2 == 0 ? "inside" : "outside"
                let line = #"{"t":\#(index),"type":"didDetermineState","region":"r\#(index % 100)","state":"\#(state)"}"#
                return .event(time: Double(index), type: "didDetermineState", region: "r\(index % 100)", state: state, reason: nil, json: line, hooks: [])
            })
        }
        let received = Atomic<Int>(0)
        let counter = MQTTClient(configuration: try MQTTClientConfiguration(url: broker.url), logger: logger,
                                 onMessage: { _ in received.add(1, ordering: .relaxed) })
        let counting = Task { await counter.run() }
        try await counter.waitUntilConnected()
        try await counter.subscribe(PresenceTopics(site: site).events, qos: .atLeastOnce)
        let start = ContinuousClock.now
        let hubTask = Task { await hub.run() }
        let deadline = ContinuousClock.now + .seconds(300)
        while received.load(ordering: .relaxed) < backlog && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        let seconds = start.duration(to: .now).inSeconds
        await hub.shutdown()
        hubTask.cancel()
        await counter.shutdown()
        _ = await (hubTask.value, counting.value)
        return (eventsPerRound, Throughput(received: received.load(ordering: .relaxed), seconds: seconds))
    }

    // MARK: Report

    func report(reference: Throughput, clientOnly: Throughput, ours: Throughput, latency: Latency,
                backlogs: [(eventsPerRound: Int, throughput: Throughput)]) {
        let ratio = ours.perSecond / reference.perSecond
        if output.json {
            var line = JSONLine()
            line.add("messages", messages)
            line.add("beacons", beacons)
            line.add("mosquitto_sub_per_second", reference.perSecond.rounded())
            line.add("regionkit_client_only_per_second", clientOnly.perSecond.rounded())
            line.add("regionkit_per_second", ours.perSecond.rounded())
            line.add("ratio", ratio, decimals: 3)
            line.add("latency_samples", latency.microseconds.count)
            for (name, p) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)] { line.add("latency_\(name)_us", latency.percentile(p).rounded()) }
            line.add("latency_max_us", (latency.microseconds.last ?? 0).rounded())
            for (perRound, throughput) in backlogs { line.add("backlog_\(perRound)_per_round_events_per_second", throughput.perSecond.rounded()) }
            Console.line(line.text)
            return
        }
        Console.line("MQTT ingest through a private Mosquitto on 127.0.0.1: \(messages) ESPresense messages (\(beacons) beacons, \(Self.rooms.count) rooms), QoS 0, from \(Self.rooms.count) mosquitto_pub -l publishers")
        Console.line("  subscriber                         messages    seconds    messages/s")
        Console.line(String(format: "  mosquitto_sub (receive only)     %10d   %8.2f   %11.0f", reference.received, reference.seconds, reference.perSecond))
        Console.line(String(format: "  regionkit MQTT client only       %10d   %8.2f   %11.0f   ratio %.2f", clientOnly.received, clientOnly.seconds,
                            clientOnly.perSecond, clientOnly.perSecond / reference.perSecond))
        Console.line(String(format: "  regionkit (decode + engine)      %10d   %8.2f   %11.0f   ratio %.2f", ours.received, ours.seconds, ours.perSecond, ratio))
        Console.line("sighting published → its didEnterRegion published on the events topic (broker, MQTT source, engine, SQLite event log, events output, broker), \(latency.microseconds.count) sightings one at a time")
        Console.line(String(format: "  p50 %.2f ms   p90 %.2f ms   p99 %.2f ms   max %.2f ms", latency.percentile(0.5) / 1000, latency.percentile(0.9) / 1000,
                            latency.percentile(0.99) / 1000, (latency.microseconds.last ?? 0) / 1000))
        guard !backlogs.isEmpty else { return }
        Console.line("events topic: a backlog of \(backlog) logged events (didDetermineState: the event + the region's retained state, QoS 1) published from the SQLite log")
        Console.line("  events per round trip     received    seconds      events/s")
        for (perRound, throughput) in backlogs {
            Console.line(String(format: "  %20d   %10d   %8.2f   %11.0f", perRound, throughput.received, throughput.seconds, throughput.perSecond))
        }
    }
}
