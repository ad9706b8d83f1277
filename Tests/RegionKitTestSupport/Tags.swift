import Testing

extension Tag {
    /// A suite that starts processes or real components (Bumble controllers, gpsd, the daemon,
    /// the CLI, a webhook listener, loopback TCP peers). `scripts/test.sh` runs each such suite in
    /// a test process of its own, three suites at a time (see `alone` and `heavy`), at normal CPU
    /// priority while the in-process tests run beside them at the lowest; each suite's tests run
    /// as the suite says (most are `.serialized`). Put it on the `@Suite` (not on single tests):
    /// the script selects whole suites.
    ///
    /// ```swift
    /// @Suite("regionkit run: the daemon", .serialized, .tags(.endToEnd))
    /// struct DaemonTests { … }
    /// ```
    @Tag public static var endToEnd: Self

    /// A suite that waits, with real-time bounds, for other threads or tasks to react (a scanner
    /// over the in-memory controller, a source pumping in real time, a runner reaching its next
    /// sleep, a server's sub-second idle timeout). Alone it passes in milliseconds; among the
    /// in-process tests, which run in parallel at the lowest CPU priority, its bounds could run
    /// out on a 2-core machine, so `scripts/test.sh` runs it in phase 2 like `.endToEnd`.
    @Tag public static var realTime: Self

    /// A phase-2 suite (also tagged `.endToEnd` or `.realTime`) whose bounds are a fraction of a
    /// second of real time under a CPU-heavy load of its own: `scripts/test.sh` runs it with no
    /// other suite beside it (the other phase-2 suites run three at a time).
    ///
    /// ```swift
    /// @Suite("A real recording through the broker into 3 cluster engines", .serialized, .tags(.endToEnd, .alone))
    /// ```
    @Tag public static var alone: Self

    /// A phase-2 suite that keeps more than half a core busy for most of its run (a cluster of
    /// daemons, a recording replayed through a broker in a debug build): `scripts/test.sh` never
    /// runs two of them at once (the other lanes take the light ones meanwhile).
    ///
    /// ```swift
    /// @Suite("regionkit run in cluster mode", .serialized, .tags(.endToEnd, .heavy))
    /// ```
    @Tag public static var heavy: Self
}
