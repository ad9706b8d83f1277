import Foundation
import Testing
@testable import RegionKitEngine

/// ``RangingSessionTable`` against the array of sessions it replaced, operated as the engine did:
/// the same sessions in the same order, the same sightings recorded by each, the same delivery
/// due next (ties to the session started first) after every random start, stop, helper stop,
/// sighting and delivery; and through the engine, ranging while inside over many regions.
@Suite("Ranging sessions: identical to the array they replaced")
struct RangingSessionTableTests {
    static let uuids = [UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, UUID(uuidString: "11111111-2222-3333-4444-555555555555")!]
    static let namespace: [UInt8] = [0x8b, 0x0c, 0xa7, 0x50, 0xe7, 0xa7, 0x4e, 0x14, 0xbd, 0x99]
    static let instances: [[UInt8]] = [[0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 2]]

    /// Every kind of constraint: UUID, UUID+major, exact, AltBeacon, Eddystone namespace and
    /// namespace+instance, and one the three keys of a sighting cannot reach (an Eddystone
    /// instance's major without its minor: only a decoded constraint can be that).
    static func constraints() throws -> [BeaconIdentityConstraint] {
        var all: [BeaconIdentityConstraint] = []
        for uuid in uuids {
            all.append(try BeaconIdentityConstraint(uuid: uuid))
            for major in UInt16(0)..<2 {
                all.append(try BeaconIdentityConstraint(uuid: uuid, major: major))
                for minor in UInt16(0)..<2 { all.append(try BeaconIdentityConstraint(uuid: uuid, major: major, minor: minor)) }
            }
        }
        all.append(try BeaconIdentityConstraint(uuid: uuids[0], major: 1, format: .altBeacon))
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        all.append(try BeaconIdentityConstraint(eddystoneNamespace: hex(namespace)))
        all.append(try BeaconIdentityConstraint(eddystoneNamespace: hex(namespace), instance: hex(instances[0])))
        let full = BeaconIdentity(eddystoneNamespace: namespace, instance: instances[1])!.uuid
        let irregular = try JSONDecoder().decode(BeaconIdentityConstraint.self,
                                                 from: Data(#"{"uuid":"\#(full.uuidString)","major":0,"format":"eddystone-uid"}"#.utf8))
        #expect(!RangingSessionTable.isRegular(irregular))
        all.append(irregular)
        return all
    }

    static func identities() -> [BeaconIdentity] {
        var all: [BeaconIdentity] = []
        for uuid in uuids {
            for major in UInt16(0)..<3 {
                for minor in UInt16(0)..<3 { all.append(BeaconIdentity(uuid: uuid, major: major, minor: minor)) }
            }
        }
        all.append(BeaconIdentity(uuid: uuids[0], major: 1, minor: 0, format: .altBeacon))
        for instance in instances { all.append(BeaconIdentity(eddystoneNamespace: namespace, instance: instance)!) }
        return all
    }

    @Test func randomOperationsMatchTheArray() throws {
        let constraints = try Self.constraints(), identities = Self.identities()
        let profile = MonitoringProfile.responsive
        var random = SystemRandomNumberGenerator()
        for round in 0..<30 {
            var table = RangingSessionTable()
            var model: [RangingSession] = []
            /// The labels sharing each session of `model`, by index: (label, the app's claim, the helper's).
            var owners: [[(label: String, app: Bool, helper: Bool)]] = []
            /// `model[index]` after an owner left: stopped with its last, else under its first.
            func settle(_ index: Int) {
                if let next = owners[index].first {
                    model[index].label = next.label
                    model[index].automatic = !owners[index].contains { $0.app }
                } else {
                    model.remove(at: index)
                    owners.remove(at: index)
                }
            }
            let scanners: [String?] = [nil, "kitchen", "hall"]
            var now = Timestamp.zero
            for step in 0..<1_500 {
                let context = "round \(round), step \(step)"
                let roll = Double.random(in: 0..<1, using: &random)
                if roll < 0.2 {
                    // beginRanging: a new session, or a second label sharing one (the helper's or the
                    // app's claim, on a session either started).
                    let constraint = constraints.randomElement(using: &random)!
                    let scanner = scanners.randomElement(using: &random)!
                    let automatic = Bool.random(using: &random)
                    let label = "r\(Int.random(in: 0..<6, using: &random))"
                    if let index = model.firstIndex(where: { $0.constraint == constraint && $0.scannerID == scanner }) {
                        if let owner = owners[index].firstIndex(where: { $0.label == label }) {
                            if automatic { owners[index][owner].helper = true } else { owners[index][owner].app = true }
                        } else {
                            owners[index].append((label, !automatic, automatic))
                        }
                        if !automatic { model[index].automatic = false }
                        let slot = try #require(table.slot(of: constraint, scannerID: scanner), "\(context)")
                        table.claim(slot: slot, label: label, byApp: !automatic)
                        #expect(table.owners(slot: slot) == owners[index].map(\.label), "\(context)")
                    } else {
                        #expect(table.slot(of: constraint, scannerID: scanner) == nil, "\(context)")
                        let session = RangingSession(constraint: constraint, label: label, scannerID: scanner, startedAt: now, interval: 1,
                                                     automatic: automatic)
                        model.append(session)
                        owners.append([(label, !automatic, automatic)])
                        table.start(session)
                    }
                } else if roll < 0.27 {
                    // stopRanging
                    let constraint = constraints.randomElement(using: &random)!
                    let scanner = scanners.randomElement(using: &random)!
                    if let index = model.firstIndex(where: { $0.constraint == constraint && $0.scannerID == scanner }) {
                        model.remove(at: index)
                        owners.remove(at: index)
                    }
                    if let slot = table.slot(of: constraint, scannerID: scanner) { table.remove(slot: slot) }
                } else if roll < 0.3 {
                    // The app stops one label's ranging of a constraint from a scanner: the app's
                    // claim ends (a helper's claim under the label stays); the others go on.
                    let constraint = constraints.randomElement(using: &random)!
                    let scanner = scanners.randomElement(using: &random)!
                    let label = "r\(Int.random(in: 0..<6, using: &random))"
                    if let index = model.firstIndex(where: { $0.constraint == constraint && $0.scannerID == scanner }),
                       let owner = owners[index].firstIndex(where: { $0.label == label }) {
                        if owners[index][owner].helper {
                            owners[index][owner].app = false
                        } else {
                            owners[index].remove(at: owner)
                        }
                        settle(index)
                    }
                    if let slot = table.slot(of: constraint, scannerID: scanner, label: label) { table.removeOwner(label: label, slot: slot) }
                } else if roll < 0.34 {
                    // A region left: it gives up the helper's claims it holds; a claim the app also
                    // made stays; sessions left without an owner stop, the others are reported under
                    // their first owner.
                    let label = "r\(Int.random(in: 0..<6, using: &random))"
                    for index in model.indices.reversed() {
                        guard let owner = owners[index].firstIndex(where: { $0.label == label && $0.helper }) else { continue }
                        if owners[index][owner].app {
                            owners[index][owner].helper = false
                        } else {
                            owners[index].remove(at: owner)
                            settle(index)
                        }
                    }
                    table.removeAutomatic(label: label)
                } else if roll < 0.345 {
                    model.removeAll()
                    owners.removeAll()
                    table.removeAll()
                } else if roll < 0.8 {
                    // A sighting; the clock moves by whole and half seconds, so deliveries tie.
                    now = now + Double(Int.random(in: 0...2, using: &random)) * 0.5
                    let observation = BeaconObservation(identity: identities.randomElement(using: &random)!,
                                                        rssi: Int.random(in: -90 ... -40, using: &random), timestamp: now,
                                                        scannerID: scanners.randomElement(using: &random)!)
                    for index in model.indices where model[index].accepts(observation.identity, scanner: observation.scannerID) {
                        model[index].record(observation, filter: profile.rssiFilter)
                    }
                    table.record(observation, filter: profile.rssiFilter)
                } else {
                    // The delivery due first (the array's scan: earliest, then first started).
                    var first: Int?
                    for index in model.indices where first == nil || model[index].nextDelivery < model[first!].nextDelivery { first = index }
                    let next = table.next
                    #expect((next == nil) == (first == nil), "\(context)")
                    if let first, let next {
                        #expect(next.time == model[first].nextDelivery, "\(context)")
                        #expect(table[slot: next.slot] == model[first], "\(context)")
                        now = Timestamp(seconds: max(now.seconds, next.time.seconds))
                        let expected = model[first].deliver(at: now, profile: profile)
                        let delivered = table.update(slot: next.slot) { $0.deliver(at: now, profile: profile) }
                        #expect(delivered == expected, "\(context)")
                    }
                }
                #expect(table.count == model.count, "\(context)")
                for (index, session) in model.enumerated() {
                    let slot = table.slot(of: session.constraint, scannerID: session.scannerID)
                    #expect(slot.map { table.owners(slot: $0) } == owners[index].map(\.label), "\(context)")
                }
                if step % 50 == 0 || step == 1_499 {
                    #expect(table.inStartOrder == model, "\(context)")
                }
            }
        }
    }

    /// The daemon's default helpers over 2,000 beacon regions: every region inside ranges, every
    /// delivery names one region and lists its beacon, and leaving stops exactly that region's
    /// session; a region registered again under its identifier loses its session.
    @Test func rangingWhileInsideOverManyRegions() throws {
        let uuid = Self.uuids[0]
        var engine = MonitoringEngine(profile: .responsive, automation: .all, sources: [.beacon: .authorized])
        let n = 2_000
        let regions = try (0..<n).map { try BeaconRegion(identifier: "b\($0)", uuid: uuid, major: UInt16($0 / 1000), minor: UInt16($0 % 1000)) }
        _ = engine.startMonitoring(contentsOf: regions.map(Region.beacon), at: .zero)
        var deliveries: [(label: String, beacons: [Beacon])] = []
        func collect(_ events: [LocationEvent]) {
            for event in events {
                if case .didRangeBeacons(let beacons, _, let label) = event.kind { deliveries.append((label, beacons)) }
            }
        }
        for second in 0..<5 {
            for index in 0..<n {
                // Second 0 enters each region (its session starts at that sighting, which it
                // records); later ones fall a quarter second after each delivery, so each of the
                // first five intervals holds one sighting.
                let t = Double(second) + Double(index) / Double(n) + (second == 0 ? 0 : 0.25)
                collect(engine.ingest(BeaconObservation(identity: BeaconIdentity(uuid: uuid, major: UInt16(index / 1000), minor: UInt16(index % 1000)),
                                                        rssi: -60, timestamp: Timestamp(seconds: t))))
            }
        }
        #expect(engine.rangingSessions.count == n)
        #expect(engine.rangingSessions.map(\.label) == (0..<n).map { "b\($0)" }, "start order: the order the regions entered")
        collect(engine.advance(to: Timestamp(seconds: 5.99999)))
        #expect(deliveries.count == 5 * n, "five deliveries per session, at its start + 1…5 s")
        #expect(Dictionary(grouping: deliveries, by: \.label).allSatisfy { $0.value.count == 5 })
        #expect(deliveries.allSatisfy { $0.beacons.count == 1 && $0.beacons[0].rssi == -60 })
        // Half the beacons go quiet: their regions exit and their sessions stop.
        for second in 6..<100 {
            for index in stride(from: 0, to: n, by: 2) {
                _ = engine.ingest(BeaconObservation(identity: BeaconIdentity(uuid: uuid, major: UInt16(index / 1000), minor: UInt16(index % 1000)),
                                                    rssi: -61, timestamp: Timestamp(seconds: Double(second) + Double(index) / Double(n))))
            }
        }
        #expect(engine.rangingSessions.map(\.label) == stride(from: 0, to: n, by: 2).map { "b\($0)" })
        // Replacing a region inside drops its helper's session (it starts again when the new one is inside).
        _ = engine.startMonitoring(.beacon(regions[0]), at: Timestamp(seconds: 100))
        #expect(!engine.rangingSessions.contains { $0.label == "b0" })
        #expect(engine.rangingSessions.count == n / 2 - 1)
    }
}
