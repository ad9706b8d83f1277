/// The monitored regions' identifiers in registration order: appended in O(1), removed in
/// O(log n) by registration sequence number, iterated in order.
///
/// It was an `[String]` whose removal (`removeAll { $0 == id }`) compared every identifier:
/// stopping 40,000 regions one by one took 17 s, and a source outage, which removes every region
/// of its kind, was quadratic in the number of regions. Sequence numbers (``RegionSchedule``)
/// only grow, so the entries stay sorted by them and a removal finds its entry by binary search
/// and leaves a hole; the holes are squeezed out once they are half the entries.
///
/// ```swift
/// var order = RegistrationOrder()
/// order.append("lobby", sequence: 0)
/// order.append("park", sequence: 1)
/// order.remove(sequence: 0)
/// Array(order)   // ["park"]
/// ```
struct RegistrationOrder: Sequence, Sendable {
    /// Identifiers by position; `nil`: removed.
    private var ids: [String?] = []
    /// The registration sequence number of each position, ascending.
    private var sequences: [Int] = []
    private var holes = 0

    /// Number of identifiers held.
    var count: Int { ids.count - holes }

    /// Adds `id` at the end. `sequence` must be greater than every sequence number added before
    /// (``RegionSchedule/register(slot:)`` hands them out that way).
    mutating func append(_ id: String, sequence: Int) {
        precondition(sequences.last.map { $0 < sequence } ?? true, "registration sequence numbers only grow")
        ids.append(id)
        sequences.append(sequence)
    }

    /// Removes the identifier added with `sequence`; nothing when there is none.
    mutating func remove(sequence: Int) {
        var low = 0, high = sequences.count
        while low < high {
            let middle = (low + high) / 2
            if sequences[middle] < sequence { low = middle + 1 } else { high = middle }
        }
        guard low < sequences.count, sequences[low] == sequence, ids[low] != nil else { return }
        ids[low] = nil
        holes += 1
        if holes >= 32, holes * 2 >= ids.count { compact() }
    }

    /// Makes room for `additional` more identifiers.
    mutating func reserveCapacity(_ additional: Int) {
        ids.growCapacity(toAtLeast: ids.count + additional)
        sequences.growCapacity(toAtLeast: sequences.count + additional)
    }

    private mutating func compact() {
        var kept = 0
        for position in ids.indices where ids[position] != nil {
            ids.swapAt(kept, position)
            sequences[kept] = sequences[position]
            kept += 1
        }
        ids.removeLast(ids.count - kept)
        sequences.removeLast(sequences.count - kept)
        holes = 0
    }

    struct Iterator: IteratorProtocol {
        fileprivate var base: IndexingIterator<[String?]>
        mutating func next() -> String? {
            while let id = base.next() {
                if let id { return id }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(base: ids.makeIterator()) }
}
