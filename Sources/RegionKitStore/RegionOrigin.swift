/// Where a monitored region came from.
///
/// Configured regions are the daemon's initial set: at start they are brought in step with the
/// configuration file. Regions created or replaced through the HTTP API are kept across restarts
/// whatever the configuration says.
///
/// ```swift
/// try store.saveRegion(region, at: now, origin: .api)
/// ```
public enum RegionOrigin: String, Hashable, Sendable, Codable {
    case configuration = "config"
    case api
}
