import Dispatch
import Foundation
import RegionKitConcurrency
import RegionKitService

/// Waits for termination signals (SIGTERM from systemd or `kill`, SIGINT from Ctrl-C) without
/// killing the process, so the service can stop cleanly. A second one while it stops ends the
/// process at once (status 128 + the signal), saying so: the way out of a stop that hangs
/// without reaching for SIGKILL (a second Ctrl-C).
///
/// ```swift
/// let watcher = SignalWatcher(signals: [SIGTERM, SIGINT])
/// let signal = await watcher.next()
/// ```
final class SignalWatcher: Sendable {
    // Dispatch sources are thread-safe; they are only kept alive here.
    nonisolated(unsafe) private let sources: [any DispatchSourceSignal]
    private let state = LockedBox<(last: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))

    init(signals: [Int32]) {
        // A parent (a test runner, some supervisors) may hand us these signals blocked; a blocked
        // signal is never delivered, so unblock them first.
        var mask = sigset_t()
        sigemptyset(&mask)
        for number in signals { sigaddset(&mask, number) }
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            sources.append(source)
        }
        self.sources = sources
        for (source, number) in zip(sources, signals) {
            // `data`: the signals merged into this call (a quick double Ctrl-C arrives as one).
            source.setEventHandler { [weak self, source] in self?.deliver(number, count: source.data) }
            source.resume()
        }
    }

    static func name(_ number: Int32) -> String {
        switch number {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGHUP: "SIGHUP"
        default: "signal \(number)"
        }
    }

    var received: Bool { state.withLock { $0.last != nil } }
    var lastSignal: Int32? { state.withLock { $0.last } }

    /// The next signal (or the one already received).
    func next() async -> Int32 {
        await withCheckedContinuation { continuation in
            let already = state.withLock { state -> Int32? in
                if let last = state.last { return last }
                state.waiters.append(continuation)
                return nil
            }
            if let already { continuation.resume(returning: already) }
        }
    }

    private func deliver(_ number: Int32, count: UInt) {
        if count > 1 || state.withLock({ $0.last != nil }) {
            Console.error("\(Self.name(number)) again while stopping: exiting now, the stop unfinished (what it had not written is lost)")
            // A hook command running now would outlive the daemon and run again at its next start.
            HookRunner.killRunningCommands()
            _exit(128 + number)
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Int32, Never>] in
            state.last = number
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: number) }
    }
}
