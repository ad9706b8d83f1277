import Testing

extension Tag {
    /// A suite that starts processes or real components (Bumble controllers, gpsd, the daemon,
    /// the CLI, a webhook listener, loopback TCP peers). `scripts/test.sh` runs these after the
    /// in-process tests, one suite at a time, so that on a 2-core machine they never starve each
    /// other. Put it on the `@Suite` (not on single tests): the script selects whole suites.
    ///
    /// ```swift
    /// @Suite("regionkit run: the daemon", .serialized, .tags(.endToEnd))
    /// struct DaemonTests { … }
    /// ```
    @Tag public static var endToEnd: Self

    /// A suite that waits, with real-time bounds, for other threads or tasks to react (a scanner
    /// over the in-memory controller, a source pumping in real time, a runner reaching its next
    /// sleep). Alone it passes in milliseconds; beside the CPU-heavy in-process tests on a 2-core
    /// machine its bounds can run out, so `scripts/test.sh` runs it in phase 2 like `.endToEnd`.
    @Tag public static var realTime: Self
}
