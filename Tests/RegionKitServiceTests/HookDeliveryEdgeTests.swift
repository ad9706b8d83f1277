import Foundation
import Testing
import RegionKitTestSupport
import RegionKit
import RegionKitStore
@testable import RegionKitService

/// Hooks against what a real endpoint or command does wrong: a redirect, an endpoint that never
/// answers, a command whose children ignore SIGTERM, a command that exits 124 by itself; and the
/// credentials a webhook URL carries, kept out of logs and messages.
@Suite("Hooks: redirects, endpoints that never answer, timed-out groups, secrets in URLs", .serialized, .tags(.endToEnd))
struct HookDeliveryEdgeTests {
    /// A loopback endpoint: `/redirect` answers 307 to `/final` (which answers 200 and notes the
    /// body it got), `/silent` reads the request and never answers.
    final class Endpoint {
        let port: Int
        let output: URL
        private let process: Process

        static let script = """
        import http.server, socketserver, sys, time
        port, out = int(sys.argv[1]), sys.argv[2]
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
                if self.path == '/redirect':
                    self.send_response(307)
                    self.send_header('Location', 'http://127.0.0.1:%d/final' % port)
                    self.send_header('Content-Length', '0')
                    self.end_headers()
                elif self.path == '/silent':
                    time.sleep(60)
                else:
                    with open(out, 'a') as f:
                        f.write(self.path + ' ' + repr(body.decode()) + '\\n')
                    self.send_response(200)
                    self.send_header('Content-Length', '0')
                    self.end_headers()
            def log_message(self, *args):
                pass
        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
        Server(('127.0.0.1', port), Handler).serve_forever()
        """

        init() throws {
            port = Int(try Loopback.freePort())
            output = TestScratch.directory.appendingPathComponent("rk-endpoint-\(UUID().uuidString).log")
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", Self.script, String(port), output.path]
            try process.run()
            // Until it listens.
            for _ in 0..<100 {
                if MosquittoBroker.isListening(port: port) { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }

        func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

        var lines: [String] {
            ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        deinit {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: output)
        }
    }

    @Test("A webhook answering 307 fails, naming the redirect, and is not counted as delivered (FoundationNetworking re-sent the POST without its body and the event was lost)")
    func redirectIsAFailure() async throws {
        let endpoint = try Endpoint()
        let hooks = HookConfiguration(webhooks: [.init(url: endpoint.url("/redirect"))], timeout: 5, maxAttempts: 1)
        let service = try await HookTests.enteredAndExited(hooks: hooks)
        try await HookRunner(store: service.store, configuration: hooks).deliverDue()
        #expect(try service.sqlite.deliveries(status: .delivered).isEmpty)
        let failed = try service.sqlite.deliveries(status: .failed)
        #expect(failed.count == 2 && failed.allSatisfy { $0.lastError?.hasPrefix("HTTP 307: a redirect to http://127.0.0.1:\(endpoint.port)/… (#") == true
                                                          && $0.lastError?.contains("not followed") == true }, "\(failed.map(\.lastError))")
        #expect(endpoint.lines.isEmpty, "nothing reached the redirect's target: \(endpoint.lines)")
    }

    @Test("A webhook that never answers fails after the hook timeout (the request's own timeout is an idle one: it waited 60 s)")
    func silentEndpointTimesOut() async throws {
        let endpoint = try Endpoint()
        let hooks = HookConfiguration(webhooks: [.init(url: endpoint.url("/silent"))], timeout: 1, maxAttempts: 1)
        let service = try await HookTests.enteredAndExited(hooks: hooks)
        let started = ContinuousClock.now
        try await HookRunner(store: service.store, configuration: hooks).deliverDue()
        let elapsed = ContinuousClock.now - started
        #expect(elapsed < .seconds(8), "two deliveries of at most 1 s each: \(elapsed)")
        let failed = try service.sqlite.deliveries(status: .failed)
        #expect(failed.count == 2 && failed.allSatisfy { $0.lastError == "no complete answer within 1 s (timeout)" }, "\(failed.map(\.lastError))")
    }

    @Test("Cancelling the runner while a webhook waits for an endpoint that never answers ends the attempt at once (a stop waited for the hook timeout), recorded and retried")
    func cancelledWebhookEndsAtOnce() async throws {
        let endpoint = try Endpoint()
        let hooks = HookConfiguration(webhooks: [.init(url: endpoint.url("/silent"))], timeout: 60, maxAttempts: 5)
        let service = try await HookTests.enteredAndExited(hooks: hooks)
        let runner = HookRunner(store: service.store, configuration: hooks)
        let task = Task { await runner.run(pollInterval: 0.05) }
        try await Task.sleep(for: .milliseconds(700))   // the first POST is waiting on /silent
        let started = ContinuousClock.now
        task.cancel()
        await task.value
        #expect(ContinuousClock.now - started < .seconds(3), "the stop waited for the webhook")
        let pending = try service.sqlite.deliveries(status: .pending)
        #expect(pending.contains { $0.attempts == 1 && $0.lastError == "stopped with the daemon before the endpoint answered; retried" }, "\(pending)")
    }

    @Test("A timed-out command's group is killed with it: a child ignoring SIGTERM does not outlive it (one more copy stayed at each retry); a command exiting 124 by itself is not called timed out")
    func timedOutGroupIsKilled() async throws {
        let pidFile = TestScratch.directory.appendingPathComponent("rk-hook-timeout-pid-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: pidFile) }
        let command = "(trap '' TERM; exec sleep 30) & echo $! > \(pidFile.path).tmp; mv \(pidFile.path).tmp \(pidFile.path); wait"
        let hooks = HookConfiguration(onEnter: [command], onExit: ["echo some-error >&2; exit 124"], timeout: 1, maxAttempts: 1)
        let service = try await HookTests.enteredAndExited(hooks: hooks)
        try await HookRunner(store: service.store, configuration: hooks).deliverDue()
        let sleeper = try #require((try? String(contentsOf: pidFile, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        #expect(try await HookTests.ended(sleeper), "the child ignoring SIGTERM (pid \(sleeper)) outlived its timed-out hook")
        let errors = try service.sqlite.deliveries(status: .failed).compactMap(\.lastError)
        #expect(errors.contains("command timed out after 1 s (timeout) and was killed, with what it started"), "\(errors)")
        #expect(errors.contains { $0.hasPrefix("command exited with status 124: some-error") }, "\(errors)")
    }

    @Test("Deliveries pending for hooks the configuration no longer has are given up at the runner's start (they ran the old command and held the new hooks up to ~24 min); those still configured stay")
    func unconfiguredHooksGivenUp() async throws {
        let old = HookConfiguration(onEnter: ["exit 1"], onExit: ["true"], timeout: 5, maxAttempts: 30)
        let service = try await HookTests.enteredAndExited(hooks: old)
        #expect(try service.sqlite.deliveries(status: .pending).count == 2)
        // The exit's command kept, the entry's replaced.
        let new = HookConfiguration(onEnter: ["echo new"], onExit: ["true"], timeout: 5, maxAttempts: 30)
        let runner = HookRunner(store: service.store, configuration: new)
        #expect(try await runner.abandonUnconfigured() == 1)
        let failed = try service.sqlite.deliveries(status: .failed)
        #expect(failed.map(\.hook) == ["command:exit 1"] && failed.first?.lastError == "the hook is no longer in the configuration: given up", "\(failed)")
        #expect(try service.sqlite.deliveries(status: .pending).map(\.hook) == ["command:true"])
        // Delivered now without waiting behind the old entry's retries.
        try await runner.deliverDue()
        #expect(try service.sqlite.deliveries(status: .delivered).map(\.hook) == ["command:true"])
        #expect(try await runner.abandonUnconfigured() == 0)
    }

    @Test("A webhook URL's credentials (user information, query) are not shown in logs or configuration errors")
    func credentialsRedacted() throws {
        let full = "webhook:https://user:pw@hooks.example:8443/api/webhook/SECRETID?token=abc#f"
        let shown = HookConfiguration.redacted(full)
        #expect(shown == "webhook:https://hooks.example:8443/… (#\(HookConfiguration.fingerprint("webhook:https://hooks.example:8443/api/webhook/SECRETID?token=abc#f")))",
                "\(shown)")
        #expect(!shown.contains("pw") && !shown.contains("SECRETID") && !shown.contains("abc"))
        // The fingerprint leaves the password out (a weak one could be confirmed by guessing).
        #expect(HookConfiguration.redacted("https://bob:one@h/x") == HookConfiguration.redacted("https://bob:two@h/x"))
        // A password holding "/", "?" or "#" ended the authority inside it: "bob:s3cr" was shown.
        for url in ["https://bob:s3cr/et@hooks.example.com/x", "https://bob:s3cr?et@hooks.example.com/x", "https://bob:s3cr#et@hooks.example.com",
                    "https://bob:s3cr/et", "https://bob:s3cr"] {
            let hidden = HookConfiguration.redacted(url)
            #expect(hidden.hasPrefix("https://… (#") && !hidden.contains("s3cr") && !hidden.contains("bob"), "\(hidden)")
        }
        // Two webhooks of one host are told apart; the same URL always reads the same.
        #expect(HookConfiguration.redacted("http://h/a") != HookConfiguration.redacted("http://h/b"))
        #expect(HookConfiguration.redacted("http://h/a") == HookConfiguration.redacted("http://h/a"))
        #expect(HookConfiguration.redacted("http://127.0.0.1:8080") == "http://127.0.0.1:8080")
        #expect(HookConfiguration.fingerprint("").count == 8)
        #expect(HookConfiguration.redacted("command:curl -s http://a?b") == "command:curl -s http://a?b", "a command is the user's own line")
        // Redacted whole, then cut: a password with "/" whose "@" is past the first 200 characters was shown.
        let long = "htps://alice:S3CRETtokenAAAA/" + String(repeating: "x", count: 220) + "@hooks.example.com/api/x"
        let refused = #expect(throws: RegionKitError.self) {
            try ServiceConfiguration.decode("sources:\n  - simulator: {scenario: museum}\nhooks: {webhooks: [{url: \"\(long)\"}]}\n", path: "c.yaml")
        }
        #expect(refused?.message.contains("S3CRET") == false && refused?.message.contains("alice") == false, "\(refused?.message ?? "")")
        let error = #expect(throws: RegionKitError.self) {
            try ServiceConfiguration.decode("sources:\n  - simulator: {scenario: museum}\nhooks: {webhooks: [{url: \"http://:TOKENX@/hook?token=SECRET\"}]}\n", path: "c.yaml")
        }
        #expect(error.map { !$0.message.contains("TOKENX") && !$0.message.contains("SECRET") && $0.message.contains("names no host") } == true, "\(error?.message ?? "")")
    }
}
