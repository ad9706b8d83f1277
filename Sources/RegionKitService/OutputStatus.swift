/// One output of the daemon (the MQTT presence hub of a site, or a cluster member's outputs
/// holder) as `/metrics` reports it: whether it is connected, how far it has published the event
/// log, and what Home Assistant discovery did. Counters are totals since the process started (the
/// holder's: since this member took the outputs).
///
/// ```swift
/// OutputStatus(name: "mqtt:home", kind: "mqtt", connected: true, eventsPublished: 812, cursor: 9_140)
/// ```
public struct OutputStatus: Codable, Hashable, Sendable {
    public var name: String
    public var kind: String
    public var connected: Bool
    public var eventsPublished: Int
    /// The id of the last logged event the output handed on (the broker acknowledged it); nil
    /// before the output has read its cursor from the store.
    public var cursor: Int64?
    public var connections: Int
    /// Events with a message that can never be published (left out, logged as an error).
    public var eventsUnpublishable: Int
    /// `online`s published to answer a will of an earlier connection read late (the broker noticed
    /// that connection dead after this one said `online`); nil for an output that does not answer
    /// them (a cluster's outputs holder says `online` again every `statusInterval` instead).
    public var lateWillsAnswered: Int?
    /// Home Assistant discovery, when it is on.
    public var homeAssistant: HomeAssistantStatus?

    /// What Home Assistant discovery did.
    public struct HomeAssistantStatus: Codable, Hashable, Sendable {
        public var discoveryRounds: Int
        /// Beacons with entities now.
        public var announcedBeacons: Int
        /// Placements of beacons left without entities: their limit was reached.
        public var unannouncedBeacons: Int
        /// Beacons dismissed because their devices were deleted in Home Assistant.
        public var forgottenBeacons: Int
        /// Beacons with entities on the broker that were not recorded as announced, counted as announced.
        public var adoptedBeacons: Int

        public init(discoveryRounds: Int = 0, announcedBeacons: Int = 0, unannouncedBeacons: Int = 0, forgottenBeacons: Int = 0, adoptedBeacons: Int = 0) {
            self.discoveryRounds = discoveryRounds
            self.announcedBeacons = announcedBeacons
            self.unannouncedBeacons = unannouncedBeacons
            self.forgottenBeacons = forgottenBeacons
            self.adoptedBeacons = adoptedBeacons
        }
    }

    public init(name: String, kind: String, connected: Bool, eventsPublished: Int = 0, cursor: Int64? = nil, connections: Int = 0,
                eventsUnpublishable: Int = 0, lateWillsAnswered: Int? = nil, homeAssistant: HomeAssistantStatus? = nil) {
        self.name = name
        self.kind = kind
        self.connected = connected
        self.eventsPublished = eventsPublished
        self.cursor = cursor
        self.connections = connections
        self.eventsUnpublishable = eventsUnpublishable
        self.lateWillsAnswered = lateWillsAnswered
        self.homeAssistant = homeAssistant
    }
}
