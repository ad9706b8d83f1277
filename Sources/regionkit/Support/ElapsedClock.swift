import RegionKit

/// Real time counted from when the command started, so `t` in the output is seconds since start
/// (the same convention as `simulate`, whose printer reports times from zero).
final class ElapsedClock: MonitoringClock {
    private let system = SystemClock()
    private let origin: Timestamp

    init() { origin = system.now }

    var now: Timestamp { Timestamp(seconds: system.now - origin) }

    func schedule(at deadline: Timestamp, _ work: @escaping @Sendable () -> Void) -> ScheduledTimer {
        system.schedule(at: deadline + origin.seconds, work)
    }
}
