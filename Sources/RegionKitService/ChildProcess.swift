#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import RegionKitConcurrency

/// A child process started with `posix_spawn` and reaped with `waitpid`: what the hook runner
/// runs commands with.
///
/// Not `Foundation.Process`: on Linux it learns that its child exited when a socket it hands
/// the child closes, and every process the child starts inherits that socket
/// (swift-corelibs-foundation#4795). A hook command that leaves a background process running
/// (`play alarm.wav &`) was therefore "running" until that process ended, and every later hook
/// waited behind it — forever behind a daemon it started.
///
/// The child gets the given descriptors as its standard input, output and error, every other
/// descriptor of this process closed, an empty signal mask and default signal dispositions
/// (this process blocks `SIGPIPE` while writing to pipes). It leads a process group of its own,
/// so what it starts can be stopped with it (``termination(grace:killingGroupAtExitIf:)``'s
/// cancellation).
///
/// ```swift
/// let child = try ChildProcess.spawn("/bin/sh", arguments: ["-c", "exit 3"], environment: [:],
///                                    standardInput: input, standardOutput: devNull, standardError: errors)
/// let termination = await child.termination()   // .exited(3)
/// ```
struct ChildProcess: Sendable {
    /// How a child ended.
    enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signalled(let signal): "killed by signal \(signal)"
            }
        }
    }

    /// `posix_spawn` failed with `code` (an errno).
    struct SpawnError: Error, CustomStringConvertible {
        var path: String
        var code: Int32
        var description: String { "cannot start \(path): \(String(cString: strerror(code)))" }
    }

    let pid: pid_t
    /// Set when `waitpid` reaped the child: from then on its pid may name another process.
    private let reaped = LockedBox(false)

    /// Starts `path` with `arguments` (without the program name) and exactly `environment`.
    static func spawn(_ path: String, arguments: [String], environment: [String: String],
                      standardInput: Int32, standardOutput: Int32, standardError: Int32) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (source, target) in [(standardInput, STDIN_FILENO), (standardOutput, STDOUT_FILENO), (standardError, STDERR_FILENO)] {
            posix_spawn_file_actions_adddup2(&actions, source, target)
        }
        // Every other descriptor open now (the store's file, sockets) stays with this process.
        // glibc ignores a close of a descriptor another thread closed meanwhile.
        for descriptor in Self.openDescriptors() where descriptor > STDERR_FILENO {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)   // a group of its own, led by the child
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = ([path] + arguments).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let status = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            (envp + [nil]).withUnsafeBufferPointer { envpBuffer in
                posix_spawn(&pid, path, &actions, &attributes, argvBuffer.baseAddress!, envpBuffer.baseAddress!)
            }
        }
        guard status == 0 else {
            throw SpawnError(path: path, code: status)
        }
        running.withLock { _ = $0.insert(pid) }
        return ChildProcess(pid: pid)
    }

    /// The children spawned and not reaped yet (each leads its process group).
    private static let running = LockedBox<Set<pid_t>>([])

    /// SIGKILLs the process group of every child not reaped yet: for a process about to end at
    /// once (a second termination signal), so no hook command outlives it to be started again,
    /// beside itself, at the next start. An unreaped child keeps its id and group reserved.
    static func killAllGroups() {
        running.withLock { pids in
            for pid in pids { kill(-pid, SIGKILL) }
        }
    }

    /// Sends `signal` to the child's process group: the child and whatever it started that is
    /// still in its group (a shell's commands, coreutils `timeout`'s command). Nothing once the
    /// child has been reaped (under the same lock as the reaping: its id may then name another
    /// process or group).
    func signalGroup(_ signal: Int32) {
        reaped.withLock { reaped in
            if !reaped { kill(-pid, signal) }
        }
    }

    /// Waits for the child to end and reaps it, checking every 10 ms of real time (it supervises
    /// a real process, which a test clock would never end). `stopped` is true when the child was
    /// still running as the waiting task was cancelled, and was stopped for it.
    ///
    /// Cancelling the waiting task stops the child's whole process group: `SIGTERM` (a command
    /// may clean up; coreutils `timeout` passes it on to its command's group), then, once the
    /// child has exited or `grace` has passed, `SIGKILL` to the group, for what ignored the
    /// `SIGTERM` (a background process of the command). The child is reaped only after that — its
    /// unreaped exit keeps its id, and so its group's, from being reused — and then always, so no
    /// zombie is left. A child that had already exited is only reaped: its background processes
    /// are not this stop's. The wait after cancellation runs in a task of its own (a cancelled
    /// task cannot sleep) and is bounded by `grace` plus the reaping.
    ///
    /// `killingGroupAtExitIf`: asked once the child has exited, before it is reaped (its id still
    /// reserved), with its exit status (`nil` when a signal ended it); when it says so, the
    /// child's group gets `SIGKILL` first — what the child left
    /// running there (coreutils `timeout` exits once its command's shell died of the `SIGTERM`,
    /// leaving whatever ignored it).
    func termination(grace: Duration = .seconds(1), killingGroupAtExitIf condition: (@Sendable (Int32?) -> Bool)? = nil) async -> (termination: Termination, stopped: Bool) {
        // `reap` returns nil only when the task is cancelled while the child runs.
        if let ended = await reap(until: nil, killingGroupIf: condition) { return (ended, false) }
        if hasExited() { return (await reap(until: nil) ?? .exited(-1), false) }
        signalGroup(SIGTERM)
        let deadline = ContinuousClock.now + grace
        let child = self
        return await Task.detached {
            while !child.hasExited(), ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(10))
            }
            child.signalGroup(SIGKILL)
            return (await child.reap(until: nil) ?? .exited(-1), true)
        }.value
    }

    /// Whether the child has exited, without reaping it (`waitid` with `WNOWAIT`): its id stays
    /// reserved, so its group can still be signalled safely.
    private func hasExited() -> Bool {
        reaped.withLock { reaped in
            if reaped { return true }
            if case .running = probe(&reaped) { return false }
            return true
        }
    }

    /// What `waitid` with `WNOWAIT` says of the child (nothing reaped).
    private enum Probe {
        /// Running, or `waitid` failed for another reason than the child being gone.
        case running
        /// Exited, not reaped: its id is still ours. `status`: its exit status, nil when a
        /// signal ended it.
        case exited(status: Int32?)
        /// Not our child any more (reaped elsewhere): its id may be another's now.
        case gone
    }

    /// Under the `reaped` lock: the child's state without reaping it; `gone` marks it reaped.
    private func probe(_ reaped: inout Bool) -> Probe {
        var info = siginfo_t()
        // With WNOHANG and no child ready, waitid returns 0 and leaves si_pid 0.
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else {
            guard errno == ECHILD else { return .running }
            markReaped(&reaped)
            return .gone
        }
        guard info._sifields._kill.si_pid == pid else { return .running }
        return .exited(status: info.si_code == Int32(CLD_EXITED) ? info._sifields._sigchld.si_status : nil)
    }

    /// Under the `reaped` lock: the child's id is no longer ours to signal.
    private func markReaped(_ reaped: inout Bool) {
        reaped = true
        let pid = pid
        Self.running.withLock { _ = $0.remove(pid) }
    }

    /// Polls `waitpid` every 10 ms until the child ended (its termination), or the task is
    /// cancelled or `deadline` passed (`nil`). A child that already ended is reaped even when
    /// the task is cancelled.
    private func reap(until deadline: ContinuousClock.Instant?, killingGroupIf condition: (@Sendable (Int32?) -> Bool)? = nil) async -> Termination? {
        var status: Int32 = 0
        while true {
            let result = reaped.withLock { reaped in
                // Exited but not reaped (`WNOWAIT`): its group may still be signalled safely.
                if let condition, !reaped, case .exited(let status) = probe(&reaped), condition(status) {
                    kill(-pid, SIGKILL)
                }
                let result = waitpid(pid, &status, WNOHANG)
                if result == pid || (result == -1 && errno == ECHILD) { markReaped(&reaped) }
                return (result, errno)
            }
            if result.0 == pid { break }
            if result.0 == -1 && result.1 != EINTR {
                // Not our child any more (reaped elsewhere): nothing to report but a failure.
                return .exited(-1)
            }
            if let deadline, ContinuousClock.now >= deadline { return nil }
            do { try await Task.sleep(for: .milliseconds(10)) } catch { return nil }
        }
        // <sys/wait.h>'s macros, which Swift does not import.
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    /// A pipe whose ends close on `exec` (a spawned child gets only the copies it is given);
    /// `nil` with `errno` set when none could be made.
    static func makePipe() -> (read: Int32, write: Int32)? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// The descriptors open in this process (`/proc/self/fd`; empty where there is no /proc).
    static func openDescriptors() -> [Int32] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return [] }
        return names.compactMap { Int32($0) }
    }
}
