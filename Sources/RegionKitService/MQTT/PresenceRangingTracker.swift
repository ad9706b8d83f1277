import RegionKit
import RegionKitCore
import RegionKitGateway

/// Turns ranging updates into beacon distance messages for the hub, without flooding the broker:
/// a beacon's distance (retained, QoS 0) and JSON attributes are published when the distance moved
/// by at least ``minimumChange`` metres, its room changed, or ``refreshInterval`` seconds passed.
/// Silent beacons (rssi 0, accuracy −1) publish nothing.
///
/// Fed whole deliveries (``messages(for:ranging:label:at:room:roomDistance:kept:)``), it also
/// clears the distance of a beacon no ranging lists any more: dropped from the deliveries that
/// listed it, or their ranging ended (``rangingEnded(where:room:kept:)``). Without that, a beacon
/// that left kept its last distance on the broker for good wherever no room placed it (a single
/// scanner: no `didChangeNearestScanner` ever says it left).
///
/// ```swift
/// var tracker = PresenceRangingTracker(topics: PresenceTopics(site: "home"), mqttRoom: false)
/// tracker.messages(for: rangedBeacons, ranging: constraint, label: label, at: now,
///                  room: { manager.nearestScanner(for: $0) })
/// tracker.rangingEnded(where: { !manager.isRanging($0, label: $1) }, room: { manager.nearestScanner(for: $0) })
/// ```
public struct PresenceRangingTracker: Sendable {
    public var topics: PresenceTopics
    /// Also publish Home Assistant `mqtt_room` payloads `{id, name, distance}` on `<mqttRoom>/<room>`.
    public var mqttRoom: Bool
    public var minimumChange = 0.1
    public var refreshInterval = 30.0

    struct Published: Hashable, Sendable {
        var distance: Double
        var room: String?
        var time: Timestamp

        /// Counted as published by an earlier run (``assumePublished(_:)``), nothing published by this one.
        static func assumed() -> Published {
            // No distance (any first one differs) and a time no sweep reaches.
            Published(distance: .nan, room: nil, time: Timestamp(seconds: .greatestFiniteMagnitude))
        }

        var isAssumed: Bool { time.seconds == .greatestFiniteMagnitude }
    }

    /// What was last published per beacon. An entry older than ``refreshInterval`` decides
    /// nothing (the beacon is published again either way), so such entries are dropped whenever
    /// the table has doubled since the last sweep: a stream of ever new identities (random
    /// majors and minors under a ranged UUID) cannot grow it without bound.
    var published: [BeaconIdentity: Published] = [:]
    /// Beacons cleared (no ranging lists them) while a room still held them, their departure
    /// retained: their attributes on the broker say that room (``unranged(_:room:topics:kept:)``)
    /// until ``unplaced(_:kept:)`` says `not_home` when the room lets them go
    /// (``moved(_:to:kept:)``: another room), or they are ranged again. Without it their
    /// attributes kept the last room for good (the room's departure found no distance published
    /// and sent nothing), and Home Assistant's distance sensor showed the beacon in the kitchen.
    /// Bounded by the beacons a room holds: the engine lets every one go in the end.
    var clearedInRoom: Set<BeaconIdentity> = []
    /// The size at which ``published`` is swept next.
    var sweepAt = Self.minimumSweep
    static let minimumSweep = 1024

    /// A ranging whose deliveries the tracker was fed: its constraint, and the label they carry.
    public struct Ranging: Hashable, Sendable {
        public var constraint: BeaconIdentityConstraint
        public var label: String

        public init(constraint: BeaconIdentityConstraint, label: String) {
            self.constraint = constraint
            self.label = label
        }
    }

    /// The beacons each ranging's last delivery listed (heard or not), for the rangings fed
    /// whole deliveries; a ranging whose last delivery listed none is not kept.
    var listed: [Ranging: Set<BeaconIdentity>] = [:]
    /// How many of ``listed``'s rangings list each beacon (a beacon none lists is not kept).
    var listings: [BeaconIdentity: Int] = [:]

    /// The rangings whose deliveries the tracker was fed and that listed beacons last time, with
    /// a label `label` accepts, that `manager` no longer ranges (asked under one lock): those for
    /// ``rangingEnded(where:room:kept:)`` or ``rangingSuspended(where:)``.
    ///
    /// ```swift
    /// let ended = tracker.endedRangings(on: manager) { $0 == region.identifier }
    /// publish(tracker.rangingEnded(where: { ended.contains(.init(constraint: $0, label: $1)) }, room: room))
    /// ```
    public func endedRangings(on manager: LocationManager, label: (String) -> Bool = { _ in true }) -> Set<Ranging> {
        let rangings = listed.keys.filter { label($0.label) }
        guard !rangings.isEmpty else { return [] }
        let live = manager.isRanging(rangings.map { ($0.constraint, $0.label) })
        return Set(zip(rangings, live).compactMap { ranging, live in live ? nil : ranging })
    }

    public init(topics: PresenceTopics, mqttRoom: Bool) {
        self.topics = topics
        self.mqttRoom = mqttRoom
    }

    /// Counts `beacons` as having a distance published, by an earlier run (a restart, a cluster
    /// partition's previous holder): their retained distance and attributes may still be on the
    /// broker, so their departure (``unplaced(_:kept:)``) clears them, and their first distance
    /// goes out at once. Kept until then (never swept); a beacon already tracked is left as it is.
    ///
    /// ```swift
    /// tracker.assumePublished(manager.nearestScanners.keys)   // rooms restored at the start
    /// ```
    public mutating func assumePublished(_ beacons: some Sequence<BeaconIdentity>) {
        for beacon in beacons where published[beacon] == nil {
            published[beacon] = .assumed()
        }
    }

    /// Takes distances an earlier run left retained on the broker (`RetainedDistanceScan`) as
    /// published (``assumePublished(_:)``) and returns those of `found` this run has published
    /// nothing of: the leftovers to clear unless ranged again within a grace period
    /// (`RangingLeftovers`, ``leftoverDepartures(of:room:kept:)``). A beacon this run already
    /// published is no leftover: its distance on the broker is this run's.
    ///
    /// ```swift
    /// leftovers.add(tracker.adoptRetained(scan.found), grace: .seconds(30))
    /// ```
    public mutating func adoptRetained(_ found: some Collection<BeaconIdentity>) -> Set<BeaconIdentity> {
        assumePublished(found)
        return Set(found.filter(isOnlyAssumed))
    }

    /// Whether `beacon` counts as published only by an earlier run (``assumePublished(_:)``).
    private func isOnlyAssumed(_ beacon: BeaconIdentity) -> Bool {
        published[beacon]?.isAssumed == true
    }

    /// The departures of those of `beacons` still only assumed published (``assumePublished(_:)``:
    /// this run published no distance of them) that no ranging lists: distance `None`, attributes
    /// with their room, `room`, or `not_home` (retained when `kept`). The hub asks this a grace
    /// period after it found an earlier run's distances retained on the broker
    /// (`RetainedDistanceScan`): a beacon still around is ranged by then.
    ///
    /// ```swift
    /// tracker.assumePublished(leftovers)
    /// // 30 s later:
    /// publish(tracker.leftoverDepartures(of: leftovers, room: { manager.nearestScanner(for: $0) }))
    /// ```
    public mutating func leftoverDepartures(of beacons: some Sequence<BeaconIdentity>, room: (BeaconIdentity) -> String?,
                                            kept: (BeaconIdentity) -> Bool = { _ in true }) -> [PresenceMessage] {
        departures(of: Set(beacons.filter(isOnlyAssumed)), room: room, kept: kept)
    }

    /// Every tracked beacon's distance and attributes go out again at its next update, changed
    /// or not (a new connection: the broker may have lost its retained messages); the beacons
    /// stay known, so a departure before that still clears them (forgetting them all, as before,
    /// left the retained distance of a beacon that left before its next update).
    public mutating func republishAll() {
        for beacon in published.keys { published[beacon]?.distance = .nan }
    }

    /// `identity` is heard by no scanner any more (`didChangeNearestScanner` to none): when a
    /// distance of it was published, its distance becomes `None` (Home Assistant's MQTT sensor
    /// reads it as unknown) and its attributes `{"room":"not_home"}`, and what was published is
    /// forgotten, so its distance goes out as soon as it is heard again. Nothing for a beacon
    /// whose distance was never published (a neighbour never ranged). `kept`: retained (a Home
    /// Assistant entity reads them); otherwise sent, then the topics removed
    /// (``PresenceMessage/departure(topic:text:kept:)``).
    ///
    /// A beacon cleared earlier while its room held it (no ranging listed it any more: distance
    /// `None`, attributes with that room) gets its attributes `{"room":"not_home"}` now.
    public mutating func unplaced(_ identity: BeaconIdentity, kept: Bool = true) -> [PresenceMessage] {
        if published.removeValue(forKey: identity) != nil {
            clearedInRoom.remove(identity)
            return Self.departure(identity, topics: topics, kept: kept)
        }
        guard clearedInRoom.remove(identity) != nil else { return [] }
        return PresenceMessage.departure(topic: topics.beaconAttributes(identity), text: Self.notHomeAttributes, kept: kept)
    }

    /// `identity` is placed in `room` now (`didChangeNearestScanner` to a scanner): a beacon
    /// cleared earlier while a room held it (no ranging lists it) gets its attributes
    /// `{"room":…}` with the new room, so they do not name the room it left (a region removed
    /// while its beacon stays around, then the beacon moves). Nothing for any other beacon: a
    /// ranged one's next distance carries its room.
    ///
    /// ```swift
    /// case .didChangeNearestScanner(let identity, let scanner?, _):
    ///     publish(tracker.moved(identity, to: scanner))
    /// ```
    public func moved(_ identity: BeaconIdentity, to room: String, kept: Bool = true) -> [PresenceMessage] {
        guard clearedInRoom.contains(identity) else { return [] }
        return PresenceMessage.departure(topic: topics.beaconAttributes(identity), text: Self.roomAttributes(room), kept: kept)
    }

    /// `{"room":…}`: the attributes of a beacon no ranging lists.
    static func roomAttributes(_ room: String) -> String {
        var attributes = JSONLine()
        attributes.add("room", room)
        return attributes.text
    }

    /// The attributes of a beacon no room holds.
    static let notHomeAttributes = #"{"room":"not_home"}"#

    /// What ``unplaced(_:kept:)`` publishes for a beacon whose distance was published: its
    /// distance `None`, its attributes `{"room":"not_home"}`; retained when `kept`, otherwise
    /// followed by empty retained messages that remove the topics.
    public static func departure(_ identity: BeaconIdentity, topics: PresenceTopics, kept: Bool = true) -> [PresenceMessage] {
        PresenceMessage.departure(topic: topics.beaconDistance(identity), text: "None", kept: kept)
            + PresenceMessage.departure(topic: topics.beaconAttributes(identity), text: notHomeAttributes, kept: kept)
    }

    /// The departure of a beacon whose distance was published and that no ranging lists any
    /// more, while a room may still hold it: its distance `None`, its attributes `{"room":…}`
    /// with `room` (``departure(_:topics:kept:)``'s `not_home` without one).
    static func unranged(_ identity: BeaconIdentity, room: String?, topics: PresenceTopics, kept: Bool) -> [PresenceMessage] {
        guard let room else { return departure(identity, topics: topics, kept: kept) }
        return PresenceMessage.departure(topic: topics.beaconDistance(identity), text: "None", kept: kept)
            + PresenceMessage.departure(topic: topics.beaconAttributes(identity), text: roomAttributes(room), kept: kept)
    }

    /// A whole delivery of `constraint`'s ranging under `label` (a `didRangeBeacons`): first the
    /// departure of each beacon its last delivery listed and this one does not, when no other
    /// ranging lists it and its distance was published (distance `None`, attributes with its
    /// room, `room`, or `not_home`; retained when `kept`, as ``unplaced(_:kept:)``), then
    /// ``messages(for:at:room:roomDistance:)`` for `beacons`.
    ///
    /// ```swift
    /// case .didRangeBeacons(let beacons, let constraint, let label):
    ///     publish(tracker.messages(for: beacons, ranging: constraint, label: label, at: event.timestamp,
    ///                              room: { manager.nearestScanner(for: $0) }))
    /// ```
    public mutating func messages(for beacons: [Beacon], ranging constraint: BeaconIdentityConstraint, label: String, at time: Timestamp,
                                  room: (BeaconIdentity) -> String?, roomDistance: ((BeaconIdentity, String) -> Double?)? = nil,
                                  kept: (BeaconIdentity) -> Bool = { _ in true }) -> [PresenceMessage] {
        let ranging = Ranging(constraint: constraint, label: label)
        let now = Set(beacons.lazy.map(\.identity))
        let before = (now.isEmpty ? listed.removeValue(forKey: ranging) : listed.updateValue(now, forKey: ranging)) ?? []
        for beacon in now where !before.contains(beacon) { listings[beacon, default: 0] += 1 }
        let dropped = before.subtracting(now)
        unlist(dropped)
        let messages = departures(of: dropped, room: room, kept: kept)
        return messages + self.messages(for: beacons, at: time, room: room, roomDistance: roomDistance)
    }

    /// One ranging fewer lists each of `beacons`.
    private mutating func unlist(_ beacons: Set<BeaconIdentity>) {
        for beacon in beacons {
            guard let count = listings[beacon] else { continue }
            listings[beacon] = count > 1 ? count - 1 : nil
        }
    }

    /// Forgets the rangings `ended` names and returns the beacons they listed that no other
    /// ranging lists now.
    private mutating func forgetRangings(where ended: (BeaconIdentityConstraint, String) -> Bool) -> Set<BeaconIdentity> {
        let gone = listed.keys.filter { ended($0.constraint, $0.label) }
        var candidates = Set<BeaconIdentity>()
        for ranging in gone {
            guard let beacons = listed.removeValue(forKey: ranging) else { continue }
            unlist(beacons)
            candidates.formUnion(beacons)
        }
        return candidates.filter { !isListed($0) }
    }

    /// The rangings fed whole deliveries whose ranging ended (`ended`: their constraint and label
    /// get no delivery any more: the region left or was removed, the app stopped it) are
    /// forgotten, with the departure of each beacon they listed that no other ranging lists
    /// (as ``messages(for:ranging:label:at:room:roomDistance:kept:)`` clears one dropped from a
    /// delivery). A ranging that ended because its source went away is
    /// ``rangingSuspended(where:)`` instead. The hub asks this after each exit and every second
    /// for what no event says (a region removed); a cluster partition after each exit.
    ///
    /// ```swift
    /// publish(tracker.rangingEnded(where: { !manager.isRanging($0, label: $1) },
    ///                              room: { manager.nearestScanner(for: $0) }))
    /// ```
    public mutating func rangingEnded(where ended: (BeaconIdentityConstraint, String) -> Bool, room: (BeaconIdentity) -> String?,
                                      kept: (BeaconIdentity) -> Bool = { _ in true }) -> [PresenceMessage] {
        departures(of: forgetRangings(where: ended), room: room, kept: kept)
    }

    /// The rangings `ended` names stopped for want of a source (a scanner, the broker): not
    /// their beacons leaving, so nothing is cleared. They are forgotten, and the beacons they
    /// listed that no other ranging lists count as published by an earlier run
    /// (``assumePublished(_:)``): their distance goes out at once when they are ranged again,
    /// and the caller clears those that are not within a grace period after the source is back
    /// (``leftoverDepartures(of:room:kept:)``). Returns those beacons (with a distance published).
    ///
    /// ```swift
    /// case .didFailRanging:   // the beacon source went away
    ///     suspended.formUnion(tracker.rangingSuspended(where: { !manager.isRanging($0, label: $1) }))
    /// ```
    public mutating func rangingSuspended(where ended: (BeaconIdentityConstraint, String) -> Bool) -> Set<BeaconIdentity> {
        let beacons = forgetRangings(where: ended).filter { published[$0] != nil }
        for beacon in beacons { published[beacon] = .assumed() }
        return beacons
    }

    /// The departures of `beacons` that no ranging lists any more and whose distance was
    /// published, in a stable order (by their description); forgotten, so a beacon ranged again
    /// publishes its distance at once.
    mutating func departures(of beacons: Set<BeaconIdentity>, room: (BeaconIdentity) -> String?, kept: (BeaconIdentity) -> Bool) -> [PresenceMessage] {
        guard !beacons.isEmpty else { return [] }
        let gone = beacons.filter { beacon in published[beacon] != nil && !isListed(beacon) }
        guard !gone.isEmpty else { return [] }
        var messages: [PresenceMessage] = []
        for beacon in gone.sorted(by: { $0.description < $1.description }) {
            published[beacon] = nil
            let (held, keeps) = (room(beacon), kept(beacon))
            // Retained with a room in them: rewritten when the room lets it go (or it moves).
            if held != nil, keeps { clearedInRoom.insert(beacon) } else { clearedInRoom.remove(beacon) }
            messages += Self.unranged(beacon, room: held, topics: topics, kept: keeps)
        }
        return messages
    }

    /// Whether a ranging's last delivery listed `beacon`.
    func isListed(_ beacon: BeaconIdentity) -> Bool {
        listings[beacon] != nil
    }

    /// The messages for a ranging update of `beacons` at `time`: each beacon's distance and
    /// attributes (with its room, `room`), and with ``mqttRoom`` an `mqtt_room` message on its
    /// room's topic whose distance is the one `roomDistance` gives for that room's scanner (nil:
    /// none this time). That scanner's own estimate, not the beacon's distance from whichever
    /// scanner puts it nearest now: while the room held on (its hysteresis) and another scanner
    /// read it nearer, the room's topic carried the other scanner's smaller distance, and Home
    /// Assistant's `mqtt_room`, which takes a new room only with a smaller distance than the
    /// last one, then ignored the move to that scanner's room until its timeout. Without
    /// `roomDistance`, the beacon's distance.
    ///
    /// ```swift
    /// tracker.messages(for: beacons, at: now, room: { manager.nearestScanner(for: $0) },
    ///                  roomDistance: { manager.rangedDistance(of: $0, from: $1, ranging: constraint, label: label) })
    /// ```
    public mutating func messages(for beacons: [Beacon], at time: Timestamp, room: (BeaconIdentity) -> String?,
                                  roomDistance: ((BeaconIdentity, String) -> Double?)? = nil) -> [PresenceMessage] {
        var messages: [PresenceMessage] = []
        for beacon in beacons where beacon.isHeard && beacon.accuracy >= 0 && beacon.accuracy.isFinite {
            let nearest = room(beacon.identity)
            if let last = published[beacon.identity], abs(last.distance - beacon.accuracy) < minimumChange,
               last.room == nearest, time - last.time < refreshInterval {
                continue
            }
            published[beacon.identity] = Published(distance: beacon.accuracy, room: nearest, time: time)
            // Its attributes say where it is again (and a departure now clears it whole).
            clearedInRoom.remove(beacon.identity)
            if published.count >= sweepAt {
                // (A beacon a delivery still lists stays: its departure needs the entry.)
                published = published.filter { time - $0.value.time < refreshInterval || isListed($0.key) }
                sweepAt = max(Self.minimumSweep, published.count * 2)
            }
            let distance = JSONLine.number(beacon.accuracy, decimals: 2)
            messages.append(PresenceMessage(topic: topics.beaconDistance(beacon.identity), text: distance, qos: 0, retain: true))
            var attributes = JSONLine()
            attributes.addIdentity(beacon.identity)
            attributes.add("rssi", beacon.rssi)
            attributes.add("proximity", beacon.proximity.rawValue)
            attributes.addRaw("distance", json: distance)
            if let nearest { attributes.add("room", nearest) }
            // Eddystone-TLM of the transmitter: flat attributes for Home Assistant templates.
            if let telemetry = beacon.telemetry {
                if let mV = telemetry.batteryMillivolts { attributes.add("battery_mv", Int(mV)) }
                if let temperature = telemetry.temperature { attributes.add("temperature", temperature, decimals: 2) }
                if let uptime = telemetry.uptime { attributes.add("uptime", uptime, decimals: 1) }
            }
            messages.append(PresenceMessage(topic: topics.beaconAttributes(beacon.identity), text: attributes.text, qos: 0, retain: true))
            if mqttRoom, let nearest {
                let distanceInRoom: String
                if let roomDistance {
                    guard let metres = roomDistance(beacon.identity, nearest), metres >= 0, metres.isFinite else { continue }
                    distanceInRoom = JSONLine.number(metres, decimals: 2)
                } else {
                    distanceInRoom = distance
                }
                var payload = JSONLine()
                // ESPresense's id for the beacon (`iBeacon:<uuid>-<major>-<minor>`…): Home
                // Assistant's mqtt_room matches it against a sensor's `device_id`, so a sensor set
                // up for an ESPresense node follows RegionKit's topic unchanged.
                payload.add("id", ESPresenseMessage.id(for: beacon.identity))
                payload.add("name", HomeAssistantDiscovery.beaconName(beacon.identity))
                payload.addRaw("distance", json: distanceInRoom)
                messages.append(PresenceMessage(topic: topics.mqttRoom + "/" + PresenceTopics.roomLevel(nearest), text: payload.text, qos: 0, retain: false))
            }
        }
        return messages
    }
}
