import Foundation
import RegionKit
import RegionKitCore
import RegionKitStore

/// What the hub publishes for each logged event, in log order: the event itself (QoS 1 on the
/// events topic, the same JSON object `regionkit run --json` prints, with its log id), then what
/// the event changes: a region's retained state, a beacon's retained room (`not_home` when it
/// left: retained for a beacon with a Home Assistant entity, otherwise sent, then its topic
/// removed: ``PresenceMessage/departure(topic:text:kept:)``), Home Assistant
/// entities (discovered when a region starts or a beacon is first placed, removed when a region
/// is stopped). Pure: the hub feeds it events from the durable log, publishes the result and,
/// once the broker has acknowledged it, tells the outputs with ``published(_:regions:)`` — a
/// beacon's entities count as announced only then, so a group lost with its connection is produced
/// again whole (with the beacon's discovery) when the event is published again.
///
/// ```swift
/// var outputs = PresenceOutputs(topics: PresenceTopics(site: "home"), discovery: nil)
/// let messages = outputs.messages(for: storedEvent) { manager.monitoredRegion($0)?.region }
/// // … publish `messages`; once the broker acknowledged them:
/// outputs.published(storedEvent)
/// ```
public struct PresenceOutputs: Sendable {
    public var topics: PresenceTopics
    public var discovery: HomeAssistantDiscovery?
    /// Every beacon's departure stays retained, not only those of beacons with Home Assistant
    /// entities (``MQTTHubConfiguration/retainDepartures`` `all`).
    public var retainsAllDepartures = false
    /// Beacons whose Home Assistant entities were announced and acknowledged (re-sent when HA
    /// restarts or the connection is made again).
    public private(set) var announcedBeacons: Set<BeaconIdentity> = []
    /// Beacons whose devices were deleted in Home Assistant (``forget(_:)``): not announced again
    /// until they are placed anew (a room change from nowhere).
    public private(set) var dismissedBeacons: Set<BeaconIdentity> = []
    /// How many of ``announcedBeacons`` the regions in `classifiedRegions` match, kept by
    /// ``published(_:regions:)``: the limit check reads it while the regions stay the same
    /// instead of classifying every announced beacon, three times an event (audit: 47 % of the
    /// daemon's time under a flood of new beacons, with the default 1,000 + 1,000 announced).
    private var matchedAnnounced = 0
    private var classifiedRegions: [Region]?

    public init(topics: PresenceTopics, discovery: HomeAssistantDiscovery?) {
        self.topics = topics
        self.discovery = discovery
    }

    /// Whether `beacon`'s departure stays retained: it has Home Assistant entities, or every
    /// departure does (``retainsAllDepartures``).
    public func keepsDeparture(of beacon: BeaconIdentity) -> Bool {
        retainsAllDepartures || announcedBeacons.contains(beacon)
    }

    /// Counts `beacons` as announced (their entities announced before a restart, read back from
    /// the store: `RegionStoring.announcedBeacons(_:)`): their entities are re-sent with every
    /// discovery round, their departures kept retained, and they count against the limit, which
    /// a restart granted afresh before (every restart let another `maximum` beacons in).
    public mutating func restoreAnnounced(_ beacons: some Sequence<BeaconIdentity>) {
        announcedBeacons.formUnion(beacons)
        dismissedBeacons.subtract(announcedBeacons)
        classifiedRegions = nil
    }

    /// Counts `beacons` as dismissed (``dismissedBeacons``, read back from the store:
    /// `RegionStoring.dismissedBeacons(_:)`), unless announced.
    public mutating func restoreDismissed(_ beacons: some Sequence<BeaconIdentity>) {
        dismissedBeacons.formUnion(beacons)
        dismissedBeacons.subtract(announcedBeacons)
    }

    /// The announced beacons whose `device_tracker` configuration topics
    /// (``HomeAssistantDiscovery/trackerConfigFilter``) are among `topics` (each announced
    /// beacon's object id computed once, however many topics); other topics name none.
    public func announcedBeacons(trackerConfigTopics topics: some Collection<String>) -> Set<BeaconIdentity> {
        guard let discovery else { return [] }
        let objects = Set(topics.compactMap(discovery.trackerObject(configTopic:)))
        guard !objects.isEmpty else { return [] }
        return announcedBeacons.filter { objects.contains(discovery.beaconObject($0)) }
    }

    /// Which of `beacons`, whose tracker configurations the broker keeps for this site, to count
    /// as announced though they are not recorded so: announced by a version before the
    /// announcements were recorded, or recorded in a store since lost. Neither announced nor
    /// dismissed, and no more than the limits allow in all (twice ``BeaconAnnouncement/maximum``:
    /// configurations anyone can publish must not grow the set without bound). Their scope is not
    /// checked: the regions may not be restored yet when the broker sends them.
    public func adoptable(_ beacons: Set<BeaconIdentity>) -> Set<BeaconIdentity> {
        guard let discovery else { return [] }
        let room = max(0, 2 * discovery.beacons.maximum - announcedBeacons.count)
        return Set(beacons.subtracting(announcedBeacons).subtracting(dismissedBeacons).sorted().prefix(room))
    }

    /// Forgets announced `beacons` whose devices were deleted in Home Assistant: they are
    /// dismissed (``dismissedBeacons``), no longer count against the limit, their entities are not
    /// re-sent by discovery rounds, and a beacon is announced again only when it is placed anew
    /// (from nowhere into a room: not at a room change or a departure while it stays around).
    /// ``removalMessages(_:placed:)`` says what removes their topics. Returns the beacons forgotten.
    @discardableResult
    public mutating func forget(_ beacons: Set<BeaconIdentity>) -> Set<BeaconIdentity> {
        let forgotten = announcedBeacons.intersection(beacons)
        guard discovery != nil, !forgotten.isEmpty else { return [] }
        announcedBeacons.subtract(forgotten)
        dismissedBeacons.formUnion(forgotten)
        classifiedRegions = nil
        return forgotten
    }

    /// What removes the topics of `beacons` whose devices were deleted: both entities'
    /// configurations (a discovery round may have re-sent them after Home Assistant emptied them),
    /// and for a beacon placed nowhere (`placed` false) its retained room, distance, attributes and tracker zones,
    /// kept for its device tracker until now, unless every departure stays retained
    /// (``retainsAllDepartures``: other consumers read them). A beacon still placed keeps them
    /// until it leaves (not retained then, as any beacon without entities).
    public func removalMessages(_ beacons: Set<BeaconIdentity>, placed: (BeaconIdentity) -> Bool) -> [PresenceMessage] {
        guard let discovery else { return [] }
        return beacons.sorted().flatMap { beacon in
            discovery.beaconRemovals(beacon) + (placed(beacon) || retainsAllDepartures ? [] : [topics.beaconRoom(beacon), topics.beaconDistance(beacon), topics.beaconAttributes(beacon),
                                                                                   topics.beaconTracker(beacon)]
                .map { PresenceMessage(topic: $0, payload: [], qos: 1, retain: true) })
        }
    }

    /// Whether a `didChangeNearestScanner` of `beacon` announces it now: discovery is on, it is
    /// not announced yet, it is in the policy's scope (``BeaconAnnouncement``; `regions` gives
    /// the monitored regions) and its limit is not reached. The limit
    /// (``BeaconAnnouncement/maximum``) holds apart for beacons a monitored beacon region matches
    /// and for the others: a flood of neighbours' beacons used to take every place, and the
    /// user's own beacon then got no entity.
    /// A dismissed beacon (``dismissedBeacons``) is not.
    public func announces(_ beacon: BeaconIdentity, regions: () -> [Region]) -> Bool {
        !dismissedBeacons.contains(beacon) && isEligible(beacon, regions: regions)
    }

    /// Whether the room change `change` announces its beacon now: ``announces(_:regions:)``, and
    /// a dismissed beacon only when the change places it anew (from nowhere into a room).
    func announces(_ change: NearestScannerChange, regions: () -> [Region]) -> Bool {
        dismissalAllows(change) && isEligible(change.beacon, regions: regions)
    }

    /// Whether `change` may announce its beacon as far as its dismissal goes: not dismissed, or
    /// placed anew (from nowhere into a room).
    private func dismissalAllows(_ change: NearestScannerChange) -> Bool {
        !dismissedBeacons.contains(change.beacon) || change.placesAnew
    }

    /// Discovery on, not announced yet, in scope, and within its limit.
    private func isEligible(_ beacon: BeaconIdentity, regions: () -> [Region]) -> Bool {
        guard let discovery, !announcedBeacons.contains(beacon), discovery.beacons.covers(beacon, regions: regions) else { return false }
        return hasRoom(for: beacon, limit: discovery.beacons.maximum, regions: regions)
    }

    /// Whether `beacon` fits its limit: the announced beacons the monitored regions match now, or
    /// the others, fewer than `limit` (classified only once the announced beacons reach `limit`).
    private func hasRoom(for beacon: BeaconIdentity, limit: Int, regions: () -> [Region]) -> Bool {
        guard announcedBeacons.count >= limit else { return true }
        let current = regions()
        let matched = matchedAnnouncedCount(current)
        return Self.matched(beacon, regions: { current }) ? matched < limit : announcedBeacons.count - matched < limit
    }

    /// The announced beacons `current` matches (kept while the regions are unchanged).
    private func matchedAnnouncedCount(_ current: [Region]) -> Int {
        if let classifiedRegions, classifiedRegions == current { return matchedAnnounced }
        return announcedBeacons.reduce(0) { count, announced in count + (Self.matched(announced, regions: { current }) ? 1 : 0) }
    }

    static func matched(_ beacon: BeaconIdentity, regions: () -> [Region]) -> Bool {
        regions().contains { $0.beaconRegion?.matches(beacon) == true }
    }

    /// Whether `event` places a beacon that is in scope but not announced because its limit is
    /// reached: the hub counts these and warns once.
    public func isBeyondLimit(_ event: StoredEvent, regions: () -> [Region]) -> Bool {
        guard let discovery, event.type == "didChangeNearestScanner", let change = Self.nearestScannerChange(event.json),
              !announcedBeacons.contains(change.beacon), dismissalAllows(change),
              discovery.beacons.covers(change.beacon, regions: regions) else { return false }
        return !hasRoom(for: change.beacon, limit: discovery.beacons.maximum, regions: regions)
    }

    /// The messages for one logged event: the same ones each time until ``published(_:regions:)``
    /// says the broker acknowledged them.
    /// - Parameters:
    ///   - region: the monitored region with this identifier, if still monitored.
    ///   - regions: every monitored region (read only to place a new beacon in the scope `regions`).
    public func messages(for event: StoredEvent, region: (String) -> Region?, regions: () -> [Region] = { [] }) -> [PresenceMessage] {
        var messages = [PresenceMessage(topic: topics.events, text: event.jsonLine, qos: 1, retain: false)]
        switch event.type {
        case "didDetermineState":
            if let identifier = event.region, let state = event.state {
                messages.append(PresenceMessage(topic: topics.regionState(identifier), text: state, qos: 1, retain: true))
            }
        case "didStartMonitoring":
            if let identifier = event.region, let discovery, let monitored = region(identifier), monitored.kind == .beacon {
                messages.append(discovery.regionConfig(monitored))
                // Announced beacons it matches are ranged from now on: their distance sensors.
                for beacon in announcedBeacons.sorted() where monitored.beaconRegion?.matches(beacon) == true {
                    messages += discovery.beaconConfigs(beacon).dropFirst()
                }
            }
        case "monitoringStopped":
            // Topic levels are one-to-one; should two identifiers still share one (a clean identifier
            // spelled like another's sanitized form and hash), a monitored region's topics are not
            // cleared with the other's.
            if let identifier = event.region, !Self.sharesTopics(identifier, with: regions()) {
                messages.append(PresenceMessage(topic: topics.regionState(identifier), payload: [], qos: 1, retain: true))
                if let discovery { messages.append(discovery.regionRemoval(identifier)) }
            }
        case "didChangeNearestScanner":
            if let change = Self.nearestScannerChange(event.json) {
                // The monitored regions read once for this event (when needed at all).
                var read: [Region]?
                let current = { () -> [Region] in
                    if let read { return read }
                    let regions = regions()
                    read = regions
                    return regions
                }
                var announcing = false
                if let discovery, announces(change, regions: current) {
                    announcing = true
                    // A beacon no region matches is never ranged: no distance sensor.
                    messages += discovery.beaconConfigs(change.beacon, ranged: Self.matched(change.beacon, regions: current))
                }
                let topic = topics.beaconRoom(change.beacon)
                // Its device tracker's zones, beside the room, for a beacon that has one.
                let tracker = discovery != nil && (announcing || announcedBeacons.contains(change.beacon))
                if let scanner = change.scanner {
                    messages.append(PresenceMessage(topic: topic, text: scanner, qos: 1, retain: true))
                } else {
                    // Kept on the broker only for a beacon whose device tracker reads it.
                    messages += PresenceMessage.departure(topic: topic, text: "not_home", kept: keepsDeparture(of: change.beacon) || announcing)
                }
                if tracker {
                    messages.append(PresenceMessage(topic: topics.beaconTracker(change.beacon),
                                                    text: HomeAssistantDiscovery.trackerAttributes(room: change.scanner), qos: 1, retain: true))
                }
            }
        default:
            break
        }
        return messages
    }

    /// The broker acknowledged `event`'s ``messages(for:region:regions:)`` (given the same
    /// `regions`): a beacon whose entities they announced counts as announced from now on (its
    /// later events publish only its room, and ``discoveryMessages(regions:)`` includes it).
    public mutating func published(_ event: StoredEvent, regions: () -> [Region] = { [] }) {
        guard discovery != nil, event.type == "didChangeNearestScanner", let change = Self.nearestScannerChange(event.json),
              !announcedBeacons.contains(change.beacon) else { return }
        // Read once: every monitored region, compared and classified below (it was read twice);
        // not at all for a beacon announced already (most room changes).
        let current = regions()
        guard announces(change, regions: { current }) else { return }
        let matchedBefore = matchedAnnouncedCount(current)
        announcedBeacons.insert(change.beacon)
        dismissedBeacons.remove(change.beacon)
        matchedAnnounced = matchedBefore + (Self.matched(change.beacon, regions: { current }) ? 1 : 0)
        classifiedRegions = current
    }

    /// Everything Home Assistant needs to (re)discover: every beacon region and announced beacon.
    /// (Not the removal of the dismissed beacons' entities: sent by the round, it came back on the
    /// output's own subscription and, with the beacon placed anew meanwhile, dismissed it again.)
    public func discoveryMessages(regions: [Region]) -> [PresenceMessage] {
        guard let discovery else { return [] }
        return regions.filter { $0.kind == .beacon }.map(discovery.regionConfig)
            + announcedBeacons.sorted().flatMap { discovery.beaconConfigs($0, ranged: Self.matched($0, regions: { regions })) }
    }

    /// Every beacon's room again, retained, as a connection re-sends them (a broker restarted
    /// without its retained messages): each beacon of `placed` in its room, and each announced
    /// beacon placed nowhere `not_home` (its device tracker reads the topic), in identity order;
    /// with discovery, each announced beacon's tracker zones after its room.
    /// The hub takes `placed` from its engine, the cluster's outputs holder from the store.
    public func roomMessages(placed: [BeaconIdentity: String]) -> [PresenceMessage] {
        Set(placed.keys).union(announcedBeacons).sorted().flatMap { beacon -> [PresenceMessage] in
            let room = PresenceMessage(topic: topics.beaconRoom(beacon), text: placed[beacon] ?? "not_home", qos: 1, retain: true)
            guard discovery != nil, announcedBeacons.contains(beacon) else { return [room] }
            return [room, PresenceMessage(topic: topics.beaconTracker(beacon), text: HomeAssistantDiscovery.trackerAttributes(room: placed[beacon]),
                                          qos: 1, retain: true)]
        }
    }

    /// Empty retained messages on the topics that regions with identifiers other than letters,
    /// digits, `_` and `-` used before their topic level became one-to-one (session 45: the
    /// sanitized identifier alone, now followed by a hash): their retained state and, with
    /// discovery, their Home Assistant entity would otherwise stay behind, stale. A topic another
    /// region uses now is left alone. Sent before each discovery round (idempotent).
    public func legacyTopicRemovals(regions: [Region]) -> [PresenceMessage] {
        let current = Set(regions.map { PresenceTopics.level($0.identifier) })
        var removed = Set<String>()
        var messages: [PresenceMessage] = []
        for region in regions {
            let legacy = PresenceTopics.sanitized(region.identifier)
            guard legacy != region.identifier, !current.contains(legacy), removed.insert(legacy).inserted else { continue }
            messages.append(PresenceMessage(topic: topics.regionStateTopic(level: legacy), payload: [], qos: 1, retain: true))
            if let discovery, region.kind == .beacon {
                messages.append(PresenceMessage(topic: discovery.regionTopic(level: legacy), payload: [], qos: 1, retain: true))
            }
        }
        return messages
    }

    /// Whether a region of `regions` other than `identifier` publishes on `identifier`'s topics
    /// (its identifier maps to the same topic level).
    static func sharesTopics(_ identifier: String, with regions: [Region]) -> Bool {
        let level = PresenceTopics.level(identifier)
        return regions.contains { $0.identifier != identifier && PresenceTopics.level($0.identifier) == level }
    }

    /// Identifiers of `regions` whose topic level another one has too (sorted groups): their
    /// retained states overwrite each other, and Home Assistant sees one entity.
    public static func topicCollisions(_ regions: [Region]) -> [[String]] {
        Dictionary(grouping: regions.map(\.identifier), by: PresenceTopics.level).values
            .filter { $0.count > 1 }.map { $0.sorted() }.sorted { $0[0] < $1[0] }
    }

    /// A logged `didChangeNearestScanner` event: the beacon, its new scanner (nil: placed nowhere
    /// now) and its previous one (nil: it was placed nowhere).
    struct NearestScannerChange: Hashable, Sendable {
        var beacon: BeaconIdentity
        var scanner: String?
        var previous: String?
        /// From nowhere into a room.
        var placesAnew: Bool { scanner != nil && previous == nil }
    }

    /// The change of a logged `didChangeNearestScanner` event.
    static func nearestScannerChange(_ json: String) -> NearestScannerChange? {
        // Every format the engine tracks (iBeacon, AltBeacon, Eddystone-UID): reading the iBeacon
        // form only dropped the other formats' rooms and Home Assistant entities without a word.
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let beacon = object["beacon"] as? String, let identity = BeaconIdentity(description: beacon) else { return nil }
        return NearestScannerChange(beacon: identity, scanner: object["scanner"] as? String, previous: object["previous"] as? String)
    }
}
