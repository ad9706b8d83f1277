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
}
