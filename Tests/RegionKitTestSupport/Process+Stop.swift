import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Stopping the real components the tests start (brokers, PostgreSQL, Bumble, mosquitto_sub) by PID.
extension Process {
    /// Sends `signal` (after SIGCONT, so a process stopped with SIGSTOP can handle it), waits up to
    /// `grace` seconds for it to exit, then SIGKILL; returns once it has exited. Does nothing for a
    /// process that is not running.
    ///
    /// ```swift
    /// broker.stop(signal: SIGTERM, grace: .seconds(3))
    /// postgres.stop(signal: SIGINT, grace: .seconds(10))   // PostgreSQL's fast shutdown
    /// ```
    public func stop(signal: Int32 = SIGTERM, grace: Duration) {
        guard isRunning else { return }
        let pid = processIdentifier
        Glibc.kill(pid, SIGCONT)
        Glibc.kill(pid, signal)
        let deadline = ContinuousClock.now + grace
        while isRunning, ContinuousClock.now < deadline { usleep(10_000) }
        killAndWait()
    }

    /// SIGKILL (no clean shutdown) if still running, then waits until it is gone.
    public func killAndWait() {
        if isRunning { Glibc.kill(processIdentifier, SIGKILL) }
        waitUntilExit()
    }
}
