import RegionKit
import RegionKitConcurrency

/// The QoS 1 acknowledgements a partition owes its broker, in the order the messages arrived,
/// each released only once what its message decided is durable: the engine has delivered every
/// event it produced up to and including the message (so the partition's writer has every
/// decision the message caused), and the writer has committed every write submitted by then.
/// A message whose decision was dropped (the lease lapsed or moved, the writer fenced) is never
/// acknowledged: when the partition's connection closes, the broker delivers it again to the
/// next holder, which decides it anew. Until session 77 the client acknowledged each message
/// as it was handed to the engine, and a decision dropped at a lease change was lost for good.
///
/// One bound: a message waits at most `maximumWait` (the writer behind a slow store, while the
/// lease still holds); then it is acknowledged anyway and counted in ``late``, since a broker
/// stops sending QoS 1 messages to a client whose in-flight window is full (Mosquitto's
/// `max_inflight_messages` is 20) and the engine would hear nothing of the partition's beacons.
///
/// ```swift
/// let queue = AcknowledgementQueue<MQTTAcknowledgement>(maximumWait: .seconds(10))
/// queue.received(acknowledgement, fedTo: manager)   // after the ingest handed it to the engine
/// queue.release(submitted: writer.submitted, committed: writer.committed) { client.acknowledge($0) }
/// ```
///
/// Generic over the token so that it is tested without a broker.
final class AcknowledgementQueue<Token: Sendable>: Sendable {
    struct Entry: Sendable {
        let token: Token
        /// The engine the message was fed to (nil: held while the engine is set aside).
        var engine: LocationManager?
        /// The engine's ``LocationManager/eventsProduced`` right after the message was fed.
        var produced: Int
        /// The writer's ``ContributionWriter/submitted`` once the engine had delivered those events.
        var writes: Int?
        let received: ContinuousClock.Instant
    }

    private struct Queue {
        var entries: [Entry] = []
        var head = 0
        var late = 0
        var released = 0
    }

    let maximumWait: Duration
    private let queue = LockedBox(Queue())

    init(maximumWait: Duration) {
        self.maximumWait = maximumWait
    }

    /// Messages acknowledged after ``maximumWait`` without their decisions known to be durable.
    var late: Int { queue.withLock { $0.late } }
    /// Messages acknowledged so far.
    var released: Int { queue.withLock { $0.released } }
    /// Messages waiting for their acknowledgement.
    var waiting: Int { queue.withLock { $0.entries.count - $0.head } }

    /// A message fed to `engine` (call right after the feeding call returned), or held while the
    /// engine is set aside (`engine` nil: ``fedHeld(to:)`` later).
    func received(_ token: Token, fedTo engine: LocationManager?, now: ContinuousClock.Instant = .now) {
        let entry = Entry(token: token, engine: engine, produced: engine?.eventsProduced ?? 0, writes: nil, received: now)
        queue.withLock { $0.entries.append(entry) }
    }

    /// The held messages were just fed to `engine` (a resumption): they wait for what it decided.
    func fedHeld(to engine: LocationManager) {
        let produced = engine.eventsProduced
        queue.withLock { queue in
            for index in queue.head..<queue.entries.count where queue.entries[index].engine == nil {
                queue.entries[index].engine = engine
                queue.entries[index].produced = produced
            }
        }
    }

    /// Hands `send` the acknowledgements now due, in order, under the queue's lock (so two
    /// callers cannot overtake each other's): from the first, every one whose message's
    /// decisions are durable or that waited ``maximumWait``, up to the first that is neither.
    /// `submitted` and `committed` are the writer's counts (read once, `committed` first, so that
    /// a write committed between the two readings is not counted twice).
    func release(submitted: () -> Int, committed: () -> Int, now: ContinuousClock.Instant = .now, send: ([Token]) -> Void) {
        queue.withLock { queue in
            guard queue.head < queue.entries.count else { return }
            let committed = committed()
            var due: [Token] = []
            while queue.head < queue.entries.count {
                var entry = queue.entries[queue.head]
                if entry.writes == nil, let engine = entry.engine, engine.eventsDelivered >= entry.produced {
                    entry.writes = submitted()
                    queue.entries[queue.head].writes = entry.writes
                }
                let durable = entry.writes.map { committed >= $0 } ?? false
                guard durable || now - entry.received >= maximumWait else { break }
                if !durable { queue.late += 1 }
                due.append(entry.token)
                queue.head += 1
            }
            guard !due.isEmpty else { return }
            queue.released += due.count
            // The acknowledged ones go once they are half the array (amortized O(1) per message).
            if queue.head >= 64 && queue.head * 2 >= queue.entries.count {
                queue.entries.removeFirst(queue.head)
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
        }
    }
}
