import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import RegionKit
import RegionKitConcurrency
import RegionKitStore

/// Delivers logged events to their hooks from the store's durable queue: runs commands (event in
/// environment variables and as JSON on stdin) and POSTs webhooks, each with a timeout; a failed
/// attempt is retried with exponential backoff; every outcome is recorded in the store, so a
/// restart resumes undelivered ones and never repeats a delivered one.
///
/// A webhook request carries `X-RegionKit-Event-ID` so a receiver can also de-duplicate on its
/// side (a crash between a successful POST and its commit would resend once).
///
/// ```swift
/// let runner = HookRunner(store: store, configuration: hooks)
/// let task = Task { await runner.run() }   // until cancelled
/// ```
public final class HookRunner: Sendable {
    public let store: any RegionStoring
    public let configuration: HookConfiguration
    private let logger: Logger
    private let now: @Sendable () -> Double
    private let clock: any Clock<Duration>

    /// - Parameters:
    ///   - now: the wall-clock time (Unix seconds) stored with deliveries and their retry times.
    ///   - clock: paces ``run(pollInterval:)``'s polling; a test passes a clock it advances by
    ///     hand together with a `now` that reads it, and sees the retry backoff in virtual time.
    public init(store: any RegionStoring, configuration: HookConfiguration, logger: Logger = Logger(label: "regionkit.hooks"),
                now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }, clock: any Clock<Duration> = ContinuousClock()) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.now = now
        self.clock = clock
    }

    /// SIGKILLs every hook command running now, with what it started (its process group): for a
    /// process about to end at once, so no command outlives it to be started again, beside
    /// itself, at the next start.
    ///
    /// ```swift
    /// HookRunner.killRunningCommands(); _exit(143)
    /// ```
    public static func killRunningCommands() {
        ChildProcess.killAllGroups()
    }

    var timeout: Double { configuration.timeout ?? 10 }
    var maxAttempts: Int { configuration.maxAttempts ?? 30 }
    var retryDelay: Double { configuration.retryDelay ?? 1 }
    var maxPending: Int { configuration.maxPending ?? 10_000 }

    /// Gives up the pending deliveries to hooks the configuration no longer has (a command
    /// replaced, a webhook removed or given a new token): they ran the old command from the
    /// store and, failing, held the region's new hooks behind them for up to `maxAttempts`
    /// backoffs (about 24 minutes with the defaults); with no hooks left they pinned their events
    /// against retention for good. Returns how many were given up (logged once, names redacted).
    /// Each is recorded as a last failed attempt (its count in the failed-attempts metric too).
    ///
    /// ```swift
    /// _ = try await HookRunner(store: store, configuration: hooks).abandonUnconfigured()
    /// ```
    @discardableResult
    public func abandonUnconfigured() async throws -> Int {
        let configured = configuration.allHookNames
        let stale = try await store.deliveries(status: .pending).filter { !configured.contains($0.hook) }
        for delivery in stale {
            try await store.markAttemptFailed(delivery.id, error: "the hook is no longer in the configuration: given up", retryAt: nil)
        }
        if !stale.isEmpty {
            let hooks = Set(stale.map(\.hook)).sorted().prefix(5).map(HookConfiguration.redacted)
            logger.notice("pending deliveries to hooks no longer configured: given up", metadata: ["deliveries": "\(stale.count)", "hooks": "\(hooks)"])
        }
        return stale.count
    }

    /// Delivers until the task is cancelled, polling the queue every `pollInterval` seconds.
    /// (A daemon alone on its store calls ``abandonUnconfigured()`` first; a cluster member does
    /// not: during a rolling change of the configuration another member's hooks are not stale.)
    public func run(pollInterval: Double = 0.2) async {
        while !Task.isCancelled {
            let worked = (try? await deliverDue()) ?? 0
            if worked == 0 { try? await clock.sleep(for: .seconds(saturating: pollInterval)) }
        }
    }

    /// One pass: delivers every due delivery (up to `limit`); returns how many were attempted.
    /// A region's deliveries go in log order (the store gives only those of its earliest event
    /// with pending ones): once they are done, the next event's become due and are delivered in
    /// the same pass; a delivery is attempted at most once a pass.
    @discardableResult
    public func deliverDue(limit: Int = 32) async throws -> Int {
        let dropped = try await store.trimPendingDeliveries(toAtMost: maxPending)
        if dropped > 0 { logger.warning("hook queue full: dropped the oldest deliveries", metadata: ["dropped": "\(dropped)"]) }
        var attempted = Set<Int64>()
        while attempted.count < limit, !Task.isCancelled {
            let due = try await store.dueDeliveries(now: now(), limit: limit - attempted.count).filter { !attempted.contains($0.id) }
            if due.isEmpty { break }
            for delivery in due { attempted.insert(delivery.id) }
            try await deliver(due)
        }
        return attempted.count
    }

    private func deliver(_ due: [HookDelivery]) async throws {
        for delivery in due {
            // Stopping: what is left is delivered at the next start (no attempt is spent on it).
            if Task.isCancelled { break }
            // The row's numbers are read back from the store, which may hold anything: checked.
            let (previousID, below) = delivery.eventID.subtractingReportingOverflow(1)
            guard !below, let event = try await store.events(since: nil, region: nil, type: nil, afterID: previousID, limit: 1).first,
                  event.id == delivery.eventID else {
                try await store.markAttemptFailed(delivery.id, error: "event \(delivery.eventID) is missing", retryAt: nil)
                continue
            }
            let outcome = await attempt(delivery.hook, event: event)
            // The outcome is recorded even when the stop came meanwhile: a hook that ran would
            // otherwise run again at the next start.
            let store = self.store, now = self.now
            switch outcome {
            case .success:
                try await uncancelled { try await store.markDelivered(delivery.id, at: now()) }
                logger.info("hook delivered", metadata: ["hook": "\(HookConfiguration.redacted(delivery.hook))", "event": "\(event.id)"])
            case .failure(let message):
                // A command stopped with the daemon counts too: a hook that stops the daemon
                // itself (`systemctl restart regionkit`) would otherwise run at every start, forever.
                let attempts = max(0, min(delivery.attempts, Int.max - 1)) + 1
                // Doubled up to a minute, or the configured delay when that is longer (it was silently 60 s).
                let retryAt = attempts < maxAttempts ? now() + min(retryDelay * pow(2, Double(attempts - 1)), max(60, retryDelay)) : nil
                try await uncancelled { try await store.markAttemptFailed(delivery.id, error: message, retryAt: retryAt) }
                logger.warning("hook attempt failed", metadata: ["hook": "\(HookConfiguration.redacted(delivery.hook))", "event": "\(event.id)",
                                                                "attempt": "\(attempts)", "error": "\(message)", "giving-up": "\(retryAt == nil)"])
            }
        }
    }

    enum Outcome {
        case success
        case failure(String)
    }

    func attempt(_ hook: String, event: StoredEvent) async -> Outcome {
        if hook.hasPrefix("command:") { return await runCommand(String(hook.dropFirst("command:".count)), event: event) }
        if hook.hasPrefix("webhook:") { return await post(String(hook.dropFirst("webhook:".count)), event: event) }
        return .failure("unknown hook kind '\(HookConfiguration.redacted(hook))'")
    }

    /// The daemon's secrets, given to it in its environment, that a hook command does not inherit:
    /// the MQTT password, the HTTP API token and the store's password. (A hook runs whatever the
    /// configuration says, often a script that logs its environment or hands it on.)
    static let withheldVariables: Set<String> = ["REGIONKIT_MQTT_PASSWORD", "REGIONKIT_API_TOKEN", "REGIONKIT_STORE_PASSWORD"]

    /// A command hook's environment: the daemon's, less ``withheldVariables``, with the event's
    /// `REGIONKIT_EVENT`, `_EVENT_ID`, `_REGION`, `_STATE`, `_TIME` and `_REASON`.
    static func commandEnvironment(for event: StoredEvent, inheriting inherited: [String: String]) -> [String: String] {
        var environment = inherited.filter { !withheldVariables.contains($0.key) }
        environment["REGIONKIT_EVENT"] = event.type
        environment["REGIONKIT_EVENT_ID"] = String(event.id)
        environment["REGIONKIT_REGION"] = event.region ?? ""
        environment["REGIONKIT_STATE"] = event.state ?? ""
        environment["REGIONKIT_TIME"] = String(event.time)
        environment["REGIONKIT_REASON"] = event.reason ?? ""
        return environment
    }

    func runCommand(_ command: String, event: StoredEvent) async -> Outcome {
        // coreutils `timeout` puts the command in its own process group and signals the whole
        // group (TERM, then KILL a second later): killing /bin/sh alone would leave its children
        // running, holding our pipes open.
        let timeout = self.timeout
        let supervisor = ["/usr/bin/timeout", "/bin/timeout"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let shell = ["/bin/sh", "-c", command]
        let (path, arguments) = supervisor.map { ($0, ["--kill-after=1", String(format: "%.3f", timeout)] + shell) }
            ?? ("/bin/sh", Array(shell.dropFirst()))
        let environment = Self.commandEnvironment(for: event, inheriting: ProcessInfo.processInfo.environment)
        // Pipes close-on-exec here (the child gets its copies as 0 and 2); stdout to /dev/null.
        guard let input = ChildProcess.makePipe() else { return .failure("cannot create a pipe: errno \(errno)") }
        guard let errors = ChildProcess.makePipe() else {
            [input.read, input.write].forEach { _ = close($0) }
            return .failure("cannot create a pipe: errno \(errno)")
        }
        let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
        let started = ContinuousClock.now
        let limit = Duration.seconds(saturating: timeout)
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(path, arguments: arguments, environment: environment,
                                           standardInput: input.read, standardOutput: devNull, standardError: errors.write)
        } catch {
            [input.read, input.write, errors.read, errors.write, devNull].forEach { _ = close($0) }
            return .failure("\(error)")
        }
        // This process keeps only its ends; the child's copies are the only other ones.
        [input.read, errors.write, devNull].forEach { _ = close($0) }
        // Drained while the command runs (the first 300 bytes go into the failure message).
        let drain = PipeDrain(descriptor: errors.read, keeping: 300)
        // The event as JSON on stdin. A hook that does not read it may exit first: EPIPE is not
        // a failure of the hook (its exit status says how it went); another error is logged.
        if let code = PipeWriter.write(Array((event.json + "\n").utf8), to: input.write), code != EPIPE {
            logger.warning("hook input not written", metadata: ["event": "\(event.id)", "errno": "\(code)"])
        }
        close(input.write)
        // Backstop for a missing `timeout` binary: kill the child's process group. Real time on
        // purpose: it supervises a real process, which a test clock would never stop.
        let killer = Task {
            try await Task.sleep(for: .seconds(saturating: timeout + 2))
            child.signalGroup(SIGKILL)
        }
        // Cancelled (the daemon stopping): the command's group gets SIGTERM, SIGKILL a second
        // later (or once the command exited); the attempt is recorded as a failed one.
        // Timed out: what the command left in its group (a child that ignored `timeout`'s
        // SIGTERM outlived it, one more copy at each retry) is killed before the group goes.
        // (`timeout` exits 124 when its signal ended the command, 137 when the KILL was needed;
        // a command ending by itself before the limit keeps what it started in the background.)
        let supervised = supervisor != nil
        let (termination, stopped) = await child.termination(killingGroupAtExitIf: { status in
            supervised && (status == 124 || status == 137) && ContinuousClock.now - started >= limit
        })
        killer.cancel()
        let timedOut = ContinuousClock.now - started >= limit
        let stderr = String(decoding: await drain.finish(waitingAtMost: .seconds(1)), as: UTF8.self)
        // A command that ended by itself counts by its status, even when the stop came meanwhile.
        if stopped { return .failure("command stopped with the daemon (\(termination)); retried") }
        switch termination {
        case .signalled(let signal):
            return .failure("command killed by signal \(signal)\(signal == SIGKILL ? " (timeout \(timeout) s)" : "")")
        case .exited(let status) where supervisor != nil && timedOut && (status == 124 || status == 137):
            return .failure("command timed out after \(timeout.compactDescription) s (timeout) and was killed, with what it started")
        case .exited(let status):
            return status == 0 ? .success : .failure("command exited with status \(status): \(stderr)")
        }
    }

    /// No cookies and no cache: one endpoint's cookies never ride along to another, and nothing of
    /// a delivery is kept on disk. (FoundationNetworking still makes an empty directory under
    /// `$XDG_DATA_HOME`, else `~/.local/share`, named after the executable's folder, as soon as any
    /// session configuration exists; where it cannot, as under the unit's `ProtectHome=yes`,
    /// delivery works all the same: checked with an unwritable `XDG_DATA_HOME`.)
    static let webhookSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
    }()

    /// Redirects are not followed: FoundationNetworking re-sent a 307's or 308's POST with an
    /// empty body, the new place answered 200 and the event counted as delivered, unseen. The
    /// 3xx itself comes back, a failure naming where it pointed.
    final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
            completionHandler(nil)
        }
    }

    /// A webhook that did not answer within the hook timeout (headers and body together).
    struct WebhookTimedOut: Error {}

    func post(_ url: String, event: StoredEvent) async -> Outcome {
        guard let target = URL(string: url), target.scheme == "http" || target.scheme == "https" else {
            return .failure("'\(HookConfiguration.redacted(url))' is not an http(s) URL")
        }
        var request = URLRequest(url: target, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(String(event.id), forHTTPHeaderField: "X-RegionKit-Event-ID")
        request.httpBody = Data(event.json.utf8)
        // The timeout bounds the whole exchange: the request's own is an idle timeout, which an
        // endpoint that never answers held for 60 s and one that sends a byte a second for ever.
        let race = FirstResult<URLResponse>()
        let work = Task {
            do { race.finish(.success(try await Self.webhookSession.data(for: request).1)) } catch { race.finish(.failure(error)) }
        }
        let timer = Task {
            try await Task.sleep(for: .seconds(saturating: timeout))
            race.finish(.failure(WebhookTimedOut()))
        }
        defer {
            timer.cancel()
            work.cancel()
        }
        do {
            // Cancelled (the daemon stopping, a cluster member giving up the outputs): the race
            // ends at once, as the request did when it ran in this task.
            let response = try await withTaskCancellationHandler {
                try await race.value
            } onCancel: {
                race.finish(.failure(CancellationError()))
            }
            let http = response as? HTTPURLResponse
            let code = http?.statusCode ?? 0
            if (300..<400).contains(code) {
                let location = http?.value(forHTTPHeaderField: "Location").map { " to \(String(HookConfiguration.redacted($0).prefix(200)))" } ?? ""
                return .failure("HTTP \(code): a redirect\(location), not followed (a POST's body would not go with it): give the final URL")
            }
            return (200..<300).contains(code) ? .success : .failure("HTTP \(code)")
        } catch is WebhookTimedOut {
            return .failure("no complete answer within \(timeout.compactDescription) s (timeout)")
        } catch is CancellationError {
            return .failure("stopped with the daemon before the endpoint answered; retried")
        } catch {
            return .failure(error.localizedDescription)
        }
    }
}
