import RegionKit

/// What a simulation run reports: the manager's delegate events and what the app did with them.
///
/// ```swift
/// if case .app(let action) = event { print(action.message) } // "exhibit 2 shown"
/// ```
public enum SimulationEvent: Hashable, Sendable {
    case location(LocationEvent)
    case app(AppAction)

    public var timestamp: Timestamp {
        switch self {
        case .location(let event): event.timestamp
        case .app(let action): action.timestamp
        }
    }

    /// A JSON line (`{"t", "type", ...}`); app actions have `"type": "appAction"`.
    public func jsonLine(origin: Timestamp) -> String {
        switch self {
        case .location(let event):
            return event.jsonLine(origin: origin)
        case .app(let action):
            var line = JSONLine()
            line.add("t", action.timestamp - origin, decimals: 3)
            line.add("type", "appAction")
            if let region = action.region { line.add("region", region) }
            line.add("action", action.name)
            line.add("message", action.message)
            return line.text
        }
    }
}

/// Something the simulated app did in response to events (showed an exhibit, sent a coupon).
public struct AppAction: Hashable, Sendable {
    public var timestamp: Timestamp
    /// Machine name: `exhibitShown`, `exhibitDismissed`, `notification`, `rangingStarted`...
    public var name: String
    public var region: String?
    public var message: String

    public init(timestamp: Timestamp, name: String, region: String? = nil, message: String) {
        self.timestamp = timestamp
        self.name = name
        self.region = region
        self.message = message
    }
}
