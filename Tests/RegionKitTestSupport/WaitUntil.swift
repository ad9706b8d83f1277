import Foundation

/// Polls `condition` (every `interval`) until it holds or `timeout` seconds pass; returns whether it
/// held, so the caller can `#expect` it with the state worth showing. For conditions that real
/// processes make true (a lease moved, an event stored); prefer a virtual clock for timers.
///
/// ```swift
/// let moved = try await waitUntil(timeout: 30) { try await store.leases().allSatisfy { $0.owner != victim } }
/// #expect(moved, "leases: \(try await store.leases())")
/// ```
public func waitUntil(timeout: Double, interval: Duration = .milliseconds(100), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
