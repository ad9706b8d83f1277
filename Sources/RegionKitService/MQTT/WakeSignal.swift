import RegionKitConcurrency

/// A one-slot wake-up: ``signal()`` wakes the waiter, or the next ``wait(timeout:)`` returns at
/// once when nobody was waiting. Signals coalesce; a waiter also returns after its timeout or
/// when its task is cancelled.
///
/// ```swift
/// let wake = WakeSignal()
/// Task { await wake.wait(timeout: .seconds(1)) }   // returns on the signal below
/// wake.signal()
/// ```
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: (id: UInt64, continuation: CheckedContinuation<Void, Never>)?
        var nextID: UInt64 = 0
    }

    private let state = LockedBox(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume()
    }

    func wait(timeout: Duration) async {
        let id = state.withLock { state -> UInt64? in
            if state.pending {
                state.pending = false
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.resume(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiter = (id, continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            self.resume(id)
        }
        timer.cancel()
    }

    /// Resumes waiter `id` if it is still waiting.
    private func resume(_ id: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter, waiter.id == id else {
                // Timed out or cancelled before it started waiting: let that wait return at once
                // (a spurious wake-up is harmless; a lost one is not).
                if state.waiter == nil && state.nextID == id { state.pending = true }
                return nil
            }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume()
    }
}
