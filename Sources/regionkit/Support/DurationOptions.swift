import ArgumentParser
import Foundation

/// `--duration`, shared by scan, advertise and monitor: run for so many seconds, or until
/// interrupted, while the controller stays usable.
///
/// ```swift
/// @OptionGroup var runFor: DurationOptions
/// try await runFor.wait { !scanner.lastErrorIsFinal }
/// ```
struct DurationOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Stop after this many seconds (default: run until interrupted).")
    var duration: Double?

    func validate() throws {
        if let duration { guard duration.isFinite, duration > 0 else { throw ValidationError("--duration must be a positive number of seconds, got \(duration)") } }
    }

    /// Sleeps for ``duration`` (forever when nil) while `healthy()` holds, checking 10 times a
    /// second, and returns early at SIGINT (Ctrl-C) or SIGTERM, so the command's cleanup runs: the
    /// advertiser stops advertising (a signal used to end the process with the controller still
    /// beaconing), the scanner disables scanning, the summary is printed. A second signal while
    /// the command stops ends it at once.
    func wait(while healthy: () -> Bool) async throws {
        watchSignals()
        // Clamped to ~31 years so that the milliseconds always fit an Int64.
        let end = duration.map { ContinuousClock.now + .milliseconds(Int64(min($0, 1e9) * 1000)) }
        while healthy() {
            if Self.interrupted { return }
            if let end, ContinuousClock.now >= end { return }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Watches SIGINT and SIGTERM from now until the process ends: call it first in the command,
    /// so that a signal while the controller opens or a source connects also ends in the cleanup
    /// (the wait then returns at once). The first signal is said on stderr whenever it comes.
    func watchSignals() {
        _ = Self.signals
    }

    /// Whether SIGINT or SIGTERM came (the command should stop and clean up).
    static var interrupted: Bool { signals.received }

    /// The watcher, from the first ``watchSignals()`` until the process ends (a watcher let go
    /// would leave the signals ignored during the cleanup).
    private static let signals: SignalWatcher = {
        let watcher = SignalWatcher(signals: [SIGTERM, SIGINT])
        Task {
            let signal = await watcher.next()
            Console.status("regionkit: \(SignalWatcher.name(signal)): stopping (again to exit at once)\n")
        }
        return watcher
    }()
}
