import Synchronization

/// Backpressure from the consumer of a client's messages to the broker: while the consumer is
/// more than ``pauseAbove`` behind (its ``backlog``), the client stops reading from the socket, so
/// that the broker holds (or, for QoS 0 beyond its queue, drops) what the consumer could not
/// take, instead of this process queueing it without bound. Reading resumes once the backlog is
/// down to ``resumeAtOrBelow`` (asked every ``checkInterval``).
///
/// While reading is paused the client still pings the broker (so the broker keeps the session),
/// and a PINGRESP that cannot be read is not taken for a dead broker.
///
/// ```swift
/// let pause = MQTTReadPause(pauseAbove: 50_000, resumeAtOrBelow: 25_000) { manager.undeliveredCount }
/// let client = MQTTClient(configuration: configuration, readPause: pause, onMessage: ingest)
/// print(pause.pauses, pause.pausedTime)
/// ```
public final class MQTTReadPause: Sendable {
    /// Reading pauses when the backlog is above this.
    public let pauseAbove: Int
    /// A paused reading resumes when the backlog is at or below this (below ``pauseAbove``: a
    /// consumer near the mark does not pause and resume at every read).
    public let resumeAtOrBelow: Int
    /// How often a paused connection asks the backlog again.
    public let checkInterval: Duration
    private let backlog: @Sendable () -> Int
    private let pauseCount = Atomic<Int>(0)
    private let pausedNanoseconds = Atomic<Int64>(0)

    /// - Parameters:
    ///   - pauseAbove: the backlog above which reading pauses (at least 1).
    ///   - resumeAtOrBelow: the backlog at which it resumes (clamped to `0...pauseAbove`).
    ///   - checkInterval: how often a pause asks `backlog` again (at least 1 ms).
    ///   - backlog: how far behind the consumer is, in its own unit (for the presence hub: the
    ///     engine's undelivered events); called on the connection's event loop, keep it cheap.
    public init(pauseAbove: Int, resumeAtOrBelow: Int, checkInterval: Duration = .milliseconds(5),
                backlog: @escaping @Sendable () -> Int) {
        self.pauseAbove = max(1, pauseAbove)
        self.resumeAtOrBelow = min(max(0, resumeAtOrBelow), self.pauseAbove)
        self.checkInterval = max(checkInterval, .milliseconds(1))
        self.backlog = backlog
    }

    /// How many times reading has paused.
    public var pauses: Int { pauseCount.load(ordering: .relaxed) }
    /// How long reading has been paused in all (pauses that have ended).
    public var pausedTime: Duration { .nanoseconds(pausedNanoseconds.load(ordering: .relaxed)) }

    /// The backlog when reading should pause now, else nil.
    func backlogToPauseFor() -> Int? {
        let behind = backlog()
        return behind > pauseAbove ? behind : nil
    }

    /// Whether a paused reading may resume now.
    func mayResume() -> Bool { backlog() <= resumeAtOrBelow }

    /// Counts a pause; returns whether it is the first.
    func paused() -> Bool { pauseCount.wrappingAdd(1, ordering: .relaxed).oldValue == 0 }

    /// Adds an ended pause's length.
    func resumed(after nanoseconds: Int64) { pausedNanoseconds.wrappingAdd(max(0, nanoseconds), ordering: .relaxed) }
}
