import RegionKitCore
import RegionKitEngine
/// The time source and timer service a ``LocationManager`` runs on.
///
/// Production uses ``SystemClock``; tests and simulations use ``VirtualClock``, whose time only
/// moves when told to (`advance(by:)`), so nothing ever sleeps.
///
/// ```swift
/// let clock = VirtualClock()
/// let manager = LocationManager(clock: clock, sources: [.beacon: .authorized])
/// clock.advance(by: 40) // fires every timer due in the next 40 virtual seconds, in order
/// ```
public protocol MonitoringClock: AnyObject, Sendable {
    /// The current time.
    var now: Timestamp { get }
    /// Runs `work` once at (or as soon as possible after) `deadline`.
    func schedule(at deadline: Timestamp, _ work: @escaping @Sendable () -> Void) -> ScheduledTimer
}

/// A timer returned by ``MonitoringClock/schedule(at:_:)``; cancel it to stop it from firing.
public final class ScheduledTimer: Sendable {
    private let onCancel: @Sendable () -> Void

    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    public func cancel() { onCancel() }
}
