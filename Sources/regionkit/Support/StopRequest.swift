import Foundation
import Logging
import RegionKitConcurrency

/// Why the daemon should stop, from whoever notices first (a signal, a store that can no longer be
/// written, every source gone): the first reason wins; ``wait()`` returns it and, unlike a signal
/// wait, ends when its task is cancelled.
///
/// ```swift
/// let stop = StopRequest()
/// Task { stop.request("signal 15", failed: false) }
/// let reason = await stop.wait()   // ("signal 15", false), or nil if cancelled first
/// ```
final class StopRequest: Sendable {
    typealias Reason = (text: String, failed: Bool)

    private struct State {
        var reason: Reason?
        var waiters: [Int: CheckedContinuation<Reason?, Never>] = [:]
        var nextWaiter = 0
    }
    private let state = LockedBox(State())

    var reason: Reason? { state.withLock { $0.reason } }

    /// Records `text` (if no reason was given yet) and wakes every waiter.
    func request(_ text: String, failed: Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<Reason?, Never>] in
            guard state.reason == nil else { return [] }
            state.reason = (text, failed)
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: (text, failed)) }
    }

    /// The first reason requested; nil when the waiting task is cancelled before any.
    func wait() async -> Reason? {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate = state.withLock { state -> Reason?? in
                    if let reason = state.reason { return .some(reason) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = continuation
                    return .none
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: nil)
        }
    }

    /// Requests a stop at the first SIGTERM, SIGINT or SIGHUP (logged as "stopping"); from the
    /// call on, those signals no longer end the process by themselves. (SIGHUP — a closed
    /// terminal, or an operator's `kill -HUP` — ended the daemon at once, without its
    /// `processStopped` or stopping its hooks; the configuration is not reloaded: a restart reads it.) Keep the watcher as long as the
    /// process runs (a second signal while it stops ends it at once); cancel the task when done.
    ///
    /// ```swift
    /// let (signals, watching) = stop.stopOnSignals(logger: logger)
    /// defer { watching.cancel(); withExtendedLifetime(signals) {} }
    /// ```
    func stopOnSignals(logger: Logger) -> (watcher: SignalWatcher, task: Task<Void, Never>) {
        // SIGHUP only when it is not ignored already: under `nohup` the daemon must outlive the terminal.
        let signals = SignalWatcher(signals: [SIGTERM, SIGINT] + (Self.isIgnored(SIGHUP) ? [] : [SIGHUP]))
        let task = Task {
            let signal = await signals.next()
            logger.info(signal == SIGHUP ? "stopping (SIGHUP does not reload the configuration: a restart reads it)" : "stopping",
                        metadata: ["signal": "\(signal)"])
            self.request("signal \(signal)", failed: false)
        }
        return (signals, task)
    }

    /// Whether `signal` is ignored in this process now (`SigIgn` of `/proc/self/status`: `nohup`
    /// ignores SIGHUP before it starts the command); false where that cannot be read.
    static func isIgnored(_ signal: Int32) -> Bool {
        guard signal >= 1, signal <= 64,
              let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigIgn:") }),
              let mask = UInt64(line.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
        return mask & (1 << UInt64(signal - 1)) != 0
    }
}
