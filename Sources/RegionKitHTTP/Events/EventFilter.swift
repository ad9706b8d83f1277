import RegionKitStore

/// The `region` and `type` filters shared by `GET /v1/events` and the SSE stream.
struct EventFilter: Sendable {
    var region: String?
    var type: String?

    func accepts(_ event: StoredEvent) -> Bool {
        (region == nil || event.region == region) && (type == nil || event.type == type)
    }
}
