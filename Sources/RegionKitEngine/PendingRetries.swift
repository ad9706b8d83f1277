import RegionKitCore

/// Registrations to retry (the engine's retry helper, ``Automation/retry``): at most one per
/// region identifier, due in time order — ties to the one filed first, as the array they replaced
/// gave them — through a heap; filed, replaced and cancelled by identifier in O(log n).
///
/// They were an array searched for the identifier on every failure and scanned whole on every
/// sighting (for the next due time) and every retry: a source outage under the daemon's default
/// helpers over 10,000 regions took 7 s of CPU for its first ten seconds, 100 times the cost at
/// 1,000 regions.
///
/// ```swift
/// var retries = PendingRetries()
/// retries.file(region, due: Timestamp(seconds: 1))
/// retries.next        // (t=1s, region.identifier)
/// retries.take(id: region.identifier)   // the region, now no longer pending
/// ```
struct PendingRetries: Sendable {
    private var pending: [String: (region: Region, sequence: Int)] = [:]
    /// Every pending retry, and entries left by replaced and cancelled ones (dropped when they
    /// reach the top: the minimum is always pending).
    private var due = MinHeap<DueEntry<String>>()
    private var nextSequence = 0

    var count: Int { pending.count }
    var isEmpty: Bool { pending.isEmpty }

    /// The earliest retry due, ties to the one filed first.
    var next: (time: Timestamp, id: String)? {
        due.min.map { ($0.time, $0.key) }
    }

    /// Files a retry of `region` at `time`, replacing any pending one for its identifier.
    mutating func file(_ region: Region, due time: Timestamp) {
        let id = region.identifier
        pending[id] = (region, nextSequence)
        due.push(DueEntry(time: time, sequence: nextSequence, key: id))
        nextSequence += 1
        dropStale()
    }

    /// Cancels the pending retry of the region with `id`, if any.
    mutating func cancel(id: String) {
        guard pending.removeValue(forKey: id) != nil else { return }
        dropStale()
    }

    /// The region pending under `id`, if any.
    func region(id: String) -> Region? { pending[id]?.region }

    /// Every pending region, in the order they were filed.
    var regions: [Region] { pending.values.sorted { $0.sequence < $1.sequence }.map(\.region) }

    /// Removes and returns the region pending under `id`.
    mutating func take(id: String) -> Region? {
        guard let entry = pending.removeValue(forKey: id) else { return nil }
        dropStale()
        return entry.region
    }

    private mutating func dropStale() {
        if pending.isEmpty {
            due = MinHeap()
            return
        }
        while let first = due.min, pending[first.key]?.sequence != first.sequence { due.popMin() }
        // Replaced and cancelled entries below the top wait until they surface: rebuild when they are most of it.
        if due.count > 2 * pending.count + 64 {
            due.rebuild(due.elements.filter { pending[$0.key]?.sequence == $0.sequence })
        }
    }
}
