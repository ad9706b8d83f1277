import RegionKitCore
import RegionKitEngine
import Foundation
import Synchronization

/// Real time: timestamps are seconds since the Unix epoch; timers sleep on the continuous clock.
///
/// ```swift
/// let manager = LocationManager(clock: SystemClock(), sources: [.beacon: .authorized])
/// ```
public final class SystemClock: MonitoringClock {
    public init() {}

    public var now: Timestamp { Timestamp(seconds: Date().timeIntervalSince1970) }

    public func schedule(at deadline: Timestamp, _ work: @escaping @Sendable () -> Void) -> ScheduledTimer {
        // 1 ms of slack so the wake-up is never before the deadline on the wall clock.
        let delay = max(0, deadline - now) + 0.001
        let task = Task {
            try? await Task.sleep(for: .nanoseconds(Int64(delay * 1e9)), clock: .continuous)
            guard !Task.isCancelled else { return }
            work()
        }
        return ScheduledTimer { task.cancel() }
    }
}
