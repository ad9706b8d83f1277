import Foundation
import Testing
@testable import RegionKitEngine

@Suite("Ranging (spec §3)")
struct RangingTests {
    static let constraint = try! BeaconIdentityConstraint(uuid: Fixture.uuid)

    @Test("§3 a delivery every 1 s while ranging, even when no beacon is in range")
    func deliveriesEverySecondEvenEmpty() {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startRanging(Self.constraint, label: "hall", at: Timestamp(seconds: 2))
        let events = engine.advance(to: Timestamp(seconds: 7.5))
        #expect(events.rangings.map(\.time) == [3, 4, 5, 6, 7])
        #expect(events.rangings.allSatisfy { $0.beacons.isEmpty })
        #expect(events.allSatisfy { $0.regionIdentifier == "hall" })
        _ = engine.stopRanging(Self.constraint, at: Timestamp(seconds: 7.5))
        #expect(engine.advance(to: Timestamp(seconds: 20)).isEmpty)
    }

    @Test("A beacon heard by two scanners is ranged from the nearer one's readings, not a mix of both; when that one stops hearing it, from the other's; one scanner alone as before")
    func rangedFromTheNearestScanner() throws {
        let profile = MonitoringProfile.coreLocation   // 5 s moving average, retention 10 s
        var engine = Fixture.engine(profile)
        _ = engine.startRanging(Self.constraint, label: "hall", at: .zero)
        let beacon = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 2)
        // Office hears it at −50 dBm, the garage at −92 (measured power −59 both), every 0.5 s.
        var sightings: [BeaconObservation] = []
        for t in stride(from: 0.1, to: 4.0, by: 0.5) {
            sightings.append(Fixture.seen(beacon, at: t, rssi: -50, scanner: "office"))
            sightings.append(Fixture.seen(beacon, at: t + 0.2, rssi: -92, scanner: "garage"))
        }
        let events = Fixture.feed(&engine, sightings)
        let near = try #require(profile.distanceModel.distance(rssi: -50, measuredPower: -59))
        let delivered = events.rangings.compactMap { $0.beacons.first }
        #expect(delivered.count == 3)
        #expect(delivered.allSatisfy { $0.rssi == -50 && $0.accuracy == near && $0.proximity == .immediate }, "\(delivered)")
        // The office stops hearing it: while its filter still has readings (5 s here; never past
        // the retention) they put the beacon nearest; then the garage's alone.
        var later: [BeaconObservation] = []
        for t in stride(from: 4.7, to: 20.0, by: 0.5) { later.append(Fixture.seen(beacon, at: t, rssi: -92, scanner: "garage")) }
        let far = try #require(profile.distanceModel.distance(rssi: -92, measuredPower: -59))
        let afterwards = Fixture.feed(&engine, later).rangings
        let last = try #require(afterwards.last?.beacons.first)
        #expect(last.accuracy == far && last.rssi == -92 && last.proximity == .far, "\(last)")
        #expect(afterwards.first?.beacons.first?.accuracy == near, "the office's readings count for the retention")

        // One scanner: the interval's mean RSSI and the filter's distance (the mean of −60 and −70), as before.
        var single = Fixture.engine(profile)
        _ = single.startRanging(Self.constraint, label: "hall", at: .zero)
        let one = Fixture.feed(&single, [Fixture.seen(beacon, at: 0.2, rssi: -60), Fixture.seen(beacon, at: 0.6, rssi: -70)]
                                          + [Fixture.seen(beacon, at: 1.2, rssi: -65)]).rangings
        #expect(one.first?.beacons.first?.rssi == -65 && one.first?.beacons.first?.accuracy == profile.distanceModel.distance(rssi: -65, measuredPower: -59))
    }

    /// Labels of ranging deliveries, with their first beacon's RSSI.
    static func labelled(_ events: [LocationEvent]) -> [(label: String, time: Double, count: Int)] {
        events.compactMap { event in
            if case .didRangeBeacons(let beacons, _, let label) = event.kind { return (label, event.timestamp.seconds, beacons.count) }
            return nil
        }
    }

    @Test("Two regions inside ranging one constraint share the helper's session, each getting its deliveries under its own identifier: the first one stopped or leaving does not end the other's ranging")
    func sharedAutomaticSession() throws {
        let beacon = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 2)
        var engine = Fixture.engine(.responsive, automation: Automation(rangeWhileInside: true))
        let a = Region.beacon(try BeaconRegion(identifier: "A", uuid: Fixture.uuid))
        let b = Region.beacon(try BeaconRegion(identifier: "B", uuid: Fixture.uuid))
        _ = engine.startMonitoring(contentsOf: [a, b], at: .zero)
        let both = Self.labelled(Fixture.feed(&engine, Fixture.stream(beacon, from: 0.5, to: 5.1, every: 0.5)))
        #expect(engine.rangingSessions.map(\.label) == ["A"], "one session for the constraint")
        // Both are ranged: B's deliveries come from A's session (isRanging through its owners).
        let constraint = try BeaconIdentityConstraint(uuid: Fixture.uuid)
        #expect(engine.isRanging(constraint, label: "A") && engine.isRanging(constraint, label: "B"))
        let majorOne = try BeaconIdentityConstraint(uuid: Fixture.uuid, major: 1)
        #expect(!engine.isRanging(constraint, label: "C") && !engine.isRanging(majorOne, label: "A"))
        // Each region inside gets its delivery under its own identifier, at the same times.
        #expect(both.filter { $0.label == "A" }.map(\.time) == both.filter { $0.label == "B" }.map(\.time), "\(both)")
        #expect(both.count >= 8 && both.allSatisfy { $0.count == 1 }, "\(both)")
        _ = engine.stopMonitoring(identifier: "A", at: Timestamp(seconds: 5.2))
        let after = Fixture.feed(&engine, Fixture.stream(beacon, from: 5.5, to: 10.1, every: 0.5))
        // Before: the session stopped with A, and B (still inside) got no delivery until its next crossing.
        #expect(engine.rangingSessions.map(\.label) == ["B"])
        #expect(!engine.isRanging(constraint, label: "A") && engine.isRanging(constraint, label: "B"))
        let deliveries = Self.labelled(after)
        #expect(deliveries.count >= 4 && deliveries.allSatisfy { $0.label == "B" && $0.count == 1 }, "\(deliveries)")
        // B leaves too: the session stops.
        _ = engine.stopMonitoring(identifier: "B", at: Timestamp(seconds: 10.2))
        #expect(engine.rangingSessions.isEmpty)
        #expect(!engine.isRanging(constraint, label: "B"))
    }

    @Test("The app ranging two regions of one constraint gets each its deliveries under its own identifier; stopping one leaves the other ranging (before: the second start was swallowed by the first's session and its stop ended both)")
    func appRangesTwoRegionsOfOneConstraint() throws {
        let beacon = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 2)
        var engine = Fixture.engine(.responsive)
        let hall = try BeaconRegion(identifier: "hall", uuid: Fixture.uuid)
        let lobby = try BeaconRegion(identifier: "lobby", uuid: Fixture.uuid)
        _ = engine.startRanging(hall.constraint, label: hall.identifier, at: .zero)
        _ = engine.startRanging(lobby.constraint, label: lobby.identifier, at: .zero)
        #expect(engine.isRanging(hall.constraint, label: "hall") && engine.isRanging(lobby.constraint, label: "lobby"))
        let both = Self.labelled(Fixture.feed(&engine, Fixture.stream(beacon, from: 0.5, to: 5.1, every: 0.5)))
        let inHall = both.filter { $0.label == "hall" }, inLobby = both.filter { $0.label == "lobby" }
        #expect(inHall.count == 5 && inHall.allSatisfy { $0.count == 1 }, "\(both)")
        #expect(inLobby.map(\.time) == inHall.map(\.time) && inLobby.allSatisfy { $0.count == 1 }, "\(both)")
        // The app stops the hall's ranging: the lobby's goes on, under the lobby's identifier.
        _ = engine.stopRanging(hall.constraint, scannerID: nil, label: "hall", at: Timestamp(seconds: 5.2))
        #expect(!engine.isRanging(hall.constraint, label: "hall") && engine.isRanging(lobby.constraint, label: "lobby"))
        let after = Self.labelled(Fixture.feed(&engine, Fixture.stream(beacon, from: 5.5, to: 10.1, every: 0.5)))
        #expect(after.count == 5 && after.allSatisfy { $0.label == "lobby" && $0.count == 1 }, "\(after)")
        // Stopping a label that does not range it changes nothing; stopping the lobby ends the session.
        _ = engine.stopRanging(hall.constraint, scannerID: nil, label: "hall", at: Timestamp(seconds: 10.2))
        _ = engine.stopRanging(hall.constraint, scannerID: "other-node", label: "lobby", at: Timestamp(seconds: 10.2))
        #expect(engine.rangingSessions.map(\.label) == ["lobby"])
        _ = engine.stopRanging(lobby.constraint, scannerID: nil, label: "lobby", at: Timestamp(seconds: 10.3))
        #expect(engine.rangingSessions.isEmpty && engine.advance(to: Timestamp(seconds: 20)).isEmpty)
    }

    @Test("The app and the helper share a session: the app's label gets its deliveries beside the region inside (before: only the helper's region's identifier was delivered); the app's claim outlives the region's exit, the helper's outlives the app's stop")
    func appAndHelperShareASession() throws {
        let beacon = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 2)
        let hall = Region.beacon(try BeaconRegion(identifier: "hall", uuid: Fixture.uuid))
        let constraint = try BeaconIdentityConstraint(uuid: Fixture.uuid)

        // The helper ranges the hall (inside); the app starts ranging "kiosk", same constraint.
        var engine = Fixture.engine(.responsive, automation: Automation(rangeWhileInside: true))
        _ = engine.startMonitoring(hall, at: .zero)
        _ = Fixture.feed(&engine, Fixture.stream(beacon, from: 0.5, to: 2.1, every: 0.5))
        #expect(engine.rangingSessions.map(\.label) == ["hall"] && engine.rangingSessions.first?.automatic == true)
        _ = engine.startRanging(constraint, label: "kiosk", at: Timestamp(seconds: 2.2))
        #expect(engine.rangingSessions.count == 1 && engine.rangingSessions.first?.automatic == false)
        let shared = Self.labelled(Fixture.feed(&engine, Fixture.stream(beacon, from: 2.5, to: 6.1, every: 0.5)))
        #expect(shared.filter { $0.label == "kiosk" }.count >= 3, "\(shared)")
        #expect(shared.filter { $0.label == "kiosk" }.map(\.time) == shared.filter { $0.label == "hall" }.map(\.time), "\(shared)")
        // The hall leaves (silence): the app's kiosk ranging goes on, now under its own label alone.
        let events = engine.advance(to: Timestamp(seconds: 80))
        #expect(events.summary.contains("didExitRegion:hall"), "\(events.summary)")
        #expect(engine.rangingSessions.map(\.label) == ["kiosk"] && !engine.isRanging(constraint, label: "hall"))
        #expect(Self.labelled(events).last?.label == "kiosk")

        // The other way round: the app's stop leaves the helper's region inside ranging.
        var other = Fixture.engine(.responsive, automation: Automation(rangeWhileInside: true))
        _ = other.startMonitoring(hall, at: .zero)
        _ = other.startRanging(constraint, label: "kiosk", at: .zero)
        _ = Fixture.feed(&other, Fixture.stream(beacon, from: 0.5, to: 2.1, every: 0.5))
        #expect(other.rangingSessions.count == 1 && other.rangingSessions.first?.label == "kiosk", "the app started it first")
        _ = other.stopRanging(constraint, scannerID: nil, label: "kiosk", at: Timestamp(seconds: 2.2))
        #expect(other.rangingSessions.map(\.label) == ["hall"] && other.rangingSessions.first?.automatic == true)
        let later = Self.labelled(Fixture.feed(&other, Fixture.stream(beacon, from: 2.5, to: 5.1, every: 0.5)))
        #expect(later.count >= 2 && later.allSatisfy { $0.label == "hall" && $0.count == 1 }, "\(later)")
        // The app ranging the region the helper ranges, under the same identifier: the region's
        // exit ends the helper's claim, not the app's.
        _ = other.startRanging(constraint, label: "hall", at: Timestamp(seconds: 5.2))
        _ = other.advance(to: Timestamp(seconds: 80))
        #expect(other.state(of: "hall") == .outside && other.rangingSessions.map(\.label) == ["hall"])
        #expect(other.rangingSessions.first?.automatic == false)
    }

    @Test("The beacon source lost: each label sharing a session gets its didFailRanging (only the first did); the app's start and stop of a region's ranging leave the helper ranging the region still inside (it stopped it)")
    func sharedSessionFailuresAndStops() throws {
        let beacon = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 2)
        let constraint = try BeaconIdentityConstraint(uuid: Fixture.uuid)
        var engine = Fixture.engine(.responsive)
        _ = engine.startRanging(constraint, label: "hall", at: .zero)
        _ = engine.startRanging(constraint, label: "lobby", at: .zero)
        let failed = engine.setSourceStatus(.denied(reason: "adapter off"), for: .beacon, at: Timestamp(seconds: 1.5)).compactMap { event -> String? in
            if case .didFailRanging(_, let label, _) = event.kind { return label }
            return nil
        }
        #expect(failed == ["hall", "lobby"])

        // The usual app pattern on a region the helper ranges while inside.
        let hall = Region.beacon(try BeaconRegion(identifier: "hall", uuid: Fixture.uuid))
        var helped = Fixture.engine(.responsive, automation: Automation(rangeWhileInside: true))
        _ = helped.startMonitoring(hall, at: .zero)
        _ = Fixture.feed(&helped, Fixture.stream(beacon, from: 0.5, to: 2.1, every: 0.5))
        _ = helped.startRanging(constraint, label: "hall", at: Timestamp(seconds: 2.2))
        _ = helped.stopRanging(constraint, scannerID: nil, label: "hall", at: Timestamp(seconds: 2.3))
        #expect(helped.state(of: "hall") == .inside && helped.isRanging(constraint, label: "hall"))
        #expect(helped.rangingSessions.first?.automatic == true, "the helper's again")
        let deliveries = Self.labelled(Fixture.feed(&helped, Fixture.stream(beacon, from: 2.5, to: 5.1, every: 0.5)))
        #expect(deliveries.count >= 2 && deliveries.allSatisfy { $0.label == "hall" && $0.count == 1 }, "\(deliveries)")
        #expect(helped.rangingSessionsWithLabels.map(\.labels) == [["hall"]])
        // Stopping the constraint still ends every ranging of it, the helper's included (Core Location's stop).
        _ = helped.stopRanging(constraint, at: Timestamp(seconds: 5.2))
        #expect(helped.rangingSessions.isEmpty)
    }

    @Test("A room the app ranges on its scanner and the helper ranges from every scanner: the distance from another scanner is the every-scanner session's (it was the scanner-bound one's: none)")
    func labelWithTwoSessionsReadsEveryScanners() throws {
        let beacon = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 2)
        let kitchen = try BeaconRegion(identifier: "kitchen", constraint: BeaconIdentityConstraint(uuid: Fixture.uuid), scannerID: "k-node")
        var engine = Fixture.engine(.responsive, automation: Automation(rangeWhileInside: true))
        _ = engine.startMonitoring(.beacon(kitchen), at: .zero)
        _ = engine.startRanging(kitchen.constraint, label: "kitchen", scannerID: "k-node", at: .zero)
        var sightings: [BeaconObservation] = []
        for t in stride(from: 0.5, to: 4.1, by: 0.5) {
            sightings.append(Fixture.seen(beacon, at: t, rssi: -60, scanner: "k-node"))
            sightings.append(Fixture.seen(beacon, at: t + 0.1, rssi: -50, scanner: "hall-node"))
        }
        _ = Fixture.feed(&engine, sightings)
        #expect(engine.rangingSessions.map { $0.scannerID ?? "*" } == ["k-node", "*"])
        #expect(engine.rangedDistance(of: beacon, from: "hall-node", ranging: kitchen.constraint, label: "kitchen") != nil)
        #expect(engine.rangedDistance(of: beacon, from: "k-node", ranging: kitchen.constraint, label: "kitchen") != nil)
    }

    @Test("The app ranging a region bound to a scanner gets that scanner's sightings only; stopping the constraint stops it; the helper ranges every scanner for bound rooms, shared, and one room leaving leaves the other ranging")
    func scannerBoundRanging() throws {
        let beacon = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 2)
        // The app ranges the kitchen; only the garage hears the beacon.
        var engine = Fixture.engine(.responsive)
        let kitchen = try BeaconRegion(identifier: "kitchen", constraint: BeaconIdentityConstraint(uuid: Fixture.uuid), scannerID: "kitchen-node")
        _ = engine.startRanging(kitchen.constraint, label: kitchen.identifier, scannerID: kitchen.scannerID, at: .zero)
        _ = engine.startRanging(kitchen.constraint, label: "anywhere", at: .zero)
        #expect(engine.rangedConstraints == [kitchen.constraint], "one constraint, listed once")
        var garage: [BeaconObservation] = []
        for t in stride(from: 0.5, to: 5.1, by: 0.5) { garage.append(Fixture.seen(beacon, at: t, rssi: -55, scanner: "garage-node")) }
        let heard = Self.labelled(Fixture.feed(&engine, garage))
        let inKitchen = heard.filter { $0.label == "kitchen" }, anywhere = heard.filter { $0.label == "anywhere" }
        #expect(inKitchen.count >= 4 && inKitchen.allSatisfy { $0.count == 0 }, "the garage's beacon is not the kitchen's: \(inKitchen)")
        #expect(anywhere.count >= 4 && anywhere.allSatisfy { $0.count == 1 }, "\(anywhere)")
        _ = engine.stopRanging(kitchen.constraint, scannerID: "kitchen-node", at: Timestamp(seconds: 5.2))
        #expect(engine.rangingSessions.map(\.label) == ["anywhere"])
        _ = engine.startRanging(kitchen.constraint, label: kitchen.identifier, scannerID: kitchen.scannerID, at: Timestamp(seconds: 5.3))
        _ = engine.stopRanging(kitchen.constraint, at: Timestamp(seconds: 5.4))
        #expect(engine.rangingSessions.isEmpty, "stopping a constraint stops it from every scanner")

        // The helper: kitchen and hall, same UUID, each bound to its node, share one session of
        // every scanner's sightings. The kitchen's node stops hearing the beacon at 4.5 s; the hall's goes on.
        var rooms = Fixture.engine(.responsive, automation: Automation(rangeWhileInside: true))
        let hall = try BeaconRegion(identifier: "hall", constraint: BeaconIdentityConstraint(uuid: Fixture.uuid), scannerID: "hall-node")
        _ = rooms.startMonitoring(contentsOf: [.beacon(kitchen), .beacon(hall)], at: .zero)
        var both: [BeaconObservation] = []
        for t in stride(from: 0.5, to: 60.0, by: 0.5) {
            if t < 4.6 { both.append(Fixture.seen(beacon, at: t, rssi: -60, scanner: "kitchen-node")) }
            both.append(Fixture.seen(beacon, at: t + 0.1, rssi: -70, scanner: "hall-node"))
        }
        let events = Fixture.feed(&rooms, both)
        #expect(events.summary.contains("didExitRegion:kitchen"), "\(events.summary)")
        #expect(rooms.state(of: "hall") == .inside)
        #expect(rooms.rangingSessions.map(\.label) == ["hall"], "the shared session goes on under the hall")
        #expect(rooms.rangingSessions.first?.scannerID == nil)
        let lastHall = Self.labelled(events).last { $0.label == "hall" }
        #expect(lastHall.map { $0.time > 59 && $0.count == 1 } == true, "\(String(describing: lastHall))")
    }

    @Test("A sighting with an RSSI no radio reports (outside −127…20 dBm) is ignored: Int.max used to trap in the next ranging delivery")
    func impossibleRSSIIgnored() throws {
        var engine = Fixture.engine(.responsive, automation: Automation(requestStateOnStart: true))
        let region = Region.beacon(try BeaconRegion(identifier: "hall", uuid: Fixture.uuid))
        _ = engine.startMonitoring(region, at: .zero)
        _ = engine.startRanging(Self.constraint, label: "hall", at: .zero)
        let beacon = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 2)
        let events = Fixture.feed(&engine, [Fixture.seen(beacon, at: 0.5, rssi: .max), Fixture.seen(beacon, at: 0.6, rssi: .min),
                                            Fixture.seen(beacon, at: 0.7, rssi: 21), Fixture.seen(beacon, at: 0.8, rssi: -128)])
            + engine.advance(to: Timestamp(seconds: 1.5))
        #expect(events.rangings.count == 1 && events.rangings[0].beacons.isEmpty, "\(events.rangings)")
        #expect(engine.state(of: "hall") != .inside)
        // The range's ends are readings.
        let edges = Fixture.feed(&engine, [Fixture.seen(beacon, at: 1.6, rssi: 20), Fixture.seen(beacon, at: 1.7, rssi: -127)])
            + engine.advance(to: Timestamp(seconds: 2.5))
        #expect(edges.rangings.last?.beacons.count == 1)
        #expect(engine.state(of: "hall") == .inside)
    }

    @Test("A clock jump longer than 60 intervals skips the missed deliveries, then resumes every second (found by the engine fuzz target: a 10^6 s jump made a million events)")
    func clockJumpDoesNotReplayEveryMissedDelivery() {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startRanging(Self.constraint, label: "hall", at: .zero)
        let beacon = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 1)
        _ = Fixture.feed(&engine, Fixture.stream(beacon, from: 0.1, to: 0.9, every: 0.1))
        let jump = engine.advance(to: Timestamp(seconds: 86_400.5))
        // The delivery due first (1 s) reports the beacon heard before the jump; the 86,398 missed
        // ones are skipped; one delivery at the last interval before the new time (86,400 s).
        #expect(jump.rangings.map(\.time) == [1, 86_400])
        #expect(jump.rangings.first?.beacons.map(\.identity) == [beacon])
        #expect(jump.rangings.last?.beacons.isEmpty == true, "the beacon is no longer listed a day later")
        // Then once a second again.
        #expect(engine.advance(to: Timestamp(seconds: 86_403.5)).rangings.map(\.time) == [86_401, 86_402, 86_403])
        // An advance within the catch-up bound still delivers every interval.
        var steady = Fixture.engine(.coreLocation)
        _ = steady.startRanging(Self.constraint, at: .zero)
        #expect(steady.advance(to: Timestamp(seconds: 60.5)).rangings.count == 60)
    }

    @Test("A clock where the ranging interval no longer moves a Double (1e16 s, 1.8e308 s): a bounded number of deliveries per advance, not an endless loop (engine fuzz finding: out of memory)",
          arguments: [1e16, Double.greatestFiniteMagnitude])
    func hugeTime(_ huge: Double) {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startRanging(Self.constraint, at: .zero)
        let first = engine.advance(to: Timestamp(seconds: huge))
        #expect(first.rangings.count <= MonitoringEngine.maximumRangingCatchUp + 2)
        #expect(engine.now == Timestamp(seconds: huge))
        #expect(engine.advance(to: Timestamp(seconds: huge)).rangings.count <= 1)
        #expect(engine.advance(to: Timestamp(seconds: huge.nextUp)).rangings.count <= 1)
    }

    @Test("A sighting or an advance at a non-finite time counts at the engine's time: no endless timer loop (engine fuzz finding: NaN made every ranging timer due for ever)", arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteTime(_ bad: Double) {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startRanging(Self.constraint, at: .zero)
        _ = engine.advance(to: Timestamp(seconds: 2.5))
        let beacon = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 1)
        #expect(engine.ingest(Fixture.seen(beacon, at: bad, rssi: -60)).isEmpty)
        #expect(engine.advance(to: Timestamp(seconds: bad)).isEmpty)
        #expect(engine.now == Timestamp(seconds: 2.5))
        let next = engine.advance(to: Timestamp(seconds: 3))
        #expect(next.rangings.map(\.time) == [3])
        #expect(next.rangings.first?.beacons.map(\.identity) == [beacon], "the sighting counted at 2.5 s")
        // The ranged beacon carries that time too, not the NaN (engine fuzz finding: the ranging
        // event was unequal to itself).
        #expect(next.rangings.first?.beacons.map(\.timestamp) == [Timestamp(seconds: 2.5)])
    }

    @Test("§3 beacons sorted nearest first, unknown last; accuracy from the distance curve; proximity classes")
    func sortingAndEstimates() {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startRanging(Self.constraint, at: .zero)
        let near = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 1)
        let far = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 2)
        let immediate = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 3)
        let silent = BeaconIdentity(uuid: Fixture.uuid, major: 1, minor: 4)
        _ = engine.ingest(Fixture.seen(silent, at: 0.05, rssi: -70))
        _ = engine.advance(to: Timestamp(seconds: 1.5))
        for t in stride(from: 1.6, to: 2.0, by: 0.1) {
            _ = engine.ingest(Fixture.seen(far, at: t, rssi: -80))
            _ = engine.ingest(Fixture.seen(near, at: t, rssi: -62))
            _ = engine.ingest(Fixture.seen(immediate, at: t, rssi: -45))
        }
        let delivery = engine.advance(to: Timestamp(seconds: 2)).rangings.last!.beacons
        #expect(delivery.map(\.identity) == [immediate, near, far, silent])
        #expect(delivery.map(\.proximity) == [.immediate, .near, .far, .unknown])
        // The curve: 0.89976 · (rssi/power)^7.7095 + 0.111, (rssi/power)^10 below a ratio of 1.
        let expectedFar = 0.89976 * pow(80.0 / 59.0, 7.7095) + 0.111
        let expectedImmediate = pow(45.0 / 59.0, 10)
        #expect(abs(delivery[2].accuracy - expectedFar) < 1e-9)
        #expect(abs(delivery[0].accuracy - expectedImmediate) < 1e-9)
        #expect(delivery[2].rssi == -80)
        #expect(delivery[3].rssi == 0 && delivery[3].accuracy == -1)
    }

    @Test("§3 a silent beacon stays listed with rssi 0, accuracy −1, unknown, then disappears (~10 s, Core Location)")
    func silentBeaconRetention() {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startRanging(Self.constraint, at: .zero)
        let events = Fixture.feed(&engine, Fixture.stream(Fixture.a, from: 0.1, to: 5, every: 0.1)) + engine.advance(to: Timestamp(seconds: 25))
        let listed = events.rangings.filter { !$0.beacons.isEmpty }
        let heard = listed.filter { $0.beacons[0].isHeard }.map(\.time)
        let silent = listed.filter { !$0.beacons[0].isHeard }
        #expect(heard == [1, 2, 3, 4, 5])
        #expect(silent.allSatisfy { $0.beacons[0].accuracy == -1 && $0.beacons[0].proximity == .unknown && $0.beacons[0].rssi == 0 })
        // Last heard at 4.9 s; listed while now − 4.9 ≤ 10 s → last listed at 14 s, gone from 15 s.
        #expect(silent.map(\.time).last == 14)
        let dropAfter = (events.rangings.first { $0.time > 5 && $0.beacons.isEmpty }?.time ?? 0) - 4.9
        #expect(dropAfter > 9 && dropAfter < 11, "count drops \(dropAfter) s after leaving (spec §2: ~10 s)")
    }

    @Test("A scanner reporting a beacon every few seconds (an ESPresense node, a gateway's aggregates) keeps it listed between its reports, for 2.5 times its mean gap (it was dropped and listed again at every report under the 5 s retention); a 10 Hz scanner's beacon is still dropped after the profile's 5 s; the learned retention stops at the exit detector's longest silence",
          arguments: [5.3, 8.0, 20.0])
    func slowReporterStaysListed(cadence: Double) throws {
        let profile = MonitoringProfile.responsive   // retention 5 s, exit detector's cap 60 s
        var engine = Fixture.engine(profile)
        _ = engine.startRanging(Self.constraint, label: "hall", at: .zero)
        // The node reports the still beacon every `cadence` seconds for three minutes.
        let reports = stride(from: 0.4, to: 180, by: cadence).map { Fixture.seen(Fixture.a, at: $0, rssi: -70, scanner: "kitchen") }
        let events = Fixture.feed(&engine, reports) + engine.advance(to: Timestamp(seconds: 180))
        // Before its second report the node's cadence is unknown (the 5 s retention holds); from
        // then on the beacon stays listed. (With a reading dropped at the retention, an 8 s or 20 s
        // node could never learn its cadence: every report started afresh.)
        let afterSecond = events.rangings.filter { $0.time > 0.4 + cadence + 1 }
        #expect(afterSecond.allSatisfy { $0.beacons.count == 1 }, "listed between reports: \(afterSecond.filter { $0.beacons.isEmpty }.map(\.time))")
        let reading = try #require(engine.rangingSessions.first?.tracks[Fixture.a]?.readings.first)
        #expect(abs(reading.meanGap - cadence) < 1e-6)
        #expect(abs(reading.retention(under: profile) - max(5, 2.5 * cadence)) < 1e-6)
        // The node stops reporting: dropped after its learned retention, not 5 s.
        let last = try #require(reports.last).timestamp.seconds
        // (In steps: a jump of more than 60 intervals skips the deliveries in between.)
        let silent = stride(from: 200.0, through: 300, by: 20).flatMap { engine.advance(to: Timestamp(seconds: $0)) }.rangings
        let lastListed = try #require(silent.last { $0.beacons.count == 1 }).time
        #expect(lastListed == (last + 2.5 * cadence).rounded(.down), "listed while now − \(last) ≤ \(2.5 * cadence)")
        #expect(engine.rangingSessions.first?.tracks.isEmpty == true, "forgotten after the exit detector's 60 s")
    }

    @Test("A 10 Hz scanner's beacon is dropped after the profile's 5 s, as before; after one long dropout its learned retention is back to 5 s within a few sightings; a scanner heard every 45 s keeps it for the detector's 60 s, not 112.5")
    func fastAndRareReporters() throws {
        let profile = MonitoringProfile.responsive
        var fast = Fixture.engine(profile)
        _ = fast.startRanging(Self.constraint, label: "hall", at: .zero)
        var heard = Fixture.feed(&fast, Fixture.stream(Fixture.a, from: 0.05, to: 10, every: 0.1))
        // A 30 s dropout, then 2 s of sightings again.
        heard += Fixture.feed(&fast, Fixture.stream(Fixture.a, from: 40, to: 42, every: 0.1)) + fast.advance(to: Timestamp(seconds: 60))
        #expect(heard.rangings.last { $0.beacons.count == 1 }?.time == 46, "last heard ≈ 41.95 s: listed while now − 41.95 ≤ 5")
        #expect(heard.rangings.filter { $0.time > 15 && $0.time < 40 }.allSatisfy { $0.beacons.isEmpty }, "dropped during the dropout")

        var rare = RangingSession.Reading(scannerID: "attic", measuredPower: -59, lastHeard: .zero)
        rare.noteSighting(at: Timestamp(seconds: 45))
        #expect(rare.meanGap == 45 && rare.retention(under: profile) == 60)
        rare.lastHeard = Timestamp(seconds: 45)
        rare.noteSighting(at: Timestamp(seconds: 46))
        let runningMean: Double = 45 + 0.25 * (1 - 45)
        #expect(rare.meanGap == runningMean, "a running mean of the gaps")
    }

    @Test("A beacon heard by two nodes reporting every 5 s is ranged from the nearer one at every delivery, between its reports too (its 3 s filter window is empty then: the distance swung to the farther node's and back every 5 s)")
    func slowReportersRangedFromTheNearerNode() throws {
        let profile = MonitoringProfile.responsive   // 3 s moving average
        var engine = Fixture.engine(profile)
        _ = engine.startRanging(Self.constraint, label: "home", at: .zero)
        // The office hears it at −62 dBm, the hallway at −72, each every 5 s, 2.5 s apart.
        var reports: [BeaconObservation] = []
        for t in stride(from: 0.4, to: 60, by: 5) {
            reports.append(Fixture.seen(Fixture.a, at: t, rssi: -62, scanner: "office"))
            reports.append(Fixture.seen(Fixture.a, at: t + 2.5, rssi: -72, scanner: "hallway"))
        }
        let events = Fixture.feed(&engine, reports) + engine.advance(to: Timestamp(seconds: 62))
        let office = try #require(profile.distanceModel.distance(rssi: -62, measuredPower: -59))
        // From the office's second report on (its cadence known), every delivery that lists a
        // measured beacon gives the office's distance.
        let settled = events.rangings.filter { $0.time > 6 }.compactMap(\.beacons.first)
        #expect(settled.count == 56)
        let heard = settled.filter(\.isHeard)
        #expect(heard.count >= 20 && heard.allSatisfy { $0.accuracy == office }, "\(settled.map(\.accuracy))")
        // /v1/beacons and the hub read the track's nearest scanner at any moment: the office's too.
        // (At 62 s the office's last report, at 55.4 s, is out of its window; the hallway's, at 57.9 s, is in.)
        let track = try #require(engine.rangingSessions.first?.tracks[Fixture.a])
        #expect(track.nearest(at: Timestamp(seconds: 62), profile: profile)?.reading.scannerID == "office")
    }

    @Test("§3 the reported RSSI is the mean of the interval; accuracy uses the filtered RSSI")
    func intervalMeanRSSI() {
        var engine = Fixture.engine(.coreLocation)
        _ = engine.startRanging(Self.constraint, at: .zero)
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 0.2, rssi: -60))
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 0.4, rssi: -70))
        let first = engine.advance(to: Timestamp(seconds: 1)).rangings[0].beacons[0]
        #expect(first.rssi == -65)
        #expect(first.timestamp == Timestamp(seconds: 0.4))
    }

    @Test("Ranging without a usable scanner fails with didFailRanging")
    func rangingWithoutSource() {
        var engine = Fixture.engine(sources: [:])
        let events = engine.startRanging(Self.constraint, at: .zero)
        #expect(events.map(\.typeName) == ["didFailRanging"])
        #expect(engine.rangedConstraints.isEmpty)
    }

    @Test("rangeWhileInside starts ranging on inside and stops on outside (spec §2 pattern)")
    func rangeWhileInside() {
        var engine = Fixture.engine(.coreLocation, automation: Automation(requestStateOnStart: true, rangeWhileInside: true))
        _ = engine.startMonitoring(Fixture.region("lobby"), at: .zero)
        _ = engine.ingest(Fixture.seen(Fixture.a, at: 0.5))
        #expect(engine.rangedConstraints.count == 1)
        let events = engine.advance(to: Timestamp(seconds: 100))
        let exit = events.of("didExitRegion").first!.timestamp
        #expect(engine.rangedConstraints.isEmpty)
        #expect(!engine.isRanging(Fixture.region("lobby").beaconRegion!.constraint, label: "lobby"), "its ranging ended with the exit")
        #expect(events.rangings.first?.time == 1.5)
        #expect(events.rangings.last!.time < exit.seconds + 0.001, "no delivery after the exit")
    }
}

@Suite("Distance models, RSSI filters, exit detectors")
struct ModelTests {
    @Test func iosCurve() {
        let model = CurveDistanceModel.coreLocation
        #expect(abs(model.distance(rssi: -59, measuredPower: -59)! - (0.89976 + 0.111)) < 1e-12)
        #expect(abs(model.distance(rssi: -30, measuredPower: -59)! - pow(30.0 / 59.0, 10)) < 1e-12)
        #expect(model.distance(rssi: 0, measuredPower: -59) == nil)
        #expect(model.distance(rssi: -70, measuredPower: 0) == nil)
    }

    @Test func androidCurve() {
        let d = CurveDistanceModel.androidNexus5.distance(rssi: -75, measuredPower: -59)!
        #expect(abs(d - (0.42093 * pow(75.0 / 59.0, 6.9476) + 0.54992)) < 1e-12)
    }

    @Test func logDistance() {
        #expect(abs(LogDistanceModel(exponent: 2.7).distance(rssi: -86, measuredPower: -59)! - 10) < 1e-9)
        #expect(abs(LogDistanceModel(exponent: 2).distance(rssi: -59, measuredPower: -59)! - 1) < 1e-12)
    }

    @Test func proximityThresholds() {
        let thresholds = ProximityThresholds(immediate: 0.5, near: 3)
        #expect(thresholds.proximity(forAccuracy: 0.2) == .immediate)
        #expect(thresholds.proximity(forAccuracy: 0.5) == .near)
        #expect(thresholds.proximity(forAccuracy: 2.99) == .near)
        #expect(thresholds.proximity(forAccuracy: 3) == .far)
        #expect(thresholds.proximity(forAccuracy: -1) == .unknown)
        #expect(thresholds.proximity(forAccuracy: .nan) == .unknown)
    }

    @Test func movingAverageForgetsOldSamples() {
        var state = RSSIFilterState()
        let filter = RSSIFilter.movingAverage(window: 2)
        filter.add(-90, at: Timestamp(seconds: 0), to: &state)
        filter.add(-70, at: Timestamp(seconds: 1.5), to: &state)
        filter.add(-60, at: Timestamp(seconds: 2.5), to: &state)
        #expect(filter.value(of: state, at: Timestamp(seconds: 2.5)) == -65)
        #expect(filter.value(of: state, at: Timestamp(seconds: 10)) == nil)
        #expect(state.samples.count == 2, "samples outside the window are dropped")
    }

    @Test func trimmedMeanDropsOutliers() {
        var state = RSSIFilterState()
        let filter = RSSIFilter.trimmedMean(window: 20, trimFraction: 0.1)
        for (index, rssi) in [-70.0, -70, -70, -70, -70, -70, -70, -70, -70, -20].enumerated() {
            filter.add(rssi, at: Timestamp(seconds: Double(index)), to: &state)
        }
        #expect(filter.value(of: state, at: Timestamp(seconds: 9)) == -70)
    }

    @Test func exponentialHalfLife() {
        var state = RSSIFilterState()
        let filter = RSSIFilter.exponential(halfLife: 1)
        filter.add(-80, at: Timestamp(seconds: 0), to: &state)
        filter.add(-60, at: Timestamp(seconds: 1), to: &state)
        #expect(abs(filter.value(of: state, at: Timestamp(seconds: 1))! - -70) < 1e-9)
    }

    @Test func adaptiveThresholdFollowsTheStreamRate() {
        let detector = ExitDetector.adaptive(falseExitProbability: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
        var fast = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        for step in 1...200 { fast.record(at: Timestamp(seconds: Double(step) * 0.1)) }
        #expect(abs(fast.meanInterval - 0.1) < 0.01)
        #expect(abs(detector.silenceThreshold(for: fast) - 0.1 * log(1e4)) < 0.1)
        var slow = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        for step in 1...200 { slow.record(at: Timestamp(seconds: Double(step) * 5)) }
        #expect(abs(detector.silenceThreshold(for: slow) - 5 * log(1e4)) < 1)
        var glacial = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
        for step in 1...50 { glacial.record(at: Timestamp(seconds: Double(step) * 30)) }
        #expect(detector.silenceThreshold(for: glacial) == 60, "clamped to the maximum")
    }

    @Test func fixedSilenceOnAGrid() {
        let detector = ExitDetector.fixedSilence(seconds: 30, evaluationInterval: 10)
        let stream = ReceptionEstimator(firstSighting: Timestamp(seconds: 12.3), priorInterval: 30)
        #expect(detector.goneDeadline(for: stream, gridOrigin: Timestamp(seconds: 2)) == Timestamp(seconds: 52))
        #expect(ExitDetector.fixedSilence(seconds: 30, evaluationInterval: nil).goneDeadline(for: stream, gridOrigin: .zero) == Timestamp(seconds: 42.3))
    }
}
