import RegionKitCore
import RegionKitService
import RegionKitStore

/// The `region` and `type` filters shared by `GET /v1/events` and the SSE stream.
struct EventFilter: Sendable {
    var region: String?
    var type: String?

    /// Every event type the daemon or a cluster member logs, in the order the API document lists them.
    static let types = HookConfiguration.loggedEventTypes + ClusterEngine.memberEventTypes

    /// The filters of a request's query; a `type` the daemon never logs is a 400 naming it (it
    /// answered an empty page, as if no such event had happened yet).
    init(region: String?, type: String?) throws {
        if let type, !Self.types.contains(type) {
            let ranging = type == "didRangeBeacons" ? " (ranging is logged as rangedBeaconCountChanged, when the count changes)" : ""
            throw Problem(.badRequest, "type '\(type.prefix(80))' is not an event type the daemon logs\(ranging); one of \(Self.types.joined(separator: ", "))",
                          field: "type")
        }
        // One Unicode form, as regions keep their identifiers: `café` typed either way is one region.
        self.region = region.map(Region.canonical(identifier:))
        self.type = type
    }

    func accepts(_ event: StoredEvent) -> Bool {
        (region == nil || event.region == region) && (type == nil || event.type == type)
    }
}
