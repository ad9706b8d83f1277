import Foundation

/// A lock-protected value that closures can capture by reference.
///
/// ```swift
/// let seen = Locked<[String]>([])
/// handler = { line in seen.withLock { $0.append(line) } }
/// ```
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    public init(_ value: Value) { self.value = value }
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
