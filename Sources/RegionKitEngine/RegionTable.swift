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
/// let slot = table.insert(MonitoredRegion(region: region, registeredAt: .zero))
/// table[slot: slot]?.state = .inside
/// table["lobby"]?.state   // .inside
/// ```
struct RegionTable: Sendable {
    private var records: [MonitoredRegion?] = []
    private var slots: [String: Int32] = [:]
    private var free: [Int32] = []

    /// Regions stored.
    var count: Int { slots.count }

    /// The slot of region `id`, if stored.
    func slot(of id: String) -> Int? { slots[id].map(Int.init) }

    /// The record in `slot` (`nil`: a free slot).
    subscript(slot slot: Int) -> MonitoredRegion? {
        get { records[slot] }
        _modify { yield &records[slot] }
    }

    /// The record of region `id`. Setting a record for a new identifier is not allowed (use
    /// ``insert(_:)``): it is ignored; setting `nil` removes the region.
    subscript(id: String) -> MonitoredRegion? {
        get { slots[id].flatMap { records[Int($0)] } }
        set {
            guard let slot = slots[id] else { return }
            if newValue == nil {
                removeValue(forKey: id)
            } else {
                records[Int(slot)] = newValue
            }
        }
        _modify {
            if let slot = slots[id] {
                yield &records[Int(slot)]
                if records[Int(slot)] == nil { removeValue(forKey: id) }
            } else {
                var absent: MonitoredRegion?
                yield &absent
            }
        }
    }

    /// Applies `body` to the record in `slot` in place; `nil` when the slot is free.
    @inline(__always)
    mutating func update<Result>(slot: Int, _ body: (inout MonitoredRegion) -> Result) -> Result? {
        guard records[slot] != nil else { return nil }
        // In place (checked just above): the record's streams stay uniquely referenced.
        return body(&records[slot]!)
    }

    /// Stores `record` under its region's identifier (which must not be stored yet) and returns its slot.
    @discardableResult
    mutating func insert(_ record: MonitoredRegion) -> Int {
        let id = record.region.identifier
        if let existing = slots[id] {
            records[Int(existing)] = record
            return Int(existing)
        }
        let slot: Int
        if let reused = free.popLast() {
            slot = Int(reused)
            records[slot] = record
        } else {
            slot = records.count
            records.append(record)
        }
        slots[id] = Int32(truncatingIfNeeded: slot)
        return slot
    }

    /// Removes region `id`; returns its record.
    @discardableResult
    mutating func removeValue(forKey id: String) -> MonitoredRegion? {
        guard let slot = slots.removeValue(forKey: id) else { return nil }
        let record = records[Int(slot)]
        records[Int(slot)] = nil
        free.append(slot)
        return record
    }

    /// Every stored region with its identifier, in slot order.
    var all: [(id: String, record: MonitoredRegion)] {
        records.compactMap { $0.map { ($0.region.identifier, $0) } }
    }
}
