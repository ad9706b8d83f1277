/// The streams each beacon region held when it last exited, beside the engine's records
/// (``RegionTable``): a stream heard again soon after was not gone, and resumes with what was
/// learned about it (``ExitDetector/stream(resuming:at:rssi:)``).
///
/// Few regions hold departed streams at a time (those that exited and have not been pruned or
/// entered for good), so they are not a field of every record: that cost 24 bytes a region
/// (issue 13, memory per region). A record holds the position of its table here (4 bytes, −1:
/// none); positions are dense and reused, so no lookup hashes anything.
///
/// ```swift
/// var departed = DepartedStreams()
/// let position = departed.store(streams, at: -1)   // a new position
/// departed[position].count                          // streams.count
/// departed.free(position)
/// ```
struct DepartedStreams: Sendable {
    private var tables: [StreamTable] = []
    private var freePositions: [Int32] = []

    /// Tables held.
    var count: Int { tables.count - freePositions.count }

    /// The table at `position` (empty for −1).
    subscript(position: Int32) -> StreamTable {
        position < 0 ? [:] : tables[Int(position)]
    }

    /// Stores `streams` at `position` (−1: a new one) and returns where it is; −1 when
    /// `streams` is empty (the position, if any, is freed).
    mutating func store(_ streams: StreamTable, at position: Int32) -> Int32 {
        guard !streams.isEmpty else {
            free(position)
            return -1
        }
        if position >= 0 {
            tables[Int(position)] = streams
            return position
        }
        if let reused = freePositions.popLast() {
            tables[Int(reused)] = streams
            return reused
        }
        precondition(tables.count < Int(Int32.max), "departed stream tables fit 31 bits")
        tables.append(streams)
        return Int32(tables.count - 1)
    }

    /// Removes and returns `key`'s stream from the table at `position`, freeing the table when
    /// it empties (`position` then becomes −1).
    mutating func take(_ key: MonitoredRegion.StreamKey, at position: inout Int32) -> ReceptionEstimator? {
        guard position >= 0 else { return nil }
        let stream = tables[Int(position)].removeValue(forKey: key)
        if tables[Int(position)].isEmpty {
            free(position)
            position = -1
        }
        return stream
    }

    /// Frees the table at `position` (nothing for −1).
    mutating func free(_ position: Int32) {
        guard position >= 0 else { return }
        tables[Int(position)] = [:]
        freePositions.append(position)
    }
}
