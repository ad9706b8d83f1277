import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GRDB
import Testing
import RegionKitStore
import RegionKitTestSupport

/// The daemon as a real process under faults: a source that cannot work beside one that does, a
/// damaged recording, a second daemon or a foreign file on the store, a full disk, the store
/// deleted or replaced, the controller, gpsd and the broker killed and restarted, SIGTERM in a
/// burst. Each time the daemon keeps working or stops with a clear reason, and every event it
/// acknowledged (printed with --json after the commit) is in the store.
@Suite("regionkit run under faults", .serialized, .tags(.endToEnd))
struct DaemonFaultTests {
    static let museumUUID = "5A4BCFCE-174E-4BAC-A814-092E77F6B7E5"
    static let beaconUUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    /// The museum and one exhibit: the visitor enters and leaves the exhibit on every loop.
    static let museumRegion = "  - {identifier: museum, uuid: \(museumUUID)}\n  - {identifier: exhibit-2, uuid: \(museumUUID), major: 2}"
    static func isMuseum(_ event: StoredEvent) -> Bool { event.region == "museum" || event.region == "exhibit-2" }
    static let busySimulator = "  - simulator: {scenario: museum, speed: 40, repeat: true}"

    static func config(regions: [String], sources: [String], extra: String = "") -> String {
        "profile: responsive\nregions:\n\(regions.joined(separator: "\n"))\nsources:\n\(sources.joined(separator: "\n"))\n\(extra)\n"
    }

    static func events(_ store: String) throws -> [StoredEvent] {
        try RegionStore(path: store).events()
    }

    static func sourceEvents(_ store: String, source prefix: String) throws -> [(state: String, detail: String?)] {
        try events(store).filter { $0.type == "sourceStatusChanged" }.compactMap { event in
            guard let object = try? JSONSerialization.jsonObject(with: Data(event.json.utf8)) as? [String: Any],
                  (object["source"] as? String)?.hasPrefix(prefix) == true, let state = object["state"] as? String else { return nil }
            return (state, object["detail"] as? String)
        }
    }

    static func get(_ port: UInt16, _ path: String) async throws -> (status: Int, json: [String: Any]) {
        let (body, response) = try await URLSession.shared.data(from: try #require(URL(string: "http://127.0.0.1:\(port)\(path)")))
        let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, object)
    }

    /// The sightings a source has handed to the engine (`GET /v1/sources`).
    static func sightings(_ port: UInt16, _ source: String) async -> Int? {
        let sources = (try? await get(port, "/v1/sources").json["sources"]) as? [[String: Any]]
        return sources?.first { $0["name"] as? String == source }?["sightings"] as? Int
    }

    /// The source's sightings once more than `count` past `before`, polled for up to `timeout`
    /// (the last count read if they never got there). Not a fixed wait: the museum loop at 40×
    /// has stretches of near-silence (the visitor far from every exhibit) of ≈ 1.75 s, so a
    /// fixed 2 s window could hold fewer than 20 sightings on a loaded machine.
    static func sightings(_ port: UInt16, _ source: String, moreThan count: Int, past before: Int,
                          timeout: Duration = .seconds(20)) async throws -> Int? {
        let deadline = ContinuousClock.now + timeout
        var last: Int?
        while ContinuousClock.now < deadline {
            if let now = await sightings(port, source) { last = now }   // a failed poll keeps the last count
            if let last, last > before + count { return last }
            try await Task.sleep(for: .milliseconds(200))
        }
        return last
    }

    /// Every acknowledged event is in the store, which passes integrity_check.
    static func expectNothingLost(_ daemon: Daemon, store: String, _ context: String) throws {
        let database = try RegionStore(path: store)
        #expect(try database.integrityCheck() == "ok", "\(context)")
        let stored = Set(try database.events().map(\.id))
        let missing = Set(daemon.acknowledged).subtracting(stored)
        #expect(missing.isEmpty, "\(context): acknowledged but missing \(missing.sorted().prefix(10))")
    }

    /// What a timed-out wait shows: whether the daemon runs, the events stored so far (types and
    /// regions), and the end of its stderr.
    static func diagnosis(_ daemon: Daemon, _ store: String) -> String {
        let events = (try? Self.events(store)).map { $0.suffix(12).map { "\($0.type)(\($0.region ?? "")\($0.state.map { " " + $0 } ?? ""))" }.joined(separator: ", ") } ?? "unreadable"
        return "running: \(daemon.process.isRunning); last events: [\(events)]; stderr: \(daemon.stderr.suffix(1500))"
    }

    // MARK: Sources judged one by one

    @Test("A simulator beside an unreachable controller: its sightings enter, the controller is reported (log line without --json, event, /v1/sources, /readyz degraded)")
    func unreachableControllerBesideSimulator() async throws {
        try await Loopback.withRefusingPort { deadPort in     // nothing listens there
            let httpPort = try Loopback.freePort()
            let config = Self.config(regions: [Self.museumRegion], sources: [Self.busySimulator, "  - hci: {device: \"tcp:127.0.0.1:\(deadPort)\"}"],
                                     extra: "http: {listen: \"127.0.0.1:\(httpPort)\", public: true}")
            let store = DaemonTests.temporaryStore()
            let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: store, json: false, logLevel: "info")
            try await eventually(timeout: .seconds(30), "the simulator's visitor found inside the museum; \(Self.diagnosis(daemon, store))") {
                (try? Self.events(store))?.contains { $0.type == "didDetermineState" && $0.region == "museum" && $0.state == "inside" } == true
            }
            let hciName = "hci:tcp:127.0.0.1:\(deadPort)"
            try await eventually(timeout: .seconds(15), "a sourceStatusChanged event for the controller; \(Self.diagnosis(daemon, store))") {
                (try? Self.sourceEvents(store, source: hciName))?.contains { $0.state == "connecting" } == true
            }
            let events = try Self.events(store)
            #expect(!events.contains { $0.type == "monitoringDidFail" }, "the beacon regions stay monitorable: \(events.filter { $0.type == "monitoringDidFail" }.map(\.reason))")
            #expect(events.first?.type == "processStarted")
            // The log an operator reads (no --json): the start and the failing source, named.
            let stderr = daemon.stderr
            #expect(stderr.contains("source unavailable, retrying") && stderr.contains(hciName), "\(stderr)")
            #expect(stderr.contains("source up") && stderr.contains("simulator:museum"), "\(stderr)")
            let sources = try #require(try await Self.get(httpPort, "/v1/sources").json["sources"] as? [[String: Any]])
            #expect(sources.first { $0["name"] as? String == hciName }?["state"] as? String == "connecting", "\(sources)")
            #expect(sources.first { $0["name"] as? String == "simulator:museum" }?["state"] as? String == "up", "\(sources)")
            let ready = try await Self.get(httpPort, "/readyz")
            #expect(ready.status == 200 && ready.json["status"] as? String == "degraded", "\(ready)")
            let checks = ready.json["checks"] as? [[String: Any]] ?? []
            #expect(checks.first { $0["name"] as? String == "source:\(hciName)" }?["ok"] as? Bool == false, "\(checks)")
            #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
            #expect(try Self.events(store).last?.type == "processStopped")
        }
    }

    /// A gateway recording: `good` sightings of the lobby beacon (hall scanner, 100 ms apart), then
    /// one object without its rssi (the damage), then one more good one (the reader skips the
    /// damaged object and keeps what follows it).
    static func damagedGatewayFile(good: Int) throws -> String {
        var text = ""
        let start: Int64 = 1_700_000_000_000
        for index in 0..<good {
            text += #"{"scannerID":"hall","uuid":"E2C56DB5DFFB48D2B060D0F5A71096E0","major":1,"minor":2,"rssi":-60,"time":\#(start + Int64(index) * 100)}"# + "\n"
        }
        text += #"{"scannerID":"hall","uuid":"E2C56DB5DFFB48D2B060D0F5A71096E0","major":1,"minor":2,"time":\#(start + Int64(good) * 100)}"# + "\n"
        text += #"{"scannerID":"hall","uuid":"E2C56DB5DFFB48D2B060D0F5A71096E0","major":1,"minor":2,"rssi":-60,"time":\#(start + Int64(good + 1) * 100)}"# + "\n"
        let url = TestScratch.directory.appendingPathComponent("rk-damaged-\(UUID().uuidString).json")
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test("A damaged gateway file beside a simulator: its sightings before the damage are replayed, it is reported failed, the simulator goes on")
    func damagedGatewayBesideSimulator() async throws {
        let file = try Self.damagedGatewayFile(good: 40)
        let httpPort = try Loopback.freePort()
        let config = Self.config(regions: [Self.museumRegion, "  - {identifier: lobby, uuid: \(Self.beaconUUID)}"],
                                 sources: [Self.busySimulator, "  - gateway: {file: \(file), speed: 2}"],
                                 extra: "http: {listen: \"127.0.0.1:\(httpPort)\", public: true}")
        let store = DaemonTests.temporaryStore()
        let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: store)
        let gatewayName = "gateway:" + (file as NSString).lastPathComponent
        try await eventually(timeout: .seconds(30), "the gateway source reported down; \(Self.diagnosis(daemon, store))") {
            (try? Self.sourceEvents(store, source: gatewayName))?.contains { $0.state == "down" } == true
        }
        let down = try #require(try Self.sourceEvents(store, source: gatewayName).first { $0.state == "down" })
        let detail: String = down.detail ?? ""
        #expect(detail.contains("is damaged") && detail.contains("offset") && detail.contains("the 41 sightings that could be read were replayed"),
                "\(String(describing: down.detail))")
        let entered = try Self.events(store).contains { (event: StoredEvent) -> Bool in
            event.type == "didDetermineState" && event.region == "lobby" && event.state == "inside"
        }
        #expect(entered, "the sightings before the damage entered the lobby")
        #expect(daemon.stderr.contains("source failed") && daemon.stderr.contains(gatewayName), "\(daemon.stderr)")
        // The simulator keeps the daemon working: its sightings keep flowing after the failure.
        let before = try #require(await Self.sightings(httpPort, "simulator:museum"))
        let after = try #require(try await Self.sightings(httpPort, "simulator:museum", moreThan: 20, past: before))
        #expect(after > before + 20, "the simulator's sightings after the gateway failed: \(before) → \(after)")
        let gateway = try await Self.get(httpPort, "/v1/sources").json["sources"] as? [[String: Any]]
        #expect(gateway?.first { $0["name"] as? String == gatewayName }?["state"] as? String == "down")
        #expect((gateway?.first { $0["name"] as? String == gatewayName }?["decodeErrors"] as? [String: Int])?["damagedFile"] == 1)
        #expect(daemon.process.isRunning)
        #expect(!(try Self.events(store)).contains { $0.type == "monitoringDidFail" && Self.isMuseum($0) })
        #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
        try Self.expectNothingLost(daemon, store: store, "damaged gateway")
    }

    @Test("The only source fails for good (a damaged file): what it held is replayed, then the daemon stops with status 1 and the reason, logged")
    func everySourceFailed() async throws {
        let file = try Self.damagedGatewayFile(good: 30)
        let config = Self.config(regions: ["  - {identifier: lobby, uuid: \(Self.beaconUUID)}"], sources: ["  - gateway: {file: \(file), speed: 4}"])
        let store = DaemonTests.temporaryStore()
        let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: store)
        let status = await daemon.waitForExit(timeout: 60)
        #expect(status == 1, "stderr: \(daemon.stderr)")
        #expect(daemon.stderr.contains("every source has stopped and 1 failed") && daemon.stderr.contains(file), "\(daemon.stderr)")
        let events = try Self.events(store)
        #expect(events.contains { $0.type == "didDetermineState" && $0.region == "lobby" && $0.state == "inside" })
        let stopped = try #require(events.last)
        #expect(stopped.type == "processStopped" && stopped.reason?.contains("every source has stopped") == true, "\(stopped)")
        try Self.expectNothingLost(daemon, store: store, "every source failed")
    }

    // MARK: Stores

    @Test("A second daemon on the same store exits 1 naming the store and the first one's PID; the first goes on")
    func secondDaemonRefused() async throws {
        let store = DaemonTests.temporaryStore()
        let config = try DaemonTests.writeConfig(DaemonTests.busyConfig)
        let first = try Daemon(config: config, store: store)
        #expect(await first.waitForAcknowledgements(3, timeout: 30), "stderr: \(first.stderr)")
        let second = try await CLI.run(["run", "--config", config, "--store", store])
        #expect(second.status == 1)
        #expect(second.stderr.contains("store \(store) is in use by another regionkit process (pid \(first.process.processIdentifier);"), "\(second.stderr)")
        let before = first.acknowledged.count
        #expect(await first.waitForAcknowledgements(before + 2, timeout: 30), "the first daemon keeps logging")
        #expect(await first.signal(SIGTERM) == 0)
        #expect(try Self.events(store).filter { $0.type == "processStarted" }.count == 1, "the second never wrote")
    }

    @Test("Someone else's SQLite file: events, run and regions refuse it and leave it byte for byte as it was")
    func foreignDatabaseRefused() async throws {
        let path = DaemonTests.temporaryStore()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Self.makeForeignDatabase(at: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for arguments in [["events", "--store", path], ["run", "--config", try DaemonTests.writeConfig(DaemonTests.busyConfig), "--store", path]] {
            let result = try await CLI.run(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr.contains("not a RegionKit store") && result.stderr.contains("recipes"), "\(arguments): \(result.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("events on an empty file says so and leaves it empty (a read-only command made it a store)")
    func emptyFileNotMadeAStore() async throws {
        let path = DaemonTests.temporaryStore()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let result = try await CLI.run(["events", "--store", path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(path) is empty, not a store yet"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    /// Another application's SQLite database (a recipes table, rollback journal).
    static func makeForeignDatabase(at path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE recipes (id INTEGER PRIMARY KEY, name TEXT)")
            try db.execute(sql: "INSERT INTO recipes (name) VALUES ('bread')")
        }
        try queue.close()
    }

    @Test("bench store refuses an existing store (it writes fake events) and removes the scratch database it made")
    func benchStoreRefusesARealStore() async throws {
        let store = DaemonTests.temporaryStore()
        let database = try RegionStore(path: store)
        try database.append(time: 1, type: "processStarted", region: nil, state: nil, reason: nil, json: "{}")
        let refused = try await CLI.run(["bench", "store", "--store", store, "--events", "10"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("already exists"), "\(refused.stderr)")
        #expect(try database.events().count == 1, "no fake event was written")
        let scratch = (store as NSString).deletingLastPathComponent + "/scratch.sqlite"
        let ran = try await CLI.run(["bench", "store", "--store", scratch, "--events", "10"])
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch))
        // An option checked when the benchmark runs: its error comes with the subcommand's usage
        // (it came with the root's, "Usage: regionkit <subcommand>"), exit 64 as any usage error.
        let zero = try await CLI.run(["bench", "store", "--events", "0"])
        #expect(zero.status == 64 && zero.stderr.hasPrefix("Error: --events must be > 0"), "\(zero.stderr)")
        #expect(zero.stderr.contains("Usage: regionkit bench store [--events <events>]") && zero.stderr.contains("See 'regionkit bench store --help'"),
                "\(zero.stderr)")
    }

    // MARK: The store under the daemon

    /// A filesystem that fills up: a 2 MB tmpfs when this process may mount one (root), else a
    /// file-size limit on the daemon (`ulimit -f`, SIGXFSZ ignored, so writes fail with EFBIG).
    final class FullDisk {
        let directory: String
        let mounted: Bool
        var store: String { directory + "/regionkit.sqlite" }
        var description: String { mounted ? "tmpfs of 2 MB" : "RLIMIT_FSIZE of 512 KiB (not root: no tmpfs)" }
        /// For Daemon's shellPrefix: the file-size limit when there is no tmpfs.
        var shellPrefix: String? { mounted ? nil : "trap '' XFSZ; ulimit -f 1024;" }

        init() throws {
            directory = TestScratch.directory.appendingPathComponent("rk-full-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            mounted = geteuid() == 0 && Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", directory]) == 0
        }

        /// Fills the tmpfs to the last byte (nothing to do under the file-size limit: the daemon's
        /// own writes reach it).
        func fill() {
            guard mounted, let handle = FileHandle(forWritingAtPath: directory + "/filler") ?? {
                _ = FileManager.default.createFile(atPath: directory + "/filler", contents: nil)
                return FileHandle(forWritingAtPath: directory + "/filler")
            }() else { return }
            let block = Data(count: 4096)
            while (try? handle.write(contentsOf: block)) != nil {}
            try? handle.close()
        }

        func release() {
            try? FileManager.default.removeItem(atPath: directory + "/filler")
        }

        deinit {
            if mounted { _ = Self.run("/bin/umount", ["-l", directory]) }
            try? FileManager.default.removeItem(atPath: directory)
        }

        static func run(_ executable: String, _ arguments: [String]) -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return -1 }
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    @Test("A full disk during event writes: the daemon stops with status 1 and the reason; every acknowledged event is stored", .timeLimit(.minutes(3)))
    func fullDisk() async throws {
        let disk = try FullDisk()
        print("[full disk] \(disk.description)")
        let config = Self.config(regions: [Self.museumRegion], sources: ["  - simulator: {scenario: museum, speed: 100, repeat: true}"])
        let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: disk.store, shellPrefix: disk.shellPrefix)
        #expect(await daemon.waitForAcknowledgements(5, timeout: 30), "stderr: \(daemon.stderr)")
        disk.fill()
        let status = await daemon.waitForExit(timeout: 120)
        if status == nil { _ = await daemon.signal(SIGKILL) }
        #expect(status == 1, "the daemon stops on the full disk; \(Self.diagnosis(daemon, disk.store))")
        #expect(daemon.stderr.contains("the store can no longer be written") && daemon.stderr.contains(disk.store), "\(daemon.stderr.suffix(2000))")
        disk.release()
        try Self.expectNothingLost(daemon, store: disk.store, "full disk")
        #expect(daemon.acknowledged.count >= 5)
    }

    @Test("The store deleted or replaced under the running daemon: it stops with status 1 and says so", arguments: ["deleted", "replaced"])
    func storeVanished(how: String) async throws {
        let store = DaemonTests.temporaryStore()
        let daemon = try Daemon(config: try DaemonTests.writeConfig(DaemonTests.busyConfig), store: store)
        #expect(await daemon.waitForAcknowledgements(5, timeout: 30), "stderr: \(daemon.stderr)")
        if how == "deleted" {
            try FileManager.default.removeItem(atPath: store)
        } else {
            let copy = store + ".copy"
            try FileManager.default.copyItem(atPath: store, toPath: copy)
            #expect(rename(copy, store) == 0)
        }
        let acknowledgedBefore = daemon.acknowledged.count
        let status = await daemon.waitForExit(timeout: 30)
        if status == nil { _ = await daemon.signal(SIGKILL) }
        #expect(status == 1, "stderr: \(daemon.stderr)")
        #expect(daemon.stderr.contains("the database file was \(how)"), "\(daemon.stderr)")
        // Nothing is acknowledged once the file is gone (the write that notices is refused), bar one in flight.
        #expect(daemon.acknowledged.count <= acknowledgedBefore + 1, "\(daemon.acknowledged.count - acknowledgedBefore) acknowledged after the \(how) store")
    }

    @Test("SIGTERM during a burst of events, three times: exit 0, the stop logged last, every acknowledged event stored")
    func sigtermDuringBurst() async throws {
        let config = try DaemonTests.writeConfig(Self.config(
            regions: [Self.museumRegion, "  - {identifier: exhibit-3, uuid: \(Self.museumUUID), major: 3}"],
            sources: ["  - simulator: {scenario: museum, speed: 100, repeat: true}"]))
        for round in 0..<3 {
            // A fresh store each round: restored regions (same store) start quietly, without the burst.
            let store = DaemonTests.temporaryStore()
            let daemon = try Daemon(config: config, store: store)
            let target = daemon.acknowledged.count + 10
            #expect(await daemon.waitForAcknowledgements(target, timeout: 30), "round \(round): acks \(daemon.acknowledged.count) running \(daemon.process.isRunning) \(daemon.stderr.suffix(800))")
            #expect(await daemon.signal(SIGTERM) == 0, "round \(round): \(daemon.stderr)")
            #expect(daemon.objects.last?["type"] as? String == "processStopped", "round \(round): the stop is acknowledged last")
            #expect(try Self.events(store).last?.type == "processStopped")
            try Self.expectNothingLost(daemon, store: store, "round \(round)")
        }
    }

    // MARK: Devices killed and restarted

    @Test("Broker killed and restarted beside a simulator: the MQTT source is reported, the museum never fails, MQTT sightings enter again after the restart",
          .enabled(if: MosquittoBroker.isAvailable, MosquittoBroker.skipReason))
    func brokerKilledBesideSimulator() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let httpPort = try Loopback.freePort()
        let config = Self.config(regions: [Self.museumRegion, "  - {identifier: lobby, uuid: \(Self.beaconUUID), major: 1, minor: 2}"],
                                 sources: [Self.busySimulator, "  - mqtt: {format: espresense}"],
                                 extra: "mqtt: {url: \"\(broker.url)\", site: test, keepAlive: 2}\nhttp: {listen: \"127.0.0.1:\(httpPort)\", public: true}")
        let store = DaemonTests.temporaryStore()
        let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: store)
        try await eventually(timeout: .seconds(20), "the MQTT source up; \(Self.diagnosis(daemon, store))") {
            (try? Self.sourceEvents(store, source: "mqtt:"))?.contains { $0.state == "up" } == true
        }
        broker.kill()
        try await eventually(timeout: .seconds(20), "the MQTT source reported down; \(Self.diagnosis(daemon, store))") {
            (try? Self.sourceEvents(store, source: "mqtt:"))?.last?.state == "connecting"
        }
        let before = try #require(await Self.sightings(httpPort, "simulator:museum"))
        let during = try #require(try await Self.sightings(httpPort, "simulator:museum", moreThan: 20, past: before))
        #expect(during > before + 20, "the simulator's sightings during the outage: \(before) → \(during)")
        let ready = try await Self.get(httpPort, "/readyz")
        #expect(ready.status == 200 && ready.json["status"] as? String == "degraded", "\(ready)")
        try broker.restart()
        try await eventually(timeout: .seconds(30), "the MQTT source up again; \(Self.diagnosis(daemon, store))") {
            (try? Self.sourceEvents(store, source: "mqtt:"))?.last?.state == "up"
        }
        let sighting = MQTTDaemonTests.sighting(room: "kitchen")
        for _ in 0..<40 {
            try broker.publish(topic: sighting.topic, message: sighting.payload)
            try await Task.sleep(for: .milliseconds(100))
        }
        try await eventually(timeout: .seconds(20), "lobby entered through the restarted broker; \(Self.diagnosis(daemon, store))") {
            (try? Self.events(store))?.contains { $0.type == "didDetermineState" && $0.region == "lobby" && $0.state == "inside" } == true
        }
        let failures = try Self.events(store).filter { $0.type == "monitoringDidFail" }
        #expect(failures.isEmpty, "the simulator kept the beacon regions available: \(failures.map { "\($0.region ?? ""): \($0.reason ?? "")" })")
        #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
        try Self.expectNothingLost(daemon, store: store, "broker outage")
    }

    static let gpsd: String? = ["/usr/sbin/gpsd", "/usr/bin/gpsd"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// A real gpsd without a device on 127.0.0.1:`port` (clients connect, watch, get no fix).
    static func startGPSD(port: UInt16, directory: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(gpsd))
        process.arguments = ["-N", "-S", String(port), "-F", directory + "/gpsd-\(port).sock"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test("gpsd killed (-9) and restarted: the geofences fail with gpsd's reason and come back; the beacon regions never notice",
          .enabled(if: gpsd != nil, "gpsd not installed: apt-get install -y gpsd (./scripts/test.sh does)"))
    func gpsdKilledAndRestarted() async throws {
        let port = try Loopback.freePort()
        let directory = TestScratch.directory.appendingPathComponent("rk-gpsd-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var gpsd = try Self.startGPSD(port: port, directory: directory)
        defer { if gpsd.isRunning { kill(gpsd.processIdentifier, SIGKILL) } }
        let config = Self.config(regions: [Self.museumRegion, "  - {identifier: station, latitude: 35.6812, longitude: 139.7671, radius: 150}"],
                                 sources: [Self.busySimulator, "  - gpsd: {host: 127.0.0.1, port: \(port)}"])
        let store = DaemonTests.temporaryStore()
        let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: store)
        let name = "gpsd:127.0.0.1:\(port)"
        try await eventually(timeout: .seconds(20), "gpsd up and the station monitored; \(Self.diagnosis(daemon, store))") {
            let events = (try? Self.events(store)) ?? []
            return (try? Self.sourceEvents(store, source: name))?.contains { $0.state == "up" } == true
                && events.contains { $0.type == "didStartMonitoring" && $0.region == "station" }
        }
        kill(gpsd.processIdentifier, SIGKILL)
        gpsd.waitUntilExit()
        try await eventually(timeout: .seconds(20), "the station fails with gpsd's reason; \(Self.diagnosis(daemon, store))") {
            (try? Self.events(store))?.contains { $0.type == "monitoringDidFail" && $0.region == "station" && $0.reason?.contains("127.0.0.1:\(port)") == true } == true
        }
        #expect(try Self.sourceEvents(store, source: name).last?.state == "connecting")
        gpsd = try Self.startGPSD(port: port, directory: directory)
        try await eventually(timeout: .seconds(30), "the station monitored again after the restart; \(Self.diagnosis(daemon, store))") {
            ((try? Self.events(store)) ?? []).filter { $0.type == "didStartMonitoring" && $0.region == "station" }.count >= 2
        }
        #expect(try Self.sourceEvents(store, source: name).last?.state == "up")
        #expect(!(try Self.events(store)).contains { $0.type == "monitoringDidFail" && Self.isMuseum($0) })
        #expect(daemon.process.isRunning)
        #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
        try Self.expectNothingLost(daemon, store: store, "gpsd restart")
    }

    @Test("Controller unreachable at start, then up, then killed (-9) and restarted on its port: reported each time, its beacon entered again; the museum never fails",
          .enabled(if: BumbleControllers.python != nil, BumbleControllers.skipMessage), .timeLimit(.minutes(3)))
    func controllerKilledAndRestarted() async throws {
        let port = try Loopback.freePort()
        let beacon = "\(Self.beaconUUID):1:2:-59"
        let config = Self.config(regions: [Self.museumRegion, "  - {identifier: lobby, uuid: \(Self.beaconUUID), major: 1, minor: 2}"],
                                 sources: [Self.busySimulator, "  - hci: {device: \"tcp:127.0.0.1:\(port)\"}"])
        let store = DaemonTests.temporaryStore()
        let daemon = try Daemon(config: try DaemonTests.writeConfig(config), store: store)
        let name = "hci:tcp:127.0.0.1:\(port)"
        try await eventually(timeout: .seconds(20), "the controller reported unreachable; \(Self.diagnosis(daemon, store))") {
            (try? Self.sourceEvents(store, source: name))?.contains { $0.state == "connecting" } == true
        }
        let first = try BumbleControllers(ports: [port], iBeacons: [beacon])
        defer { first.stop() }
        try await first.waitUntilReady()
        try await eventually(timeout: .seconds(30), "the controller up and lobby inside; \(Self.diagnosis(daemon, store))") {
            (try? Self.sourceEvents(store, source: name))?.last?.state == "up"
                && (try? Self.events(store))?.contains { $0.type == "didDetermineState" && $0.region == "lobby" && $0.state == "inside" } == true
        }
        let killedAt = try #require(try Self.events(store).last?.id)
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        try await eventually(timeout: .seconds(20), "the controller reported lost; \(Self.diagnosis(daemon, store))") {
            (try? Self.sourceEvents(store, source: name))?.last?.state == "connecting"
        }
        // Without the controller the lobby beacon falls silent: the simulator keeps the beacon
        // kind available, so the lobby is left (not failed).
        try await eventually(timeout: .seconds(40), "lobby left while the controller is gone; \(Self.diagnosis(daemon, store))") {
            (try? Self.events(store))?.contains { $0.id > killedAt && $0.type == "didDetermineState" && $0.region == "lobby" && $0.state == "outside" } == true
        }
        let lostAt = try #require(try Self.events(store).last?.id)
        let second = try BumbleControllers(ports: [port], iBeacons: [beacon])
        defer { second.stop() }
        try await second.waitUntilReady()
        try await eventually(timeout: .seconds(30), "the controller up again; \(Self.diagnosis(daemon, store))") {
            (try? Self.sourceEvents(store, source: name))?.last?.state == "up"
        }
        // Heard again through the restarted controller: entered again.
        try await eventually(timeout: .seconds(40), "lobby inside again after the restart; \(Self.diagnosis(daemon, store))") {
            (try? Self.events(store))?.contains { $0.id > lostAt && $0.type == "didDetermineState" && $0.region == "lobby" && $0.state == "inside" } == true
        }
        #expect(!(try Self.events(store)).contains { $0.type == "monitoringDidFail" && Self.isMuseum($0) })
        #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
        try Self.expectNothingLost(daemon, store: store, "controller restart")
    }
}
