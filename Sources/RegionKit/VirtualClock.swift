import RegionKitCore
import RegionKitEngine
import RegionKitConcurrency

/// Virtual time for tests, simulation and replay: time moves only through ``advance(by:)`` /
/// ``advance(to:)``, which run every due timer synchronously, in deadline order (then in the
/// order scheduled), each seeing ``now`` equal to its own deadline.
///
/// ```swift
/// let clock = VirtualClock()
/// _ = clock.schedule(at: Timestamp(seconds: 2)) { print("two seconds") }
/// clock.advance(by: 5)  // prints "two seconds"; clock.now is t=5
/// ```
public final class VirtualClock: MonitoringClock {
    private struct Entry {
        var deadline: Timestamp
        var sequence: Int
        var work: @Sendable () -> Void
    }

    private struct State {
        var now: Timestamp
        var sequence = 0
        var entries: [Entry] = []
    }

    private let state: LockedBox<State>

    public init(start: Timestamp = .zero) {
        state = LockedBox(State(now: start))
    }

    public var now: Timestamp { state.withLock { $0.now } }

    /// The earliest pending deadline, if any.
    public var nextDeadline: Timestamp? { state.withLock { $0.entries.map(\.deadline).min() } }

    public func schedule(at deadline: Timestamp, _ work: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let sequence = state.withLock { state in
            state.sequence += 1
            state.entries.append(Entry(deadline: max(deadline, state.now), sequence: state.sequence, work: work))
            return state.sequence
        }
        return ScheduledTimer { [weak self] in
            self?.state.withLock { $0.entries.removeAll { $0.sequence == sequence } }
        }
    }

    /// Moves time forward by `seconds`, running every timer that falls due.
    public func advance(by seconds: Double) {
        advance(to: now + seconds)
    }

    /// Moves time to `target` (never backwards), running every timer due at or before it.
    public func advance(to target: Timestamp) {
        while let entry = popDue(upTo: target) {
            entry.work()
        }
        state.withLock { $0.now = max($0.now, target) }
    }

    private func popDue(upTo target: Timestamp) -> Entry? {
        state.withLock { state in
            guard let index = state.entries.indices.min(by: {
                (state.entries[$0].deadline, state.entries[$0].sequence) < (state.entries[$1].deadline, state.entries[$1].sequence)
            }), state.entries[index].deadline <= target else { return nil }
            let entry = state.entries.remove(at: index)
            state.now = max(state.now, entry.deadline)
            return entry
        }
    }
}
