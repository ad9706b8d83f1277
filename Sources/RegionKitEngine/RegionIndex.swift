import Foundation
import RegionKitCore

/// A spatial index of ``IndexedRegion``s answering "which regions contain this point, or come
/// within D metres of it", with per-query cost independent of how many regions are stored
/// elsewhere: measured 1.5 µs per query at 1 k and 2.5 µs at 1 M regions spread over a
/// 1,000 km box (release build; the growth is cache misses and ~1.5 hits per query at 1 M;
/// `regionkit bench geofence` measures it on any region and fix files). ``MonitoringEngine``
/// keeps its circular regions in one, so a fix is evaluated only against nearby regions.
/// Distances are RegionKitCore's `Geodesy` haversine.
///
/// **Structure.** Several grid levels with square-ish cells of side 100 m, 400 m, 1.6 km, …,
/// ×4 up to 1,638 km. A region lives in exactly one cell: the one containing its centre, on the
/// finest level whose cell side is at least its radius (bigger regions go to a short list that is
/// always scanned). Insert and remove are O(1).
///
/// **Cells.** Latitude rows are equally spaced; each row has as many longitude columns as fit
/// cells at least one side wide at the row's pole-most edge (a "reduced" grid), so cells stay
/// roughly square from the equator to the poles; the rows touching a pole are single cells.
///
/// **Query.** On each non-empty level, with q = D + the largest radius stored on that level,
/// visit the cells overlapping the spherical cap of radius q around the point (its latitude band,
/// and its longitude extent asin(sin(q/R)/cos φ), wrapping across the antimeridian; the full
/// row when the cap contains a pole), then test candidates with the haversine distance.
/// Correctness never depends on the cell sizes; they only set the speed.
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

    private struct Slot {
        var region: IndexedRegion
        var cosLatitude: Double
        /// Level index, or -1 for the big-region list.
        var level: Int
        var cell: UInt64
        var indexInCell: Int
    }

    private struct Level {
        let side: Double          // metres
        let rowHeight: Double     // degrees of latitude
        let rowCount: Int
        var cells: [UInt64: [Int]] = [:]
        var count = 0
        var radiusCounts: [Double: Int] = [:]  // multiset of radii, for the current maximum
        var maxRadius = 0.0

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
    }

    /// Default cell sides in metres.
    public static let defaultCellSides: [Double] = [100, 400, 1_600, 6_400, 25_600, 102_400, 409_600, 1_638_400]

    private var levels: [Level]
    private var big: [Int] = []
    private var slots: [Slot?] = []
    private var free: [Int] = []
    private var byID: [String: Int] = [:]

    /// - Parameter cellSides: increasing cell sides in metres (tune to your typical radii).
    public init(cellSides: [Double] = RegionIndex.defaultCellSides) {
        let sides = cellSides.filter { $0.isFinite && $0 > 0 }.sorted()
        levels = (sides.isEmpty ? RegionIndex.defaultCellSides : sides).map(Level.init(side:))
    }

    /// Number of regions stored.
    public var count: Int { byID.count }

    /// The region with this id, if stored.
    public func region(id: String) -> IndexedRegion? {
        byID[id].flatMap { slots[$0]?.region }
    }

    /// All stored regions (unordered).
    public var allRegions: [IndexedRegion] { slots.compactMap { $0?.region } }

    /// Inserts a region, replacing any region with the same id.
    /// Throws `invalidRegion` for a latitude outside [-90, 90], non-finite values or a negative radius.
    public mutating func insert(_ region: IndexedRegion) throws(RegionKitError) {
        if let problem = region.validationError {
            throw RegionKitError(.invalidRegion, "spatial index: region '\(region.id)': \(problem)")
        }
        remove(id: region.id)
        var r = region
        r.longitude = Geodesy.normalizedLongitude(r.longitude)
        let slotIndex: Int
        if let f = free.popLast() { slotIndex = f } else { slotIndex = slots.count; slots.append(nil) }
        let levelIndex = levels.firstIndex { $0.side >= r.radius } ?? -1
        var slot = Slot(region: r, cosLatitude: cos(r.latitude * .pi / 180), level: levelIndex, cell: 0, indexInCell: 0)
        if levelIndex < 0 {
            slot.indexInCell = big.count
            big.append(slotIndex)
        } else {
            let key = levels[levelIndex].key(lat: r.latitude, lon: r.longitude)
            slot.cell = key
            slot.indexInCell = levels[levelIndex].cells[key, default: []].count
            levels[levelIndex].cells[key, default: []].append(slotIndex)
            levels[levelIndex].count += 1
            levels[levelIndex].radiusCounts[r.radius, default: 0] += 1
            levels[levelIndex].maxRadius = max(levels[levelIndex].maxRadius, r.radius)
        }
        slots[slotIndex] = slot
        byID[r.id] = slotIndex
    }

    /// Removes and returns the region with this id.
    @discardableResult
    public mutating func remove(id: String) -> IndexedRegion? {
        guard let slotIndex = byID.removeValue(forKey: id), let slot = slots[slotIndex] else { return nil }
        func fixMoved(_ moved: Int, to position: Int) {
            slots[moved]?.indexInCell = position
        }
        if slot.level < 0 {
            let last = big.removeLast()
            if slot.indexInCell < big.count { big[slot.indexInCell] = last; fixMoved(last, to: slot.indexInCell) }
        } else {
            let l = slot.level
            var list = levels[l].cells.removeValue(forKey: slot.cell) ?? []
            let last = list.removeLast()
            if slot.indexInCell < list.count { list[slot.indexInCell] = last; fixMoved(last, to: slot.indexInCell) }
            if !list.isEmpty { levels[l].cells[slot.cell] = list }
            levels[l].count -= 1
            let r = slot.region.radius
            if let c = levels[l].radiusCounts[r], c > 1 { levels[l].radiusCounts[r] = c - 1 } else {
                levels[l].radiusCounts[r] = nil
                if r >= levels[l].maxRadius { levels[l].maxRadius = levels[l].radiusCounts.keys.max() ?? 0 }
            }
        }
        slots[slotIndex] = nil
        free.append(slotIndex)
        return slot.region
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
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, distance.isFinite || distance == .infinity,
              !distance.isNaN else { return }
        let lon = Geodesy.normalizedLongitude(longitude)
        let φ = latitude * .pi / 180
        let cosφ = cos(φ)
        @inline(__always) func test(_ slotIndex: Int) {
            guard let s = slots[slotIndex] else { return }
            let d = Geodesy.distance(latitude1: s.region.latitude, longitude1: s.region.longitude, cosLatitude1: s.cosLatitude,
                                     latitude2: latitude, longitude2: lon, cosLatitude2: cosφ)
            if d <= s.region.radius + distance { body(Match(region: s.region, distanceToCenter: d)) }
        }
        for slotIndex in big { test(slotIndex) }
        for level in levels where level.count > 0 {
            let q = distance + level.maxRadius
            if q < 0 { continue }
            visitCells(level, latitude: latitude, longitude: lon, radius: q) { key in
                if let list = level.cells[key] { for i in list { test(i) } }
            }
        }
    }

    /// Calls `visit` with the key of every cell of `level` that may hold a centre within
    /// `radius` metres of the point.
    private func visitCells(_ level: Level, latitude: Double, longitude: Double, radius: Double, _ visit: (UInt64) -> Void) {
        let δ = radius / Geodesy.earthRadius                 // angular radius
        if δ >= .pi {                                           // the whole sphere
            for key in level.cells.keys { visit(key) }
            return
        }
        let δdeg = δ * 180 / .pi
        let pad = 1e-9
        let latLo = max(-90, latitude - δdeg - pad), latHi = min(90, latitude + δdeg + pad)
        let rowLo = level.row(latLo), rowHi = level.row(latHi)
        // Number of cells the cap may touch; if that beats scanning the level, scan the level.
        let φ = latitude * .pi / 180
        let containsPole = abs(φ) + δ >= .pi / 2 - 1e-12
        var halfWidth = 180.0
        if !containsPole {
            let s = sin(δ) / cos(φ)
            halfWidth = s >= 1 ? 180 : asin(s) * 180 / .pi + pad
        }
        var estimated = 0
        for r in rowLo...rowHi {
            let n = level.columns(inRow: r)
            estimated += halfWidth >= 180 ? n : min(n, Int(2 * halfWidth / 360 * Double(n)) + 2)
            if estimated > level.cells.count { break }
        }
        if estimated > level.cells.count {
            for key in level.cells.keys {
                let r = Int(key >> 32)
                if r >= rowLo && r <= rowHi { visit(key) }
            }
            return
        }
        for r in rowLo...rowHi {
            let n = level.columns(inRow: r)
            let rowBits = UInt64(r) << 32
            if halfWidth >= 180 {
                for c in 0..<n { visit(rowBits | UInt64(c)) }
                continue
            }
            let cLo = Int((((longitude - halfWidth) + 180) / 360 * Double(n)).rounded(.down))
            let cHi = Int((((longitude + halfWidth) + 180) / 360 * Double(n)).rounded(.down))
            if cHi - cLo + 1 >= n {
                for c in 0..<n { visit(rowBits | UInt64(c)) }
                continue
            }
            for c in cLo...cHi {
                let wrapped = ((c % n) + n) % n
                visit(rowBits | UInt64(wrapped))
            }
        }
    }
}
