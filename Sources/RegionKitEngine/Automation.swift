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
        /// Seconds to wait before each retry (used within ``delayRange``: a retry due at once
        /// would fail again at the same instant, for ever).
        public var delay: Double
        /// Failures tolerated per region before retrying stops; reset by a successful start and by a
        /// new definition of the region replacing one that waits. A region
        /// whose retries ran out is registered again as soon as its source is usable.
        public var maximumAttempts: Int

        public init(delay: Double = 1, maximumAttempts: Int = 5) {
            self.delay = delay
            self.maximumAttempts = maximumAttempts
        }

        /// The delays accepted from a configuration, seconds; the engine holds any other to them.
        public static let delayRange = 0.1...86_400.0
        /// The attempts accepted from a configuration.
        public static let attemptsRange = 0...10_000

        /// ``delay`` within ``delayRange`` (a value that is not a number: the default, 1 s).
        public var boundedDelay: Double {
            delay.isNaN ? 1 : min(max(delay, Self.delayRange.lowerBound), Self.delayRange.upperBound)
        }

        private enum CodingKeys: String, CodingKey { case delay, maximumAttempts }

        /// Keys left out take the defaults (1 s, 5 attempts); a value out of ``delayRange`` or
        /// ``attemptsRange`` is refused, naming the range (`delay: 0` with unbounded attempts made
        /// a daemon retry at one instant for ever, growing until the kernel killed it).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            delay = try container.decodeIfPresent(Double.self, forKey: .delay) ?? 1
            maximumAttempts = try container.decodeIfPresent(Int.self, forKey: .maximumAttempts) ?? 5
            guard delay.isFinite, Self.delayRange.contains(delay) else {
                throw DecodingError.dataCorruptedError(forKey: .delay, in: container, debugDescription: "must be from 0.1 to 86400 seconds")
            }
            guard Self.attemptsRange.contains(maximumAttempts) else {
                throw DecodingError.dataCorruptedError(forKey: .maximumAttempts, in: container, debugDescription: "must be from 0 to 10000")
            }
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
    /// After `wake()`, wait this many seconds and request the state of every monitored region
    /// (from 0 to 3600; the engine holds another value to that range).
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
        if let wakeRequestDelay, !(wakeRequestDelay.isFinite && (0...3_600).contains(wakeRequestDelay)) {
            throw DecodingError.dataCorruptedError(forKey: .wakeRequestDelay, in: container, debugDescription: "must be from 0 to 3600 seconds")
        }
        retry = try container.decodeIfPresent(Retry.self, forKey: .retry)
    }

    /// Every helper on, with the field reports' timings (1 s waits, 5 attempts).
    public static let all = Automation(requestStateOnStart: true, rangeWhileInside: true, wakeRequestDelay: 1, retry: Retry())
}
