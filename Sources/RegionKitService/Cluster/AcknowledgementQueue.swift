import RegionKit
import RegionKitConcurrency

/// The QoS 1 acknowledgements a partition owes its broker, in the order the messages arrived,
/// each released only once what its message decided is durable: the engine has delivered every
/// event it produced up to and including the message to the partition (so the writer has every
/// decision the message caused), and the writer has committed every write submitted by then.
/// A message whose decision may have been dropped (its engine set aside or stopped before it
/// delivered the message's events, the writer fenced) is withheld: never acknowledged on this
/// connection, so the broker delivers it again at the next one, or to the next holder of the
/// partition's session, which decides it anew. Until session 77 the client acknowledged each
/// message as it was handed to the engine, and a decision dropped at a lease change was lost.
///
/// One bound: a message waits at most `maximumWait` (the writer behind a slow store while the
/// lease still holds); then it is acknowledged anyway and counted in ``late`` — unless the caller
/// says the decisions can no longer be written (fenced, stopping) — since a broker stops sending
/// QoS 1 messages to a client whose in-flight window is full (Mosquitto's `max_inflight_messages`
/// is 20) and the engine would hear nothing of the partition's beacons.
///
/// ```swift
/// let queue = AcknowledgementQueue<MQTTAcknowledgement>(maximumWait: .seconds(10),
///                                                      submitted: { writer.submitted }, committed: { writer.committed })
/// queue.received(acknowledgement, fedTo: manager, generation: 0)   // after the ingest fed it to the engine
/// queue.release(lateAllowed: !writer.isFenced) { client.acknowledge($0) }
/// queue.retire(through: 0)   // before the engine's events stop reaching the writer
/// ```
///
/// Generic over the token so that it is tested without a broker.
final class AcknowledgementQueue<Token: Sendable>: Sendable {
    struct Entry: Sendable {
        let token: Token
        /// The engine the message was fed to (nil: held while the engine is set aside).
        var engine: LocationManager?
        /// Which of the partition's engines that is (they are numbered in the order they start).
        var generation: Int
        /// The engine's ``LocationManager/eventsProduced`` right after the message was fed.
        var produced: Int
        /// The writer's ``ContributionWriter/submitted`` once the engine had delivered those events.
        var writes: Int?
        let received: ContinuousClock.Instant
    }

    private struct Queue {
        var entries: [Entry] = []
        /// The first entry not released.
        var head = 0
        /// The first entry (at or after `head`) whose events are not known to be delivered.
        var marked = 0
        /// Engines up to this generation no longer hand their events to the writer.
        var retiredThrough = -1
        var late = 0
        var released = 0
        var withheld = 0
    }

    let maximumWait: Duration
    private let submitted: @Sendable () -> Int
    private let committed: @Sendable () -> Int
    private let queue = LockedBox(Queue())

    /// - Parameters:
    ///   - submitted: the writer's writes accepted so far (``ContributionWriter/submitted``).
    ///   - committed: how many of those, from the first on, are committed (``ContributionWriter/committed``).
    init(maximumWait: Duration, submitted: @escaping @Sendable () -> Int, committed: @escaping @Sendable () -> Int) {
        self.maximumWait = maximumWait
        self.submitted = submitted
        self.committed = committed
    }

    /// Messages acknowledged after ``maximumWait`` without their decisions known to be durable.
    var late: Int { queue.withLock { $0.late } }
    /// Messages acknowledged so far.
    var released: Int { queue.withLock { $0.released } }
    /// Messages withheld: their engine was retired before it delivered their events.
    var withheld: Int { queue.withLock { $0.withheld } }
    /// Messages waiting for their acknowledgement.
    var waiting: Int { queue.withLock { $0.entries.count - $0.head } }

    /// A message fed to `engine` (call right after the feeding call returned), or held while the
    /// engine is set aside (`engine` nil: ``fedHeld(to:generation:)`` later). A message fed to
    /// a retired engine is withheld at once.
    func received(_ token: Token, fedTo engine: LocationManager?, generation: Int, now: ContinuousClock.Instant = .now) {
        let entry = Entry(token: token, engine: engine, generation: generation, produced: engine?.eventsProduced ?? 0,
                          writes: nil, received: now)
        queue.withLock { queue in
            if engine != nil, generation <= queue.retiredThrough {
                queue.withheld += 1
            } else {
                queue.entries.append(entry)
            }
        }
    }

    /// The held messages were just fed to `engine` (a resumption): they wait for what it decided
    /// (withheld if it was retired meanwhile).
    func fedHeld(to engine: LocationManager, generation: Int) {
        let produced = engine.eventsProduced
        queue.withLock { queue in
            guard generation > queue.retiredThrough else {
                let before = queue.entries.count
                queue.entries.removeAll { $0.engine == nil && $0.writes == nil }
                queue.withheld += before - queue.entries.count
                return
            }
            for index in queue.marked..<queue.entries.count where queue.entries[index].engine == nil {
                queue.entries[index].engine = engine
                queue.entries[index].generation = generation
                queue.entries[index].produced = produced
            }
        }
    }

    /// Engines up to `generation` are about to stop handing their events to the writer (set
    /// aside, stopped): call while they still do. The messages whose events they delivered by
    /// now keep their place (their decisions were submitted); the others are withheld, and so is
    /// any message fed to them from now on, and any held one (a routing that holds is replaced
    /// when the engine is set aside: what it held is not fed).
    func retire(through generation: Int) {
        queue.withLock { queue in
            markDelivered(&queue)
            queue.retiredThrough = max(queue.retiredThrough, generation)
            let keep = queue.entries[queue.head...].filter { entry in
                entry.writes != nil || (entry.engine != nil && entry.generation > generation)
            }
            queue.withheld += (queue.entries.count - queue.head) - keep.count
            queue.entries = Array(keep)
            queue.head = 0
            queue.marked = queue.entries.firstIndex { $0.writes == nil } ?? queue.entries.count
        }
    }

    /// Notes the writer's count on each message, from the first not noted, whose engine has
    /// delivered its events (up to the first that has not: the events are delivered in order).
    private func markDelivered(_ queue: inout Queue) {
        var submittedNow: Int?
        while queue.marked < queue.entries.count {
            let entry = queue.entries[queue.marked]
            guard let engine = entry.engine, entry.generation > queue.retiredThrough,
                  engine.eventsDelivered >= entry.produced else { break }
            if submittedNow == nil { submittedNow = submitted() }
            queue.entries[queue.marked].writes = submittedNow
            queue.marked += 1
        }
    }

    /// Hands `send` the acknowledgements now due, in order, under the queue's lock (so two
    /// callers cannot overtake each other's): from the first, every one whose message's
    /// decisions are durable — or, when `lateAllowed`, that waited ``maximumWait`` — up to the
    /// first that is neither.
    func release(lateAllowed: Bool = true, now: ContinuousClock.Instant = .now, send: ([Token]) -> Void) {
        queue.withLock { queue in
            guard queue.head < queue.entries.count else { return }
            // Read before the marks take `submitted`: a write committed in between is not counted for them.
            let committed = committed()
            markDelivered(&queue)
            var due: [Token] = []
            while queue.head < queue.entries.count {
                let entry = queue.entries[queue.head]
                let durable = entry.writes.map { committed >= $0 } ?? false
                // (A held one never goes late: it is fed at the resumption, or withheld.)
                guard durable || (lateAllowed && entry.engine != nil && now - entry.received >= maximumWait) else { break }
                if !durable { queue.late += 1 }
                due.append(entry.token)
                queue.head += 1
            }
            queue.marked = max(queue.marked, queue.head)
            guard !due.isEmpty else { return }
            queue.released += due.count
            // The acknowledged ones go once they are half the array (amortized O(1) per message).
            if queue.head >= 64 && queue.head * 2 >= queue.entries.count {
                queue.entries.removeFirst(queue.head)
                queue.marked -= queue.head
                queue.head = 0
            }
            send(due)
        }
    }

    /// Forgets every message (their connection closed: the broker delivers them again).
    func removeAll() {
        queue.withLock { queue in
            queue.entries.removeAll()
            queue.head = 0
            queue.marked = 0
        }
    }
}
