import Foundation
import GRDB
import RegionKitConcurrency
import Testing
import RegionKitStore
import RegionKitTestSupport

/// The daemon as a real process: start, read its acknowledged events, stop or kill it.
final class Daemon: @unchecked Sendable {
    /// Text arriving on a pipe, split into complete lines.
    final class Collector: Sendable {
        private let state = LockedBox<(lines: [String], partial: String, raw: String)>(([], "", ""))

        func append(_ chunk: String) {
            state.withLock { state in
                state.raw += chunk
                var parts = (state.partial + chunk).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                state.partial = parts.removeLast()
                state.lines += parts
            }
        }

        var lines: [String] { state.withLock { $0.lines } }
        var text: String { state.withLock { $0.raw } }
    }

    let process = Process()
    private let lines = Collector()
    private let errors = Collector()

    /// - Parameters:
    ///   - json: `--json` (the acknowledged events on stdout); without it only the log (stderr) tells.
    ///   - shellPrefix: run through `/bin/sh -c` with this prefix before `exec` (`ulimit -f 64;`).
    ///   - environment: variables added to the test's environment (a store password).
    init(config: String, store: String, json: Bool = true, logLevel: String = "warning", shellPrefix: String? = nil,
         environment: [String: String] = [:]) throws {
        let arguments = ["run", "--config", config, "--store", store, "--log-level", logLevel] + (json ? ["--json"] : [])
        if let shellPrefix {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shellPrefix + #" exec "$0" "$@""#, CLI.executable.path] + arguments
        } else {
            process.executableURL = CLI.executable
            process.arguments = arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Plain reader threads until end of file. (FileHandle.readabilityHandler is a dispatch
        // source on Linux; one still registered when its pipe is closed crashed libdispatch.)
        for (handle, collector) in [(out.fileHandleForReading, lines), (err.fileHandleForReading, errors)] {
            Thread.detachNewThread {
                while true {
                    let data = handle.availableData
                    if data.isEmpty { return }
                    collector.append(String(decoding: data, as: UTF8.self))
                }
            }
        }
    }

    /// A test that fails before stopping its daemon must not leave it running.
    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Ids of the events the daemon printed, i.e. acknowledged as durably stored.
    var acknowledged: [Int64] {
        lines.lines.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return (object["id"] as? NSNumber)?.int64Value
        }
    }

    var stderr: String { errors.text }

    /// What a failure message should show of stderr: from a crash report's first line (Swift's
    /// backtracer prints the fatal error and the crashing thread's frames first, then pages of
    /// registers and images, which are all a cut tail would show) up to 4000 characters, else the
    /// last 2000 characters.
    var stderrForFailure: String {
        let text = stderr
        for marker in ["Fatal error", "💣", "Program crashed", "Crash ", "Thread 0 crashed"] {
            if let start = text.range(of: marker) {
                let from = text[..<start.lowerBound].lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex
                return String(text[from...].prefix(4000))
            }
        }
        return String(text.suffix(2000))
    }

    /// The JSON objects printed on stdout (with `--json`: each acknowledged event).
    var objects: [[String: Any]] {
        lines.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits (without a signal) for the process to exit on its own; nil if it is still running after `timeout`.
    func waitForExit(timeout: Double) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return process.isRunning ? nil : process.terminationStatus
    }

    func waitForAcknowledgements(_ count: Int, timeout: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if acknowledged.count >= count { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Waits for an acknowledged event (a JSON object on stdout) that `matches`; false after `timeout`.
    func waitForObject(timeout: Double, where matches: ([String: Any]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if objects.contains(where: matches) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Sends `number` and waits (without blocking a thread) for the exit; SIGKILL after `timeout`.
    func signal(_ number: Int32, timeout: Double = 15) async -> Int32? {
        kill(process.processIdentifier, number)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
            return nil
        }
        return process.terminationStatus
    }
}

@Suite("regionkit run: the daemon", .serialized, .tags(.endToEnd))
struct DaemonTests {
    static func writeConfig(_ text: String) throws -> String {
        let url = TestScratch.directory.appendingPathComponent("rk-config-\(UUID().uuidString).yaml")
        try Data(text.utf8).write(to: url)
        return url.path
    }

    static func temporaryStore() -> String {
        TestScratch.directory.appendingPathComponent("rk-daemon-\(UUID().uuidString)/regionkit.sqlite").path
    }

    /// The museum visit at 40× speed, looping: a steady flow of enters, exits and ranging changes.
    static let busyConfig = """
    profile: responsive
    regions:
      - {identifier: museum, uuid: 5A4BCFCE-174E-4BAC-A814-092E77F6B7E5}
      - {identifier: exhibit-2, uuid: 5A4BCFCE-174E-4BAC-A814-092E77F6B7E5, major: 2}
    sources:
      - simulator: {scenario: museum, speed: 40, repeat: true}
    """

    /// The way out of a stop that takes long (here a hook ignoring SIGTERM holds it for the
    /// runner's second of grace) without SIGKILL: a second signal ends the process at once.
    @Test("A second SIGTERM while the daemon stops ends it at once with status 143, saying so")
    func secondSignalExits() async throws {
        let marker = TestScratch.directory.appendingPathComponent("rk-hook-running-\(UUID().uuidString)").path
        // The walk enters the station's circle after ≈ 17 s at 20× (its dwell is the daemon's real time); its enter hook then runs.
        let config = """
        profile: responsive
        regions:
          - {identifier: station, latitude: 35.6812, longitude: 139.7671, radius: 150}
        sources:
          - simulator: {scenario: geofence-walk, speed: 20}
        hooks:
          onEnter: ["touch \(marker); trap '' TERM; sleep 30"]
          timeout: 60
        """
        // At level info: the daemon logs "stopping" (signal=15) once it has taken the first SIGTERM.
        let daemon = try Daemon(config: try Self.writeConfig(config), store: Self.temporaryStore(), logLevel: "info")
        try await eventually(timeout: .seconds(60), "the hook runs") { FileManager.default.fileExists(atPath: marker) }
        kill(daemon.process.processIdentifier, SIGTERM)
        // The stop waits at least a second for the hook; the second signal comes well inside it,
        // once the first has been taken (two SIGTERMs pending together are one to the kernel, and
        // the stop would then be an ordinary one: a fixed 300 ms wait raced with that).
        try await eventually(timeout: .seconds(10), "the first SIGTERM taken (logged): \(daemon.stderrForFailure)") {
            daemon.stderr.split(separator: "\n").contains { $0.contains("stopping") && $0.contains("signal=\(SIGTERM)") }
        }
        #expect(await daemon.signal(SIGTERM, timeout: 5) == 143, "stderr: \(daemon.stderrForFailure)")
        #expect(daemon.stderr.contains("SIGTERM again while stopping"), "\(daemon.stderrForFailure)")
    }

    @Test("SIGTERM: flushes, logs the stop and exits 0")
    func gracefulStop() async throws {
        let store = Self.temporaryStore()
        let daemon = try Daemon(config: try Self.writeConfig(Self.busyConfig), store: store)
        #expect(await daemon.waitForAcknowledgements(5, timeout: 30), "stderr: \(daemon.stderr)")
        #expect(await daemon.signal(SIGTERM) == 0, "stderr: \(daemon.stderr)")
        let events = try RegionStore(path: store).events()
        #expect(events.first?.type == "processStarted")
        #expect(events.last?.type == "processStopped")
        #expect(events.contains { $0.type == "didStartMonitoring" })
    }

    @Test("kill -9 at random moments: every acknowledged event survives and the database passes integrity_check")
    func crashSafety() async throws {
        let store = Self.temporaryStore()
        let config = try Self.writeConfig(Self.busyConfig)
        var random = SystemRandomNumberGenerator()
        var acknowledged: Set<Int64> = []
        for round in 0..<5 {
            let daemon = try Daemon(config: config, store: store)
            #expect(await daemon.waitForAcknowledgements(3, timeout: 30), "round \(round): \(daemon.stderr)")
            try await Task.sleep(for: .milliseconds(Int.random(in: 200...1_500, using: &random)))
            _ = await daemon.signal(SIGKILL)
            acknowledged.formUnion(daemon.acknowledged)
            let database = try RegionStore(path: store)
            #expect(try database.integrityCheck() == "ok", "round \(round)")
            let stored = Set(try database.events().map(\.id))
            let missing = acknowledged.subtracting(stored)
            #expect(missing.isEmpty, "round \(round): acknowledged but missing \(missing.sorted().prefix(10))")
        }
        #expect(acknowledged.count >= 15, "at least 3 acknowledged events per round (\(acknowledged.count) events)")
        // Restarts reuse the stored regions: each start logs processStarted, no region is registered twice.
        let events = try RegionStore(path: store).events()
        #expect(events.filter { $0.type == "processStarted" }.count == 5)
        #expect(try RegionStore(path: store).regions().map(\.identifier) == ["museum", "exhibit-2"])
    }

    @Test("A stored region that no longer decodes stops the start through the stop path: named, the stop logged, exit 1")
    func restoreFailureStops() async throws {
        let store = Self.temporaryStore()
        _ = try RegionStore(path: store)
        let queue = try DatabaseQueue(path: store)
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO monitored_region (identifier, kind, definition, registered_at, sequence, origin)
                VALUES ('broken', 'beacon', '{"not a region', 1, 1, 'api')
                """)
        }
        try queue.close()
        let daemon = try Daemon(config: try Self.writeConfig(Self.busyConfig), store: store)
        #expect(await daemon.waitForExit(timeout: 60) == 1, "stderr: \(daemon.stderrForFailure)")
        #expect(daemon.stderr.contains("'broken' cannot be decoded"), "\(daemon.stderrForFailure)")
        let events = try RegionStore(path: store).events()
        #expect(events.map(\.type) == ["processStarted", "processStopped"], "\(events.map(\.type))")
        #expect(events.last?.reason?.contains("cannot restore the monitored regions") == true, "\(String(describing: events.last?.reason))")
    }

    @Test("Configuration errors name the file and the field")
    func badConfiguration() async throws {
        let config = try Self.writeConfig("profile: responsive\nsources:\n  - simulator: {speed: 2}\n")
        let result = try await CLI.run(["run", "--config", config, "--store", Self.temporaryStore()])
        #expect(result.status == 1)
        #expect(result.stderr.contains(config) && result.stderr.contains("scenario"), "\(result.stderr)")
        let none = try await CLI.run(["run", "--config", "/nonexistent/regionkit.yaml"])
        #expect(none.status == 1 && none.stderr.contains("cannot read"))
    }

    @Test("events shows the log as a timeline and as JSON, filtered by region and time")
    func eventsCommand() async throws {
        let store = Self.temporaryStore()
        let daemon = try Daemon(config: try Self.writeConfig(Self.busyConfig), store: store)
        // The seven events of the first second: launch, two starts, two determinations, two ranged
        // counts. (An exit between the 40× loops depends on the exit detector: the gap between
        // loops is ~2 real seconds, and a stream heard for only a few real seconds is given longer.)
        #expect(await daemon.waitForAcknowledgements(7, timeout: 30))
        _ = await daemon.signal(SIGTERM)
        let timeline = try await CLI.run(["events", "--store", store])
        #expect(timeline.status == 0)
        #expect(timeline.stdout.contains("LAUNCH") && timeline.stdout.contains("START  museum"))
        let json = try await CLI.run(["events", "--store", store, "--json", "--region", "museum"])
        let objects = json.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(!objects.isEmpty && objects.allSatisfy { $0["region"] as? String == "museum" && $0["id"] is NSNumber && $0["time"] is String })
        let future = try await CLI.run(["events", "--store", store, "--since", "2100-01-01T00:00:00Z"])
        #expect(future.status == 0 && future.stdout.isEmpty)
        #expect(future.stderr.contains("--since 2100-01-01T00:00:00") && future.stderr.contains("is in the future"), "\(future.stderr)")
        // Unix milliseconds (what JavaScript and many gateways write) are not taken for seconds of the year 57,000.
        let milliseconds = try await CLI.run(["events", "--store", store, "--since", "1764800000000"])
        #expect(milliseconds.status == 1 && milliseconds.stderr.contains("milliseconds? Divide by 1000: 1764800000.000"), "\(milliseconds.stderr)")
        let seconds = try await CLI.run(["events", "--store", store, "--since", "1000000000"])
        #expect(seconds.status == 0 && seconds.stderr.isEmpty && seconds.stdout.contains("LAUNCH"), "\(seconds.stderr)")
        let huge = try await CLI.run(["events", "--store", store, "--since", "1e300"])
        #expect(huge.status == 1 && huge.stderr.contains("is not a time"), "\(huge.stderr)")
        // An age beyond 1970 (it listed every event); one within it is fine.
        let ancient = try await CLI.run(["events", "--store", store, "--since", "99999999999999999999d"])
        #expect(ancient.status == 1 && ancient.stderr.contains("reaches back before 1970"), "\(ancient.stderr)")
        let week = try await CLI.run(["events", "--store", store, "--since", "7d"])
        #expect(week.status == 0 && week.stdout.contains("LAUNCH"), "\(week.stderr)")
        let bad = try await CLI.run(["events", "--store", store, "--since", "yesterday-ish"])
        #expect(bad.status == 1 && bad.stderr.contains("--since"))
        // ISO 8601 without its zone: said so, with the UTC form (it said "is not ISO 8601").
        for (text, completed) in [("2026-12-05T08:00:00", "2026-12-05T08:00:00Z"), ("2026-12-05", "2026-12-05T00:00:00Z")] {
            let zoneless = try await CLI.run(["events", "--store", store, "--since", text])
            #expect(zoneless.status == 1 && zoneless.stderr.contains("--since '\(text)' has no time zone: give one, '\(completed)' for UTC"),
                    "\(zoneless.stderr)")
        }
    }

    @Test("events --follow --limit N stops once N events are printed: those logged already, then new ones as they are logged (it followed for ever)")
    func eventsFollowLimit() async throws {
        let path = Self.temporaryStore()
        let store = try RegionStore(path: path)
        for (index, region) in ["a", "b", "c"].enumerated() {
            try store.append(time: 1_700_000_000 + Double(index), type: "didStartMonitoring", region: region, state: nil, reason: nil,
                             json: #"{"type":"didStartMonitoring","region":"\#(region)"}"#)
        }
        let two = try await CLI.run(["events", "--store", path, "--follow", "--limit", "2"], timeout: 60)
        #expect(two.status == 0 && two.stdout.split(separator: "\n").count == 2, "\(two.stdout)\(two.stderr)")
        // Three logged, a fourth logged while it follows: it prints the four and stops.
        async let four = CLI.run(["events", "--store", path, "--follow", "--limit", "4", "--json"], timeout: 60)
        try await Task.sleep(for: .seconds(1))
        try store.append(time: 1_700_000_010, type: "didStartMonitoring", region: "d", state: nil, reason: nil,
                         json: #"{"type":"didStartMonitoring","region":"d"}"#)
        let followed = try await four
        let regions = followed.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["region"] as? String
        }
        #expect(followed.status == 0 && regions == ["a", "b", "c", "d"], "\(followed.stdout)\(followed.stderr)")
    }
}
