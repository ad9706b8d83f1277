import RegionKitCore

/// One row of the append-only event log: what happened, when, to which region, and why.
///
/// ```swift
/// for event in try store.events(region: "lobby") { print(event.time, event.type, event.reason ?? "") }
/// ```
public struct StoredEvent: Hashable, Sendable, Codable {
    /// Increasing row id (the acknowledgement handed to callers once the row is durable).
    public var id: Int64
    /// Unix epoch seconds (or the clock's own seconds for virtual time).
    public var time: Double
    /// `didEnterRegion`, `didExitRegion`, `didDetermineState`, `monitoringDidFail`,
    /// `didStartMonitoring`, `monitoringStopped`, `rangedBeaconCountChanged`, `processStarted`, ...
    public var type: String
    public var region: String?
    public var state: String?
    /// Short human reason ("no sighting for 2.1 s", "first sighting", ...).
    public var reason: String?
    /// The full event as a JSON object (the JSON-lines form, evidence included).
    public var json: String

    public init(id: Int64, time: Double, type: String, region: String?, state: String?, reason: String?, json: String) {
        self.id = id
        self.time = time
        self.type = type
        self.region = region
        self.state = state
        self.reason = reason
        self.json = json
    }
}
