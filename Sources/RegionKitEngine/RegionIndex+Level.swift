import Foundation
import RegionKitCore

extension RegionIndex {
    /// One grid level: its cells' geometry, an open-addressing table of its ``Cell``s, and the
    /// ``Member``s of all its cells, each cell's together in one run.
    ///
    /// A cell's run has room for a power of two of members (``runClasses``); a full cell that
    /// gains one moves to a run twice the size (the members are copied, the old run goes to a
    /// free list of its size and is reused by the next cell that needs one of that size).
    /// Removing a member moves the run's last one into its place; a cell down to a quarter of its
    /// run gives the upper half to the free list (a quarter, not a half: a cell that loses and
    /// gains one member just above a power of two would otherwise move to a new run each time), and an
    /// emptied cell all of it. The pool never shrinks, and free runs are not merged.
    struct Level {
        let side: Double          // metres
        let rowHeight: Double     // degrees of latitude
        let rowCount: Int
        /// Open-addressing table of the cells: id, run start and count side by side, so a probe
        /// that finds its cell reads where its members are in the same cache line.
        var cells: [Cell] = []
        /// The room of each cell's run, beside ``cells`` (queries do not read it): 0 for none,
        /// else 1 + log₂ of its capacity.
        var runClasses: [UInt8] = []
        var shift: UInt64 = 64
        var used = 0              // table entries holding a key
        var occupied = 0          // cells with at least one region
        var count = 0
        /// The members of every cell of the level, by run, and beside them the slot of each.
        var members: [Member] = []
        var memberSlots: [Int32] = []
        /// Starts of free runs, by capacity (`freeRuns[k]`: runs with room for 2ᵏ members).
        var freeRuns: [[Int32]] = []
        /// How many regions have a radius in each of ``radiusBucketCount`` equal parts of
        /// [0, side] (a level holds radii up to its side), so that removing the largest region
        /// lowers ``maxRadius`` without a search. (A `[Double: Int]` multiset of the exact radii
        /// did this first: a hash of every radius on every insert, ≈ 5 % of registering 1 M
        /// circles, and up to one entry per region.)
        var radiusBuckets = [Int32](repeating: 0, count: Level.radiusBucketCount)
        /// An upper bound of the radii stored, used only as the search reach of a query (the
        /// candidates are then tested exactly, so a looser bound changes no result): the exact
        /// maximum while regions are only added; lowered to the upper edge of the highest bucket
        /// still in use when a removal empties a bucket.
        var maxRadius = 0.0

        static let radiusBucketCount = 64

        /// A cell: its id (`UInt64.max`: a free table entry) and its members, `count` of them
        /// from `start` in ``members`` (`count` 0: an emptied cell, dropped when the table is next
        /// rebuilt).
        struct Cell {
            var key: UInt64
            var start: Int32
            var count: Int32

            static let vacant = Cell(key: .max, start: 0, count: 0)
        }

        /// The room of the run of the cell at table position `p` (0 or a power of two).
        @inline(__always) func capacity(at p: Int) -> Int32 {
            runClasses[p] == 0 ? 0 : 1 << (Int32(runClasses[p]) - 1)
        }

        mutating func setCapacity(_ capacity: Int32, at p: Int) {
            assert(capacity >= 0 && capacity.nonzeroBitCount <= 1, "a run's room is 0 or a power of two")
            runClasses[p] = capacity == 0 ? 0 : UInt8(truncatingIfNeeded: capacity.trailingZeroBitCount + 1)
        }

        /// The bucket of a radius in [0, side].
        @inline(__always) func radiusBucket(_ radius: Double) -> Int {
            min(Level.radiusBucketCount - 1, max(0, Int(radius / side * Double(Level.radiusBucketCount))))
        }

        /// No radius in `bucket` exceeds this (the top bucket's edge is the side itself; the
        /// others get a relative pad against the rounding of `radiusBucket`).
        func radiusBucketEdge(_ bucket: Int) -> Double {
            bucket == Level.radiusBucketCount - 1 ? side : Double(bucket + 1) * side / Double(Level.radiusBucketCount) * (1 + 1e-9)
        }

        mutating func addRadius(_ radius: Double) {
            radiusBuckets[radiusBucket(radius)] += 1
            maxRadius = max(maxRadius, radius)
        }

        mutating func removeRadius(_ radius: Double) {
            let bucket = radiusBucket(radius)
            radiusBuckets[bucket] -= 1
            guard radiusBuckets[bucket] == 0 else { return }
            maxRadius = min(maxRadius, radiusBuckets.lastIndex { $0 > 0 }.map(radiusBucketEdge) ?? 0)
        }

        init(side: Double) {
            self.side = side
            rowHeight = side / Geodesy.earthRadius * 180 / .pi
            rowCount = Int((180 / rowHeight).rounded(.up))
        }

        func row(_ lat: Double) -> Int {
            min(rowCount - 1, max(0, Int(((lat + 90) / rowHeight).rounded(.down))))
        }

        func columns(inRow r: Int) -> Int {
            let lo = -90 + Double(r) * rowHeight
            let hi = min(90, lo + rowHeight)
            let far = min(90, max(abs(lo), abs(hi)))
            let n = 360 * cos(far * .pi / 180) / rowHeight
            return n >= 1 ? Int(min(n, 1e9).rounded(.down)) : 1
        }

        func column(_ lon: Double, _ n: Int) -> Int {
            min(n - 1, max(0, Int(((lon + 180) / 360 * Double(n)).rounded(.down))))
        }

        func key(lat: Double, lon: Double) -> UInt64 {
            let r = row(lat)
            let c = column(lon, columns(inRow: r))
            return UInt64(r) << 32 | UInt64(c)
        }

        @inline(__always) func home(_ key: UInt64) -> Int {
            Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
        }

        /// The table position of `key`, if present.
        @inline(__always) func position(of key: UInt64) -> Int? {
            if cells.isEmpty { return nil }
            let mask = cells.count - 1
            var p = home(key)
            while true {
                let k = cells[p].key
                if k == key { return p }
                if k == .max { return nil }
                p = (p + 1) & mask
            }
        }

        /// The cell `key` (with no members when absent).
        @inline(__always) func cell(_ key: UInt64) -> Cell {
            guard let p = position(of: key) else { return .vacant }
            return cells[p]
        }

        /// The table position of `key`, adding it (with no members) when absent.
        mutating func positionInserting(_ key: UInt64) -> Int {
            if let p = position(of: key) { return p }
            if (used + 1) * 2 > cells.count { grow() }
            let mask = cells.count - 1
            var p = home(key)
            while cells[p].key != .max { p = (p + 1) & mask }
            cells[p] = Cell(key: key, start: 0, count: 0)
            runClasses[p] = 0
            used += 1
            return p
        }

        /// Rebuilds the table when it is half full, dropping the emptied cells: at least three
        /// times the live cells, so that half as many again can be added before the next rebuild
        /// (at twice, a table whose emptied cells kept it at the same size could be rebuilt every
        /// other insert; at four times, the finest level's table at 1 M regions was 32 MB of
        /// mostly free entries).
        mutating func grow() {
            let live = occupied + 1
            var capacity = 16
            while capacity < live * 3 { capacity *= 2 }
            let (old, oldClasses) = (cells, runClasses)
            cells = Array(repeating: .vacant, count: capacity)
            runClasses = Array(repeating: 0, count: capacity)
            shift = UInt64(64 - capacity.trailingZeroBitCount)
            used = 0
            let mask = capacity - 1
            for (cell, runClass) in zip(old, oldClasses) where cell.key != .max && cell.count > 0 {
                var p = home(cell.key)
                while cells[p].key != .max { p = (p + 1) & mask }
                cells[p] = cell
                runClasses[p] = runClass
                used += 1
            }
        }

        /// Whether a run for one more member can be made without positions passing `Int32.max`:
        /// a new run is at most twice the largest cell, so at most twice the pool (checked
        /// before a region is filed; the pool would then hold over 700 million members).
        var hasRoom: Bool { members.count <= Int(Int32.max) / 3 }

        /// A run with room for `capacity` members (a power of two): a free one of that size, or
        /// new room at the end of the pool.
        mutating func allocateRun(capacity: Int32) -> Int32 {
            let sizeClass = capacity.trailingZeroBitCount
            if sizeClass < freeRuns.count, let start = freeRuns[sizeClass].popLast() { return start }
            let start = Int32(truncatingIfNeeded: members.count)
            members.append(contentsOf: repeatElement(.vacant, count: Int(capacity)))
            memberSlots.append(contentsOf: repeatElement(-1, count: Int(capacity)))
            return start
        }

        /// Returns the run of `capacity` members from `start` (a power of two) to the free list;
        /// its members are left as they are (no cell covers them any more).
        mutating func freeRun(start: Int32, capacity: Int32) {
            guard capacity > 0 else { return }
            let sizeClass = capacity.trailingZeroBitCount
            while freeRuns.count <= sizeClass { freeRuns.append([]) }
            freeRuns[sizeClass].append(start)
        }
    }
}
