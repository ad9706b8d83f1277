/// Waits (bounded, polling every 10 ms) until `condition` holds; throws ``TestFailure`` naming
/// `what` otherwise. For conditions that real I/O makes true; prefer a virtual clock for timers.
/// `what` is evaluated only on failure, so it can show the state at the timeout (a process's stderr).
///
/// ```swift
/// try await eventually("the scanner reconnected") { scanner.state == .scanning }
/// ```
public func eventually(timeout: Duration = .seconds(5), _ what: @autoclosure () -> String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("timed out after \(timeout) waiting for \(what())") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// ``eventually(timeout:_:_:)`` for a condition that must await (a broker asked what it retains).
///
/// ```swift
/// try await eventually("the topic removed") { (try? await retained(topic, on: broker)) == [] }
/// ```
public func eventually(timeout: Duration = .seconds(5), _ what: @autoclosure () -> String, _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while await !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("timed out after \(timeout) waiting for \(what())") }
        try await Task.sleep(for: .milliseconds(10))
    }
}
