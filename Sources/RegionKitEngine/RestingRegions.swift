import RegionKitCore

/// Circular regions the device is deep inside, which no fix can change until the device has
/// moved far enough: the engine leaves them out of a fix's work (issue 13: at 1 M regions a fix
/// lies in ≈ 20 circles, and listing, testing and evaluating each of them on every fix was most
/// of its cost).
///
/// An inside region with nothing pending stays as it is while the distance `d` from its centre
/// stays below `radius + minimumBuffer` (the hysteresis's outside threshold is `radius + b` with
/// `b ≥ minimumBuffer` at any accuracy). Measured at a fix `p₀` at distance `d₀`, that holds while
/// the device is less than `slack = radius + minimumBuffer − d₀` from `p₀`. The set keeps one
/// **anchor** point `A` for all its regions and, per region, a **budget**: the region wakes when
/// the device's distance from the anchor reaches it. By the triangle inequality
/// `|p − p₀| ≤ |p − A| + |A − p₀|`, so a budget of `slack − |A − p₀|` is safe. When the device
/// has moved ``rebaseDistance`` from the anchor, the anchor moves to it and every budget loses
/// that distance (safe by the same inequality; exact for a device moving in a straight line):
/// not by a pass over the budgets (every other fix for a device moving 15 m a fix), but by
/// adding it to a common `debt` that every stored budget is read less of.
///
/// A budget used up is not the end of the rest when the caller gave the region's circle (its
/// centre and `reach = radius + minimumBuffer`): the region is measured again from the fix, and
/// while the device is still inside its reach by more than ``safety`` plus its distance from
/// the anchor it goes on resting with the budget that leaves. Only regions the device may really
/// be leaving are woken (a device crossing a city at 1 M regions woke ≈ 1.4 regions a fix, most
/// of them to be evaluated, found deep inside and put to rest again: 3.84 regions evaluated a fix
/// before, 2.64 after).
///
/// Slots are ``RegionIndex`` slots, as in ``SlotSet``; a region is either here or in the engine's
/// `geoActive`, never both.
///
/// ```swift
/// var resting = RestingRegions()
/// let here = Geodesy.UnitVector(latitude: 48.85, longitude: 2.35)
/// resting.rest(7, slack: 120, at: here)      // 120 m of movement before slot 7 must be evaluated
/// let centre = Geodesy.UnitVector(latitude: 48.851, longitude: 2.35)
/// resting.rest(8, slack: 180, at: here, circle: (centre, reach: 300))   // measured again when used up
/// resting.contains(7)                        // true
/// var woken: [Int32] = []
/// resting.wake(at: here) { woken.append($0) }  // nothing: the device has not moved
/// ```
struct RestingRegions: Sendable {
    /// The resting slots (what ``RegionIndex`` queries skip).
    private(set) var slots = SlotSet()
    /// `budgets[i] − debt`: metres from ``anchor`` at which `slots.members[i]` must be evaluated
    /// again, or measured again from its circle (moved as ``SlotSet/remove(_:)`` moves the
    /// members).
    private var budgets: [Double] = []
    /// Each member's circle, beside its budget: centre and reach (`reach` NaN: none given, or a
    /// reach beyond ``maximumReach``; the member wakes when its budget is used up).
    private var circles: [(centre: Geodesy.UnitVector, reach: Double)] = []
    /// What every stored budget has lost to rebases since it was stored (see the type's notes).
    private var debt = 0.0
    /// The point budgets are measured from (meaningful while ``members`` is not empty).
    private(set) var anchor = Geodesy.UnitVector(x: 1, y: 0, z: 0)
    /// No stored budget is smaller (a fix nearer the anchor than this less ``debt`` wakes nothing
    /// and scans nothing). Not raised when a member leaves: then the next scan finds it again.
    private var smallestBudget = Double.infinity
    /// The point of the last ``wake(at:_:)`` and its distance from the anchor after it, so the
    /// regions put to rest at that fix do not each compute it again.
    private var current = (point: Geodesy.UnitVector(x: .nan, y: .nan, z: .nan), distance: 0.0)

    /// Metres from the anchor at which it moves to the device (a larger value rebases less
    /// often; each rebase costs, off a straight line, some budget; a device that only jitters
    /// around one point never moves it).
    static let rebaseDistance = 25.0
    /// Metres kept back from every slack against rounding in the distances (each is exact to
    /// well under a millimetre for the circles that may rest, see ``maximumReach``).
    static let safety = 1.0
    /// Only circles whose outside threshold (`radius + minimumBuffer`) is within this many metres
    /// rest: arcs up to it are computed to nanometres (`Geodesy.arc(chordSquared:)`'s series).
    static let maximumReach = 100_000.0
    /// The `debt` at which it is paid into the stored budgets (a pass), so its rounding never
    /// matters: a Double's step at 10⁶ m is ≈ 10⁻¹⁰ m, against the metre of ``safety``.
    static let debtLimit = 1_000_000.0

    /// The resting slots, in no particular order.
    var members: [Int32] { slots.members }
    var count: Int { slots.count }
    var isEmpty: Bool { slots.isEmpty }

    func contains(_ slot: Int) -> Bool { slots.contains(slot) }

    /// Puts `slot` to rest, to be woken once the device is `slack` metres (already less
    /// ``safety``) from `point`, the fix the slack was measured at. Refused when the budget
    /// that leaves is not positive (the region is evaluated on the next fix as before; a slot
    /// already resting keeps the budget it had, which is still safe). Returns whether the slot
    /// rests with this slack.
    ///
    /// `circle`: the region's centre and the distance from it within which no fix can change it
    /// (`radius + minimumBuffer`, the reach `slack` was measured against, ≤ ``maximumReach``).
    /// With it, a used-up budget is measured again instead of waking the slot (see the type's
    /// notes).
    @discardableResult
    mutating func rest(_ slot: Int, slack: Double, at point: Geodesy.UnitVector,
                       circle: (centre: Geodesy.UnitVector, reach: Double)? = nil) -> Bool {
        guard slot >= 0, slot < Int(Int32.max), slack.isFinite, slack > 0 else { return false }
        if members.isEmpty {
            anchor = point
            current = (point, 0)
            debt = 0
        }
        // (Not re-anchored here, though it is free with the debt: a budget measured from an
        // anchor behind the device falls short of its slack by up to twice their distance, but
        // moving the anchor to every fix where something rests takes that distance off every
        // other budget, and for a parked device whose fixes jitter around one point, deep
        // regions would then wake on the jitter's sum.)
        let budget = slack - (point == current.point ? current.distance : Geodesy.distance(anchor, point))
        guard budget > 0 else { return false }
        let stored = budget + debt
        let kept = circle.flatMap { $0.reach <= Self.maximumReach ? $0 : nil } ?? (Geodesy.UnitVector(x: .nan, y: .nan, z: .nan), .nan)
        if let position = slots.position(of: slot) {
            budgets[position] = stored
            circles[position] = kept
        } else {
            slots.insert(slot)
            budgets.append(stored)
            circles.append(kept)
        }
        smallestBudget = min(smallestBudget, stored)
        return true
    }

    /// Takes `slot` out (it is evaluated on every fix again until it rests anew).
    mutating func remove(_ slot: Int) {
        guard let position = slots.position(of: slot) else { return }
        slots.remove(slot)
        let last = budgets.removeLast()
        let lastCircle = circles.removeLast()
        if position < budgets.count {
            budgets[position] = last
            circles[position] = lastCircle
        }
        if slots.isEmpty { smallestBudget = .infinity }
    }

    /// Calls `body` with, and takes out, every slot whose budget the device at `point` has used
    /// up, except those with a circle the device is still inside by more than ``safety`` plus
    /// the anchor's distance (measured again: they rest on with the budget that leaves); moves
    /// the anchor to `point` (rebasing the budgets) once it is ``rebaseDistance`` away.
    mutating func wake(at point: Geodesy.UnitVector, _ body: (Int32) -> Void) {
        guard !members.isEmpty else { return }
        var moved = Geodesy.distance(anchor, point)
        current = (point, moved)
        guard moved.isFinite else {
            // Not a point (a caller's bug): nothing may stay asleep on a distance not known.
            wakeAll(body)
            return
        }
        // Rebased first: the budgets measured again below are then measured from the new anchor
        // (after the scan, each would lose `moved` twice, in its own sum and to the debt). Which
        // budgets are used up does not change: `moved + debt` is the same sum before and after
        // (or, when the rebase pays the debt, the same comparison with both sides lowered).
        if moved >= Self.rebaseDistance {
            rebase(to: point, moved: moved)
            moved = 0
        }
        // A stored budget `b` is used up once `moved ≥ b − debt`.
        let reached = moved + debt
        if reached >= smallestBudget {
            var smallest = Double.infinity
            var position = 0
            while position < slots.count {
                if budgets[position] <= reached {
                    // Used up. With its circle, the slot rests on while the device is still
                    // inside its reach by more than the safety margin and the anchor's distance
                    // (the NaN of no circle fails the test): its slack measured here, its
                    // budget from the anchor.
                    let circle = circles[position]
                    let budget = circle.reach - Geodesy.distance(circle.centre, point) - Self.safety - moved
                    if budget > 0 {
                        budgets[position] = budget + debt
                    } else {
                        let slot = slots.members[position]
                        body(slot)
                        remove(Int(slot))   // the last member moves here: look at it next
                        continue
                    }
                }
                smallest = min(smallest, budgets[position])
                position += 1
            }
            smallestBudget = smallest
        }
    }

    /// Moves the anchor to `point`, `moved` metres from it (the device's position): every
    /// budget loses that distance, through the debt (paid into the stored budgets and
    /// ``smallestBudget`` once it reaches ``debtLimit``).
    private mutating func rebase(to point: Geodesy.UnitVector, moved: Double) {
        anchor = point
        current = (point, 0)
        debt += moved
        if debt >= Self.debtLimit {
            for position in budgets.indices { budgets[position] -= debt }
            smallestBudget -= debt
            debt = 0
        }
    }

    /// ``wake(at:_:)`` with the woken slots inserted into `active` (the engine's `geoActive`,
    /// passed by the engine as its other stored property: no set is moved out of it and back).
    mutating func wake(at point: Geodesy.UnitVector, into active: inout SlotSet) {
        wake(at: point) { active.insert(Int($0)) }
    }

    /// Calls `body` with every slot and empties the set (the rules it was filled under changed).
    mutating func wakeAll(_ body: (Int32) -> Void) {
        while let slot = slots.members.last {
            body(slot)
            remove(Int(slot))
        }
    }

    /// The slots `wake(at:_:)` would take out at `point`, without taking them (for diagnostics:
    /// when it finds any, it copies the set's tables).
    func wouldWake(at point: Geodesy.UnitVector) -> [Int32] {
        var copy = self
        var woken: [Int32] = []
        copy.wake(at: point) { woken.append($0) }
        return woken
    }

}
