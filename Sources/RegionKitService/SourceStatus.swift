/// One input source of the daemon as reported by `GET /v1/sources`, `/readyz` and `/metrics`.
///
/// ``SourceActivity`` records one while its ``SourceRunner`` runs; the HTTP server asks for them
/// through a closure. Counters are
/// totals since the process started.
///
/// ```swift
/// SourceStatus(name: "simulator:museum", kind: "simulator", state: .up, sightings: 1_204)
/// ```
public struct SourceStatus: Codable, Hashable, Sendable {
    public enum State: String, Codable, Hashable, Sendable {
        /// Connected and delivering (or able to).
        case up
        /// Starting or reconnecting.
        case connecting
        /// Finished on its own (a file replayed to its end).
        case finished
        /// Failed; see `detail`.
        case down
    }

    public var name: String
    public var kind: String
    public var state: State
    public var detail: String?
    public var sightings: Int
    public var reconnects: Int
    /// Frames or lines that could not be decoded, by kind of error.
    public var decodeErrors: [String: Int]
    /// Unix seconds of the last sighting or fix.
    public var lastInput: Double?
    /// How many times reads from the source were held back because the event log was behind
    /// (MQTT sources: `mqtt.maximumBacklog`); nil for a source without backpressure.
    public var readPauses: Int?
    /// Seconds reads from the source have been held back in all (the current hold included); nil as ``readPauses``.
    public var readPausedSeconds: Double?
    /// Whether reads are held back now; nil as ``readPauses``.
    public var readPaused: Bool?

    public init(name: String, kind: String, state: State, detail: String? = nil, sightings: Int = 0, reconnects: Int = 0,
                decodeErrors: [String: Int] = [:], lastInput: Double? = nil) {
        self.name = name
        self.kind = kind
        self.state = state
        self.detail = detail
        self.sightings = sightings
        self.reconnects = reconnects
        self.decodeErrors = decodeErrors
        self.lastInput = lastInput
    }
}
