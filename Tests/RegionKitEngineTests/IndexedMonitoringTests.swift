import Foundation
import Testing
@testable import RegionKitEngine

/// The engine tests fixes only against circular regions near them (spatial index) plus the ones
/// that must always be evaluated (unknown, inside, crossing pending, restored). These property
/// tests drive that engine and a brute-force reference (`usesSpatialIndex = false`: every region
/// evaluated on every fix, every region scanned for timers) with the same seeded random inputs —
/// noisy random walks with accuracy swings, teleports, gaps, no-fix reports, and regions added,
/// moved, stopped and restored on the way — and require identical events, states and deadlines
/// after every step.
@Suite("Spatial index in the engine: identical to brute force")
struct IndexedMonitoringTests {
    struct Area {
        var name: String
        var latitude: Double
        var longitude: Double
    }

    /// A city, one straddling the antimeridian, one near the North Pole.
    static let areas = [
        Area(name: "city", latitude: 48.8566, longitude: 2.3522),
        Area(name: "antimeridian", latitude: -16.5, longitude: 179.995),
        Area(name: "polar", latitude: 89.97, longitude: 30),
    ]

    static func point(near area: Area, within metres: Double, _ rng: inout SeededRandom) -> (latitude: Double, longitude: Double) {
        Geodesy.destination(latitude: area.latitude, longitude: area.longitude,
                            distance: metres * Double.random(in: 0...1, using: &rng).squareRoot(),
                            bearing: Double.random(in: 0..<360, using: &rng))
    }

    static func randomRegion(_ id: String, near area: Area, _ rng: inout SeededRandom) -> Region {
        let centre = point(near: area, within: 3_000, &rng)
        let radius: Double
        switch Int.random(in: 0..<40, using: &rng) {
        case 0: radius = 0
        case 1: radius = Double.random(in: 3_000...6_000, using: &rng)   // covers the whole area
        default: radius = exp(Double.random(in: log(15.0)...log(600.0), using: &rng))
        }
        // Longitudes may come out as exactly ±180 across the antimeridian: both are valid.
        let circle = try! CircularRegion(identifier: id, latitude: centre.latitude, longitude: centre.longitude, radius: radius,
                                         notifyOnEntry: Int.random(in: 0..<8, using: &rng) != 0,
                                         notifyOnExit: Int.random(in: 0..<8, using: &rng) != 0)
        return .circular(circle)
    }

    /// Records without `lastDistance`, which the indexed engine does not refresh for skipped regions.
    static func records(_ engine: MonitoringEngine) -> [MonitoredRegion] {
        engine.monitoredRegions.compactMap { region in
            var record = engine.monitoredRegion(region.identifier)
            record?.lastDistance = nil
            return record
        }
    }

    /// Runs `steps` random inputs through an indexed engine and a brute-force one; returns the
    /// number of enter/exit events seen (so a run that never crosses anything is noticed).
    static func compare(profile: MonitoringProfile, automation: Automation, area: Area, seed: UInt64,
                        regionCount: Int, steps: Int) -> (crossings: Int, evaluatedFraction: Double, rested: Int) {
        var rng = SeededRandom(seed: seed)
        var indexed = MonitoringEngine(profile: profile, automation: automation, sources: [.circular: .authorized])
        var brute = indexed
        brute.usesSpatialIndex = false
        var crossings = 0
        var evaluated = 0, possible = 0, rested = 0
        var t = 0.0
        func apply(_ label: String, _ body: (inout MonitoringEngine) -> [LocationEvent]) -> Bool {
            let a = body(&indexed)
            let b = body(&brute)
            crossings += a.filter { if case .didEnterRegion = $0.kind { true } else if case .didExitRegion = $0.kind { true } else { false } }.count
            guard a == b else {
                Issue.record("\(area.name) seed \(seed) t=\(t) \(label): indexed \(a.summary) vs brute \(b.summary)")
                return false
            }
            guard records(indexed) == records(brute), indexed.nextDeadline == brute.nextDeadline else {
                Issue.record("\(area.name) seed \(seed) t=\(t) \(label): states or deadlines differ")
                return false
            }
            // Inside regions are evaluated on every fix or rest (their distance computed when
            // read): either way each holds brute force's distance to the last fix, to the bit.
            for region in brute.monitoredRegions where brute.state(of: region.identifier) == .inside {
                let a = indexed.monitoredRegion(region.identifier)?.lastDistance, b = brute.monitoredRegion(region.identifier)?.lastDistance
                if a?.bitPattern != b?.bitPattern {
                    Issue.record("\(area.name) seed \(seed) t=\(t) \(label): inside \(region.identifier)'s distance \(String(describing: a)) vs brute \(String(describing: b))")
                    return false
                }
            }
            return true
        }
        for i in 0..<regionCount {
            let region = randomRegion("r\(i)", near: area, &rng)
            guard apply("start r\(i)", { $0.startMonitoring(region, at: Timestamp(seconds: t)) }) else { return (crossings, 0, rested) }
        }
        var position = point(near: area, within: 3_000, &rng)
        var heading = Double.random(in: 0..<360, using: &rng)
        var speed = 5.0
        var nextID = regionCount
        for _ in 0..<steps {
            let roll = Int.random(in: 0..<1000, using: &rng)
            t += [0.5, 1, 1, 1, 2, 3, 7].randomElement(using: &rng)!
            let time = Timestamp(seconds: t)
            let ok: Bool
            switch roll {
            case 0..<10:     // a gap: timers fire with no fix
                t += Double.random(in: 5...40, using: &rng)
                ok = apply("advance", { $0.advance(to: Timestamp(seconds: t)) })
            case 10..<20:    // register a new region or move an existing one (same identifier)
                let id = Bool.random(using: &rng) ? "r\(nextID)" : "r\(Int.random(in: 0..<nextID, using: &rng))"
                nextID += 1
                let region = randomRegion(id, near: area, &rng)
                ok = apply("start \(id)", { $0.startMonitoring(region, at: time) })
            case 20..<26:
                let id = "r\(Int.random(in: 0..<nextID, using: &rng))"
                ok = apply("stop \(id)", { $0.stopMonitoring(identifier: id, at: time) })
            case 26..<32:    // a restart restored a region with some stored state
                let region = randomRegion("r\(Int.random(in: 0..<nextID, using: &rng))", near: area, &rng)
                let state = [RegionState.inside, .outside, .unknown].randomElement(using: &rng)!
                ok = apply("restore \(region.identifier) \(state)", { $0.restore(region, state: state, since: time, at: time) })
            case 38..<40:    // the hysteresis changed (resting regions were put to rest under the old one)
                let buffer = [0.0, 5, 10, 40, 100].randomElement(using: &rng)!
                ok = apply("minimumBuffer \(buffer)", { engine in
                    engine.profile.geoHysteresis.minimumBuffer = buffer
                    return []
                })
            case 32..<38:
                let ids = indexed.monitoredRegions
                guard let region = ids.randomElement(using: &rng) else { continue }
                ok = apply("requestState \(region.identifier)", { $0.requestState(for: region, at: time) })
            case 40..<55:    // location unavailable
                let fix = LocationFix(timestamp: time, latitude: position.latitude, longitude: position.longitude, mode: .noFix)
                ok = apply("noFix", { $0.ingest(fix) })
            default:
                // Walk: wandering heading, speed from standing still to driving, rare teleports
                // (far away, then back into the area), plus position noise and accuracy swings.
                if roll >= 985 {
                    position = Int.random(in: 0..<2, using: &rng) == 0
                        ? Geodesy.destination(latitude: area.latitude, longitude: area.longitude, distance: 20_000, bearing: Double.random(in: 0..<360, using: &rng))
                        : point(near: area, within: 3_000, &rng)
                } else {
                    heading += Double.random(in: -40...40, using: &rng)
                    speed = min(20, max(0, speed + Double.random(in: -2...2, using: &rng)))
                    position = Geodesy.destination(latitude: position.latitude, longitude: position.longitude, distance: speed, bearing: heading)
                }
                let noise = [0.0, 2, 5, 10, 30, 80].randomElement(using: &rng)!
                let reported = Geodesy.destination(latitude: position.latitude, longitude: position.longitude,
                                                   distance: Double.random(in: 0...noise, using: &rng), bearing: Double.random(in: 0..<360, using: &rng))
                let accuracy: Double? = [nil, 3, 5, 10, 25, 60, 150].randomElement(using: &rng)!
                let fix = LocationFix(timestamp: time, latitude: reported.latitude, longitude: reported.longitude, horizontalAccuracy: accuracy)
                possible += indexed.monitoredRegions.count
                // What the fix evaluates once `ingest` has advanced to it (timers due by then fire first).
                var advanced = indexed
                _ = advanced.advance(to: time)
                let toEvaluate = advanced.circularRegionsToEvaluate(for: fix)
                evaluated += toEvaluate.count
                ok = apply("fix \(reported)", { $0.ingest(fix) })
                // The regions the fix evaluated hold the distance brute force computed, to the bit
                // (the indexed engine takes it from the spatial index: longitudes ±180 included).
                // So do the resting regions (not evaluated: their distance is computed when read).
                let restingIDs = indexed.geoResting.members.compactMap { indexSlot -> String? in
                    let slot = Int(indexed.geoRegionSlots[Int(indexSlot)])
                    return slot >= 0 ? indexed.regions[slot: slot]?.region.identifier : nil
                }
                rested += restingIDs.count
                for id in toEvaluate + restingIDs where ok {
                    let a = indexed.monitoredRegion(id)?.lastDistance, b = brute.monitoredRegion(id)?.lastDistance
                    if a?.bitPattern != b?.bitPattern {
                        Issue.record("\(area.name) seed \(seed) t=\(t) fix \(reported): \(id)'s distance \(String(describing: a)) vs brute \(String(describing: b))")
                        return (crossings, 0, rested)
                    }
                }
            }
            if !ok { break }
        }
        return (crossings, possible == 0 ? 0 : Double(evaluated) / Double(possible), rested)
    }

    @Test("both profiles, three areas (city, antimeridian, pole), request-state on and off",
          arguments: ["coreLocation", "responsive"])
    func identicalToBruteForce(profileName: String) {
        let profile = profileName == "responsive" ? MonitoringProfile.responsive : .coreLocation
        var unlimited = profile
        unlimited.regionLimit = nil                      // also stress the Core Location timings with many regions
        var totalCrossings = 0, totalRested = 0
        for (areaIndex, area) in Self.areas.enumerated() {
            for (variant, p) in [profile, unlimited].enumerated() {
                let seed = UInt64(1000 * areaIndex + 10 * variant + (profileName == "responsive" ? 1 : 0))
                let automation = Automation(requestStateOnStart: seed % 2 == 0)
                let result = Self.compare(profile: p, automation: automation, area: area, seed: seed, regionCount: 150, steps: 2_500)
                totalCrossings += result.crossings
                totalRested += result.rested
                if p.regionLimit == nil {
                    // The point of the index: most regions are not evaluated on a fix.
                    #expect(result.evaluatedFraction < 0.5, "\(area.name): evaluated \(result.evaluatedFraction) of the regions per fix")
                }
            }
        }
        #expect(totalCrossings > 100, "the walks should cross many boundaries (\(totalCrossings))")
        #expect(totalRested > 10_000, "inside regions should rest between fixes (\(totalRested) region-fixes)")
        print("IndexedMonitoringTests \(profileName): \(totalCrossings) enter/exit events, \(totalRested) resting region-fixes, identical with and without the index")
    }

    @Test("an inside region far from a fix still exits; idle far regions are not evaluated")
    func insideRegionsAreAlwaysEvaluated() {
        var engine = Fixture.engine(.responsive)
        let home = Region.circular(try! CircularRegion(identifier: "home", latitude: 48.8566, longitude: 2.3522, radius: 100))
        let far = Region.circular(try! CircularRegion(identifier: "far", latitude: 40.0, longitude: -3.0, radius: 100))
        _ = engine.startMonitoring(home, at: .zero)
        _ = engine.startMonitoring(far, at: .zero)
        let inside = LocationFix(timestamp: Timestamp(seconds: 1), latitude: 48.8566, longitude: 2.3522, horizontalAccuracy: 5)
        #expect(engine.circularRegionsToEvaluate(for: inside) == ["home", "far"], "unknown regions are evaluated wherever they are")
        _ = engine.ingest(inside)
        #expect(engine.state(of: "home") == .inside && engine.state(of: "far") == .outside)
        // 10 km away: "far" (outside, nothing pending) is skipped, "home" (inside) is not.
        let away = Geodesy.destination(latitude: 48.8566, longitude: 2.3522, distance: 10_000, bearing: 0)
        var events: [LocationEvent] = []
        for t in 2...10 {
            let fix = LocationFix(timestamp: Timestamp(seconds: Double(t)), latitude: away.latitude, longitude: away.longitude, horizontalAccuracy: 5)
            // Until the exit fires (at 7 s, before that fix is evaluated) "home" is inside.
            #expect(engine.circularRegionsToEvaluate(for: fix) == (t <= 7 ? ["home"] : []), "t=\(t)")
            events += engine.ingest(fix)
        }
        #expect(events.summary == ["didExitRegion:home", "didDetermineState:home:outside"])
        #expect(events.first?.timestamp == Timestamp(seconds: 7), "crossed at 2 s, responsive dwell 5 s")
        let later = LocationFix(timestamp: Timestamp(seconds: 11), latitude: away.latitude, longitude: away.longitude, horizontalAccuracy: 5)
        #expect(engine.circularRegionsToEvaluate(for: later).isEmpty)
        #expect(engine.geoActive.isEmpty)
        // Stopping removes it from the index too (filed there by slot alone).
        let homeSlot = engine.geoIndexSlot(record: engine.regions.slot(of: "home"))
        #expect(homeSlot != nil && engine.circularIndex.isOccupied(slot: homeSlot ?? -1))
        _ = engine.stopMonitoring(identifier: "home", at: Timestamp(seconds: 12))
        #expect(engine.circularIndex.count == 1 && !engine.circularIndex.isOccupied(slot: homeSlot ?? -1))
        #expect(engine.circularIndex.region(atSlot: 0) == nil && engine.circularIndex.allRegions.isEmpty,
                "the engine's index keeps no copy of its regions")
    }

    @Test("a region the device is deep inside rests: not evaluated until the device may have left, its distance still current")
    func deepInsideRegionsRest() {
        var engine = Fixture.engine(.responsive)   // minimum buffer 10 m
        let centre = (latitude: 48.8566, longitude: 2.3522)
        _ = engine.startMonitoring(.circular(try! CircularRegion(identifier: "park", latitude: centre.latitude, longitude: centre.longitude, radius: 200)), at: .zero)
        func fix(_ t: Double, metres: Double) -> LocationFix {
            let p = Geodesy.destination(latitude: centre.latitude, longitude: centre.longitude, distance: metres, bearing: 90)
            return LocationFix(timestamp: Timestamp(seconds: t), latitude: p.latitude, longitude: p.longitude, horizontalAccuracy: 5)
        }
        _ = engine.ingest(fix(1, metres: 0))
        #expect(engine.state(of: "park") == .inside && engine.geoResting.isEmpty, "determined by this fix: evaluated on the next")
        _ = engine.ingest(fix(1.5, metres: 0))
        #expect(engine.geoResting.count == 1 && engine.geoActive.isEmpty, "210 m of slack (radius + minimum buffer) less 1 m: rests")
        // Walking out: not evaluated while the walk stays within the slack, its distance current all along.
        for (t, metres) in [(2.0, 50.0), (3, 120), (4, 190), (5, 205)] {
            #expect(engine.circularRegionsToEvaluate(for: fix(t, metres: metres)).isEmpty, "\(metres) m")
            #expect(engine.ingest(fix(t, metres: metres)).isEmpty)
            let distance = engine.monitoredRegion("park")?.lastDistance ?? .nan
            #expect(abs(distance - metres) < 1e-6, "\(metres) m: lastDistance \(distance)")
        }
        // 209.5 m: within 1 m of the slack, so woken and evaluated (still inside the buffer);
        // it cannot rest again with less than a metre left.
        #expect(engine.circularRegionsToEvaluate(for: fix(6, metres: 209.5)) == ["park"])
        #expect(engine.ingest(fix(6, metres: 209.5)).isEmpty && engine.geoResting.isEmpty && engine.geoActive.count == 1)
        // Beyond the buffer: the crossing starts and exits after the dwell, as without resting.
        var events = engine.ingest(fix(7, metres: 260))
        events += engine.advance(to: Timestamp(seconds: 13))
        #expect(events.summary == ["didExitRegion:park", "didDetermineState:park:outside"])
        // Back to the centre: rests again; a change of profile wakes it, and so does stopping it.
        events = engine.ingest(fix(14, metres: 0)) + engine.advance(to: Timestamp(seconds: 20)) + engine.ingest(fix(20, metres: 0))
        #expect(events.summary == ["didEnterRegion:park", "didDetermineState:park:inside"] && engine.geoResting.count == 1)
        _ = engine.ingest(fix(20.5, metres: 50))   // resting: not evaluated
        engine.profile.geoHysteresis.minimumBuffer = 0
        #expect(engine.geoResting.isEmpty && engine.geoActive.count == 1)
        let distance = engine.monitoredRegion("park")?.lastDistance ?? .nan
        #expect(abs(distance - 50) < 1e-6, "woken by the profile change with the distance to the last fix: \(distance)")
        _ = engine.ingest(fix(21, metres: 0))
        #expect(engine.geoResting.count == 1)
        _ = engine.stopMonitoring(identifier: "park", at: Timestamp(seconds: 22))
        #expect(engine.geoResting.isEmpty && engine.geoActive.isEmpty)
    }

    @Test("invalid fixes (latitude beyond ±90, longitude beyond ±180) are ignored, not evaluated")
    func invalidFixesAreIgnored() {
        var engine = Fixture.engine(.responsive)
        _ = engine.startMonitoring(.circular(try! CircularRegion(identifier: "p", latitude: 0, longitude: 0, radius: 100)), at: .zero)
        #expect(engine.ingest(LocationFix(timestamp: Timestamp(seconds: 1), latitude: 95, longitude: 0)).isEmpty)
        #expect(engine.ingest(LocationFix(timestamp: Timestamp(seconds: 2), latitude: 0, longitude: 360)).isEmpty)
        #expect(engine.state(of: "p") == .unknown && engine.lastFix == nil)
    }

    @Test("on the antimeridian, a region's distance is CircularRegion's to the bit (the index folds longitude 180 to -180)")
    func antimeridianDistancesAreExact() throws {
        var engine = Fixture.engine(.responsive)
        let longitudes = [180, -180, 179.9995, -179.9995]
        for (i, longitude) in longitudes.enumerated() {
            _ = engine.startMonitoring(.circular(try CircularRegion(identifier: "m\(i)", latitude: -16.5, longitude: longitude, radius: 400)), at: .zero)
        }
        var checked = 0
        for (t, longitude) in [180, -180, 179.9999, -179.9999, 180, 179.99991, -179.99993, -180].enumerated() {
            let fix = LocationFix(timestamp: Timestamp(seconds: Double(t + 1)), latitude: -16.5003, longitude: longitude, horizontalAccuracy: 5)
            _ = engine.ingest(fix)
            for i in longitudes.indices {
                let record = try #require(engine.monitoredRegion("m\(i)"))
                let expected = try #require(record.region.circularRegion).distance(latitude: fix.latitude, longitude: fix.longitude)
                #expect(record.lastDistance?.bitPattern == expected.bitPattern, "fix at \(longitude), region at \(longitudes[i])")
                checked += 1
            }
        }
        #expect(checked == 32)
    }

    @Test("after the first fix determines thousands of regions, the always-evaluated set is compacted")
    func activeSetIsCompacted() {
        var engine = Fixture.engine(.responsive)
        for i in 0..<5_000 {
            let p = Geodesy.destination(latitude: 48, longitude: 2, distance: Double(i) * 50, bearing: 90)
            _ = engine.startMonitoring(.circular(try! CircularRegion(identifier: "r\(i)", latitude: p.latitude, longitude: p.longitude, radius: 30)), at: .zero)
        }
        #expect(engine.geoActive.count == 5_000, "all unknown")
        _ = engine.ingest(LocationFix(timestamp: Timestamp(seconds: 1), latitude: 48, longitude: 2, horizontalAccuracy: 5))
        #expect(engine.geoActive.members.compactMap { engine.regions[slot: Int(engine.geoRegionSlots[Int($0)])]?.region.identifier } == ["r0"],
                "a fix iterates the one member left, not a 5,000-entry table")
        #expect(engine.circularIndex.count == 5_000)
    }
}
