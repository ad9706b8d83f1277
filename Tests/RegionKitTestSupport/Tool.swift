import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command-line tool (tshark, btmon, the regionkit executable) with a time limit; returns
/// its status and output. The one tool runner of the test targets.
///
/// ```swift
/// guard let tshark = Tool.find("tshark") else { return } // skipped, with the reason printed
/// let result = try await Tool.run(tshark, ["-r", capture, "-T", "fields", "-e", "frame.number"])
/// ```
public enum Tool {
    /// Whether the process has exited, and the waiter to resume when it does (under one lock).
    private struct ExitState {
        var finished = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    public static func find(_ name: String) -> String? {
        for directory in ["/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin"] {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Async so that waiting never blocks a thread of Swift's cooperative pool (2 threads on a
    /// 2-core machine: a blocking wait there starves every other test's timers).
    /// - Parameter signal: sent to the process after the delay (a user's Ctrl-C, systemd's SIGTERM).
    public static func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(60),
                           signal: (number: Int32, after: Duration)? = nil) async throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let outPath = TestScratch.directory.appendingPathComponent("tool-\(getpid())-\(UUID().uuidString).out").path
        let errPath = outPath + ".err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        // One lock for "has it exited" and "who waits": with two, the handler could read "no
        // waiter" just before the waiter, still seeing "not exited", stored itself, and the
        // waiter was never resumed (a hang until the lane's timeout).
        let exit = Locked(ExitState())
        process.terminationHandler = { _ in
            let waiter = exit.withLock { state -> CheckedContinuation<Void, Never>? in
                state.finished = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
        try process.run()
        let pid = process.processIdentifier
        let killer = Task {
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { kill(pid, SIGKILL) }
        }
        let signaller = signal.map { signal in
            Task {
                try? await Task.sleep(for: signal.after)
                if !Task.isCancelled, !exit.withLock({ $0.finished }) { kill(pid, signal.number) }
            }
        }
        defer { signaller?.cancel() }
        await withCheckedContinuation { continuation in
            let done = exit.withLock { state -> Bool in
                if !state.finished { state.waiter = continuation }
                return state.finished
            }
            if done { continuation.resume() }
        }
        killer.cancel()
        if process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL {
            throw TestFailure("\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        process.waitUntilExit()
        // Decoded with repair: an invalid byte must not turn a whole stream into "" (a check that
        // something is absent would then pass without looking).
        func text(_ path: String) -> String {
            (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
        return Result(status: process.terminationStatus, stdout: text(outPath), stderr: text(errPath))
    }
}
