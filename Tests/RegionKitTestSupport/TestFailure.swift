/// A failure a test helper reports (a timeout, a missing line), with what went wrong.
///
/// ```swift
/// guard ready else { throw TestFailure("controllers.py printed no READY line") }
/// ```
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
