import RegionKitCore
/// Opt-in helpers for the patterns the field reports wrote by hand (spec §2, §5).
///
/// ```swift
/// var automation = Automation()
/// automation.requestStateOnStart = true       // learn "inside" when started inside
/// automation.rangeWhileInside = true          // range on inside, stop on outside
/// automation.wakeRequestDelay = 1             // after wake(), wait 1 s, request every state
/// automation.retry = .init(delay: 1, maximumAttempts: 5)
/// ```
public struct Automation: Hashable, Sendable, Codable {
    /// Retry registration after `monitoringDidFail` caused by an unavailable source.
    public struct Retry: Hashable, Sendable, Codable {
        /// Seconds to wait before each retry.
        public var delay: Double
        /// Failures tolerated per region before retrying stops; reset by a successful start and by a
        /// new definition of the region replacing one that waits. A region
        /// whose retries ran out is registered again as soon as its source is usable.
        public var maximumAttempts: Int

        public init(delay: Double = 1, maximumAttempts: Int = 5) {
            self.delay = delay
            self.maximumAttempts = maximumAttempts
        }

        private enum CodingKeys: String, CodingKey { case delay, maximumAttempts }

        /// Keys left out take the defaults (1 s, 5 attempts).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            delay = try container.decodeIfPresent(Double.self, forKey: .delay) ?? 1
            maximumAttempts = try container.decodeIfPresent(Int.self, forKey: .maximumAttempts) ?? 5
        }
    }

    /// On `didStartMonitoring`, request the region's state.
    public var requestStateOnStart = false
    /// Start ranging a beacon region's constraint when it is inside; stop when outside/unknown.
    /// The session ranges every scanner's sightings (the nearest scanner's reading is reported,
    /// also for a region bound to one scanner: the distance consumers, Home Assistant's sensor and
    /// `/v1/beacons`, want the beacon's nearest reading, once a second). Regions inside with the
    /// same constraint share the session: each gets its `didRangeBeacons` under its own
    /// identifier, and the session ends when the last of them leaves.
    public var rangeWhileInside = false
    /// After `wake()`, wait this many seconds and request the state of every monitored region.
    public var wakeRequestDelay: Double?
    /// Retry policy after failures; `nil` = no retries (Core Location's own behaviour).
    public var retry: Retry?

    public init(requestStateOnStart: Bool = false, rangeWhileInside: Bool = false, wakeRequestDelay: Double? = nil, retry: Retry? = nil) {
        self.requestStateOnStart = requestStateOnStart
        self.rangeWhileInside = rangeWhileInside
        self.wakeRequestDelay = wakeRequestDelay
        self.retry = retry
    }

    private enum CodingKeys: String, CodingKey {
        case requestStateOnStart, rangeWhileInside, wakeRequestDelay, retry
    }

    /// Keys left out take the type's defaults (off), so a configuration may name only the helpers
    /// it turns on (`automation: {requestStateOnStart: true}` was refused for the missing
    /// `rangeWhileInside`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        requestStateOnStart = try container.decodeIfPresent(Bool.self, forKey: .requestStateOnStart) ?? false
        rangeWhileInside = try container.decodeIfPresent(Bool.self, forKey: .rangeWhileInside) ?? false
        wakeRequestDelay = try container.decodeIfPresent(Double.self, forKey: .wakeRequestDelay)
        retry = try container.decodeIfPresent(Retry.self, forKey: .retry)
    }

    /// Every helper on, with the field reports' timings (1 s waits, 5 attempts).
    public static let all = Automation(requestStateOnStart: true, rangeWhileInside: true, wakeRequestDelay: 1, retry: Retry())
}
