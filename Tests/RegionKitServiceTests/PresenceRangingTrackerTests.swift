import Foundation
import RegionKit
import RegionKitCore
import Testing
@testable import RegionKitService

/// The tracker fed whole deliveries: a beacon no ranging lists any more has its distance cleared.
@Suite("Presence ranging tracker: beacons no ranging lists any more")
struct PresenceRangingTrackerTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let (a, b, c) = (BeaconIdentity(uuid: uuid, major: 1, minor: 1), BeaconIdentity(uuid: uuid, major: 1, minor: 2),
                            BeaconIdentity(uuid: uuid, major: 2, minor: 1))
    static let topics = PresenceTopics(site: "home")
    static let any = try! BeaconIdentityConstraint(uuid: uuid)
    static let majorOne = try! BeaconIdentityConstraint(uuid: uuid, major: 1)

    static func heard(_ identity: BeaconIdentity, _ accuracy: Double = 2) -> Beacon {
        Beacon(identity: identity, proximity: .near, accuracy: accuracy, rssi: -70, timestamp: .zero)
    }

    /// Listed after its retention has not passed yet: unknown, no distance.
    static func unheard(_ identity: BeaconIdentity) -> Beacon {
        Beacon(identity: identity, proximity: .unknown, accuracy: -1, rssi: 0, timestamp: .zero)
    }

    /// (topic, text, retained) of each message, for comparing whole sequences.
    static func sent(_ messages: [PresenceMessage]) -> [String] {
        messages.map { "\($0.topic) \($0.text.isEmpty ? "<empty>" : $0.text)\($0.retain ? " retained" : "")" }
    }

    static func cleared(_ identity: BeaconIdentity, attributes: String = #"{"room":"not_home"}"#) -> [String] {
        ["\(topics.beaconDistance(identity)) None retained", "\(topics.beaconAttributes(identity)) \(attributes) retained"]
    }

    @Test("Dropped from the only delivery that listed it: distance None and attributes not_home, once; still listed unheard: kept; a beacon whose distance never went out: nothing; heard again: its distance at once")
    func droppedFromTheDelivery() {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        let noRoom: (BeaconIdentity) -> String? = { _ in nil }
        func deliver(_ beacons: [Beacon], at seconds: Double) -> [PresenceMessage] {
            tracker.messages(for: beacons, ranging: Self.any, label: "lobby", at: Timestamp(seconds: seconds), room: noRoom)
        }
        #expect(deliver([Self.heard(Self.a), Self.heard(Self.b), Self.unheard(Self.c)], at: 1).count == 4, "a's and b's distance and attributes")
        // a falls silent: listed as unknown for the ranging retention, its distance kept meanwhile.
        #expect(deliver([Self.heard(Self.b), Self.unheard(Self.a), Self.unheard(Self.c)], at: 2).isEmpty)
        // a and c dropped: a's distance cleared; c's never went out, so nothing of it.
        #expect(Self.sent(deliver([Self.heard(Self.b)], at: 3)) == Self.cleared(Self.a))
        #expect(deliver([Self.heard(Self.b)], at: 4).isEmpty, "once")
        #expect(deliver([Self.heard(Self.a), Self.heard(Self.b)], at: 5).count == 2, "heard again: published at once")
        // An empty delivery drops every beacon (in a stable order).
        #expect(Self.sent(deliver([], at: 6)) == Self.cleared(Self.a) + Self.cleared(Self.b))
        #expect(tracker.listed.isEmpty && tracker.published.isEmpty)
    }

    @Test("A beacon another ranging still lists is not cleared when one drops it; cleared when the last one does, with its room when a room still holds it; kept false removes the topics")
    func listedElsewhere() {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        let room: (BeaconIdentity) -> String? = { $0 == Self.a ? "hall" : nil }
        _ = tracker.messages(for: [Self.heard(Self.a), Self.heard(Self.b)], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 1), room: room)
        _ = tracker.messages(for: [Self.heard(Self.a)], ranging: Self.majorOne, label: "wing", at: Timestamp(seconds: 1), room: room)
        // The lobby drops both: b goes; a is still the wing's.
        #expect(Self.sent(tracker.messages(for: [], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 2), room: room,
                                           kept: { _ in false }))
                == ["\(Self.topics.beaconDistance(Self.b)) None", "\(Self.topics.beaconDistance(Self.b)) <empty> retained",
                    "\(Self.topics.beaconAttributes(Self.b)) {\"room\":\"not_home\"}", "\(Self.topics.beaconAttributes(Self.b)) <empty> retained"])
        // The wing drops it: its distance goes, its room (still placed) stays in the attributes.
        #expect(Self.sent(tracker.messages(for: [], ranging: Self.majorOne, label: "wing", at: Timestamp(seconds: 3), room: room))
                == Self.cleared(Self.a, attributes: #"{"room":"hall"}"#))
    }

    @Test("Cleared while a room held it: its attributes follow the room (moved) and say not_home when the room lets it go, once; ranged again meanwhile, or cleared not retained: the room's changes add nothing")
    func clearedInARoom() {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        var rooms: [BeaconIdentity: String] = [Self.a: "kitchen", Self.b: "hall", Self.c: "hall"]
        let room = { (beacon: BeaconIdentity) in rooms[beacon] }
        _ = tracker.messages(for: [Self.heard(Self.a), Self.heard(Self.b), Self.heard(Self.c)], ranging: Self.any, label: "lobby",
                             at: Timestamp(seconds: 1), room: room)
        // The ranging drops all three while their rooms still hold them (c's departure not retained).
        #expect(Self.sent(tracker.messages(for: [], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 2), room: room,
                                           kept: { $0 != Self.c })).count == 2 + 2 + 4, "c: sent, then its topics removed")
        // a moves to the hall unranged (a region removed while it stays around): its attributes follow.
        #expect(Self.sent(tracker.moved(Self.a, to: "hall")) == ["\(Self.topics.beaconAttributes(Self.a)) {\"room\":\"hall\"} retained"])
        // The rooms let a and c go: a's attributes say not_home (its distance is None already), once.
        rooms = [Self.b: "hall"]
        #expect(Self.sent(tracker.unplaced(Self.a)) == ["\(Self.topics.beaconAttributes(Self.a)) {\"room\":\"not_home\"} retained"])
        #expect(tracker.unplaced(Self.a).isEmpty, "once")
        #expect(tracker.moved(Self.a, to: "hall").isEmpty, "placed nowhere since: its next distance says where")
        #expect(tracker.unplaced(Self.c).isEmpty, "its topics were removed at its departure: nothing names the hall")
        // b ranged again: its attributes name its room once more; its departure clears it whole.
        rooms[Self.b] = "kitchen"
        #expect(tracker.messages(for: [Self.heard(Self.b)], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 3), room: room).count == 2)
        #expect(tracker.moved(Self.b, to: "kitchen").isEmpty)
        #expect(Self.sent(tracker.unplaced(Self.b)) == Self.cleared(Self.b))
        #expect(tracker.clearedInRoom.isEmpty)
    }

    @Test("Rangings that ended: their beacons listed by no other ranging are cleared, once; the same label of another constraint is another ranging")
    func rangingEnded() {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        let noRoom: (BeaconIdentity) -> String? = { _ in nil }
        _ = tracker.messages(for: [Self.heard(Self.a), Self.heard(Self.c)], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 1), room: noRoom)
        _ = tracker.messages(for: [Self.heard(Self.a)], ranging: Self.majorOne, label: "lobby", at: Timestamp(seconds: 1), room: noRoom)
        #expect(tracker.rangingEnded(where: { _, _ in false }, room: noRoom).isEmpty, "nothing ended")
        let ended = tracker.rangingEnded(where: { constraint, label in constraint == Self.any && label == "lobby" }, room: noRoom)
        #expect(Self.sent(ended) == Self.cleared(Self.c), "a is still listed by the major's ranging")
        #expect(tracker.rangingEnded(where: { constraint, _ in constraint == Self.any }, room: noRoom).isEmpty, "once")
        #expect(Self.sent(tracker.rangingEnded(where: { _, _ in true }, room: noRoom)) == Self.cleared(Self.a))
        #expect(tracker.listed.isEmpty)
    }

    @Test("A beacon a delivery still lists (unheard for longer than the refresh interval) survives the table's sweep, so its drop still clears it")
    func sweepKeepsListedBeacons() {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        let noRoom: (BeaconIdentity) -> String? = { _ in nil }
        _ = tracker.messages(for: [Self.heard(Self.a)], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 1), room: noRoom)
        _ = tracker.messages(for: [Self.unheard(Self.a)], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 2), room: noRoom)
        // Strangers through another path until the table is swept, long after a's last distance.
        var minor: UInt16 = 0
        while tracker.sweepAt == PresenceRangingTracker.minimumSweep {
            minor += 1
            _ = tracker.messages(for: [Self.heard(BeaconIdentity(uuid: Self.uuid, major: 9, minor: minor))], at: Timestamp(seconds: 100), room: noRoom)
        }
        #expect(tracker.published[Self.a] != nil, "swept while listed")
        #expect(Self.sent(tracker.messages(for: [], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 101), room: noRoom)) == Self.cleared(Self.a))
    }
}

extension PresenceRangingTrackerTests {
    @Test("An earlier run's beacons: cleared when still only assumed and listed by no ranging; one this run published or a ranging lists is left to its ranging")
    func leftoverDepartures() {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        let room: (BeaconIdentity) -> String? = { $0 == Self.b ? "hall" : nil }
        tracker.assumePublished([Self.a, Self.b, Self.c])
        // c ranged again by this run; b listed (unheard) by a delivery; a nowhere.
        _ = tracker.messages(for: [Self.heard(Self.c), Self.unheard(Self.b)], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 1), room: room)
        #expect(Self.sent(tracker.leftoverDepartures(of: [Self.a, Self.b, Self.c], room: room)) == Self.cleared(Self.a))
        #expect(tracker.leftoverDepartures(of: [Self.a], room: room).isEmpty, "once")
        // b dropped later: cleared then, with its room.
        #expect(Self.sent(tracker.messages(for: [Self.heard(Self.c)], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 2), room: room))
                == Self.cleared(Self.b, attributes: #"{"room":"hall"}"#))
    }

    @Test("Distances found retained: those this run published are no leftovers; the rest count as published and are leftovers, once ranged again no longer")
    func adoptRetained() {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        let noRoom: (BeaconIdentity) -> String? = { _ in nil }
        // a's distance went out in this run before the scan found it retained.
        #expect(tracker.messages(for: [Self.heard(Self.a)], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 1), room: noRoom).count == 2)
        #expect(tracker.adoptRetained([Self.a, Self.b, Self.c]) == [Self.b, Self.c])
        // b counts as published: its first distance goes out at once, and it is no leftover any more.
        #expect(tracker.messages(for: [Self.heard(Self.a), Self.heard(Self.b)], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 2), room: noRoom).count == 2)
        #expect(tracker.adoptRetained([Self.b, Self.c]) == [Self.c], "found again: c still only assumed")
        #expect(Self.sent(tracker.leftoverDepartures(of: [Self.b, Self.c], room: noRoom)) == Self.cleared(Self.c))
    }

    @Test("The scan reads a beacon from the site's own distance topics only, and numbers only")
    func scanTopics() {
        let base = Self.topics.base
        #expect(RetainedDistanceScan.beacon(distanceTopic: Self.topics.beaconDistance(Self.a), base: base) == Self.a)
        #expect(RetainedDistanceScan.beacon(distanceTopic: Self.topics.beaconAttributes(Self.a), base: base) == nil)
        #expect(RetainedDistanceScan.beacon(distanceTopic: PresenceTopics(site: "other").beaconDistance(Self.a), base: base) == nil)
        #expect(RetainedDistanceScan.beacon(distanceTopic: base + "/beacons//distance", base: base) == nil)
        #expect(RetainedDistanceScan.beacon(distanceTopic: base + "/beacons/x/y/distance", base: base) == nil)
        #expect(RetainedDistanceScan.beacon(distanceTopic: base + "/beacons/E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-1-1/distance", base: base) == nil,
                "not the exact key form")
        #expect(RetainedDistanceScan.isDistance(Array("2.35".utf8)) && RetainedDistanceScan.isDistance(Array("0".utf8)))
        for payload in ["None", "", "nan", "inf", "1e999", "2.5 m", String(repeating: "1", count: 40)] {
            #expect(!RetainedDistanceScan.isDistance(Array(payload.utf8)), "\(payload)")
        }
    }

    @Test("Rangings stopped for want of a source clear nothing: their beacons listed nowhere else become assumed, published again at once when ranged, cleared as leftovers otherwise")
    func rangingSuspended() {
        var tracker = PresenceRangingTracker(topics: Self.topics, mqttRoom: false)
        let noRoom: (BeaconIdentity) -> String? = { _ in nil }
        _ = tracker.messages(for: [Self.heard(Self.a), Self.heard(Self.b), Self.unheard(Self.c)], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 1), room: noRoom)
        _ = tracker.messages(for: [Self.heard(Self.b)], ranging: Self.majorOne, label: "wing", at: Timestamp(seconds: 1), room: noRoom)
        // The lobby's ranging stops with its source: a (and c, never published) listed nowhere else; b still the wing's.
        #expect(tracker.rangingSuspended(where: { _, label in label == "lobby" }) == [Self.a])
        #expect(tracker.listings == [Self.b: 1] && tracker.listed.count == 1)
        #expect(tracker.published[Self.a]?.isAssumed == true && tracker.published[Self.b]?.isAssumed == false)
        // a ranged again: its distance at once (even unchanged), and no longer a leftover.
        #expect(tracker.messages(for: [Self.heard(Self.a)], ranging: Self.any, label: "lobby", at: Timestamp(seconds: 5), room: noRoom).count == 2)
        #expect(tracker.leftoverDepartures(of: [Self.a], room: noRoom).isEmpty)
        // Suspended again and not ranged: cleared as a leftover.
        #expect(tracker.rangingSuspended(where: { _, _ in true }) == [Self.a, Self.b])
        #expect(tracker.listed.isEmpty && tracker.listings.isEmpty)
        #expect(Self.sent(tracker.leftoverDepartures(of: [Self.a, Self.b], room: noRoom)) == Self.cleared(Self.a) + Self.cleared(Self.b))
    }
}
