import RegionKitCore

/// One region's present streams in the engine-wide ``StreamStore``: the region's handle with the
/// store it points into, with the part of ``StreamTable``'s interface the engine uses.
///
/// The handle (``RegionRecord/streamsHandle``) is ``none`` when the region holds no stream, a
/// single stream's position in the store when it holds one (position 0 in this view), and
/// ``tableHandle(_:)`` of its table's number when it holds more. ``RegionTable`` keeps the store
/// in a view of its own and points it at a record's handle for one access to the record
/// (``RegionTable/updateStreams(slot:_:)``); the methods that change the handle take the record
/// and change its handle too.
///
/// ```swift
/// table.updateStreams(slot: slot) { record, streams in
///     if let position = streams.index(forKey: key) { streams[position: position].excusedSilence = 0 }
///     else { streams.insertNew(key, estimator, deadline: nil, in: &record) }
/// }
/// ```
struct RegionStreams {
    var store: StreamStore
    /// The handle of the region this view reads and changes: set by the ``RegionTable`` for each
    /// access to a record, and by the changes (which set the record's too).
    var handle: Int32

    /// The handle of a region without streams.
    static let none: Int32 = -1

    /// The handle of the table numbered `number`.
    @inline(__always)
    static func tableHandle(_ number: Int32) -> Int32 { -2 - number }

    init(store: StreamStore, handle: Int32) {
        self.store = store
        self.handle = handle
    }

    /// The table's number, when the region holds more than one stream.
    @inline(__always)
    private var tableNumber: Int32? { handle < -1 ? -2 - handle : nil }

    /// The number of streams.
    var count: Int {
        if handle >= 0 { return 1 }
        guard let number = tableNumber else { return 0 }
        return store.tables[Int(number)].count
    }

    var isEmpty: Bool { handle == Self.none }

    /// The position of `key`'s stream, if present.
    @inline(__always)
    func index(forKey key: MonitoredRegion.StreamKey) -> Int? {
        if handle >= 0 {
            let (chunk, offset) = StreamStore.split(handle)
            return store.chunks[chunk][offset].key == key ? 0 : nil
        }
        guard let number = tableNumber else { return nil }
        return store.tables[Int(number)].index(forKey: key)
    }

    /// The sighting path's one access: when `key`'s stream is present, applies `body` to it in
    /// place as ``StreamTable/update(position:_:)`` does and returns `body`'s result with the stream's
    /// gone-deadline before (NaN: not known) and the region's number of streams; `nil` when it
    /// is absent. `scannerHash`: the hash of the key's scanner name, when the caller has it
    /// (``StreamTable/index(forKey:scannerHash:)``). One access to the store's element (the
    /// single stream, or the region's table) instead of one for the lookup, one for the old
    /// deadline and one for the update: each is an array access checked for uniqueness.
    @inline(__always)
    mutating func update<Result>(_ key: MonitoredRegion.StreamKey, scannerHash: UInt64?,
                                 _ body: (inout ReceptionEstimator) -> (Result, deadline: Timestamp?))
        -> (result: Result, previousDeadline: Double, count: Int)? {
        if handle >= 0 {
            let (chunk, offset) = StreamStore.split(handle)
            return Self.updateSingle(&store.chunks[chunk][offset], key, body)
        }
        guard let number = tableNumber else { return nil }
        return Self.updateTable(&store.tables[Int(number)], key, scannerHash: scannerHash, body)
    }

    @inline(__always)
    private static func updateSingle<Result>(_ entry: inout StreamStore.Entry, _ key: MonitoredRegion.StreamKey,
                                             _ body: (inout ReceptionEstimator) -> (Result, deadline: Timestamp?))
        -> (result: Result, previousDeadline: Double, count: Int)? {
        guard entry.key == key else { return nil }
        let previous = entry.deadline
        let (result, deadline) = body(&entry.value)
        entry.deadline = deadline?.seconds ?? .nan
        return (result, previous, 1)
    }

    @inline(__always)
    private static func updateTable<Result>(_ table: inout StreamTable, _ key: MonitoredRegion.StreamKey, scannerHash: UInt64?,
                                            _ body: (inout ReceptionEstimator) -> (Result, deadline: Timestamp?))
        -> (result: Result, previousDeadline: Double, count: Int)? {
        let found = if let scannerHash { table.index(forKey: key, scannerHash: scannerHash) } else { table.index(forKey: key) }
        guard let position = found else { return nil }
        let previous = table.knownDeadline(position: position)
        return (table.update(position: position, body), previous, table.count)
    }

    /// `key`'s stream, if present.
    subscript(key: MonitoredRegion.StreamKey) -> ReceptionEstimator? {
        index(forKey: key).map { self[position: $0] }
    }

    /// The stream at `position` (from ``index(forKey:)``), in place; a change forgets its deadline.
    subscript(position position: Int) -> ReceptionEstimator {
        get {
            if handle >= 0 {
                let (chunk, offset) = StreamStore.split(handle)
                return store.chunks[chunk][offset].value
            }
            return store.tables[Int(tableNumber!)][position: position]
        }
        _modify {
            if handle >= 0 {
                let (chunk, offset) = StreamStore.split(handle)
                defer { store.chunks[chunk][offset].deadline = .nan }
                yield &store.chunks[chunk][offset].value
            } else {
                yield &store.tables[Int(tableNumber!)][position: position]
            }
        }
    }

    /// Adds `key`'s stream (not present) to `record`'s streams (this view's), with its
    /// gone-deadline if known. A region's second stream moves its first into a table of their own.
    mutating func insertNew(_ key: MonitoredRegion.StreamKey, _ value: ReceptionEstimator, deadline: Timestamp?, in record: inout RegionRecord) {
        defer { record.streamsHandle = handle }
        var entry = StreamStore.Entry(key: key, value: value)
        entry.deadline = deadline?.seconds ?? .nan
        if handle == Self.none {
            handle = store.storeSingle(entry)
        } else if let number = tableNumber {
            store.tables[Int(number)].insertNew(entry)
        } else {
            var table = Self.table(of: store.takeSingle(handle))
            table.insertNew(entry)
            handle = Self.tableHandle(store.storeTable(table))
        }
    }

    /// Calls `body` with every stream, with its gone-deadline when known (``StreamTable/forEachStream(_:)``).
    @inline(__always)
    func forEachStream(_ body: (MonitoredRegion.StreamKey, ReceptionEstimator, _ deadline: Timestamp?) -> Void) {
        if handle >= 0 {
            let (chunk, offset) = StreamStore.split(handle)
            let deadline = store.chunks[chunk][offset].deadline
            body(store.chunks[chunk][offset].key, store.chunks[chunk][offset].value, deadline.isNaN ? nil : Timestamp(seconds: deadline))
        } else if let number = tableNumber {
            store.tables[Int(number)].forEachStream(body)
        }
    }

    /// Removes the streams of `record` (this view's) for which `shouldBeRemoved` is true; a table
    /// left with one stream or none gives its place back.
    mutating func removeAll(in record: inout RegionRecord, where shouldBeRemoved: (MonitoredRegion.StreamKey, ReceptionEstimator) -> Bool) {
        defer { record.streamsHandle = handle }
        if handle >= 0 {
            let (chunk, offset) = StreamStore.split(handle)
            if shouldBeRemoved(store.chunks[chunk][offset].key, store.chunks[chunk][offset].value) {
                store.takeSingle(handle)
                handle = Self.none
            }
        } else if let number = tableNumber {
            store.tables[Int(number)].removeAll(where: shouldBeRemoved)
            if store.tables[Int(number)].count <= 1 { adopt(store.takeTable(number)) }
        }
    }

    /// The streams as a table of their own (the public ``MonitoredRegion/streams``).
    var table: StreamTable {
        if handle >= 0 {
            let (chunk, offset) = StreamStore.split(handle)
            return Self.table(of: store.chunks[chunk][offset])
        }
        guard let number = tableNumber else { return [:] }
        return store.tables[Int(number)]
    }

    /// Takes every stream of `record` (this view's) out (the region exits); it has none after.
    mutating func takeAll(from record: inout RegionRecord) -> StreamTable {
        defer {
            handle = Self.none
            record.streamsHandle = Self.none
        }
        if handle >= 0 { return Self.table(of: store.takeSingle(handle)) }
        guard let number = tableNumber else { return [:] }
        return store.takeTable(number)
    }

    /// Frees the streams of the handle this view points at (a record being removed: its handle
    /// is not kept).
    mutating func free() {
        if handle >= 0 {
            store.takeSingle(handle)
        } else if let number = tableNumber {
            store.takeTable(number)
        }
        handle = Self.none
    }

    /// A table of the single stream `entry`, its deadline kept.
    private static func table(of entry: StreamStore.Entry) -> StreamTable {
        var table = StreamTable()
        table.insertNew(entry)
        return table
    }

    /// Stores `streams` as the region's, in the form their number calls for (its handle is
    /// overwritten: the caller took what it pointed to).
    private mutating func adopt(_ streams: StreamTable) {
        handle = Self.none
        switch streams.count {
        case 0:
            break
        case 1:
            handle = store.storeSingle(streams.onlyEntry)
        default:
            handle = Self.tableHandle(store.storeTable(streams))
        }
    }
}
