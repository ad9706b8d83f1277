/// Waits (bounded, polling every 10 ms) until `condition` holds; throws ``TestFailure`` naming
/// `what` otherwise. For conditions that real I/O makes true; prefer a virtual clock for timers.
///
/// ```swift
/// try await eventually("the scanner reconnected") { scanner.state == .scanning }
/// ```
public func eventually(timeout: Duration = .seconds(5), _ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("timed out after \(timeout) waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}
