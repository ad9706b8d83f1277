import Testing

extension TimeLimitTrait.Duration {
    /// The time limit of a test that runs in `scripts/test.sh`'s phase 1 (any suite not tagged
    /// `.endToEnd` or `.realTime`): 25 minutes, a guard against a hang, never a bound on speed.
    ///
    /// Phase 1 starts all its tests at once, at the lowest CPU priority beside phase 2's suites,
    /// on two cores: a test's clock starts when Swift Testing starts it, and its body may then
    /// wait behind hundreds of others for a cooperative thread for as long as the whole phase
    /// takes. A test's reported time is the phase's, not its own: ≈ 172 s for microsecond tests
    /// in the CI of 189fbc4, whose one-minute limit failed every test of a suite; 570–600 s for
    /// 930 of the 945 tests with three CPU-bound processes beside the phase. 25 minutes still
    /// names a hung test (and ends it) before the phase's own 30-minute timeout stops the whole
    /// process. `scripts/test.sh` refuses `.timeLimit(.minutes(N))` in a phase-1 file.
    ///
    /// ```swift
    /// @Suite("AsyncSemaphore", .timeLimit(.inProcess))
    /// struct AsyncSemaphoreTests { … }
    /// ```
    public static var inProcess: Self { .minutes(25) }
}
