#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import RegionKitConcurrency

/// Reads a pipe to its end on a thread of its own — a hook command's standard error — keeping only
/// the first `limit` bytes and discarding the rest, so the writer never blocks on a full pipe
/// (64 KiB on Linux). Reading it only after the command exited, as the hook runner once did, left
/// a command that wrote more than that blocked until its timeout killed it, and a command that
/// left a background child holding the pipe open made the reader wait for that child.
///
/// The thread owns the descriptor and closes it: not `FileHandle.readabilityHandler`, whose
/// handler can still be running when the handle is closed, and whose `availableData` traps on a
/// closed descriptor.
///
/// ```swift
/// let drain = PipeDrain(descriptor: errors.read, keeping: 300)   // the read end, now the drain's
/// // … once the command exited:
/// let text = String(decoding: await drain.finish(waitingAtMost: .seconds(1)), as: UTF8.self)
/// ```
final class PipeDrain: Sendable {
    private struct State {
        var kept: [UInt8] = []
        /// The writers closed the pipe (or reading failed): nothing more will come.
        var ended = false
        /// ``finish(waitingAtMost:)`` gave up waiting: the thread closes the pipe and stops.
        var stop = false
    }

    private let state = LockedBox(State())

    /// Starts draining `descriptor`, which the drain closes when done.
    init(descriptor: Int32, keeping limit: Int) {
        let state = state
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            // Polled every 50 ms so that a stop is noticed while a background child keeps the
            // pipe open without writing.
            while !state.withLock({ $0.stop }) {
                let ready = poll(&poller, 1, 50)
                if ready == 0 || (ready < 0 && errno == EINTR) { continue }
                guard ready > 0 else { break }
                let count = read(descriptor, &buffer, buffer.count)
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                guard count > 0 else { break }
                state.withLock { state in
                    if state.kept.count < limit { state.kept += buffer[0..<min(count, limit - state.kept.count)] }
                }
            }
            close(descriptor)
            state.withLock { $0.ended = true }
        }
        thread.start()
    }

    /// The bytes kept, once every writer closed the pipe or `wait` passed (a writer that outlives
    /// the command — a background child — is not waited for; the drain then stops within 50 ms).
    func finish(waitingAtMost wait: Duration) async -> [UInt8] {
        let deadline = ContinuousClock.now + wait
        while !state.withLock({ $0.ended }), ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return state.withLock { state in
            state.stop = true
            return state.kept
        }
    }
}
