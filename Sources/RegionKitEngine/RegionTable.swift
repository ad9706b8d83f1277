import RegionKitCore

/// The engine's region records by dense slot (issue 13, region state by slot): the String
/// identifier is hashed once, at registration (and by the commands that name a region); the
/// per-sighting and per-fix paths reach a record by its slot, kept where the region is filed
/// (``MonitoringEngine/RegisteredID``, the geofence index's slot map, the timer schedule).
///
/// Records (``RegionRecord``) live in one array (a dictionary's buckets are at most ¾ full and a
/// record is 112 bytes: two thirds of a million-region dictionary were empty buckets); freed slots
/// are reused. A region's streams live beside the records, found from the record without
/// hashing: those present now in the engine-wide ``StreamStore`` (reached through
/// ``RegionStreams``: ``updateStreams(slot:_:)``, ``readStreams(slot:_:)``), those it held when it
/// last exited in ``DepartedStreams``. Identifiers find their slot
/// through an open-addressing index of 8-byte buckets (linear probing, load ≤ ½, backward-shift
/// deletion) hashed with
/// ``StreamTable/hash(_:)-(String)`` (seeded per process: identifiers come from configuration and
/// the network) — no `[String: Int32]`, whose 20-byte buckets cost ≈ 42 bytes a region, nor a
/// SipHash per registration and per lookup.
///
/// ```swift
/// var table = RegionTable()
/// var replaced: RegionRecord?
/// let slot = table.insert(RegionRecord(region: region, registeredAt: .zero), replaced: &replaced)
/// table[slot: slot]?.state = .inside
/// table["lobby"]?.state   // .inside
/// ```
struct RegionTable: Sendable {
    /// The records by slot; a free slot holds ``vacant`` (never handed out: a record's `isStored`
    /// says which slots are live). Not `[RegionRecord?]`: binding an optional element copies the whole
    /// record (a retain and a release of each of its arrays), where a plain element is changed in place.
    private var records: [RegionRecord] = []
    /// Each record's departed streams, at its `departedPosition`.
    private var departed = DepartedStreams()
    /// Each record's present streams, by its `streamsHandle`: the engine-wide store, in the view
    /// lent to ``updateStreams(slot:_:)`` (its handle is set for each access; no copy of the store).
    private var streams = RegionStreams(store: StreamStore(), handle: RegionStreams.none)
    /// The identifier index: each bucket is 0 (empty) or the identifier's hash's low 32 bits
    /// (its home bucket and a fingerprint) above the slot + 1; a power of two, at least twice
    /// ``count``, or empty.
    private var index: [UInt64] = []
    private var free: [Int32] = []

    /// What a free slot holds: a record of no region (its streams empty, nothing allocated).
    private static let vacant = RegionRecord(
        region: .circular(try! CircularRegion(identifier: "-", latitude: 0, longitude: 0, radius: 1)), registeredAt: .zero)

    /// Regions stored.
    private(set) var count = 0

    /// The slot of region `id`, if stored.
    func slot(of id: String) -> Int? { find(id).slot }

    /// The record in `slot` (`nil`: a free slot). A copy: the engine's own paths use
    /// ``region(slot:)``, ``identifier(slot:)`` and ``update(slot:_:)``.
    subscript(slot slot: Int) -> RegionRecord? {
        records[slot].isStored ? records[slot] : nil
    }

    /// The record of region `id`. Setting a record for a new identifier is not allowed (use
    /// ``insert(_:replaced:)``): it is ignored; setting `nil` removes the region. A record keeps
    /// its region's identifier (the index finds a slot by comparing it) and kind (its stream
    /// positions share their bytes with a circular region's distance): a record set under `id`
    /// with another identifier or kind is ignored too, and a change of either in place is undone. A record keeps its streams, present and departed,
    /// whatever is set (``updateStreams(slot:_:)`` and ``depart(slot:)`` change them).
    subscript(id: String) -> RegionRecord? {
        get { slot(of: id).map { records[$0] } }
        set {
            let (bucket, found, _) = find(id)
            guard let slot = found else { return }
            if var newValue {
                // Same identifier and kind: a record's positions are its kind's (``RegionRecord``).
                guard newValue.region.identifier == id, newValue.region.kind == records[slot].region.kind else { return }
                newValue.departedPosition = records[slot].departedPosition
                newValue.streamsHandle = records[slot].streamsHandle
                newValue.isStored = true
                records[slot] = newValue
            } else {
                remove(slot: slot, bucket: bucket)
            }
        }
        _modify {
            let (bucket, found, _) = find(id)
            if let slot = found {
                // Moved out and back (a swap, not a copy): the record's streams stay uniquely referenced.
                var record: RegionRecord? = Self.vacant
                swap(&record!, &records[slot])
                let original = record!.region
                let departedPosition = record!.departedPosition
                let streamsHandle = record!.streamsHandle
                yield &record
                if var record {
                    if record.region.identifier != id || record.region.kind != original.kind { record.region = original }
                    record.departedPosition = departedPosition
                    record.streamsHandle = streamsHandle
                    record.isStored = true
                    records[slot] = record
                } else {
                    // (Not by identifier: the slot holds the vacant record while the caller has it.)
                    departed.free(departedPosition)
                    freeStreams(streamsHandle)
                    remove(slot: slot, bucket: bucket)
                }
            } else {
                var absent: RegionRecord?
                yield &absent
            }
        }
    }

    /// The region in `slot`, reached in place as ``identifier(slot:)`` (a closure handed the
    /// record got a copy of the whole record: ``MonitoringEngine/monitoredRegions`` made one per
    /// region); `nil` when the slot is free.
    @inline(__always)
    func region(slot: Int) -> Region? {
        records[slot].isStored ? records[slot].region : nil
    }

    /// The identifier of the region in `slot`, reached in place (a closure handed the record got
    /// a copy of the whole record: 15 % of a `GET /v1/regions` page at 100,000 regions); `nil`
    /// when the slot is free.
    @inline(__always)
    func identifier(slot: Int) -> String? {
        records[slot].isStored ? records[slot].region.identifier : nil
    }

    /// Applies `body` to the record in `slot` in place; `nil` when the slot is free.
    @inline(__always)
    mutating func update<Result>(slot: Int, _ body: (inout RegionRecord) -> Result) -> Result? {
        guard records[slot].isStored else { return nil }
        return body(&records[slot])
    }

    /// As ``update(slot:_:)``, with the record's present streams: `body` gets the table's view
    /// of the store pointed at the record's handle. The view's changes of the handle are made in
    /// the record too (its methods that change it take the record), so nothing is written after
    /// `body` (a `defer` that did kept `body`'s result in memory: +470 instructions a sighting).
    @inline(__always)
    mutating func updateStreams<Result>(slot: Int, _ body: (inout RegionRecord, inout RegionStreams) -> Result) -> Result? {
        guard records[slot].isStored else { return nil }
        streams.handle = records[slot].streamsHandle
        return body(&records[slot], &streams)
    }

    /// As ``updateStreams(slot:_:)``, with the departed streams too: `body` may take streams out
    /// of the record's departed table (``DepartedStreams/take(_:at:)`` with its `departedPosition`).
    @inline(__always)
    mutating func updateResuming<Result>(slot: Int, _ body: (inout RegionRecord, inout RegionStreams, inout DepartedStreams) -> Result) -> Result? {
        guard records[slot].isStored else { return nil }
        streams.handle = records[slot].streamsHandle
        return body(&records[slot], &streams, &departed)
    }

    /// Reads the record in `slot` with its present streams; `nil` when the slot is free. The
    /// view holds a copy of the store (a reference to each of its arrays): the mutating paths
    /// use ``updateStreams(slot:_:)``.
    @inline(__always)
    func readStreams<Result>(slot: Int, _ body: (RegionRecord, RegionStreams) -> Result) -> Result? {
        guard records[slot].isStored else { return nil }
        return body(records[slot], RegionStreams(store: streams.store, handle: records[slot].streamsHandle))
    }

    /// The region in `slot` exits: its present streams become its departed ones (those departed
    /// before are forgotten), and it has no present stream.
    mutating func depart(slot: Int) {
        guard let streams = updateStreams(slot: slot, { record, streams in streams.takeAll(from: &record) }) else { return }
        records[slot].departedPosition = departed.store(streams, at: records[slot].departedPosition)
    }

    /// The public form of the region in `slot`'s record, with its streams.
    func monitoredRegion(slot: Int) -> MonitoredRegion? {
        guard records[slot].isStored else { return nil }
        return MonitoredRegion(record: records[slot],
                               streams: RegionStreams(store: streams.store, handle: records[slot].streamsHandle).table,
                               departedStreams: departed[records[slot].departedPosition])
    }

    /// Regions holding departed streams.
    var departedCount: Int { departed.count }

    /// Regions holding one present stream, and regions holding more (in a table of their own).
    var streamForms: (single: Int, tables: Int) { (streams.store.singleCount, streams.store.tableCount) }

    /// Forgets every present stream's gone-deadline (the detector changed).
    mutating func forgetStreamDeadlines() { streams.store.forgetDeadlines() }

    /// Frees the present streams a handle points to.
    private mutating func freeStreams(_ handle: Int32) {
        streams.handle = handle
        streams.free()
    }

    /// Makes room for `additional` more regions: the identifier map is not rehashed as it grows.
    mutating func reserveCapacity(_ additional: Int) {
        let total = count + max(0, additional)
        if total * 2 > index.count { rebuildIndex(bucketCount: Self.bucketCount(for: total)) }
        records.growCapacity(toAtLeast: total)
    }

    /// Stores `record` under its region's identifier and returns its slot; a record already stored
    /// under that identifier is replaced in its slot and handed back in `replaced`.
    @discardableResult
    mutating func insert(_ record: RegionRecord, replaced: inout RegionRecord?) -> Int {
        // One hash of the identifier: the lookup that misses ends at the empty bucket the new
        // region's slot is filed in.
        let id = record.region.identifier
        var (bucket, found, hash) = find(id)
        if let slot = found {
            var old = record
            swap(&old, &records[slot])
            records[slot].departedPosition = -1
            records[slot].streamsHandle = RegionStreams.none
            records[slot].isStored = true
            departed.free(old.departedPosition)
            freeStreams(old.streamsHandle)
            old.departedPosition = -1
            old.streamsHandle = RegionStreams.none
            old.isStored = false
            replaced = old
            return slot
        }
        if (count + 1) * 2 > index.count {
            rebuildIndex(bucketCount: Self.bucketCount(for: count + 1))
            bucket = emptyBucket(hash: hash)
        }
        let slot = free.last.map(Int.init) ?? records.count
        index[bucket] = Self.bucket(hash: hash, slot: slot)
        count += 1
        var stored = record
        stored.departedPosition = -1
        stored.streamsHandle = RegionStreams.none
        stored.isStored = true
        if slot < records.count {
            free.removeLast()
            records[slot] = stored
        } else {
            records.append(stored)
        }
        return slot
    }

    /// Removes region `id`; returns its record.
    @discardableResult
    mutating func removeValue(forKey id: String) -> RegionRecord? {
        let (bucket, found, _) = find(id)
        guard let slot = found else { return nil }
        return remove(slot: slot, bucket: bucket)
    }

    /// Removes the region in `slot`, filed in the index at `bucket`; returns its record (its
    /// streams forgotten).
    @discardableResult
    private mutating func remove(slot: Int, bucket: Int) -> RegionRecord {
        deleteBucket(bucket)
        count -= 1
        var record = Self.vacant
        swap(&record, &records[slot])
        departed.free(record.departedPosition)
        freeStreams(record.streamsHandle)
        record.departedPosition = -1
        record.streamsHandle = RegionStreams.none
        record.isStored = false
        free.append(Int32(truncatingIfNeeded: slot))
        return record
    }

    /// Every stored region with its identifier, in slot order.
    var all: [(id: String, record: RegionRecord)] {
        records.indices.compactMap { records[$0].isStored ? (records[$0].region.identifier, records[$0]) : nil }
    }

    // MARK: - The identifier index

    /// The smallest power-of-two bucket count (at least 16) at least twice `regions`.
    private static func bucketCount(for regions: Int) -> Int {
        var buckets = 16
        while buckets < regions * 2 { buckets *= 2 }
        return buckets
    }

    @inline(__always)
    private static func bucket(hash: UInt64, slot: Int) -> UInt64 {
        (hash & 0xFFFF_FFFF) << 32 | UInt64(UInt32(truncatingIfNeeded: slot + 1))
    }

    /// `id`'s bucket and slot when it is stored; otherwise the empty bucket ending its probe run
    /// (−1 when the index is empty) and `nil`. Also the identifier's hash.
    @inline(__always)
    private func find(_ id: String) -> (bucket: Int, slot: Int?, hash: UInt64) {
        let hash = StreamTable.hash(id)
        guard !index.isEmpty else { return (-1, nil, hash) }
        let mask = index.count - 1
        let fingerprint = hash & 0xFFFF_FFFF
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while true {
            let stored = index[bucket]
            if stored == 0 { return (bucket, nil, hash) }
            if stored >> 32 == fingerprint {
                let slot = Int(stored & 0xFFFF_FFFF) - 1
                if records[slot].region.identifier == id { return (bucket, slot, hash) }
            }
            bucket = (bucket + 1) & mask
        }
    }

    /// The empty bucket a new identifier with `hash` is filed in.
    private func emptyBucket(hash: UInt64) -> Int {
        let mask = index.count - 1
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while index[bucket] != 0 { bucket = (bucket + 1) & mask }
        return bucket
    }

    /// Refiles every bucket in a table of `bucketCount` (a power of two): from the stored hash
    /// bits, without hashing an identifier again.
    private mutating func rebuildIndex(bucketCount: Int) {
        let old = index
        index = Array(repeating: 0, count: bucketCount)
        let mask = bucketCount - 1
        for stored in old where stored != 0 {
            var bucket = Int(truncatingIfNeeded: stored >> 32) & mask
            while index[bucket] != 0 { bucket = (bucket + 1) & mask }
            index[bucket] = stored
        }
    }

    /// Empties `start`, shifting later buckets of its probe run back (no tombstones).
    private mutating func deleteBucket(_ start: Int) {
        let mask = index.count - 1
        var hole = start
        index[hole] = 0
        var bucket = (hole + 1) & mask
        while index[bucket] != 0 {
            if OpenAddressing.canMove(home: Int(truncatingIfNeeded: index[bucket] >> 32) & mask, into: hole, from: bucket) {
                index[hole] = index[bucket]
                index[bucket] = 0
                hole = bucket
            }
            bucket = (bucket + 1) & mask
        }
    }
}

extension RegionTable: BeaconMatchTable.KeySource {
    /// Whether the beacon region in `slot` has the constraint of `key` (the beacon match table
    /// keeps no keys). A free slot holds a circular record.
    @inline(__always)
    func slot(_ slot: Int32, hasKey key: BeaconMatchTable.Key) -> Bool {
        let slot = Int(slot)
        guard slot >= 0, slot < records.count, case .beacon(let beacon) = records[slot].region else { return false }
        return key.isKey(of: beacon.constraint)
    }
}
