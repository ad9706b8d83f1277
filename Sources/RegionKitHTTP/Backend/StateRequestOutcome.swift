/// What `POST /v1/regions/{id}/request-state` did (``APIBackend/requestState(_:)``).
///
/// ```swift
/// switch try await backend.requestState("lobby") {
/// case .requested: print("202: a didDetermineState event follows")
/// case .stored: print("200: the stored (merged) state, no event")
/// case .waitingForSource(let reason): print("409: \(reason)")
/// case .notMonitored: print("404")
/// }
/// ```
public enum StateRequestOutcome: Hashable, Sendable {
    /// The engine determines the region's state again and logs `didDetermineState` (202).
    case requested
    /// Answered with the stored state; nothing is determined or logged (a cluster member: 200).
    case stored
    /// The region waits for its source (an outage: `GET` lists it with `waitingForSource`): no
    /// state can be determined until the source works (409, naming why).
    case waitingForSource(String)
    /// No such region (404).
    case notMonitored
}
