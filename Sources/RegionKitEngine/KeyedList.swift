/// Values by region identifier in the order they were added: appended, found and removed by
/// identifier in O(1), listed in order. Removal leaves a hole; the holes are squeezed out once they
/// are half the entries (as ``RegistrationOrder`` does).
///
/// The engine's regions waiting for their source (``MonitoringEngine`` `abandoned`) were an
/// array searched on every addition and every stop: a source outage over 100,000 regions made
/// that quadratic.
///
/// ```swift
/// var list = KeyedList<Int>()
/// list.append(1, for: "lobby")
/// list.append(2, for: "park")
/// list.append(3, for: "lobby")   // replaces "lobby" and moves it to the end
/// list.values                   // [2, 3]
/// ```
struct KeyedList<Value: Sendable>: Sendable {
    private var entries: [(key: String, value: Value)?] = []
    private var positions: [String: Int] = [:]
    private var holes = 0

    var count: Int { positions.count }
    var isEmpty: Bool { positions.isEmpty }

    subscript(key: String) -> Value? {
        positions[key].flatMap { entries[$0]?.value }
    }

    /// The values in the order they were added.
    var values: [Value] { entries.compactMap { $0?.value } }

    /// Adds `value` at the end; a value already there for `key` is removed first.
    mutating func append(_ value: Value, for key: String) {
        removeValue(forKey: key)
        positions[key] = entries.count
        entries.append((key, value))
    }

    /// Removes and returns the value for `key`, if any.
    @discardableResult
    mutating func removeValue(forKey key: String) -> Value? {
        guard let position = positions.removeValue(forKey: key) else { return nil }
        let value = entries[position]?.value
        entries[position] = nil
        holes += 1
        if holes >= 32, holes * 2 >= entries.count { compact() }
        return value
    }

    /// Removes and returns, in order, every value that satisfies `predicate`.
    mutating func removeAll(where predicate: (Value) -> Bool) -> [Value] {
        var removed: [Value] = []
        for position in entries.indices {
            guard let entry = entries[position], predicate(entry.value) else { continue }
            removed.append(entry.value)
            positions[entry.key] = nil
            entries[position] = nil
            holes += 1
        }
        if holes * 2 >= entries.count { compact() }
        return removed
    }

    private mutating func compact() {
        entries.removeAll { $0 == nil }
        positions.removeAll(keepingCapacity: true)
        for (position, entry) in entries.enumerated() { positions[entry!.key] = position }
        holes = 0
    }
}
