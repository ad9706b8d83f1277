import RegionKit

/// What to run when events happen: shell commands on enter/exit and webhooks (HTTP POST of the
/// event JSON), with timeouts, retries and a bounded queue.
///
/// ```swift
/// var hooks = HookConfiguration()
/// hooks.onEnter = [#"logger -t regionkit -- "entered $REGIONKIT_REGION""#]   // quoted: identifiers are anyone's text
/// hooks.webhooks = [.init(url: "http://127.0.0.1:8080/events")]
/// ```
public struct HookConfiguration: Hashable, Sendable, Codable {
    public struct Webhook: Hashable, Sendable, Codable {
        public var url: String
        /// Event types to send (default: didEnterRegion, didExitRegion).
        public var events: [String]?

        public init(url: String, events: [String]? = nil) {
            self.url = url
            self.events = events
        }

        public var types: Set<String> { Set(events ?? ["didEnterRegion", "didExitRegion"]) }
    }

    /// The event types the daemon logs (and so can deliver): a webhook's `events` must name some
    /// of these. Ranging is logged as `rangedBeaconCountChanged` (count changes), never as
    /// `didRangeBeacons`.
    public static let loggedEventTypes: [String] = [
        "didStartMonitoring", "monitoringDidFail", "didEnterRegion", "didExitRegion", "didDetermineState",
        "rangedBeaconCountChanged", "didFailRanging", "didChangeAuthorization", "didChangeNearestScanner",
        "monitoringStopped", "sourceStatusChanged", "processStarted", "processStopped",
    ]

    /// The event types a cluster delivers to hooks: the merged regions' crossings and states
    /// (``ClusterEvents``) and the beacons' rooms (decided by their partition).
    public static let clusterDeliveredEventTypes: [String] = ["didEnterRegion", "didExitRegion", "didDetermineState", "didChangeNearestScanner"]

    /// Shell commands run (`/bin/sh -c`) for each didEnterRegion.
    public var onEnter: [String]
    /// Shell commands run for each didExitRegion.
    public var onExit: [String]
    public var webhooks: [Webhook]
    /// Seconds a command or request may take before it counts as failed (default 10).
    public var timeout: Double?
    /// Attempts per delivery before giving up (default 30).
    public var maxAttempts: Int?
    /// First retry delay in seconds, doubled per attempt up to 60 s, or up to itself when longer (default 1).
    public var retryDelay: Double?
    /// Most pending deliveries kept; older ones are dropped (default 10,000).
    public var maxPending: Int?

    public init(onEnter: [String] = [], onExit: [String] = [], webhooks: [Webhook] = [], timeout: Double? = nil,
                maxAttempts: Int? = nil, retryDelay: Double? = nil, maxPending: Int? = nil) {
        self.onEnter = onEnter
        self.onExit = onExit
        self.webhooks = webhooks
        self.timeout = timeout
        self.maxAttempts = maxAttempts
        self.retryDelay = retryDelay
        self.maxPending = maxPending
    }

    /// Every field is optional in a file: `hooks: {onEnter: [...]}` alone is a valid block.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(onEnter: try container.decodeIfPresent([String].self, forKey: .onEnter) ?? [],
                  onExit: try container.decodeIfPresent([String].self, forKey: .onExit) ?? [],
                  webhooks: try container.decodeIfPresent([Webhook].self, forKey: .webhooks) ?? [],
                  timeout: try container.decodeIfPresent(Double.self, forKey: .timeout),
                  maxAttempts: try container.decodeIfPresent(Int.self, forKey: .maxAttempts),
                  retryDelay: try container.decodeIfPresent(Double.self, forKey: .retryDelay),
                  maxPending: try container.decodeIfPresent(Int.self, forKey: .maxPending))
    }

    public var isEmpty: Bool { onEnter.isEmpty && onExit.isEmpty && webhooks.isEmpty }

    /// Every hook name this configuration delivers to (``hooks(for:)``'s, of every type).
    public var allHookNames: Set<String> {
        Set(onEnter.map { "command:\($0)" } + onExit.map { "command:\($0)" } + webhooks.map { "webhook:\($0.url)" })
    }

    /// The hook names an event of `type` is delivered to. Names are stable across restarts.
    public func hooks(for type: String) -> [String] {
        var names: [String] = []
        if type == "didEnterRegion" { names += onEnter.map { "command:\($0)" } }
        if type == "didExitRegion" { names += onExit.map { "command:\($0)" } }
        names += webhooks.filter { $0.types.contains(type) }.map { "webhook:\($0.url)" }
        return names
    }
}
