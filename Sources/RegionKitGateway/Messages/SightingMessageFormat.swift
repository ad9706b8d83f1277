/// The MQTT sighting formats RegionKit reads: what the scanners people already own publish.
///
/// ```swift
/// SightingMessageFormat.espresense.defaultTopicFilter   // "espresense/devices/+/+"
/// ```
public enum SightingMessageFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// ESPresense room nodes: `espresense/devices/<id>/<room>`, one JSON object per sighting.
    case espresense
    /// Theengs Gateway and OpenMQTTGateway: `home/<gateway>/BTtoMQTT/<mac>`, one JSON object per advertisement.
    case theengs
    /// RegionKit's own scanners (`regionkit scan --publish`): `regionkit/scanners/<scanner>`, batches.
    case regionkit

    /// The subscription filter used when the configuration names none.
    public var defaultTopicFilter: String {
        switch self {
        case .espresense: "espresense/devices/+/+"
        case .theengs: "home/+/BTtoMQTT/+"
        case .regionkit: "regionkit/scanners/+"
        }
    }
}
