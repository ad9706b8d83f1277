import NIOCore
import Synchronization

/// Backpressure from the consumer of a client's messages to the broker: while the consumer is
/// more than ``pauseAbove`` behind (its `backlog`), the client holds back its reads from the
/// socket, so that the broker keeps (or, for QoS 0 beyond its queue, drops) what the consumer
/// could not take, instead of this process queueing it without bound.
///
/// A hold ends when the backlog is down to ``resumeAtOrBelow`` (asked every ``checkInterval``),
/// and after ``maximumHold`` at the latest: then one read goes through, and the next is held
/// again if the consumer is still behind. So a consumer that stays behind gets one read every
/// ``maximumHold`` (a rate limit, not a stop): a message waits at most that long, so the
/// sightings of the beacons still there arrive before their silence looks like an exit, and the
/// connection's keepalive and end-of-stream are still seen.
///
/// ```swift
/// let pause = MQTTReadPause(pauseAbove: 50_000, resumeAtOrBelow: 25_000) { service.backlog }
/// let client = MQTTClient(configuration: configuration, readPause: pause, onMessage: ingest)
/// print(pause.pauses, pause.pausedTime)
/// ```
public final class MQTTReadPause: Sendable {
    /// Reads are held when the backlog is above this.
    public let pauseAbove: Int
    /// A hold ends when the backlog is at or below this (below ``pauseAbove``: a consumer near
    /// the mark does not hold and release at every read).
    public let resumeAtOrBelow: Int
    /// How often a hold asks the backlog again.
    public let checkInterval: Duration
    /// The longest a hold lasts, whatever the backlog.
    public let maximumHold: Duration
    private let backlog: @Sendable () -> Int
    private let holdCount = Atomic<Int>(0)
    private let heldNanoseconds = Atomic<Int64>(0)
    /// When the current hold began (NIO uptime nanoseconds), 0 when reads are not held.
    private let holdStart = Atomic<UInt64>(0)

    /// - Parameters:
    ///   - pauseAbove: the backlog above which reads are held (at least 1).
    ///   - resumeAtOrBelow: the backlog at which a hold ends (clamped to `0...pauseAbove`).
    ///   - checkInterval: how often a hold asks `backlog` again (at least 1 ms).
    ///   - maximumHold: the longest one hold lasts (at least `checkInterval`).
    ///   - backlog: how far behind the consumer is, in its own unit (for the presence hub: the
    ///     events not yet logged); called on the connection's event loop, keep it cheap.
    public init(pauseAbove: Int, resumeAtOrBelow: Int, checkInterval: Duration = .milliseconds(5),
                maximumHold: Duration = .milliseconds(500), backlog: @escaping @Sendable () -> Int) {
        self.pauseAbove = max(1, pauseAbove)
        self.resumeAtOrBelow = min(max(0, resumeAtOrBelow), self.pauseAbove)
        self.checkInterval = max(checkInterval, .milliseconds(1))
        self.maximumHold = max(maximumHold, self.checkInterval)
        self.backlog = backlog
    }

    /// How many times reads have been held.
    public var pauses: Int { holdCount.load(ordering: .relaxed) }
    /// Whether reads are held now.
    public var isPaused: Bool { holdStart.load(ordering: .relaxed) != 0 }
    /// How long reads have been held in all, the current hold included.
    public var pausedTime: Duration {
        let ended = heldNanoseconds.load(ordering: .relaxed)
        let start = holdStart.load(ordering: .relaxed)
        let now = NIODeadline.now().uptimeNanoseconds
        let current = start != 0 && now > start ? Int64(clamping: now - start) : 0
        return .nanoseconds(ended.addingReportingOverflow(current).overflow ? .max : ended + current)
    }

    /// The backlog when reads should be held now, else nil.
    func backlogToPauseFor() -> Int? {
        let behind = backlog()
        return behind > pauseAbove ? behind : nil
    }

    /// Whether a hold may end now: the backlog is down, or the hold has lasted ``maximumHold``.
    func mayResume(heldFor held: TimeAmount) -> Bool {
        held >= TimeAmount(maximumHold) || backlog() <= resumeAtOrBelow
    }

    /// Counts a hold beginning at `start`; returns whether it is the first.
    func held(at start: NIODeadline) -> Bool {
        holdStart.store(max(1, start.uptimeNanoseconds), ordering: .relaxed)
        return holdCount.wrappingAdd(1, ordering: .relaxed).oldValue == 0
    }

    /// Ends the current hold at `end`, adding its length.
    func released(at end: NIODeadline) {
        let start = holdStart.exchange(0, ordering: .relaxed)
        guard start != 0, end.uptimeNanoseconds > start else { return }
        heldNanoseconds.wrappingAdd(Int64(clamping: end.uptimeNanoseconds - start), ordering: .relaxed)
    }
}
