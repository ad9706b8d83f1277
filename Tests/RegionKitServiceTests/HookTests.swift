import Foundation
import Synchronization
import Testing
import RegionKitTestSupport
import RegionKit
import RegionKitStore
@testable import RegionKitService

/// A loopback HTTP listener (Python's http.server) that appends "<event id> <body>" per POST to a file.
final class WebhookListener {
    let port: Int
    let output: URL
    private var process: Process?

    static let script = """
    import http.server, sys
    port, out = int(sys.argv[1]), sys.argv[2]
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
            with open(out, 'a') as f:
                f.write(self.headers.get('X-RegionKit-Event-ID', '?') + ' ' + body.decode() + '\\n')
            self.send_response(200)
            self.end_headers()
        def log_message(self, *args):
            pass
    http.server.HTTPServer(('127.0.0.1', port), Handler).serve_forever()
    """

    init() throws {
        port = Int(try Loopback.freePort())
        output = TestScratch.directory.appendingPathComponent("rk-webhook-\(UUID().uuidString).log")
    }

    var url: String { "http://127.0.0.1:\(port)/events" }

    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, String(port), output.path]
        try process.run()
        self.process = process
    }

    /// SIGKILL: children inherit the test runner's blocked SIGTERM/SIGINT, so a polite signal
    /// might never arrive and the wait would hang.
    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    var lines: [String] {
        ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: output)
    }
}

@Suite("Hooks: commands and webhooks, once per event (spec §6)", .serialized, .tags(.endToEnd))
struct HookTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let lobby = Region.beacon(try! BeaconRegion(identifier: "lobby", uuid: uuid))

    /// Enters and exits `lobby` once, on a virtual clock.
    static func enterAndExit(_ service: MonitoringService, _ clock: VirtualClock) async throws {
        try await service.start(regions: [Self.lobby])
        clock.advance(by: 4)
        for t in stride(from: 4.0, to: 8, by: 0.1) {
            clock.advance(to: Timestamp(seconds: t))
            service.manager.ingest(BeaconObservation(identity: BeaconIdentity(uuid: uuid, major: 1, minor: 1), rssi: -60, timestamp: Timestamp(seconds: t)))
        }
        clock.advance(by: 60)
    }

    /// Runs delivery passes until `done` or `seconds` pass.
    /// A service on a fresh store with `hooks` whose region was entered and exited (one
    /// `didEnterRegion` and one `didExitRegion` queued for the hooks).
    static func enteredAndExited(hooks: HookConfiguration) async throws -> MonitoringService {
        let clock = VirtualClock()
        let service = try MonitoringService(store: RegionStore(path: temporaryStorePath()), profile: .responsive, automation: Automation(),
                                            clock: clock, sources: [.beacon: .authorized], hooks: hooks)
        try await enterAndExit(service, clock)
        return service
    }

    static func deliver(_ runner: HookRunner, for seconds: Double, until done: () throws -> Bool = { false }) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            try await runner.deliverDue()
            if try done() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test("A webhook whose target is down is delivered after it comes back, exactly once; restarts do not resend")
    func webhookOutageAndRestart() async throws {
        let listener = try WebhookListener()
        let path = temporaryStorePath()
        let hooks = HookConfiguration(webhooks: [.init(url: listener.url)], timeout: 2, maxAttempts: 100, retryDelay: 0.1)
        let clock = VirtualClock()
        let service = try MonitoringService(store: RegionStore(path: path), profile: .responsive, automation: Automation(),
                                            clock: clock, sources: [.beacon: .authorized], hooks: hooks)
        try await Self.enterAndExit(service, clock)
        let runner = HookRunner(store: service.store, configuration: hooks)
        try await Self.deliver(runner, for: 1.5) // the listener is down: every attempt is refused
        let waiting = try service.sqlite.deliveries(status: .pending)
        #expect(waiting.count == 2, "enter and exit are queued")
        // The entry's attempts are refused and recorded; the exit, a later event of the same
        // region, waits for it (a region's hooks run in log order).
        #expect(waiting.first { $0.eventID < waiting.map(\.eventID).max()! }.map { $0.attempts >= 1 && $0.lastError != nil } == true,
                "refused attempts are recorded: \(waiting)")
        #expect(waiting.first { $0.eventID == waiting.map(\.eventID).max()! }?.attempts == 0, "the exit ran before the entry it follows: \(waiting)")

        try listener.start()
        defer { listener.stop() }
        try await Self.deliver(runner, for: 20) { try service.sqlite.deliveries(status: .delivered).count == 2 }
        #expect(try service.sqlite.deliveries(status: .delivered).count == 2)
        let ids = listener.lines.map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(ids.count == 2 && Set(ids).count == 2, "each event exactly once: \(listener.lines)")
        #expect(listener.lines.contains { $0.contains("\"type\":\"didEnterRegion\"") && $0.contains("\"region\":\"lobby\"") })
        #expect(listener.lines.contains { $0.contains("\"type\":\"didExitRegion\"") })

        // A new runner on the same store (a restart) has nothing to resend.
        let restarted = HookRunner(store: try RegionStore(path: path), configuration: hooks)
        #expect(try await restarted.deliverDue() == 0)
        try await Task.sleep(for: .milliseconds(200))
        #expect(listener.lines.count == 2)
    }

    @Test("Command hooks get the event in the environment and as JSON on stdin")
    func commandHook() async throws {
        let output = TestScratch.directory.appendingPathComponent("rk-hook-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: output) }
        let command = "printf '%s|%s|%s|' \"$REGIONKIT_EVENT\" \"$REGIONKIT_REGION\" \"$REGIONKIT_STATE\" >> \(output.path); cat >> \(output.path)"
        let hooks = HookConfiguration(onEnter: [command], onExit: [command], timeout: 5)
        let service = try await Self.enteredAndExited(hooks: hooks)
        let runner = HookRunner(store: service.store, configuration: hooks)
        try await Self.deliver(runner, for: 10) { try service.sqlite.deliveries(status: .delivered).count == 2 }
        let text = try String(contentsOf: output, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("didEnterRegion|lobby|inside|{"))
        #expect(lines[1].hasPrefix("didExitRegion|lobby|outside|{"))
        #expect(try await runner.deliverDue() == 0, "delivered hooks never fire again")
    }

    @Test("A command hook does not inherit the daemon's secrets (MQTT password, API token, store password); it gets the rest of the environment and the event")
    func commandEnvironmentWithholdsSecrets() {
        let event = StoredEvent(id: 7, time: 12.5, type: "didEnterRegion", region: "lobby", state: "inside", reason: "sighting", json: "{}")
        let environment = HookRunner.commandEnvironment(for: event, inheriting: [
            "PATH": "/usr/bin:/bin", "HOME": "/var/lib/regionkit", "REGIONKIT_MQTT_USERNAME": "hub",
            "REGIONKIT_MQTT_PASSWORD": "S3cr3tHubPw", "REGIONKIT_API_TOKEN": "tok-abcdef", "REGIONKIT_STORE_PASSWORD": "pg-secret",
        ])
        #expect(environment["REGIONKIT_MQTT_PASSWORD"] == nil && environment["REGIONKIT_API_TOKEN"] == nil && environment["REGIONKIT_STORE_PASSWORD"] == nil)
        #expect(!environment.values.contains { $0.contains("S3cr3t") || $0.contains("tok-") || $0.contains("pg-secret") })
        #expect(environment["PATH"] == "/usr/bin:/bin" && environment["HOME"] == "/var/lib/regionkit" && environment["REGIONKIT_MQTT_USERNAME"] == "hub")
        #expect(environment["REGIONKIT_EVENT"] == "didEnterRegion" && environment["REGIONKIT_EVENT_ID"] == "7" && environment["REGIONKIT_REGION"] == "lobby")
        #expect(environment["REGIONKIT_STATE"] == "inside" && environment["REGIONKIT_TIME"] == "12.5" && environment["REGIONKIT_REASON"] == "sighting")
    }

    @Test("A command writing more to stderr than a pipe holds is not blocked until its timeout (its status counts, the message keeps the first 300 bytes); a background child holding stderr open is not waited for")
    func commandStderrIsDrained() async throws {
        // 1 MB on stderr, then exit 0: delivered. Then a failing one, and one whose background
        // child keeps stderr open for 8 s after the command exited.
        let flood = "head -c 1000000 /dev/zero | tr '\\0' x >&2; exit 0"
        let failing = "printf 'first line\\n' >&2; head -c 200000 /dev/zero | tr '\\0' y >&2; exit 4"
        let lingering = "sleep 8 & exit 0"
        let hooks = HookConfiguration(onEnter: [flood, lingering], onExit: [failing], timeout: 5, maxAttempts: 1)
        let service = try await Self.enteredAndExited(hooks: hooks)
        let started = Date()
        try await HookRunner(store: service.store, configuration: hooks).deliverDue()
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed < 4.5, "\(elapsed) s: a hook waited for its timeout (5 s) or for the background child (8 s)")
        let delivered = try service.sqlite.deliveries(status: .delivered)
        #expect(delivered.map(\.hook).sorted() == ["command:" + flood, "command:" + lingering].sorted(), "\(delivered.map(\.hook))")
        let failed = try service.sqlite.deliveries(status: .failed)
        #expect(failed.count == 1)
        let message = failed.first?.lastError ?? ""
        #expect(message.hasPrefix("command exited with status 4: first line\ny"), "\(message)")
        #expect(message.utf8.count < 400, "the first 300 bytes of stderr, not 200 KB")
    }

    @Test("A command inherits none of this process's other descriptors (an open file without close-on-exec, as the store's could be)")
    func commandInheritsNoDescriptors() async throws {
        let path = TestScratch.directory.appendingPathComponent("rk-fd-\(UUID().uuidString)").path
        let descriptor = open(path, O_CREAT | O_WRONLY, 0o600)   // no O_CLOEXEC
        try #require(descriptor > 2)
        defer { close(descriptor); unlink(path) }
        let command = "if [ -e /proc/$$/fd/\(descriptor) ]; then echo inherited >&2; exit 5; fi"
        let hooks = HookConfiguration(onEnter: [command], onExit: [], timeout: 5, maxAttempts: 1)
        let service = try await Self.enteredAndExited(hooks: hooks)
        try await HookRunner(store: service.store, configuration: hooks).deliverDue()
        #expect(try service.sqlite.deliveries(status: .failed).map(\.lastError) == [])
        #expect(try service.sqlite.deliveries(status: .delivered).count == 1)
    }

    @Test("Cancelling the runner stops the running command and what it started (its process group, not only `timeout`; a child ignoring SIGTERM too); the delivery is retried, the attempt counted")
    func cancelStopsTheCommandGroup() async throws {
        let pidFile = TestScratch.directory.appendingPathComponent("rk-hook-pid-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: pidFile) }
        // The shell waits for a background child that would run 30 s and ignores SIGTERM (the
        // shell itself ends on it).
        let command = "(trap '' TERM; exec sleep 30) & echo $! > \(pidFile.path).tmp; mv \(pidFile.path).tmp \(pidFile.path); wait"
        let hooks = HookConfiguration(onEnter: [command], onExit: [], timeout: 60, maxAttempts: 5)
        let service = try await Self.enteredAndExited(hooks: hooks)
        let runner = HookRunner(store: service.store, configuration: hooks)
        let task = Task { await runner.run(pollInterval: 0.05) }
        var child: pid_t?
        for _ in 0..<200 where child == nil {
            try await Task.sleep(for: .milliseconds(50))
            child = (try? String(contentsOf: pidFile, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let sleeper = try #require(child, "the command started its background child")
        #expect(Self.isRunning(sleeper))
        let started = Date()
        task.cancel()
        await task.value
        #expect(Date().timeIntervalSince(started) < 5, "the runner stops within the group's grace")
        #expect(try await Self.ended(sleeper), "the command's background child (pid \(sleeper)) outlived the cancelled runner")
        #expect(try service.sqlite.deliveries(status: .delivered).isEmpty)
        let pending = try service.sqlite.deliveries(status: .pending)
        #expect(pending.count == 1 && pending.first?.attempts == 1 && pending.first?.lastError?.contains("stopped with the daemon") == true,
                "the interrupted delivery is retried, its attempt counted (a hook restarting the daemon must not loop forever): \(pending)")
    }

    /// Whether `pid` ends within about 2 s; one that does not is SIGKILLed (no test leaves it behind).
    static func ended(_ pid: pid_t) async throws -> Bool {
        for _ in 0..<40 {
            if !isRunning(pid) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        kill(pid, SIGKILL)
        return false
    }

    /// Whether `pid` names a live process (a zombie nobody reaped counts as ended).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    @Test("A command that outlives its timeout is killed and the failure recorded; failing commands give up after maxAttempts")
    func commandTimeoutAndFailure() async throws {
        let hooks = HookConfiguration(onEnter: ["sleep 30"], onExit: ["echo broken >&2; exit 3"], timeout: 0.5, maxAttempts: 1)
        let service = try await Self.enteredAndExited(hooks: hooks)
        let started = Date()
        try await HookRunner(store: service.store, configuration: hooks).deliverDue()
        #expect(Date().timeIntervalSince(started) < 10, "the sleeping command was killed")
        let failed = try service.sqlite.deliveries(status: .failed)
        #expect(failed.count == 2)
        #expect(failed.contains { $0.lastError?.contains("timeout") == true })
        #expect(failed.contains { $0.lastError?.contains("status 3") == true && $0.lastError?.contains("broken") == true })
    }
}
