import Foundation
import RegionKitCore

/// Every region's present streams, engine-wide, beside the records (``RegionTable``): a record
/// holds a 4-byte handle (``RegionRecord/streamsHandle``) instead of a ``StreamTable`` of its own.
///
/// Most beacon regions hold one stream (a region per beacon, heard by one scanner). A table of
/// its own cost such a region 24 bytes in its record and an allocation of its own: a 32-byte
/// array header and the 176-byte stream, a 224-byte malloc block (issue 13, memory per beacon).
/// Here a region with one stream keeps it in ``chunks``, dense chunks of streams with a free
/// list (176 bytes a stream, nothing else); a region with more holds a ``StreamTable`` in
/// ``tables`` (by number, with a free list), as before. A region moves from one form to the
/// other as its streams come and go (``RegionStreams``); nothing is hashed to find either.
///
/// ```swift
/// var streams = RegionStreams(store: StreamStore(), handle: RegionStreams.none)
/// streams.insertNew(key, estimator, deadline: nil, in: &record)   // a single stream
/// streams.count                                                  // 1
/// streams.store.singleCount                                      // 1
/// ```
struct StreamStore: Sendable {
    typealias Entry = StreamTable.Entry

    /// Single streams by position: the first chunk grows as an array does, the others are
    /// allocated whole (a chunk grown by doubling would leave its smaller copies in the heap).
    /// ``RegionStreams`` reaches streams in place through `chunks` and `tables` themselves:
    /// `Array`'s element access stays in place where a `_modify` of ours yielded a copy of the
    /// element (callgrind: a 176-byte copy and its retains per sighting).
    var chunks: [[Entry]] = []
    /// Positions below the last chunk's end that hold no stream, to be reused.
    private var freeSingles: [Int32] = []
    /// The tables of regions with more than one stream, by number; a free number holds an empty table.
    var tables: [StreamTable] = []
    private var freeTables: [Int32] = []

    /// Single streams per chunk (a power of two).
    static let chunkShift = 10
    static let chunkSize = 1 << chunkShift
    static let chunkMask = chunkSize - 1

    /// What a free position holds: no scanner name, no evidence array (nothing retained).
    private static let vacant = Entry(
        key: MonitoredRegion.StreamKey(identity: BeaconIdentity(uuid: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), major: 0, minor: 0),
                                       scannerID: nil),
        value: ReceptionEstimator(firstSighting: .zero, priorInterval: 1, tracksEvidence: false))

    /// Single streams held.
    var singleCount: Int {
        guard let last = chunks.last else { return 0 }
        return (chunks.count - 1) * Self.chunkSize + last.count - freeSingles.count
    }

    /// Many-stream tables held.
    var tableCount: Int { tables.count - freeTables.count }

    // MARK: Single streams

    /// Splits a single stream's position into its chunk and its place in the chunk.
    @inline(__always)
    static func split(_ position: Int32) -> (chunk: Int, offset: Int) {
        (Int(position) >> chunkShift, Int(position) & chunkMask)
    }

    /// Stores `entry` as a single stream; its position.
    mutating func storeSingle(_ entry: Entry) -> Int32 {
        if let reused = freeSingles.popLast() {
            let (chunk, offset) = Self.split(reused)
            chunks[chunk][offset] = entry
            return reused
        }
        if chunks.isEmpty || chunks[chunks.count - 1].count == Self.chunkSize {
            precondition(chunks.count < Int(Int32.max) >> Self.chunkShift, "single streams fit 31 bits")
            var chunk: [Entry] = []
            if !chunks.isEmpty { chunk.reserveCapacity(Self.chunkSize) }
            chunks.append(chunk)
        }
        let position = (chunks.count - 1) << Self.chunkShift | chunks[chunks.count - 1].count
        chunks[chunks.count - 1].append(entry)
        return Int32(truncatingIfNeeded: position)
    }

    /// Frees the single stream at `position`; returns it.
    @discardableResult
    mutating func takeSingle(_ position: Int32) -> Entry {
        var entry = Self.vacant
        let (chunk, offset) = Self.split(position)
        swap(&entry, &chunks[chunk][offset])
        freeSingles.append(position)
        return entry
    }

    // MARK: Many-stream tables

    /// Stores `table` (more than one stream); its number.
    mutating func storeTable(_ table: StreamTable) -> Int32 {
        if let reused = freeTables.popLast() {
            tables[Int(reused)] = table
            return reused
        }
        precondition(tables.count < Int(Int32.max) - 2, "stream tables fit 31 bits")
        tables.append(table)
        return Int32(truncatingIfNeeded: tables.count - 1)
    }

    /// Frees the table numbered `number`; returns it.
    @discardableResult
    mutating func takeTable(_ number: Int32) -> StreamTable {
        var table = StreamTable()
        swap(&table, &tables[Int(number)])
        freeTables.append(number)
        return table
    }

    /// Forgets every stream's gone-deadline (the detector changed).
    mutating func forgetDeadlines() {
        for chunk in chunks.indices {
            for position in chunks[chunk].indices { chunks[chunk][position].deadline = .nan }
        }
        for number in tables.indices { tables[number].forgetDeadlines() }
    }
}
