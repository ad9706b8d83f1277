import RegionKit
import RegionKitConcurrency

/// What one source has been doing: its state, inputs ingested, reconnects and decode errors.
/// A ``SourceRunner`` keeps it up to date; ``status`` is what `GET /v1/sources`, `/readyz` and
/// `/metrics` report.
///
/// ```swift
/// let activity = SourceActivity(name: source.name, kind: source.kind.rawValue)
/// let runner = SourceRunner(source: source, configuration: configuration, service: service, activity: activity)
/// print(activity.status.sightings)
/// ```
public final class SourceActivity: Sendable {
    /// Counters kept by the source's own machinery (a Bluetooth scanner's statistics), read on demand.
    public struct Counters: Sendable {
        public var inputs: Int
        public var reconnects: Int
        public var decodeErrors: [String: Int]
        /// Backpressure: holds of the reads, their total length, whether one is on now (nil: the source has none).
        public var readPauses: (count: Int, seconds: Double, now: Bool)?

        public init(inputs: Int, reconnects: Int, decodeErrors: [String: Int], readPauses: (count: Int, seconds: Double, now: Bool)? = nil) {
            self.inputs = inputs
            self.reconnects = reconnects
            self.decodeErrors = decodeErrors
            self.readPauses = readPauses
        }
    }

    private struct Inner {
        var status: SourceStatus
        var counters: (@Sendable () -> Counters)?
        var observer: (@Sendable (SourceStatus) -> Void)?
    }
    private let inner: LockedBox<Inner>
    /// The source's name in reports (``SourceStatus/name``).
    public let name: String

    public init(name: String, kind: String) {
        self.name = name
        inner = LockedBox(Inner(status: SourceStatus(name: name, kind: kind, state: .connecting)))
    }

    /// The current status (with the source's own counters folded in).
    public var status: SourceStatus {
        let (status, counters) = inner.withLock { ($0.status, $0.counters) }
        guard let counters else { return status }
        var merged = status
        let values = counters()
        merged.sightings += values.inputs
        merged.reconnects += values.reconnects
        merged.decodeErrors.merge(values.decodeErrors) { $0 + $1 }
        if let pauses = values.readPauses {
            merged.readPauses = pauses.count
            merged.readPausedSeconds = pauses.seconds
            merged.readPaused = pauses.now
        }
        return merged
    }

    public func set(_ state: SourceStatus.State, detail: String? = nil) {
        let (changed, observer) = inner.withLock { inner -> (Bool, (@Sendable (SourceStatus) -> Void)?) in
            // A change of state, or the first reason for the state a source starts in (connecting).
            let changed = inner.status.state != state || (inner.status.detail == nil && detail != nil && state != .up)
            inner.status.state = state
            inner.status.detail = detail
            return (changed, inner.observer)
        }
        // Not every detail: a source retrying every few seconds reports its first failure, not each attempt.
        if changed, let observer { observer(status) }
    }

    /// Calls `observer` with the new status whenever the state changes, and when the first reason
    /// arrives for the state it started in (`connecting`: a device unreachable from the start). The
    /// daemon logs a line and a `sourceStatusChanged` event for each.
    public func observe(_ observer: @escaping @Sendable (SourceStatus) -> Void) {
        inner.withLock { $0.observer = observer }
    }

    /// One sighting or fix handed to the manager at `time` (seconds).
    public func recordInput(at time: Double) {
        inner.withLock {
            $0.status.sightings += 1
            $0.status.lastInput = time
        }
    }

    public func recordReconnect() {
        inner.withLock { $0.status.reconnects += 1 }
    }

    public func recordDecodeError(_ kind: String) {
        inner.withLock { $0.status.decodeErrors[kind, default: 0] += 1 }
    }

    /// Reads counters kept elsewhere (added to those recorded here).
    public func track(_ counters: @escaping @Sendable () -> Counters) {
        inner.withLock { $0.counters = counters }
    }
}
