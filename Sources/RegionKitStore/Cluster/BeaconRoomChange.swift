/// A beacon's room as an event row changes it (a cluster partition's `didChangeNearestScanner`):
/// written beside the row, in its transaction, to the rooms ``RegionStoring/beaconRooms()`` reads.
///
/// ```swift
/// var row = ClusterEventRow(time: 12, type: "didChangeNearestScanner", region: nil, state: nil, reason: nil, json: line, hooks: [])
/// row.room = BeaconRoomChange(beacon: identity.description, scanner: "kitchen")
/// ```
public struct BeaconRoomChange: Hashable, Sendable {
    /// The beacon's identity's `description`.
    public var beacon: String
    /// The room it is placed in from the row's time on; nil: nowhere (its row removed).
    public var scanner: String?

    public init(beacon: String, scanner: String?) {
        self.beacon = beacon
        self.scanner = scanner
    }
}
