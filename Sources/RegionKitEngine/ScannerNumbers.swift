/// Scanner name → the number of its channel in ``MonitoringEngine/channels`` (issue 13: no
/// SipHash on the per-sighting path): an open-addressing table (linear probing, load ≤ ½) hashed
/// with ``StreamTable/hash(_:)-(String)`` — the names' bytes mixed eight at a time with a seed
/// drawn per process, as names come from the network. A `[String: Int]` lookup cost ≈ 370
/// instructions a sighting whenever the sighting's scanner was not the one before (a gateway
/// interleaving its scanners' reports); this one ≈ 190 (half of it hashing the name).
///
/// Entries are only added (``insert(_:number:)``); the engine's sweep builds a new table.
///
/// ```swift
/// var numbers = ScannerNumbers()
/// numbers.insert("hall", number: 0)
/// numbers["hall"]    // 0
/// numbers["lobby"]   // nil
/// ```
struct ScannerNumbers: Sendable, Sequence {
    typealias Element = (key: String, value: Int)

    /// The names and their numbers, in insertion order.
    private var entries: [(name: String, number: Int)] = []
    /// Positions in ``entries`` + 1 by hash (0: empty); a power of two, at least twice ``count``.
    private var slots: [Int32] = []

    init() {}

    /// Names stored.
    var count: Int { entries.count }
    /// The numbers, in insertion order.
    var values: [Int] { entries.map(\.number) }

    /// The number of `name`, if stored.
    subscript(name: String) -> Int? { number(of: name, hash: StreamTable.hash(name)) }

    /// The number of `name`, whose ``StreamTable/hash(_:)-(String)`` the caller has, if stored.
    func number(of name: String, hash: UInt64) -> Int? {
        guard !slots.isEmpty else { return nil }
        let mask = slots.count - 1
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while true {
            let stored = Int(slots[bucket])
            if stored == 0 { return nil }
            if entries[stored - 1].name == name { return entries[stored - 1].number }
            bucket = (bucket + 1) & mask
        }
    }

    /// Stores `name` (not stored yet) with `number`.
    mutating func insert(_ name: String, number: Int) {
        assert(self[name] == nil, "\(name) is stored already")
        entries.append((name, number))
        if entries.count * 2 > slots.count {
            rebuild(slotCount: Swift.max(16, slots.count * 2))
        } else {
            place(entries.count - 1)
        }
    }

    /// Makes room for `capacity` names without growing.
    mutating func reserveCapacity(_ capacity: Int) {
        entries.reserveCapacity(capacity)
        var slotCount = Swift.max(16, slots.count)
        while slotCount < capacity * 2 { slotCount *= 2 }
        if slotCount > slots.count { rebuild(slotCount: slotCount) }
    }

    func makeIterator() -> Iterator { Iterator(entries: entries) }

    struct Iterator: IteratorProtocol {
        let entries: [(name: String, number: Int)]
        var position = 0

        mutating func next() -> Element? {
            guard position < entries.count else { return nil }
            defer { position += 1 }
            return (key: entries[position].name, value: entries[position].number)
        }
    }

    private mutating func place(_ position: Int) {
        let mask = slots.count - 1
        var bucket = Int(truncatingIfNeeded: StreamTable.hash(entries[position].name)) & mask
        while slots[bucket] != 0 { bucket = (bucket + 1) & mask }
        slots[bucket] = Int32(truncatingIfNeeded: position + 1)
    }

    private mutating func rebuild(slotCount: Int) {
        slots = Array(repeating: 0, count: slotCount)
        for position in entries.indices { place(position) }
    }
}
