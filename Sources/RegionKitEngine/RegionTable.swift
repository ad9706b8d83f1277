import RegionKitCore

/// The engine's region records by dense slot (issue 13, region state by slot): the String
/// identifier is hashed once, at registration (and by the commands that name a region); the
/// per-sighting and per-fix paths reach a record by its slot, kept where the region is filed
/// (``MonitoringEngine/RegisteredID``, the geofence index's slot map, the timer schedule).
///
/// Records live in one array (a dictionary's buckets are at most ¾ full and a record is
/// ~200 bytes: two thirds of a million-region dictionary were empty buckets); freed slots are
/// reused.
///
/// ```swift
/// var table = RegionTable()
/// var replaced: MonitoredRegion?
/// let slot = table.insert(MonitoredRegion(region: region, registeredAt: .zero), replaced: &replaced)
/// table[slot: slot]?.state = .inside
/// table["lobby"]?.state   // .inside
/// ```
struct RegionTable: Sendable {
    /// The records by slot; a free slot holds ``vacant`` (never handed out: `occupied` says which
    /// slots are live). Not `[MonitoredRegion?]`: binding an optional element copies the whole
    /// record (a retain and a release of each of its arrays), where a plain element is changed in place.
    private var records: [MonitoredRegion] = []
    private var occupied: [Bool] = []
    private var slots: [String: Int32] = [:]
    private var free: [Int32] = []

    /// What a free slot holds: a record of no region (its streams empty, nothing allocated).
    private static let vacant = MonitoredRegion(
        region: .circular(try! CircularRegion(identifier: "-", latitude: 0, longitude: 0, radius: 1)), registeredAt: .zero)

    /// Regions stored.
    var count: Int { slots.count }

    /// The slot of region `id`, if stored.
    func slot(of id: String) -> Int? { slots[id].map(Int.init) }

    /// The record in `slot` (`nil`: a free slot). A copy: the engine's own paths use
    /// ``read(slot:_:)`` and ``update(slot:_:)``.
    subscript(slot slot: Int) -> MonitoredRegion? {
        occupied[slot] ? records[slot] : nil
    }

    /// The record of region `id`. Setting a record for a new identifier is not allowed (use
    /// ``insert(_:)``): it is ignored; setting `nil` removes the region.
    subscript(id: String) -> MonitoredRegion? {
        get { slots[id].map { records[Int($0)] } }
        set {
            guard let slot = slots[id] else { return }
            if let newValue {
                records[Int(slot)] = newValue
            } else {
                removeValue(forKey: id)
            }
        }
        _modify {
            if let slot = slots[id].map(Int.init) {
                // Moved out and back (a swap, not a copy): the record's streams stay uniquely referenced.
                var record: MonitoredRegion? = Self.vacant
                swap(&record!, &records[slot])
                yield &record
                if let record {
                    records[slot] = record
                } else {
                    removeValue(forKey: id)
                }
            } else {
                var absent: MonitoredRegion?
                yield &absent
            }
        }
    }

    /// Reads the record in `slot`; `nil` when the slot is free. The array's getter may still hand
    /// `body` a copy (callgrind shows one per call from a closure): a hot path reaches the record
    /// through ``update(slot:_:)`` instead, as timer settling does.
    @inline(__always)
    func read<Result>(slot: Int, _ body: (MonitoredRegion) -> Result) -> Result? {
        guard occupied[slot] else { return nil }
        return body(records[slot])
    }

    /// Applies `body` to the record in `slot` in place; `nil` when the slot is free.
    @inline(__always)
    mutating func update<Result>(slot: Int, _ body: (inout MonitoredRegion) -> Result) -> Result? {
        guard occupied[slot] else { return nil }
        return body(&records[slot])
    }

    /// Applies `body` to every stored record in place.
    mutating func updateAll(_ body: (inout MonitoredRegion) -> Void) {
        for slot in records.indices where occupied[slot] { body(&records[slot]) }
    }

    /// Makes room for `additional` more regions: the identifier map is not rehashed as it grows.
    mutating func reserveCapacity(_ additional: Int) {
        let total = slots.count + max(0, additional)
        slots.growCapacity(toAtLeast: total)
        records.growCapacity(toAtLeast: total)
        occupied.growCapacity(toAtLeast: total)
    }

    /// Stores `record` under its region's identifier and returns its slot; a record already stored
    /// under that identifier is replaced in its slot and handed back in `replaced`.
    @discardableResult
    mutating func insert(_ record: MonitoredRegion, replaced: inout MonitoredRegion?) -> Int {
        // One hash of the identifier: the slot a new region gets is known before the lookup,
        // which then either finds the region's slot or stores that one.
        let candidate = free.last.map(Int.init) ?? records.count
        var isNew = false
        func place(_ stored: inout Int32) -> Int {
            guard stored < 0 else { return Int(stored) }
            stored = Int32(truncatingIfNeeded: candidate)
            isNew = true
            return candidate
        }
        let slot = place(&slots[record.region.identifier, default: -1])
        if !isNew {
            var old = record
            swap(&old, &records[slot])
            replaced = old
        } else if slot < records.count {
            free.removeLast()
            records[slot] = record
            occupied[slot] = true
        } else {
            records.append(record)
            occupied.append(true)
        }
        return slot
    }

    /// Removes region `id`; returns its record.
    @discardableResult
    mutating func removeValue(forKey id: String) -> MonitoredRegion? {
        guard let slot = slots.removeValue(forKey: id).map(Int.init) else { return nil }
        var record = Self.vacant
        swap(&record, &records[slot])
        occupied[slot] = false
        free.append(Int32(truncatingIfNeeded: slot))
        return record
    }

    /// Every stored region with its identifier, in slot order.
    var all: [(id: String, record: MonitoredRegion)] {
        records.indices.compactMap { occupied[$0] ? (records[$0].region.identifier, records[$0]) : nil }
    }
}
