import RegionKitCore
import RegionKitEngine
import Dispatch
import Foundation
import RegionKitConcurrency

/// Real time: timestamps are seconds since the Unix epoch; timers run on a Dispatch queue.
///
/// Timers deliberately do not use `Task.sleep`: Swift concurrency's cooperative pool has one
/// thread per core, and any code blocking one of them (a synchronous read, a child process wait)
/// would delay every monitoring timer. Dispatch has its own threads.
///
/// ```swift
/// let manager = LocationManager(clock: SystemClock(), sources: [.beacon: .authorized])
/// ```
public final class SystemClock: MonitoringClock {
    private let queue = DispatchQueue(label: "regionkit.system-clock")

    public init() {}

    public var now: Timestamp { Timestamp(seconds: Date().timeIntervalSince1970) }

    public func schedule(at deadline: Timestamp, _ work: @escaping @Sendable () -> Void) -> ScheduledTimer {
        // 1 ms of slack so the wake-up is never before the deadline on the wall clock.
        let delay = max(0, deadline - now) + 0.001
        let flag = CancellationFlag()
        // Clamped: a deadline from a far-off (or non-finite) timestamp must not trap the conversion.
        let nanoseconds = Int(saturating: min(delay, Duration.maximumSaturatingSeconds) * 1e9)
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            if !flag.isCancelled { work() }
        }
        return ScheduledTimer { flag.cancel() }
    }

    /// A cancelled timer still wakes up once, and then does nothing.
    private final class CancellationFlag: Sendable {
        private let cancelled = LockedBox(false)
        var isCancelled: Bool { cancelled.withLock { $0 } }
        func cancel() { cancelled.withLock { $0 = true } }
    }
}
