extension Array {
    /// Makes room for at least `minimum` elements, growing geometrically: `reserveCapacity`
    /// allocates exactly what it is asked for, so reserving `count + 1` again and again (a bulk
    /// registration of one region at a time, between restored ones) would copy the whole array
    /// on every call.
    ///
    /// ```swift
    /// var slots: [Int32] = []
    /// slots.growCapacity(toAtLeast: 1_000)   // capacity ≥ 1,000; twice the old one at least when it grows
    /// ```
    mutating func growCapacity(toAtLeast minimum: Int) {
        guard capacity < minimum else { return }
        reserveCapacity(Swift.max(minimum, capacity * 2))
    }
}
