import Foundation
import RegionKitCore

/// A spatial index of ``IndexedRegion``s answering "which regions contain this point, or come
/// within D metres of it", with per-query cost independent of how many regions are stored
/// elsewhere (`regionkit bench geofence` measures it on any region and fix files).
/// ``MonitoringEngine`` keeps its circular regions in one, so a fix is evaluated only against
/// nearby regions. Distances are RegionKitCore's `Geodesy.distance`, to the bit.
///
/// **Structure.** Several grid levels with square-ish cells of side 400 m, 1.6 km, 6.4 km, …,
/// ×4 up to 1,638 km. A region lives in exactly one cell: the one containing its centre, on the
/// finest level whose cell side is at least its radius (bigger regions go to a short list that is
/// always scanned). Storage is flat: every region is a slot in one array (its tag, its cell), and
/// each level keeps its regions' centres (unit vectors) and radii in one pool, a cell's together
/// in a run, found from the cell id through an open-addressing table with a multiplicative hash
/// (no per-cell arrays, no `Dictionary` on the query path): a query reads each visited cell's
/// regions in one sequential sweep. Insert and remove are O(1), amortised (a cell that outgrows
/// its run moves to one twice the size, a cell table is rebuilt when half full).
///
/// **Cells.** Latitude rows are equally spaced; each row has as many longitude columns as fit
/// cells at least one side wide at the row's pole-most edge (a "reduced" grid), so cells stay
/// roughly square from the equator to the poles; the rows touching a pole are single cells.
///
/// **Query.** On each non-empty level, with q = D + the largest radius stored on that level,
/// visit the cells overlapping the spherical cap of radius q around the point (its latitude band,
/// and its longitude extent asin(sin(q/R)/cos φ), wrapping across the antimeridian; the full
/// row when the cap contains a pole), then test candidates: a chord-length test on the unit
/// vectors rejects far ones (the chord never exceeds the arc), the arc from that chord decides.
/// With a ``NearbyCache`` (one per moving device) the candidates within a margin around the
/// last query point are kept, and a query that stays inside that margin tests only them (and of
/// those only the ones whose boundary it can have come near, by how far it moved).
/// Correctness never depends on the cell sizes or the cache; they only set the speed.
///
/// ```swift
/// var index = RegionIndex()
/// try index.insert(IndexedRegion(id: "home", latitude: 51.5007, longitude: -0.1246, radius: 100))
/// let hits = index.regions(nearLatitude: 51.5010, longitude: -0.1246)      // inside
/// hits.map(\.region.id)                                                    // ["home"]
/// index.regions(nearLatitude: 51.5030, longitude: -0.1246, within: 200).count  // 1 (≈156 m from the edge)
/// index.remove(id: "home")
/// ```
public struct RegionIndex: Sendable {
    /// One query hit.
    public struct Match: Hashable, Sendable {
        public var region: IndexedRegion
        /// Great-circle distance from the query point to the centre, metres.
        public var distanceToCenter: Double
        /// Distance to the boundary, metres: negative inside, positive outside.
        public var distanceToBoundary: Double { distanceToCenter - region.radius }
        public var isInside: Bool { distanceToCenter <= region.radius }
    }

    /// The candidates of the last query of one moving device: every region whose circle comes
    /// within `reach` metres of the point it was built at. A query whose own reach, moved by its
    /// distance from that point, stays inside it tests only these (triangle inequality); any
    /// insert or remove invalidates it. Keep one per device and pass it to
    /// ``forEachMatch(latitude:longitude:within:cache:_:)``.
    ///
    /// ```swift
    /// var cache = RegionIndex.NearbyCache()
    /// index.forEachMatch(latitude: 48.1, longitude: 11.5, cache: &cache) { print($0.region.id) }
    /// ```
    public struct NearbyCache: Sendable {
        /// Metres added around the query point when the candidates are collected.
        public var margin: Double
        var generation = -1
        var point = Geodesy.UnitVector(x: 1, y: 0, z: 0)
        var reach = -1.0
        /// The candidates, with their gaps (see ``Entry``).
        var entries: [Entry] = []
        /// Each entry's centre and radius, copied from the index (`members[k]` is `entries[k]`'s):
        /// the queries between rebuilds read them in order instead of from the index's pool.
        var members: [Member] = []
        /// A rebuild's candidates before they are sorted, kept for their capacity (so a cache
        /// holds its candidates twice: ≈ 90 bytes each).
        var scratch = Scratch()

        struct Scratch {
            var entries: [Entry] = []
            var members: [Member] = []
            var order: [UInt64] = []
        }
        /// Rebuilds, for diagnostics and tests.
        public internal(set) var rebuilds = 0

        /// - Parameter margin: metres of movement the candidates stay valid for (≥ 0; larger keeps
        ///   more candidates per query and rebuilds less often). The default, 400 m, is where a
        ///   device moving 15 m a fix costs least at 10 k and 100 k regions around it (callgrind:
        ///   7.7 % and 6.3 % fewer instructions a fix than 200 m; 800 m is worse again), and
        ///   costs the same as 200 m at 1 M, where each metre of margin adds more candidates.
        public init(margin: Double = NearbyCache.defaultMargin) {
            self.margin = margin.isFinite && margin >= 0 ? margin : NearbyCache.defaultMargin
        }

        public static let defaultMargin = 400.0

        /// A candidate and its `gap`: the chord from the cache's point to the region's centre,
        /// less its radius, in metres. The chord from any later point is at least the chord
        /// from the cache's point less the distance moved (chords obey the triangle inequality,
        /// and a chord never exceeds its arc), so a query `moved` metres away meets the chord
        /// test of a candidate only if `gap ≤ moved + distance + tolerance` (the gap is a
        /// `Float`: its rounding, under a millimetre at these distances, is covered by the
        /// query's 10 m tolerance many times over). The entries are sorted by gap at each
        /// rebuild, so a query stops at the first one beyond: in the order found, the gap test
        /// was a branch as good as random for every entry (fewer instructions, more time;
        /// BENCHMARKS.md, issue 13, twenty-eighth pass).
        struct Entry {
            var slot: Int32
            var gap: Float
        }
    }

    /// What the index keeps of a region outside its cell: the queries read ``Member``s instead.
    struct Slot {
        var tag: Int
        var cell: UInt64
        /// Level index, -1 for the big-region list, -2 for a free slot.
        var level: Int32
        /// Where the region's ``Member`` is: in its level's ``Level/members`` (inside its cell's
        /// run), or in the big-region list.
        var position: Int32
    }

    /// A region as a query reads it, 32 bytes: stored in its cell's run, so a cell's regions
    /// are read in one sequential sweep, not one cache miss each.
    struct Member {
        var centre: Geodesy.UnitVector       // of the normalised longitude
        var radius: Double

        static let vacant = Member(centre: Geodesy.UnitVector(x: 0, y: 0, z: 0), radius: 0)
    }

    /// Default cell sides in metres: 400 m to 1,638 km, ×4 apart.
    ///
    /// The finest side equals the moving device's cache margin (``NearbyCache/defaultMargin``,
    /// kept in step by hand): a cache rebuild reaches ≈ 410 m around the fix plus each level's
    /// largest radius, and a level of 100 m cells (the finest level before) made it probe ≈ 125
    /// cells of that level's table, nearly all empty, each a cache miss at 1 M regions; at 400 m
    /// it probes ≈ 25. Without that level, measured side by side (`regionkit bench geofence` and
    /// engine-only builds, generated regions of 50 m – 2 km, BENCHMARKS.md): a fix through the
    /// engine 1.3–1.4× as fast at 10 k regions, 1.1–1.25× at 100 k, 1.1–1.2× at 1 M; the uncached
    /// point query (``forEachMatch(latitude:longitude:within:_:)``) 1.2–1.4× at 100 k, 1.1× at
    /// 1 M. For the engine, first sides from 250 m to 1 km measured within the noise of 400 m; the
    /// point query alone ran faster still with 500 m to 1 km at 100 k regions, and slower with
    /// 1.6 km at 1 M.
    public static let defaultCellSides: [Double] = [400, 1_600, 6_400, 25_600, 102_400, 409_600, 1_638_400]

    private var levels: [Level]
    /// The regions bigger than the coarsest cell, always scanned, and the slot of each.
    private var bigMembers: [Member] = []
    private var bigSlots: [Int32] = []
    private var slots: [Slot] = []
    private var stored: [IndexedRegion?] = []
    private var free: [Int32] = []
    private var byID: [String: Int32] = [:]
    /// Regions stored, by identifier (``insert(_:tag:)``) or by slot alone (``insert(slotOnly:tag:)``).
    private var storedCount = 0
    /// Changes on every insert and remove (invalidates ``NearbyCache``s).
    private(set) var generation = 0

    /// - Parameter cellSides: increasing cell sides in metres (tune to your typical radii).
    public init(cellSides: [Double] = RegionIndex.defaultCellSides) {
        let sides = cellSides.filter { $0.isFinite && $0 > 0 }.sorted()
        levels = (sides.isEmpty ? RegionIndex.defaultCellSides : sides).map(Level.init(side:))
    }

    /// Number of regions stored.
    public var count: Int { storedCount }

    /// The region with this id, if stored.
    public func region(id: String) -> IndexedRegion? {
        byID[id].flatMap { stored[Int($0)] }
    }

    /// All stored regions (unordered).
    public var allRegions: [IndexedRegion] { stored.compactMap { $0 } }

    /// The slot of the region with this id (stable while it is stored), if stored.
    public func slot(id: String) -> Int? { byID[id].map(Int.init) }

    /// The region stored in `slot`, if any.
    public func region(atSlot slot: Int) -> IndexedRegion? {
        slot >= 0 && slot < stored.count ? stored[slot] : nil
    }

    /// Whether `slot` holds a region (one inserted by slot alone too).
    func isOccupied(slot: Int) -> Bool {
        slot >= 0 && slot < slots.count && slots[slot].level != -2
    }

    /// The identifier of the region stored in `slot`, if any.
    public func id(atSlot slot: Int) -> String? {
        slot >= 0 && slot < stored.count ? stored[slot]?.id : nil
    }

    /// The tag given to ``insert(_:tag:)`` for the region in `slot` (0 when the slot is free).
    public func tag(atSlot slot: Int) -> Int {
        isOccupied(slot: slot) ? slots[slot].tag : 0
    }

    /// One past the highest slot number in use so far (for arrays indexed by slot).
    public var slotCapacity: Int { slots.count }

    /// Inserts a region, replacing any region with the same id, and returns its slot: a small
    /// integer, stable until the region is removed, reused afterwards. `tag` is kept with it and
    /// handed back by ``forEachCandidate(latitude:longitude:within:cache:_:)`` (the engine's
    /// registration number). Throws `invalidRegion` for a latitude outside [-90, 90], non-finite
    /// values or a negative radius, and when the index is full: 2³¹ − 1 regions stored, or the
    /// member pool of the region's level past ≈ 715 million positions (live and free runs; the
    /// pool never shrinks). A replacement needs room for the new region beside the old one: when
    /// there is none, the region replaced is left in place.
    @discardableResult
    public mutating func insert(_ region: IndexedRegion, tag: Int = 0) throws(RegionKitError) -> Int {
        let r = try Self.validated(region)
        // One hash of the id for a new region (the usual case): the map hands back the slot of
        // a region with this id, or takes the new region's slot in the same lookup.
        let slotIndex = free.last ?? Int32(clamping: slots.count)   // Int32.max: full (checked below)
        var replaced = false
        func claim(_ current: inout Int32) {
            if current >= 0 { replaced = true } else { current = slotIndex }
        }
        claim(&byID[region.id, default: -1])
        if replaced {
            guard hasRoom(onLevel: level(forRadius: r.radius)) else {
                throw fullError(region.id)
            }
            remove(id: region.id)
            return try insert(region, tag: tag)   // a new id now: its old slot is the first free one
        }
        let levelIndex = level(forRadius: r.radius)
        if !hasRoom(onLevel: levelIndex) {
            byID[region.id] = nil
            throw fullError(region.id)
        }
        let slot = file(r, tag: tag, level: levelIndex)
        if stored.count <= slot { stored += repeatElement(nil, count: slot + 1 - stored.count) }
        stored[slot] = r
        return slot
    }

    /// Inserts a region by slot alone and returns its slot: no identifier is hashed or kept and
    /// the region is not copied (the engine keeps its regions by identifier itself, and their
    /// index slots beside them). Such a region is found by
    /// ``forEachCandidate(latitude:longitude:within:cache:_:)``, ``tag(atSlot:)`` and
    /// ``distance(atSlot:to:)``, removed by ``remove(slot:)``, and counted; it has no
    /// ``region(atSlot:)``, and the queries that hand back regions (``forEachMatch(latitude:longitude:within:_:)``,
    /// ``regions(nearLatitude:longitude:within:)``) skip it. Throws as ``insert(_:tag:)``.
    mutating func insert(slotOnly region: IndexedRegion, tag: Int) throws(RegionKitError) -> Int {
        let r = try Self.validated(region)
        let levelIndex = level(forRadius: r.radius)
        if !hasRoom(onLevel: levelIndex) {
            throw fullError(region.id)
        }
        return file(r, tag: tag, level: levelIndex)
    }

    /// `region` with its longitude normalised, or `invalidRegion` naming what is wrong with it.
    private static func validated(_ region: IndexedRegion) throws(RegionKitError) -> IndexedRegion {
        if let problem = region.validationError {
            throw RegionKitError(.invalidRegion, "spatial index: region '\(region.id)': \(problem)")
        }
        var r = region
        r.longitude = Geodesy.normalizedLongitude(r.longitude)
        return r
    }

    /// Files a validated region (longitude normalised) in the first free slot, or a new one
    /// (the caller has checked that there is room: ``hasRoom(onLevel:)``) on `levelIndex`
    /// (``level(forRadius:)``), and returns the slot.
    private mutating func file(_ r: IndexedRegion, tag: Int, level levelIndex: Int) -> Int {
        let slotIndex = free.popLast() ?? Int32(truncatingIfNeeded: slots.count)
        let member = Member(centre: Geodesy.UnitVector(latitude: r.latitude, longitude: r.longitude), radius: r.radius)
        var slot = Slot(tag: tag, cell: 0, level: Int32(truncatingIfNeeded: levelIndex), position: 0)
        if levelIndex < 0 {
            slot.position = Int32(truncatingIfNeeded: bigMembers.count)
            bigMembers.append(member)
            bigSlots.append(slotIndex)
        } else {
            let key = levels[levelIndex].key(lat: r.latitude, lon: r.longitude)
            slot.cell = key
            let p = levels[levelIndex].positionInserting(key)
            var cell = levels[levelIndex].cells[p]
            let capacity = levels[levelIndex].capacity(at: p)
            if cell.count == capacity {
                // The cell has outgrown its run: its members move to one twice the size.
                let grown = max(1, capacity &* 2)
                let moved = levels[levelIndex].allocateRun(capacity: grown)
                for k in 0..<Int(cell.count) {
                    let from = Int(cell.start) + k, to = Int(moved) + k
                    let movedSlot = levels[levelIndex].memberSlots[from]
                    levels[levelIndex].members[to] = levels[levelIndex].members[from]
                    levels[levelIndex].memberSlots[to] = movedSlot
                    slots[Int(movedSlot)].position = Int32(truncatingIfNeeded: to)
                }
                levels[levelIndex].freeRun(start: cell.start, capacity: capacity)
                levels[levelIndex].setCapacity(grown, at: p)
                cell.start = moved
            }
            let position = Int(cell.start) + Int(cell.count)
            levels[levelIndex].members[position] = member
            levels[levelIndex].memberSlots[position] = slotIndex
            slot.position = Int32(truncatingIfNeeded: position)
            if cell.count == 0 { levels[levelIndex].occupied += 1 }
            cell.count += 1
            levels[levelIndex].cells[p] = cell
            levels[levelIndex].count += 1
            levels[levelIndex].addRadius(r.radius)
        }
        if Int(slotIndex) == slots.count {
            slots.append(slot)
        } else {
            slots[Int(slotIndex)] = slot
        }
        storedCount += 1
        generation &+= 1
        return Int(slotIndex)
    }

    /// The level a region of `radius` is filed on: the finest whose cell side is at least its
    /// radius; −1 for the big-region list.
    private func level(forRadius radius: Double) -> Int {
        levels.firstIndex { $0.side >= radius } ?? -1
    }

    /// The error of an insert refused for want of room (``hasRoom(onLevel:)``).
    private func fullError(_ id: String) -> RegionKitError {
        RegionKitError(.invalidRegion, "spatial index: region '\(id)': the index is full (\(slots.count) regions)")
    }

    /// Whether a region can be filed on `levelIndex` (``level(forRadius:)``): a free slot or
    /// fewer than 2³¹ − 1 slots, and room in the level's member pool (``Level/hasRoom``).
    private func hasRoom(onLevel levelIndex: Int) -> Bool {
        guard !free.isEmpty || slots.count < Int(Int32.max) else { return false }
        return levelIndex < 0 ? bigMembers.count < Int(Int32.max) : levels[levelIndex].hasRoom
    }

    /// What is wrong with the storage, for tests (empty when nothing is): every stored region's
    /// member inside its cell's run and naming its slot, and (for a region kept by identifier)
    /// its level, cell, centre and radius those of the region; the big-region list both ways;
    /// every run a power of two holding its cell and more than a quarter full (else it should have
    /// shrunk), inside the pool, apart from the other runs and the free runs, and every pool
    /// position in one of them; the array lengths and counts. Reports rather than traps on
    /// inconsistent bookkeeping.
    func storageProblems() -> [String] {
        var problems: [String] = []
        // Array lengths first: the checks below index by them.
        if bigSlots.count != bigMembers.count { return ["big list: \(bigSlots.count) slots, \(bigMembers.count) members"] }
        for (l, level) in levels.enumerated() {
            if level.members.count != level.memberSlots.count || level.runClasses.count != level.cells.count {
                return ["level \(l): \(level.members.count) members, \(level.memberSlots.count) member slots, \(level.cells.count) cells, \(level.runClasses.count) run sizes"]
            }
            let keyed = level.cells.count(where: { $0.key != .max })
            if keyed != level.used || (!level.cells.isEmpty && keyed >= level.cells.count) {
                return ["level \(l): \(keyed) table entries in use of \(level.cells.count), counted \(level.used)"]
            }
        }
        var perLevel = [Int](repeating: 0, count: levels.count)
        var bigCount = 0
        for (i, slot) in slots.enumerated() where slot.level != -2 {
            let p = Int(slot.position)
            if slot.level < 0 {
                bigCount += 1
                if p < 0 || p >= bigSlots.count || bigSlots[p] != Int32(i) { problems.append("slot \(i): not at \(p) of the big list"); continue }
            } else {
                let l = Int(slot.level)
                guard l < levels.count else { problems.append("slot \(i): no level \(l)"); continue }
                perLevel[l] += 1
                let cell = levels[l].cell(slot.cell)
                if !(p >= Int(cell.start) && p < Int(cell.start) + Int(cell.count)) { problems.append("slot \(i): position \(p) outside its cell's run") }
                if p < 0 || p >= levels[l].memberSlots.count || levels[l].memberSlots[p] != Int32(i) { problems.append("slot \(i): member \(p) names another slot"); continue }
            }
            // A region kept by identifier: its member and cell are those of the region.
            if i < stored.count, let r = stored[i] {
                let level = level(forRadius: r.radius)
                if Int(slot.level) != level { problems.append("slot \(i): on level \(slot.level), not \(level)") }
                if level >= 0, slot.cell != levels[level].key(lat: r.latitude, lon: r.longitude) { problems.append("slot \(i): filed in another cell") }
                let m = member(atSlot: i)
                if m.radius != r.radius || m.centre != Geodesy.UnitVector(latitude: r.latitude, longitude: r.longitude) {
                    problems.append("slot \(i): member is not its region")
                }
            }
        }
        if bigSlots.count != bigCount { problems.append("big list: \(bigSlots.count) entries, \(bigCount) regions") }
        for (l, level) in levels.enumerated() {
            var covered = [Bool](repeating: false, count: level.members.count)
            func cover(_ start: Int, _ length: Int, _ what: String) {
                guard start >= 0, length >= 0, start + length <= covered.count else { problems.append("level \(l): \(what) beyond the pool"); return }
                for k in start..<start + length {
                    if covered[k] { problems.append("level \(l): \(what) overlaps at \(k)"); return }
                    covered[k] = true
                }
            }
            var occupied = 0, count = 0
            for (p, cell) in level.cells.enumerated() {
                let capacity = Int(level.capacity(at: p))
                guard cell.key != .max && cell.count > 0 else {
                    if capacity != 0 { problems.append("level \(l): a run kept by table entry \(p), which holds no region") }
                    continue
                }
                occupied += 1
                count += Int(cell.count)
                if capacity < Int(cell.count) || capacity.nonzeroBitCount != 1 || (capacity >= 4 && Int(cell.count) <= capacity / 4) {
                    problems.append("level \(l): cell \(cell.key) of \(cell.count) in a run of \(capacity)")
                }
                cover(Int(cell.start), capacity, "run of cell \(cell.key)")
            }
            for (sizeClass, starts) in level.freeRuns.enumerated() {
                for start in starts { cover(Int(start), 1 << sizeClass, "free run \(start)") }
            }
            if let leaked = covered.firstIndex(of: false) { problems.append("level \(l): pool position \(leaked) in no run") }
            if occupied != level.occupied { problems.append("level \(l): \(occupied) occupied cells, counted \(level.occupied)") }
            if count != level.count || count != perLevel[l] { problems.append("level \(l): \(count) members in runs, \(level.count) counted, \(perLevel[l]) slots") }
        }
        return problems
    }

    /// Positions in the member pools (live and free runs), for tests.
    var poolSize: Int { levels.reduce(bigMembers.count) { $0 + $1.members.count } }

    /// The member of the region in `slot` (an occupied slot).
    @inline(__always)
    private func member(atSlot slot: Int) -> Member {
        let s = slots[slot]
        return s.level < 0 ? bigMembers[Int(s.position)] : levels[Int(s.level)].members[Int(s.position)]
    }

    /// Makes room for `additional` more regions: the id map and the per-slot arrays do not grow
    /// one doubling at a time (each doubling of the map hashes every id again).
    public mutating func reserveCapacity(_ additional: Int) {
        reserveCapacity(additional, keyed: true)
    }

    /// ``reserveCapacity(_:)`` for regions inserted by slot alone (`keyed` false: the id map
    /// and the region copies do not grow).
    mutating func reserveCapacity(_ additional: Int, keyed: Bool) {
        let total = storedCount + max(0, additional)
        if keyed {
            byID.growCapacity(toAtLeast: byID.count + max(0, additional))
            stored.growCapacity(toAtLeast: total)
        }
        slots.growCapacity(toAtLeast: total)
    }

    /// The unit vector of the centre of the region in `slot` (of its normalised longitude), `nil`
    /// for a slot that holds none.
    func centre(atSlot slot: Int) -> Geodesy.UnitVector? {
        isOccupied(slot: slot) ? member(atSlot: slot).centre : nil
    }

    /// The great-circle distance in metres from the centre of the region in `slot` to `point`
    /// (the unit vector of a normalised longitude): the value a query reports for it, to the bit.
    /// NaN for a free or unknown slot.
    func distance(atSlot slot: Int, to point: Geodesy.UnitVector) -> Double {
        guard isOccupied(slot: slot) else { return .nan }
        return Geodesy.arc(chordSquared: member(atSlot: slot).centre.chordSquared(to: point))
    }

    /// Removes and returns the region with this id.
    @discardableResult
    public mutating func remove(id: String) -> IndexedRegion? {
        guard let slotIndex = byID.removeValue(forKey: id) else { return nil }
        let i = Int(slotIndex)
        let region = stored[i]
        stored[i] = nil
        remove(slot: i)
        return region
    }

    /// Removes the region in `slot` (one inserted by ``insert(slotOnly:tag:)``; a region inserted
    /// by identifier is removed by ``remove(id:)``, which also forgets its identifier). Nothing
    /// happens for a free or unknown slot.
    mutating func remove(slot i: Int) {
        guard isOccupied(slot: i) else { return }
        let slot = slots[i]
        let position = Int(slot.position)
        if slot.level < 0 {
            // The list's last region takes the place of the one removed.
            let last = bigMembers.count - 1
            if position != last {
                bigMembers[position] = bigMembers[last]
                bigSlots[position] = bigSlots[last]
                slots[Int(bigSlots[position])].position = slot.position
            }
            bigMembers.removeLast()
            bigSlots.removeLast()
        } else {
            let l = Int(slot.level)
            let radius = levels[l].members[position].radius
            if let p = levels[l].position(of: slot.cell) {
                // The run's last member takes the place of the one removed.
                var cell = levels[l].cells[p]
                let last = Int(cell.start) + Int(cell.count) - 1
                if position != last {
                    let movedSlot = levels[l].memberSlots[last]
                    levels[l].members[position] = levels[l].members[last]
                    levels[l].memberSlots[position] = movedSlot
                    slots[Int(movedSlot)].position = slot.position
                }
                levels[l].memberSlots[last] = -1
                // Emptied: the run is free. Down to a quarter of it: its upper half is.
                let capacity = levels[l].capacity(at: p)
                cell.count -= 1
                if cell.count == 0 {
                    levels[l].freeRun(start: cell.start, capacity: capacity)
                    levels[l].setCapacity(0, at: p)
                    cell.start = 0
                    levels[l].occupied -= 1
                } else if capacity >= 4, cell.count <= capacity / 4 {
                    levels[l].freeRun(start: cell.start + capacity / 2, capacity: capacity / 2)
                    levels[l].setCapacity(capacity / 2, at: p)
                }
                levels[l].cells[p] = cell
            }
            levels[l].count -= 1
            levels[l].removeRadius(radius)
        }
        slots[i].level = -2
        free.append(Int32(truncatingIfNeeded: i))
        storedCount -= 1
        generation &+= 1
    }

    /// Regions whose circle contains the point or comes within `distance` metres of it
    /// (great-circle distance to the centre ≤ radius + distance), nearest boundary first.
    /// An invalid point (NaN, |latitude| > 90) matches nothing.
    public func regions(nearLatitude latitude: Double, longitude: Double, within distance: Double = 0) -> [Match] {
        var out: [Match] = []
        forEachMatch(latitude: latitude, longitude: longitude, within: distance) { out.append($0) }
        out.sort { ($0.distanceToBoundary, $0.region.id) < ($1.distanceToBoundary, $1.region.id) }
        return out
    }

    /// Calls `body` for every match, in no particular order, without allocating a result array.
    public func forEachMatch(latitude: Double, longitude: Double, within distance: Double = 0, _ body: (Match) -> Void) {
        var unused = NearbyCache()
        forEachMatch(latitude: latitude, longitude: longitude, within: distance, cache: &unused, caching: false, body)
    }

    /// ``forEachMatch(latitude:longitude:within:_:)`` for a moving device: `cache` keeps the
    /// candidates near its last position, so the next query close to it visits no cells.
    public func forEachMatch(latitude: Double, longitude: Double, within distance: Double = 0, cache: inout NearbyCache,
                             _ body: (Match) -> Void) {
        forEachMatch(latitude: latitude, longitude: longitude, within: distance, cache: &cache, caching: true, body)
    }

    private func forEachMatch(latitude: Double, longitude: Double, within distance: Double, cache: inout NearbyCache, caching: Bool,
                              _ body: (Match) -> Void) {
        // Closures capture locals, not `self`: capturing the index copied the whole struct into
        // the closure context per query, retaining and releasing every table (issue 13 item 3).
        let stored = self.stored
        forEachCandidate(latitude: latitude, longitude: longitude, within: distance, cache: &cache, caching: caching) { slot, _, d in
            // (A region inserted by slot alone has no copy here: skipped.)
            if slot < stored.count, let region = stored[slot] { body(Match(region: region, distanceToCenter: d)) }
        }
    }

    /// The engine's form of ``forEachMatch(latitude:longitude:within:cache:_:)``: calls `body`
    /// with the slot, tag and centre distance of every region whose circle comes within
    /// `distance` metres of the point (no region value is built).
    public func forEachCandidate(latitude: Double, longitude: Double, within distance: Double, cache: inout NearbyCache,
                                 _ body: (_ slot: Int, _ tag: Int, _ distanceToCenter: Double) -> Void) {
        forEachCandidate(latitude: latitude, longitude: longitude, within: distance, cache: &cache, caching: true, body)
    }

    /// ``forEachCandidate(latitude:longitude:within:cache:_:)`` without a cache.
    public func forEachCandidate(latitude: Double, longitude: Double, within distance: Double,
                                 _ body: (_ slot: Int, _ tag: Int, _ distanceToCenter: Double) -> Void) {
        var unused = NearbyCache()
        forEachCandidate(latitude: latitude, longitude: longitude, within: distance, cache: &unused, caching: false, body)
    }

    /// ``forEachCandidate(latitude:longitude:within:cache:_:)`` with the cache used only when
    /// `caching` (the engine's call: one call site, so its closure stays a non-escaping literal).
    /// The cache is updated in place: its candidate array is rebuilt in its own storage, and no
    /// `Optional` wraps it (moving the cache in and out of one copied it twice per query).
    /// Returns the point's unit vector (of the normalised longitude; `nil` for an invalid query),
    /// for ``distance(atSlot:to:)`` to regions the query did not report; `point` is that vector
    /// when the caller has computed it already (``point(latitude:longitude:)``). The slots in
    /// `skipped` are not reported, and their distance is not computed: from the cache each cached
    /// candidate within reach is looked up in it before anything else (a set, not a predicate:
    /// a closure was an indirect call per candidate, ≈ 29 a fix at 1 M regions).
    @discardableResult
    func forEachCandidate(latitude: Double, longitude: Double, within distance: Double, cache: inout NearbyCache, caching: Bool,
                          point known: Geodesy.UnitVector? = nil, skipping skipped: SlotSet = SlotSet(),
                          _ body: (_ slot: Int, _ tag: Int, _ distanceToCenter: Double) -> Void) -> Geodesy.UnitVector? {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, !distance.isNaN else { return nil }
        let lon = Geodesy.normalizedLongitude(longitude)
        let point = known ?? Self.point(latitude: latitude, longitude: longitude)
        let R = Geodesy.earthRadius
        // The chord between unit vectors never exceeds the arc: a candidate whose chord (in metres)
        // is beyond radius + distance + tolerance cannot match; the tolerance covers rounding
        // (the arc loses < 1 m within ~1 km of the antipode).
        let tolerance = 10.0
        let slots = self.slots
        /// The chord test, then the arc from the same chord: `Geodesy.distance` of the two
        /// vectors, so the engine's own distance to the region, to the bit.
        @inline(__always) func test(_ i: Int, _ m: Member, _ c2: Double) {
            let d = Geodesy.arc(chordSquared: c2)
            if d <= m.radius + distance { body(i, slots[i].tag, d) }
        }
        @inline(__always) func passes(_ m: Member) -> Double? {
            let c2 = m.centre.chordSquared(to: point)
            let bound = m.radius + distance + tolerance
            return c2 * (R * R) > bound * bound ? nil : c2
        }
        if caching, distance.isFinite, distance >= 0 {
            var moved = 0.0
            var valid = cache.generation == generation && cache.reach >= 0
            if valid {
                moved = Geodesy.distance(cache.point, point)
                valid = moved + distance + tolerance <= cache.reach
            }
            if !valid {
                let reach = distance + tolerance + cache.margin
                collect(latitude: latitude, longitude: lon, within: reach, tolerance: tolerance, point: point, into: &cache)
                cache.generation = generation
                cache.point = point
                cache.reach = reach
                cache.rebuilds += 1
                moved = 0
            }
            // The candidates past `limit` cannot pass the chord test (``NearbyCache/Entry``), and
            // the entries are sorted by gap: the first one past it ends the loop. A skipped slot is
            // looked for next: the regions a device is deep inside (skipped by the engine) are
            // about half of the cached candidates in reach. The centre and radius come from the
            // cache's own copy, read in order (not from the index's pool).
            let limit = Float(moved + distance + tolerance)
            cache.entries.withUnsafeBufferPointer { entries in
                cache.members.withUnsafeBufferPointer { members in
                    skipped.withUnsafePositions { skippedAt in
                        for k in entries.indices {
                            let entry = entries[k]
                            if entry.gap > limit { break }
                            let i = Int(entry.slot)
                            if i < skippedAt.count, skippedAt[i] >= 0 { continue }
                            let m = members[k]
                            if let c2 = passes(m) { test(i, m, c2) }
                        }
                    }
                }
            }
            return point
        }
        visitCandidates(latitude: latitude, longitude: lon, within: distance) { i, m in
            if let c2 = passes(m), !skipped.contains(Int(i)) { test(Int(i), m, c2) }
        }
        return point
    }

    /// The unit vector a query at `latitude`, `longitude` uses (of the normalised longitude):
    /// a caller that needs it too computes it once and passes it to the query.
    @inline(__always)
    static func point(latitude: Double, longitude: Double) -> Geodesy.UnitVector {
        Geodesy.UnitVector(latitude: latitude, longitude: Geodesy.normalizedLongitude(longitude))
    }

    /// The slots whose circle may come within `reach` metres of the point (chord test only),
    /// into `cache`'s entries, with their ``NearbyCache/Entry/gap``s, and their members beside
    /// them, sorted by gap (found in the cache's scratch arrays first; every array is emptied
    /// before it is filled and keeps its capacity).
    private func collect(latitude: Double, longitude: Double, within reach: Double, tolerance: Double,
                         point p: Geodesy.UnitVector, into cache: inout NearbyCache) {
        let R = Geodesy.earthRadius
        // Found in the scratch arrays (a local the closure captures by address, not the inout
        // parameter's property; every array keeps its capacity in the cache between rebuilds).
        var found = NearbyCache.Scratch()
        swap(&found, &cache.scratch)
        defer { swap(&found, &cache.scratch) }
        found.entries.removeAll(keepingCapacity: true)
        found.members.removeAll(keepingCapacity: true)
        found.order.removeAll(keepingCapacity: true)
        visitCandidates(latitude: latitude, longitude: longitude, within: reach) { i, m in
            let bound = m.radius + reach + tolerance
            let c2 = m.centre.chordSquared(to: p) * (R * R)
            if c2 <= bound * bound {
                found.entries.append(NearbyCache.Entry(slot: i, gap: Float(c2.squareRoot() - m.radius)))
                found.members.append(m)
            }
        }
        // By gap, nearest first, so a query stops at the first entry beyond its limit: sorted
        // as integers (the gap's bits in an order-keeping form above the entry's position), then
        // copied into the cache in that order.
        for (k, entry) in found.entries.enumerated() {
            let bits = entry.gap.bitPattern
            found.order.append(UInt64(bits & 0x8000_0000 != 0 ? ~bits : bits | 0x8000_0000) << 32 | UInt64(k))
        }
        found.order.sort()
        cache.entries.removeAll(keepingCapacity: true)
        cache.members.removeAll(keepingCapacity: true)
        for key in found.order {
            let k = Int(truncatingIfNeeded: key & 0xFFFF_FFFF)
            cache.entries.append(found.entries[k])
            cache.members.append(found.members[k])
        }
    }

    /// Calls `visit` with the slot and member of every region stored in a cell that may hold a
    /// region within `distance` metres of the point (a superset of the matches). A cell's
    /// members are read in one sweep of its run.
    private func visitCandidates(latitude: Double, longitude lon: Double, within distance: Double, _ visit: (Int32, Member) -> Void) {
        for k in bigMembers.indices { visit(bigSlots[k], bigMembers[k]) }
        // The levels are read in place (`for level in levels` copied each one per query,
        // retaining and releasing its tables: a constant cost per query, issue 13 item 3).
        levels.withUnsafeBufferPointer { levelBuffer in
            guard let base = levelBuffer.baseAddress else { return }
            for k in levelBuffer.indices where base[k].count > 0 {
                let q = distance + base[k].maxRadius
                if q < 0 { continue }
                base[k].members.withUnsafeBufferPointer { members in
                    base[k].memberSlots.withUnsafeBufferPointer { memberSlots in
                        visitCells(base + k, latitude: latitude, longitude: lon, radius: q) { cell in
                            let start = Int(cell.start)
                            for j in start..<start + Int(cell.count) { visit(memberSlots[j], members[j]) }
                        }
                    }
                }
            }
        }
    }

    /// Calls `visit` with the run of every non-empty cell of `level` that may hold a centre
    /// within `radius` metres of the point.
    private func visitCells(_ level: UnsafePointer<Level>, latitude: Double, longitude: Double, radius: Double, _ visit: (Level.Cell) -> Void) {
        let δ = radius / Geodesy.earthRadius                 // angular radius
        if δ >= .pi {                                           // the whole sphere
            for cell in level.pointee.cells where cell.key != .max && cell.count > 0 { visit(cell) }
            return
        }
        let δdeg = δ * 180 / .pi
        let pad = 1e-9
        let latLo = max(-90, latitude - δdeg - pad), latHi = min(90, latitude + δdeg + pad)
        let rowLo = level.pointee.row(latLo), rowHi = level.pointee.row(latHi)
        // Number of cells the cap may touch; if that beats scanning the level, scan the level.
        let φ = latitude * .pi / 180
        let containsPole = abs(φ) + δ >= .pi / 2 - 1e-12
        var halfWidth = 180.0
        if !containsPole {
            let s = sin(δ) / cos(φ)
            halfWidth = s >= 1 ? 180 : asin(s) * 180 / .pi + pad
        }
        // Each row's column count (a cosine) is computed once, for the estimate and the visit.
        let rowSpan = rowHi - rowLo + 1
        withUnsafeTemporaryAllocation(of: Int.self, capacity: rowSpan) { columns in
            var estimated = 0
            for k in 0..<rowSpan {
                let n = level.pointee.columns(inRow: rowLo + k)
                columns[k] = n
                estimated += halfWidth >= 180 ? n : min(n, Int(2 * halfWidth / 360 * Double(n)) + 2)
                if estimated > level.pointee.occupied { break }
            }
            if estimated > level.pointee.occupied {
                for cell in level.pointee.cells where cell.key != .max && cell.count > 0 {
                    let r = Int(cell.key >> 32)
                    if r >= rowLo && r <= rowHi { visit(cell) }
                }
                return
            }
            // The cells are looked up first and visited after: the lookups, each a likely cache
            // miss in a table of megabytes, then run back to back and their misses overlap
            // (visiting each cell as it was found kept one lookup in flight at a time). A cell
            // beyond the estimate (rounding) is visited at once.
            withUnsafeTemporaryAllocation(of: Level.Cell.self, capacity: estimated + 1) { found in
                var foundCount = 0
                for k in 0..<rowSpan {
                    let n = columns[k]
                    let rowBits = UInt64(rowLo + k) << 32
                    var cLo = 0, cHi = n - 1
                    if halfWidth < 180 {
                        let lo = Int((((longitude - halfWidth) + 180) / 360 * Double(n)).rounded(.down))
                        let hi = Int((((longitude + halfWidth) + 180) / 360 * Double(n)).rounded(.down))
                        if hi - lo + 1 < n { cLo = lo; cHi = hi }
                    }
                    var c = cLo
                    while c <= cHi {
                        let wrapped = c >= 0 && c < n ? c : ((c % n) + n) % n
                        let cell = level.pointee.cell(rowBits | UInt64(wrapped))
                        if cell.count > 0 {
                            if foundCount < found.count {
                                found.initializeElement(at: foundCount, to: cell)
                                foundCount += 1
                            } else {
                                visit(cell)
                            }
                        }
                        c += 1
                    }
                }
                for j in 0..<foundCount { visit(found[j]) }
            }
        }
    }
}
