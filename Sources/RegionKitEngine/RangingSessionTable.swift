import RegionKitCore

/// The engine's ranging sessions, by slot: found for a sighting through a ``BeaconMatchTable``
/// of their constraints, due in order through a heap of their next deliveries, listed in the
/// order they started.
///
/// They were an array that every sighting and every delivery walked whole. With the daemon's
/// default helpers (``Automation/all``: ranging while inside) every entered beacon region has a
/// session, so a sighting cost a constraint test per region inside and a second of deliveries
/// was quadratic in them: 27,000 sightings/s at 10,000 beacons instead of 1 million. Here a
/// sighting looks up its three constraint keys (UUID, UUID+major, exact) and a delivery is a heap
/// operation; only the rare constraint the keys cannot express (a minor without a major, an
/// Eddystone instance major without its minor: only a decoded, unvalidated constraint) is tested
/// one by one.
///
/// Starting, stopping and the order of deliveries are those of the array: at most one session
/// per constraint and scanner; deliveries due at the same time come in the order the sessions
/// started. A session is shared by every label that ranges the same constraint and scanner (its
/// *owners*): regions inside that the helper ranges, and labels the app started (two beacon
/// regions of one UUID ranged by the app each get their deliveries). The engine delivers it to
/// each owner under that owner's label (`label` is the first owner left); a helper's claim ends
/// when its region leaves, the app's when the app stops that label; the session stops with its
/// last owner.
///
/// ```swift
/// var table = RangingSessionTable()
/// let slot = table.start(RangingSession(constraint: c, label: "hall", startedAt: .zero, interval: 1))
/// table.record(observation, filter: .latest)        // every session whose constraint matches
/// table.next                                         // (time: 1 s, slot: slot)
/// ```
struct RangingSessionTable: Sendable {
    /// A delivery due: the session's next delivery time, its start number, its slot.
    private typealias Due = DueEntry<Int32>

    private var sessions: [RangingSession?] = []
    /// The start number of the session in each slot (its place in the start order).
    private var sequences: [Int] = []
    private var free: [Int32] = []
    private var nextSequence = 0
    private(set) var count = 0
    private var byConstraint = BeaconMatchTable()
    /// Sessions whose constraint the three keys of a sighting cannot reach (tested one by one).
    private var irregular: [Int32] = []
    /// Slots of the sessions each owner (a region identifier or the app's label) holds.
    private var slotsByOwner: [String: [Int32]] = [:]
    /// The owners of each session, in the order they claimed it.
    private var owners: [Int32: [Owner]] = [:]
    /// Every live session's next delivery, and entries left behind by later deliveries and
    /// stops (skipped when they surface: the minimum is always live).
    private var due = MinHeap<Due>()

    var isEmpty: Bool { count == 0 }

    /// The session in `slot`.
    subscript(slot slot: Int) -> RangingSession? {
        slot >= 0 && slot < sessions.count ? sessions[slot] : nil
    }

    /// The live sessions in the order they started.
    var inStartOrder: [RangingSession] { slotsInStartOrder.map { sessions[$0]! } }

    /// The live sessions in the order they started, each with its owners' labels (never empty;
    /// the first is its label).
    var inStartOrderWithOwners: [(session: RangingSession, owners: [String])] {
        slotsInStartOrder.map { (sessions[$0]!, owners(slot: $0)) }
    }

    /// The slots of the live sessions in the order they started.
    private var slotsInStartOrder: [Int] {
        sessions.indices.filter { sessions[$0] != nil }.sorted { sequences[$0] < sequences[$1] }
    }

    /// The earliest delivery due, ties to the session started first.
    var next: (time: Timestamp, slot: Int)? {
        due.min.map { ($0.time, Int($0.key)) }
    }

    /// The slot of the session ranging `constraint` from `scannerID` (nil: every scanner), if any.
    func slot(of constraint: BeaconIdentityConstraint, scannerID: String? = nil) -> Int? {
        firstSlot(of: constraint) { $0.scannerID == scannerID }
    }

    /// The slot of a session ranging `constraint` from any scanner (or every scanner), if any.
    func slot(ofAnyScanner constraint: BeaconIdentityConstraint) -> Int? {
        firstSlot(of: constraint) { _ in true }
    }

    /// The slot of the session whose deliveries of `constraint` carry `label`, if any: one of its
    /// owners (each gets a delivery under its own label). When `label` holds two such sessions
    /// (a scanner's and every scanner's: a room the app ranges on its scanner, which the helper
    /// ranges from all while inside), every scanner's, whose tracks have every scanner's readings.
    func slot(of constraint: BeaconIdentityConstraint, label: String) -> Int? {
        // The sessions `label` owns (a handful), not every owner list: the hub asks this every
        // second for each ranging it published distances from.
        guard let slots = slotsByOwner[label] else { return nil }
        var found: Int32?
        for slot in slots {
            guard let session = sessions[Int(slot)], session.constraint == constraint else { continue }
            if session.scannerID == nil { return Int(slot) }
            if found == nil { found = slot }
        }
        return found.map(Int.init)
    }

    /// The slot of the session ranging `constraint` from `scannerID` that `label` owns, if any.
    func slot(of constraint: BeaconIdentityConstraint, scannerID: String?, label: String) -> Int? {
        slotsByOwner[label]?.first { sessions[Int($0)].map { $0.constraint == constraint && $0.scannerID == scannerID } == true }.map(Int.init)
    }

    /// The first session (in start order) ranging `constraint` that `accepted` accepts.
    private func firstSlot(of constraint: BeaconIdentityConstraint, where accepted: (RangingSession) -> Bool) -> Int? {
        if Self.isRegular(constraint) {
            let matches = byConstraint.regions(for: BeaconMatchTable.Key(constraint), in: SessionKeys(sessions: sessions))
            return matches.first { sessions[Int($0.slot)].map(accepted) == true }.map { Int($0.slot) }
        }
        return irregular.first { slot in sessions[Int(slot)].map { $0.constraint == constraint && accepted($0) } == true }.map(Int.init)
    }

    /// The owners of the session in `slot`, in the order they claimed it (the first is its label).
    func owners(slot: Int) -> [String] { owners[Int32(truncatingIfNeeded: slot)]?.map(\.label) ?? [] }

    /// How many owners the session in `slot` has (no array of their labels built: asked at every delivery).
    func ownerCount(slot: Int) -> Int { owners[Int32(truncatingIfNeeded: slot)]?.count ?? 0 }

    /// Whether a sighting's three keys (UUID only, UUID+major, exact; Eddystone-UID: namespace,
    /// namespace+instance) reach every identity `constraint` matches.
    static func isRegular(_ constraint: BeaconIdentityConstraint) -> Bool {
        if constraint.major == nil { return constraint.minor == nil }
        return constraint.format != .eddystoneUID || constraint.minor != nil
    }

    /// Files a new session (the caller has checked that none ranges its constraint from its
    /// scanner) and returns its slot.
    @discardableResult
    mutating func start(_ session: RangingSession) -> Int {
        let slot: Int32
        if let reused = free.popLast() {
            slot = reused
            sessions[Int(slot)] = session
            sequences[Int(slot)] = nextSequence
        } else {
            slot = Int32(truncatingIfNeeded: sessions.count)
            sessions.append(session)
            sequences.append(nextSequence)
        }
        let registered = MonitoringEngine.RegisteredID(sequence: nextSequence, slot: slot)
        nextSequence += 1
        count += 1
        if Self.isRegular(session.constraint) {
            byConstraint.append(registered, for: BeaconMatchTable.Key(session.constraint), in: SessionKeys(sessions: sessions))
        } else {
            irregular.append(slot)
        }
        addOwner(session.label, byApp: !session.automatic, slot: slot)
        due.push(Due(time: session.nextDelivery, sequence: registered.sequence, key: slot))
        return Int(slot)
    }

    /// Changes the session in `slot`; a change of its next delivery files the new time.
    mutating func update<Result>(slot: Int, _ body: (inout RangingSession) -> Result) -> Result? {
        guard slot >= 0, slot < sessions.count, var session = sessions[slot] else { return nil }
        sessions[slot] = nil   // the session is changed in place, not copied
        let before = session.nextDelivery
        let result = body(&session)
        sessions[slot] = session
        if session.nextDelivery != before {
            due.push(Due(time: session.nextDelivery, sequence: sequences[slot], key: Int32(truncatingIfNeeded: slot)))
            dropStaleDue()
        }
        return result
    }

    /// Stops the session in `slot`.
    mutating func remove(slot: Int) {
        guard slot >= 0, slot < sessions.count, let session = sessions[slot] else { return }
        let s = Int32(truncatingIfNeeded: slot)
        if Self.isRegular(session.constraint) {
            byConstraint.remove(slot: s, for: BeaconMatchTable.Key(session.constraint))
        } else {
            irregular.removeAll { $0 == s }
        }
        forgetOwners(slot: s)
        sessions[slot] = nil
        free.append(s)
        count -= 1
        if count == 0 {
            due = MinHeap()
        } else {
            dropStaleDue()
            // Stopped sessions' entries wait until their time: rebuild when they are most of the heap.
            if due.count > 2 * count + 64 { rebuildDue() }
        }
    }

    /// Adds `label` to the owners of the session in `slot`: a second region inside that the
    /// helper ranges (`byApp` false), or a label the app starts ranging (`byApp` true: the session
    /// is no longer only the helper's, and the claim lasts until the app stops it).
    mutating func claim(slot: Int, label: String, byApp: Bool) {
        guard slot >= 0, slot < sessions.count, sessions[slot] != nil else { return }
        addOwner(label, byApp: byApp, slot: Int32(truncatingIfNeeded: slot))
    }

    /// `label`'s region left (or stopped): it gives up the helper's claims it holds. An owner the
    /// app also started keeps its claim; a session with no owner left stops; one still owned is
    /// reported under its first remaining owner.
    mutating func removeAutomatic(label: String) {
        guard let slots = slotsByOwner[label] else { return }
        for slot in slots { endClaim(byApp: false, label: label, slot: slot) }
    }

    /// The app stopped ranging under `label` the session in `slot`: the app's claim ends. A
    /// region the helper ranges under the same label (inside) keeps its claim, as the helper
    /// ranges every region inside (the app's start and stop of its region's ranging, the usual
    /// pattern, left a region still inside unranged); the session stops with its last owner.
    mutating func removeOwner(label: String, slot: Int) {
        guard slot >= 0, slot < sessions.count, sessions[slot] != nil else { return }
        endClaim(byApp: true, label: label, slot: Int32(truncatingIfNeeded: slot))
    }

    /// Ends the app's claim (`byApp`) or the helper's of `label` on the session in `slot`: an
    /// owner with the other claim stays; one with neither is released.
    private mutating func endClaim(byApp: Bool, label: String, slot: Int32) {
        guard let index = owners[slot]?.firstIndex(where: { $0.label == label }) else { return }
        var owner = owners[slot]![index]
        if byApp { owner.byApp = false } else { owner.byHelper = false }
        guard owner.byApp || owner.byHelper else {
            release(label: label, slot: slot)
            return
        }
        owners[slot]![index] = owner
        sessions[Int(slot)]?.automatic = !owners[slot]!.contains { $0.byApp }
    }

    /// Takes `label` out of the owners of the session in `slot`; the session stops when none is left.
    private mutating func release(label: String, slot: Int32) {
        guard var remaining = owners[slot] else { return }
        remaining.removeAll { $0.label == label }
        if var slots = slotsByOwner[label] {
            slots.removeAll { $0 == slot }
            slotsByOwner[label] = slots.isEmpty ? nil : slots
        }
        guard let next = remaining.first else {
            remove(slot: Int(slot))
            return
        }
        owners[slot] = remaining
        sessions[Int(slot)]?.label = next.label
        sessions[Int(slot)]?.automatic = !remaining.contains { $0.byApp }
    }

    /// Stops every session.
    mutating func removeAll() {
        self = RangingSessionTable()
    }

    /// Adds a sighting to every session whose constraint it matches, unless the session is bound
    /// to another scanner.
    mutating func record(_ observation: BeaconObservation, filter: RSSIFilter) {
        if let (any, major, exact) = byConstraint.candidates(for: observation.identity, in: SessionKeys(sessions: sessions)) {
            // Each session is in one list (its constraint's key), so none records a sighting twice;
            // a session bound to a scanner records only that scanner's sightings.
            for registered in any { record(observation, filter: filter, slot: Int(registered.slot)) }
            for registered in major { record(observation, filter: filter, slot: Int(registered.slot)) }
            for registered in exact { record(observation, filter: filter, slot: Int(registered.slot)) }
        }
        for slot in irregular where sessions[Int(slot)]?.accepts(observation.identity, scanner: observation.scannerID) == true {
            sessions[Int(slot)]?.record(observation, filter: filter)
        }
    }

    /// Records a sighting the session in `slot` matches by constraint, unless the session is
    /// bound to another scanner.
    @inline(__always)
    private mutating func record(_ observation: BeaconObservation, filter: RSSIFilter, slot: Int) {
        if let bound = sessions[slot]?.scannerID, bound != observation.scannerID { return }
        sessions[slot]?.record(observation, filter: filter)
    }

    private mutating func addOwner(_ label: String, byApp: Bool, slot: Int32) {
        if let index = owners[slot]?.firstIndex(where: { $0.label == label }) {
            if byApp { owners[slot]![index].byApp = true } else { owners[slot]![index].byHelper = true }
        } else {
            owners[slot, default: []].append(Owner(label: label, byApp: byApp, byHelper: !byApp))
            slotsByOwner[label, default: []].append(slot)
        }
        if byApp { sessions[Int(slot)]?.automatic = false }
    }

    /// The session in `slot` stops: none of its owners holds it any more.
    private mutating func forgetOwners(slot: Int32) {
        guard let claims = owners.removeValue(forKey: slot) else { return }
        for claim in claims {
            guard var slots = slotsByOwner[claim.label] else { continue }
            slots.removeAll { $0 == slot }
            slotsByOwner[claim.label] = slots.isEmpty ? nil : slots
        }
    }

    private func isLive(_ entry: Due) -> Bool {
        let slot = Int(entry.key)
        guard let session = sessions[slot] else { return false }
        return sequences[slot] == entry.sequence && session.nextDelivery == entry.time
    }

    /// Pops the entries of stopped sessions and of deliveries already moved, until the minimum is live.
    private mutating func dropStaleDue() {
        while let first = due.min, !isLive(first) { due.popMin() }
    }

    private mutating func rebuildDue() {
        var live: [Due] = []
        live.reserveCapacity(count)
        for slot in sessions.indices {
            guard let session = sessions[slot] else { continue }
            live.append(Due(time: session.nextDelivery, sequence: sequences[slot], key: Int32(truncatingIfNeeded: slot)))
        }
        due.rebuild(live)
    }
}

extension RangingSessionTable {
    /// A label holding a session: the app's claim lasts until the app stops it, the helper's
    /// until its region leaves; the owner goes when it has neither.
    struct Owner: Sendable {
        let label: String
        var byApp: Bool
        var byHelper: Bool
    }

    /// The sessions' constraint keys by slot, for ``BeaconMatchTable`` (which keeps no keys).
    struct SessionKeys: BeaconMatchTable.KeySource {
        let sessions: [RangingSession?]

        func slot(_ slot: Int32, hasKey key: BeaconMatchTable.Key) -> Bool {
            let slot = Int(slot)
            guard slot >= 0, slot < sessions.count, let session = sessions[slot] else { return false }
            return key.isKey(of: session.constraint)
        }
    }
}
