/// The monitored regions' slots in registration order: appended in O(1), removed in O(log n)
/// by registration sequence number, iterated in order.
///
/// It was an `[String]` whose removal (`removeAll { $0 == id }`) compared every identifier:
/// stopping 40,000 regions one by one took 17 s, and a source outage, which removes every region
/// of its kind, was quadratic in the number of regions. Sequence numbers (``RegionSchedule``)
/// only grow, so the entries stay sorted by them and a removal finds its entry by binary search
/// and leaves a hole; the holes are squeezed out once they are half the entries. It holds the
/// regions' slots in ``RegionTable`` (4 bytes a region; the identifiers it held were 16, and each
/// walk looked every one up again) with their sequence numbers, which tell a caller that changes
/// regions during a walk whether a slot still holds the region it was given.
///
/// ```swift
/// var order = RegistrationOrder()
/// order.append(slot: 3, sequence: 0)
/// order.append(slot: 0, sequence: 1)
/// order.remove(sequence: 0)
/// order.map(\.slot)   // [0]
/// ```
struct RegistrationOrder: Sequence, Sendable {
    /// A region in the order: its slot and its registration sequence number.
    struct Entry: Equatable, Sendable {
        var slot: Int
        var sequence: Int
    }

    /// Slots by position; −1: removed.
    private var slots: [Int32] = []
    /// The registration sequence number of each position, ascending.
    private var sequences: [Int] = []
    private var holes = 0

    /// Number of regions held.
    var count: Int { slots.count - holes }

    /// Adds the region in `slot` at the end. `sequence` must be greater than every sequence
    /// number added before (``RegionSchedule/register(slot:)`` hands them out that way).
    mutating func append(slot: Int, sequence: Int) {
        precondition(sequences.last.map { $0 < sequence } ?? true, "registration sequence numbers only grow")
        precondition(slot >= 0 && slot <= Int(Int32.max), "a region slot fits 31 bits")
        slots.append(Int32(truncatingIfNeeded: slot))
        sequences.append(sequence)
    }

    /// Removes the region added with `sequence`; nothing when there is none.
    mutating func remove(sequence: Int) {
        var low = 0, high = sequences.count
        while low < high {
            let middle = (low + high) / 2
            if sequences[middle] < sequence { low = middle + 1 } else { high = middle }
        }
        guard low < sequences.count, sequences[low] == sequence, slots[low] >= 0 else { return }
        slots[low] = -1
        holes += 1
        if holes >= 32, holes * 2 >= slots.count { compact() }
    }

    /// Makes room for `additional` more regions.
    mutating func reserveCapacity(_ additional: Int) {
        slots.growCapacity(toAtLeast: slots.count + additional)
        sequences.growCapacity(toAtLeast: sequences.count + additional)
    }

    private mutating func compact() {
        var kept = 0
        for position in slots.indices where slots[position] >= 0 {
            slots[kept] = slots[position]
            sequences[kept] = sequences[position]
            kept += 1
        }
        slots.removeLast(slots.count - kept)
        sequences.removeLast(sequences.count - kept)
        holes = 0
    }

    struct Iterator: IteratorProtocol {
        fileprivate let order: RegistrationOrder
        fileprivate var position = 0
        mutating func next() -> Entry? {
            while position < order.slots.count {
                defer { position += 1 }
                let slot = order.slots[position]
                if slot >= 0 { return Entry(slot: Int(slot), sequence: order.sequences[position]) }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(order: self) }
}
