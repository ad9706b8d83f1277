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

    /// Where the format's scanners say whether they are online (``ScannerStatusMessage``), the
    /// `+` level naming the scanner as the sightings do: ESPresense's retained room status,
    /// Theengs Gateway's and OpenMQTTGateway's will; `nil` for RegionKit's own scanners, which
    /// publish no status (their batches name the scanner in the payload, the topic only a
    /// sanitised form of it).
    public var defaultStatusFilter: String? {
        switch self {
        case .espresense: "espresense/rooms/+/status"
        case .theengs: "home/+/LWT"
        case .regionkit: nil
        }
    }
}
