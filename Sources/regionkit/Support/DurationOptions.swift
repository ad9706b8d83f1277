import ArgumentParser

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

    /// Sleeps for ``duration`` (forever when nil) while `healthy()` holds, checking 10 times a second.
    func wait(while healthy: () -> Bool) async throws {
        // Clamped to ~31 years so that the milliseconds always fit an Int64.
        let end = duration.map { ContinuousClock.now + .milliseconds(Int64(min($0, 1e9) * 1000)) }
        while healthy() {
            if let end, ContinuousClock.now >= end { return }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
