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
    /// Theengs Gateway's and OpenMQTTGateway's will, RegionKit's own scanners' retained status and
    /// will (``ScannerBatch/statusTopic(scanner:prefix:)``).
    public var defaultStatusFilter: String {
        switch self {
        case .espresense: "espresense/rooms/+/status"
        case .theengs: "home/+/LWT"
        case .regionkit: "regionkit/scanners/+/status"
        }
    }

    /// Whether the status topic's scanner level is a name in ``ScannerBatch/topicLevel(scanner:)``'s
    /// form (RegionKit's own scanners: their names may hold what a topic level cannot), read back
    /// with ``ScannerBatch/scanner(topicLevel:)``. The other formats' levels are the names.
    public var encodesScannerNames: Bool { self == .regionkit }
}
