/// A set of small non-negative integers (``RegionIndex`` slots) with O(1) insert, remove and
/// membership and iteration over the members only: a dense member array plus each member's
/// position. The engine keeps the circular regions every fix must evaluate in one, so a fix costs
/// nothing for the many regions that left the set (a `Set<String>` kept its peak capacity and
/// hashed every id).
///
/// ```swift
/// var set = SlotSet()
/// set.insert(7); set.insert(3); set.remove(7)
/// set.contains(3)    // true
/// Array(set.members) // [3]
/// ```
public struct SlotSet: Sendable, Equatable {
    /// The members, in no particular order.
    public private(set) var members: [Int32] = []
    /// `positions[slot]`: the index of `slot` in `members`, or -1.
    private var positions: [Int32] = []

    public init() {}

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }

    public func contains(_ slot: Int) -> Bool {
        slot >= 0 && slot < positions.count && positions[slot] >= 0
    }

    /// Calls `body` with the set's position table: entry `slot` is ≥ 0 exactly when `slot` is a
    /// member (slots beyond the table's end are not). For loops that test many slots, where
    /// ``contains(_:)`` checked the table's bounds and uniqueness on each.
    func withUnsafePositions<R>(_ body: (UnsafeBufferPointer<Int32>) throws -> R) rethrows -> R {
        try positions.withUnsafeBufferPointer(body)
    }

    /// The index of `slot` in ``members``, or `nil` when it is not a member.
    public func position(of slot: Int) -> Int? {
        contains(slot) ? Int(positions[slot]) : nil
    }

    /// Adds `slot` (a negative or ≥ 2³¹ slot is ignored) at the end of ``members``.
    public mutating func insert(_ slot: Int) {
        guard slot >= 0, slot < Int(Int32.max), !contains(slot) else { return }
        if slot >= positions.count {
            positions.append(contentsOf: repeatElement(-1, count: max(slot + 1 - positions.count, positions.count)))
        }
        positions[slot] = Int32(truncatingIfNeeded: members.count)
        members.append(Int32(truncatingIfNeeded: slot))
    }

    /// Removes `slot`: the last of ``members`` takes its place there (so an array kept parallel
    /// to the members follows with the same move, as `RestingRegions`' budgets do).
    public mutating func remove(_ slot: Int) {
        guard contains(slot) else { return }
        let position = Int(positions[slot])
        let last = members.removeLast()
        if position < members.count {
            members[position] = last
            positions[Int(last)] = Int32(truncatingIfNeeded: position)
        }
        positions[slot] = -1
    }

    /// Puts ``members`` in the order in which their slots (`slot(element)`) come in `ordered`;
    /// elements whose slot is not a member, and repeats, are skipped. Nothing changes unless
    /// `ordered` holds every member. Two passes over `ordered`, nothing allocated.
    ///
    /// ```swift
    /// var set = SlotSet()
    /// set.insert(7); set.insert(3)
    /// set.arrange(inOrderOf: [1, 3, 7]) { $0 }
    /// Array(set.members) // [3, 7]
    /// ```
    public mutating func arrange<C: Collection>(inOrderOf ordered: C, slot: (C.Element) -> Int32) {
        // Pass 1: mark each member found (position p becomes −2 − p, so a repeat is no longer
        // `contains`ed) and count them.
        var found = 0
        for element in ordered {
            let s = Int(slot(element))
            guard contains(s) else { continue }
            positions[s] = -2 - positions[s]
            found += 1
        }
        guard found == members.count else {
            // A member missing: unmark and keep the order as it is.
            for element in ordered {
                let s = Int(slot(element))
                if s >= 0, s < positions.count, positions[s] <= -2 { positions[s] = -2 - positions[s] }
            }
            return
        }
        // Pass 2: every member is marked; place each at its first occurrence (which unmarks it).
        var next: Int32 = 0
        for element in ordered {
            let s = Int(slot(element))
            guard s >= 0, s < positions.count, positions[s] <= -2 else { continue }
            members[Int(next)] = Int32(truncatingIfNeeded: s)
            positions[s] = next
            next += 1
        }
    }

    public static func == (a: SlotSet, b: SlotSet) -> Bool { Set(a.members) == Set(b.members) }
}
