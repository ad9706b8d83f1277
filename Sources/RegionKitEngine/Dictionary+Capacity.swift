extension Dictionary {
    /// Makes room for at least `minimum` entries, growing geometrically, for the same reason as
    /// ``Swift/Array/growCapacity(toAtLeast:)``: `reserveCapacity` rehashes into exactly what it is
    /// asked for, so reserving a little more again and again would rehash every entry each time.
    ///
    /// ```swift
    /// var byID: [String: Int32] = [:]
    /// byID.growCapacity(toAtLeast: 1_000)   // capacity ≥ 1,000; twice the old one at least when it grows
    /// ```
    mutating func growCapacity(toAtLeast minimum: Int) {
        guard capacity < minimum else { return }
        reserveCapacity(Swift.max(minimum, capacity * 2))
    }
}
