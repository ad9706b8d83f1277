import Foundation
import Testing
@testable import RegionKitEngine

/// `RestingRegions`: a resting slot is never left asleep once the device may have moved its
/// slack from where it was put to rest (the engine's events depend on it), it is not woken much
/// earlier on a straight walk (what it saves depends on that), and its bookkeeping matches a
/// dictionary.
@Suite("Resting regions: woken before their slack is used up, kept while it is not")
struct RestingRegionsTests {
    /// Where each resting slot was put to rest and with what slack (the model).
    struct Rest {
        var point: Geodesy.UnitVector
        var slack: Double
    }

    static func vector(_ p: (latitude: Double, longitude: Double)) -> Geodesy.UnitVector {
        RegionIndex.point(latitude: p.latitude, longitude: p.longitude)
    }

    @Test("random walks with turns, jitter and jumps: every slot still resting has slack left", arguments: [UInt64(1), 2, 3])
    func neverAsleepTooLong(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        var resting = RestingRegions()
        var model: [Int: Rest] = [:]
        // Near the antimeridian for one seed: the walk crosses ±180.
        var position = seed == 2 ? (latitude: -16.5, longitude: 179.999) : (latitude: 48.85, longitude: 2.35)
        var heading = 0.0
        var woken = 0, checks = 0
        for step in 0..<20_000 {
            switch Int.random(in: 0..<100, using: &rng) {
            case 0:        // a jump of up to 5 km
                position = Geodesy.destination(latitude: position.latitude, longitude: position.longitude,
                                               distance: Double.random(in: 0...5_000, using: &rng), bearing: Double.random(in: 0..<360, using: &rng))
            case 1..<30:   // jitter around a point
                position = Geodesy.destination(latitude: position.latitude, longitude: position.longitude,
                                               distance: Double.random(in: 0...8, using: &rng), bearing: Double.random(in: 0..<360, using: &rng))
            default:       // walking or driving, turning
                heading += Double.random(in: -30...30, using: &rng)
                position = Geodesy.destination(latitude: position.latitude, longitude: position.longitude,
                                               distance: Double.random(in: 0...20, using: &rng), bearing: heading)
            }
            let here = Self.vector(position)
            resting.wake(at: here) { slot in
                let wasResting = model.removeValue(forKey: Int(slot)) != nil
                #expect(wasResting, "woke \(slot), which was not resting")
                woken += 1
            }
            // The safety property: a slot still resting has not used its slack up.
            for (slot, rest) in model {
                checks += 1
                let moved = Geodesy.distance(rest.point, here)
                if moved >= rest.slack {
                    Issue.record("step \(step): slot \(slot) rests \(moved) m from where it was put to rest with \(rest.slack) m")
                    return
                }
            }
            // Regions come to rest (slacks of centimetres to kilometres), are taken out, or all woken.
            let action = Int.random(in: 0..<100, using: &rng)
            let slot = Int.random(in: 0..<64, using: &rng)
            if action < 30 {
                let slack = exp(Double.random(in: log(0.01)...log(3_000), using: &rng))
                if resting.rest(slot, slack: slack, at: here) { model[slot] = Rest(point: here, slack: slack) }   // refused: as it was
            } else if action < 40 {
                resting.remove(slot)
                model[slot] = nil
            } else if action == 40 {
                var all: [Int] = []
                resting.wakeAll { all.append(Int($0)) }
                #expect(Set(all) == Set(model.keys))
                model.removeAll()
            }
            #expect(Set(resting.members.map(Int.init)) == Set(model.keys))
            #expect((0..<64).allSatisfy { resting.contains($0) == (model[$0] != nil) })
        }
        #expect(woken > 1_000 && checks > 30_000, "the walk should wake many and check many (\(woken), \(checks))")
        print("RestingRegionsTests seed \(seed): \(woken) woken, \(checks) slots checked")
    }

    @Test("with its circle, a slot rests on while the device stays inside its reach, and is woken before it leaves it",
          arguments: [UInt64(4), 5, 6])
    func circlesRestWhileInside(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        var resting = RestingRegions()
        let start = seed == 5 ? (latitude: 0.2, longitude: 179.995) : (latitude: 59.33, longitude: 18.07)
        // 64 circles around the start (reaches of 20 m to 3 km), each resting whenever the
        // device is inside it with slack (as the engine rests them).
        let circles: [(centre: Geodesy.UnitVector, reach: Double)] = (0..<64).map { _ in
            let c = Geodesy.destination(latitude: start.latitude, longitude: start.longitude,
                                        distance: Double.random(in: 0...2_500, using: &rng), bearing: Double.random(in: 0..<360, using: &rng))
            return (Self.vector(c), exp(Double.random(in: log(20)...log(3_000), using: &rng)))
        }
        var model = Set<Int>()
        var position = start, heading = 0.0
        var woken = 0, kept = 0, checks = 0
        for step in 0..<8_000 {
            if Int.random(in: 0..<100, using: &rng) < 2 {   // a jump, then walking on
                position = (Double.random(in: -0.02...0.02, using: &rng) + start.latitude,
                            Double.random(in: -0.03...0.03, using: &rng) + start.longitude)
            }
            heading += Double.random(in: -25...25, using: &rng)
            position = Geodesy.destination(latitude: position.latitude, longitude: position.longitude,
                                           distance: Double.random(in: 0...20, using: &rng), bearing: heading)
            let here = Self.vector(position)
            resting.wake(at: here) { slot in
                #expect(model.remove(Int(slot)) != nil, "woke \(slot), which was not resting")
                woken += 1
            }
            // The safety property: a resting slot's circle holds the device, by the safety margin.
            for slot in model {
                checks += 1
                let distance = Geodesy.distance(circles[slot].centre, here)
                if distance >= circles[slot].reach - RestingRegions.safety + 1e-6 {
                    Issue.record("step \(step): slot \(slot) rests \(distance) m from its centre, reach \(circles[slot].reach) m")
                    return
                }
            }
            for (slot, circle) in circles.enumerated() where !model.contains(slot) {
                let slack = circle.reach - Geodesy.distance(circle.centre, here) - RestingRegions.safety
                if slack > 0, resting.rest(slot, slack: slack, at: here, circle: circle) { model.insert(slot) }
            }
            kept += model.count
            if Int.random(in: 0..<200, using: &rng) == 0, let slot = model.sorted().randomElement(using: &rng) {
                resting.remove(slot)
                model.remove(slot)
            }
            #expect(Set(resting.members.map(Int.init)) == model)
        }
        // Measured again instead of woken: far fewer wakes than rests kept (a slot wakes only
        // when the device nears the edge of its circle).
        #expect(checks > 10_000 && woken * 20 < kept, "\(woken) woken, \(kept) slot-fixes resting, \(checks) checked")
        print("RestingRegionsTests circles seed \(seed): \(woken) woken, \(kept) slot-fixes resting")
    }

    @Test("a straight walk through a circle: the slot rests across it and wakes near the far edge, not at its first slack")
    func straightWalkThroughACircle() {
        var resting = RestingRegions()
        let centre = (latitude: -33.87, longitude: 151.21)
        let reach = 1_000.0
        let circle = (centre: Self.vector(centre), reach: reach)
        // From 900 m west of the centre (slack 99 m) eastwards, half a metre a step.
        func point(_ x: Double) -> Geodesy.UnitVector {
            Self.vector(Geodesy.destination(latitude: centre.latitude, longitude: centre.longitude, distance: abs(x), bearing: x < 0 ? 270 : 90))
        }
        let rests = resting.rest(3, slack: reach - 900 - RestingRegions.safety, at: point(-900), circle: circle)
        #expect(rests)
        var wokenAt: Double?
        for x in stride(from: -899.5, through: 1_200, by: 0.5) where wokenAt == nil {
            resting.wake(at: point(x)) { _ in wokenAt = x }
        }
        // Woken on the far side, within the safety margin and two rebase distances of the reach.
        let at = wokenAt ?? .infinity
        let earliest = reach - RestingRegions.safety - 2 * RestingRegions.rebaseDistance
        #expect(at >= earliest && at <= reach - RestingRegions.safety, "woken at \(at) m")
    }

    @Test("a straight walk wakes a slot within a metre of its slack, across many rebases")
    func straightWalkIsExact() {
        var resting = RestingRegions()
        let start = (latitude: 35.68, longitude: 139.76)
        let slacks = [30.0, 75.5, 400, 2_500]
        for (slot, slack) in slacks.enumerated() {
            let rests = resting.rest(slot, slack: slack, at: Self.vector(start))
            #expect(rests)
        }
        var wokenAt: [Int: Double] = [:]
        // Slot 10 rests 1 km on, after some forty rebases: its budget is stored against the
        // rebases' debt, and must not be used up late, nor earlier than the anchor's distance
        // from where it rests (less than a rebase distance) allows, twice over.
        let late = (slot: 10, at: 1_000.0, slack: 300.0)
        for metres in stride(from: 0.5, through: 3_000, by: 0.5) {
            let here = Geodesy.destination(latitude: start.latitude, longitude: start.longitude, distance: metres, bearing: 63)
            resting.wake(at: Self.vector(here)) { wokenAt[Int($0)] = metres }
            if metres == late.at {
                let rests = resting.rest(late.slot, slack: late.slack, at: Self.vector(here))
                #expect(rests)
            }
        }
        for (slot, slack) in slacks.enumerated() {
            let at = wokenAt[slot] ?? .infinity
            #expect(at >= slack - 0.5 && at <= slack + 0.5, "slot \(slot), slack \(slack) m: woken at \(at) m")
        }
        let due = late.at + late.slack, early = 2 * RestingRegions.rebaseDistance
        let at = wokenAt[late.slot] ?? .infinity
        #expect(at >= due - early - 0.5 && at <= due + 0.5, "slot \(late.slot), due at \(due) m: woken at \(at) m")
    }

    @Test("past 1,000 km of rebases the debt is paid into the stored budgets, which stay exact")
    func debtPaidOnALongWalk() {
        var resting = RestingRegions()
        let start = (latitude: 10.0, longitude: -30.0)
        // A slot resting the whole way (slack 1,500 km), one resting from 990 km (slack 20 km:
        // across the payment at ≈ 1,000 km), one from 1,005 km (slack 310 m: after it). The walk
        // goes in 20 m steps: each must wake on the first step at or past its slack (both rest
        // where the anchor has just moved, every 40 m: their budgets are their slacks).
        let rests = resting.rest(1, slack: 1_500_000, at: Self.vector(start))
        #expect(rests)
        var wokenAt: [Int: Double] = [:]
        for metres in stride(from: 20.0, through: 1_012_000, by: 20) {
            // Along the great circle leaving the start due east: a straight walk.
            let here = Geodesy.destination(latitude: start.latitude, longitude: start.longitude, distance: metres, bearing: 90)
            resting.wake(at: Self.vector(here)) { wokenAt[Int($0)] = metres }
            for (slot, at, slack) in [(2, 990_000.0, 20_010.0), (3, 1_005_000, 310)] where metres == at {
                let rests = resting.rest(slot, slack: slack, at: Self.vector(here))
                #expect(rests)
            }
        }
        #expect(wokenAt[1] == nil && resting.contains(1), "1,500 km of slack: still resting at 1,012 km")
        for (slot, due) in [(2, 1_010_010.0), (3, 1_005_310.0)] {
            let at = wokenAt[slot] ?? .infinity
            #expect(at >= due && at <= due + 20, "slot \(slot), due at \(due) m: woken at \(at) m")
        }
    }

    @Test("nothing rests on a slack that is not positive or not a number; a point that is not one wakes all")
    func edges() {
        var resting = RestingRegions()
        let here = Self.vector((latitude: 0, longitude: 0))
        let refused = [(1, 0.0), (2, -3), (3, .nan), (4, .infinity), (-1, 5)].map { resting.rest($0.0, slack: $0.1, at: here) }
        #expect(refused == [false, false, false, false, false] && resting.isEmpty)
        let rests = resting.rest(5, slack: 50, at: here)
        #expect(rests)
        // Resting again with a new slack replaces the budget.
        let there = Self.vector(Geodesy.destination(latitude: 0, longitude: 0, distance: 20, bearing: 90))
        let restsAgain = resting.rest(5, slack: 10, at: here)
        #expect(restsAgain && resting.count == 1)
        #expect(resting.wouldWake(at: there) == [5] && resting.count == 1, "a diagnostic wakes nothing")
        var woken: [Int32] = []
        resting.wake(at: Geodesy.UnitVector(x: .nan, y: 0, z: 0)) { woken.append($0) }
        #expect(woken == [5] && resting.isEmpty)
    }
}
