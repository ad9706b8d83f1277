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
    @Option(help: "Stop after this many seconds (default: run until interrupted).")
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
        let signals = Self.signals
        // Clamped to ~31 years so that the milliseconds always fit an Int64.
        let end = duration.map { ContinuousClock.now + .milliseconds(Int64(min($0, 1e9) * 1000)) }
        while healthy() {
            if let signal = signals.lastSignal {
                Console.status("regionkit: \(SignalWatcher.name(signal)): stopping\n")
                return
            }
            if let end, ContinuousClock.now >= end { return }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Watches SIGINT and SIGTERM from the first wait until the process ends (a watcher let go
    /// would leave them ignored during the cleanup).
    private static let signals = SignalWatcher(signals: [SIGTERM, SIGINT])
}
