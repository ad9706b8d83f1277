/// An event a cluster store appends when a region's merged state changes, as the event log stores
/// it (see ``RegionStoring/append(time:type:region:state:reason:json:hooks:)``).
public struct ClusterEventRow: Hashable, Sendable {
    public var time: Double
    public var type: String
    public var region: String?
    public var state: String?
    public var reason: String?
    public var json: String
    /// The hooks that get a pending delivery of this event.
    public var hooks: [String]
    /// The beacon room this event changes, written in the same transaction (nil: none).
    public var room: BeaconRoomChange?

    public init(time: Double, type: String, region: String?, state: String?, reason: String?, json: String, hooks: [String]) {
        self.time = time
        self.type = type
        self.region = region
        self.state = state
        self.reason = reason
        self.json = json
        self.hooks = hooks
    }
}
