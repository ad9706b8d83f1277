import Foundation
import RegionKitCore

/// A region's sighting streams by key (beacon identity + scanner): the engine's replacement for a
/// `[StreamKey: ReceptionEstimator]` dictionary (issue 13, memory per tracked beacon).
///
/// The streams are kept densely, as key and estimator, in chunks of `chunkSize` (the first grows
/// as an array does, the others are allocated whole): growing a table never copies it, so no
/// freed copy is left behind in the heap, and nothing is reserved beyond the last chunk. Tables of more than
/// `linearLimit` streams add an open-addressing index of 4-byte positions (linear probing, load
/// ≤ ½) hashed on the identity's 16 id bytes (random already) and its packed format, major and
/// minor — no SipHash. A dictionary's buckets are at most ¾ full and every one is touched, so
/// each of a million streams cost ~2.1 records of memory; here a stream costs its record plus
/// 8–16 bytes of index. (The engine keeps a region's only stream without a table of its own, in
/// its `StreamStore`: a table is an allocation of its own, 48 bytes more than its one stream.)
///
/// Order is insertion order, except that ``removeValue(forKey:)`` moves the last stream into the
/// removed one's place. Equality and hashing do not depend on order, as for a dictionary.
///
/// ```swift
/// var streams: StreamTable = [:]
/// streams[key] = ReceptionEstimator(firstSighting: .zero, priorInterval: 1)
/// streams.count            // 1
/// streams[key]?.sightings  // 1
/// ```
public struct StreamTable: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Key = MonitoredRegion.StreamKey
    public typealias Element = (key: Key, value: ReceptionEstimator)

    struct Entry: Hashable, Sendable {
        var key: Key
        var value: ReceptionEstimator
        /// The stream's gone-deadline in seconds as the engine last computed it for this value
        /// (``ExitDetector/goneDeadline(for:gridOrigin:)``, a pure function of the detector, the
        /// estimator and the region's registration time); NaN when not known. Any change of the
        /// value makes it NaN; the engine forgets every one when its detector changes. Not part
        /// of equality, hashing or coding.
        var deadline: Double = .nan

        init(key: Key, value: ReceptionEstimator) {
            self.key = key
            self.value = value
        }

        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.key == rhs.key && lhs.value == rhs.value }

        func hash(into hasher: inout Hasher) {
            hasher.combine(key)
            hasher.combine(value)
        }
    }

    /// The streams, densely: the first ``chunkSize`` in `head` (inline, so a small table is one
    /// allocation), the rest in chunks of ``chunkSize``; all but the last chunk are full.
    private var head: [Entry] = []
    private var chunks: [[Entry]] = []
    /// The number of streams.
    public var count: Int {
        chunks.isEmpty ? head.count : head.count + (chunks.count - 1) * Self.chunkSize + chunks[chunks.count - 1].count
    }
    /// Positions in ``entries`` + 1 by hash (0 = empty); empty while the table is small.
    private var index: [UInt32] = []

    /// Up to this many streams a lookup compares keys in order instead of keeping an index.
    static let linearLimit = 8
    /// Entries per chunk (a power of two).
    static let chunkShift = 12
    static let chunkSize = 1 << chunkShift
    static let chunkMask = chunkSize - 1

    /// Every stream, in table order.
    var entries: FlattenSequence<[[Entry]]> { ([head] + chunks).joined() }

    /// The key at `position` (without copying the estimator).
    @inline(__always)
    private func key(at position: Int) -> Key {
        position < Self.chunkSize ? head[position].key : chunks[(position >> Self.chunkShift) - 1][position & Self.chunkMask].key
    }

    /// Whether the stream at `position` is `key`'s, compared in place (the stored key, with its
    /// scanner name, is not copied out).
    @inline(__always)
    private func hasKey(_ key: Key, at position: Int) -> Bool {
        position < Self.chunkSize ? head[position].key == key : chunks[(position >> Self.chunkShift) - 1][position & Self.chunkMask].key == key
    }

    @inline(__always)
    fileprivate func entry(at position: Int) -> Entry {
        position < Self.chunkSize ? head[position] : chunks[(position >> Self.chunkShift) - 1][position & Self.chunkMask]
    }

    public init() {}

    public init(dictionaryLiteral elements: (Key, ReceptionEstimator)...) {
        for (key, value) in elements { self[key] = value }
    }

    public var isEmpty: Bool { count == 0 }
    /// The streams' keys, in table order.
    public var keys: [Key] { entries.map(\.key) }
    /// The streams' estimators, in table order.
    public var values: [ReceptionEstimator] { entries.map(\.value) }

    public func makeIterator() -> Iterator { Iterator(table: self) }

    /// Walks `head` then each chunk by position: no array is built per iteration (joining
    /// `[head] + chunks` allocated one for every walk of a region's streams).
    public struct Iterator: IteratorProtocol {
        let table: StreamTable
        var position = 0
        let end: Int

        init(table: StreamTable) {
            self.table = table
            self.end = table.count
        }

        public mutating func next() -> Element? {
            guard position < end else { return nil }
            defer { position += 1 }
            let entry = table.entry(at: position)
            return (key: entry.key, value: entry.value)
        }
    }

    /// Calls `body` with every stream in table order, reading each in place (no estimator is
    /// copied out), with its gone-deadline when known (see ``update(position:_:)``): the engine's
    /// walks of a region's streams.
    @inline(__always)
    func forEachStream(_ body: (Key, ReceptionEstimator, _ deadline: Timestamp?) -> Void) {
        func known(_ seconds: Double) -> Timestamp? { seconds.isNaN ? nil : Timestamp(seconds: seconds) }
        for position in head.indices { body(head[position].key, head[position].value, known(head[position].deadline)) }
        for chunk in chunks {
            for position in chunk.indices { body(chunk[position].key, chunk[position].value, known(chunk[position].deadline)) }
        }
    }

    public subscript(key: Key) -> ReceptionEstimator? {
        get { index(forKey: key).map { entry(at: $0).value } }
        set {
            if let position = index(forKey: key) {
                if let newValue { self[position: position] = newValue } else { remove(at: position) }
            } else if let newValue {
                append(Entry(key: key, value: newValue))
            }
        }
    }

    /// The stream at `position` (from ``index(forKey:)``), in place.
    subscript(position position: Int) -> ReceptionEstimator {
        get { position < Self.chunkSize ? head[position].value : chunks[(position >> Self.chunkShift) - 1][position & Self.chunkMask].value }
        _modify {
            if position < Self.chunkSize {
                defer { head[position].deadline = .nan }
                yield &head[position].value
            } else {
                defer { chunks[(position >> Self.chunkShift) - 1][position & Self.chunkMask].deadline = .nan }
                yield &chunks[(position >> Self.chunkShift) - 1][position & Self.chunkMask].value
            }
        }
    }

    /// Applies `body` to the stream at `position` (from ``index(forKey:)``) in one in-place access.
    /// `body` returns its result and the stream's gone-deadline after the change, if it computed
    /// it (kept for ``forEachStream(_:)``; otherwise the stream's deadline is unknown).
    @inline(__always)
    mutating func update<Result>(position: Int, _ body: (inout ReceptionEstimator) -> (Result, deadline: Timestamp?)) -> Result {
        func apply(_ entry: inout Entry) -> Result {
            let (result, deadline) = body(&entry.value)
            entry.deadline = deadline?.seconds ?? .nan
            return result
        }
        if position < Self.chunkSize {
            return apply(&head[position])
        }
        return apply(&chunks[(position >> Self.chunkShift) - 1][position & Self.chunkMask])
    }

    /// The gone-deadline in seconds the engine last computed for the stream at `position` (from
    /// ``index(forKey:)``) and its current state; NaN when not known (see ``update(position:_:)``).
    @inline(__always)
    func knownDeadline(position: Int) -> Double {
        position < Self.chunkSize ? head[position].deadline : chunks[(position >> Self.chunkShift) - 1][position & Self.chunkMask].deadline
    }

    /// Adds `key`'s stream (not present) at the end, with its gone-deadline if known.
    mutating func insertNew(_ key: Key, _ value: ReceptionEstimator, deadline: Timestamp?) {
        var entry = Entry(key: key, value: value)
        entry.deadline = deadline?.seconds ?? .nan
        append(entry)
    }

    /// Adds `entry`'s stream (its key not present) at the end, with the deadline it holds: how
    /// the engine's ``StreamStore`` moves a single stream into a table and back out.
    mutating func insertNew(_ entry: Entry) { append(entry) }

    /// The stream of a table of exactly one, with its deadline.
    var onlyEntry: Entry {
        precondition(count == 1, "a table of one stream")
        return head[0]
    }

    /// Forgets every stream's gone-deadline (the detector changed).
    mutating func forgetDeadlines() {
        for position in head.indices { head[position].deadline = .nan }
        for chunk in chunks.indices {
            for position in chunks[chunk].indices { chunks[chunk][position].deadline = .nan }
        }
    }

    /// The position of `key`'s stream, if present.
    @inline(__always)
    public func index(forKey key: Key) -> Int? {
        if index.isEmpty {
            for position in head.indices where head[position].key == key { return position }
            return nil
        }
        return indexed(key, hash: Self.hash(key))
    }

    /// The position of `key`'s stream, if present, where `scannerHash` is ``hash(_:)-(String)``
    /// of the key's scanner, which the caller has already computed (the engine, for the
    /// sighting's scanner channel): a many-stream table does not hash the name again.
    @inline(__always)
    func index(forKey key: Key, scannerHash: UInt64) -> Int? {
        if index.isEmpty {
            for position in head.indices where head[position].key == key { return position }
            return nil
        }
        return indexed(key, hash: Self.hash(key.identity, scannerHash: scannerHash))
    }

    /// The position of `key`, whose ``hash(_:)-(Key)`` is `hash`, in a table with an index.
    @inline(__always)
    private func indexed(_ key: Key, hash: UInt64) -> Int? {
        let mask = index.count - 1
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while true {
            let stored = index[bucket]
            if stored == 0 { return nil }
            let position = Int(stored) - 1
            if hasKey(key, at: position) { return position }
            bucket = (bucket + 1) & mask
        }
    }

    /// Removes `key`'s stream; returns it.
    @discardableResult
    public mutating func removeValue(forKey key: Key) -> ReceptionEstimator? {
        guard let position = index(forKey: key) else { return nil }
        let value = entry(at: position).value
        remove(at: position)
        return value
    }

    /// The streams for which `isIncluded` is true.
    public func filter(_ isIncluded: (Key, ReceptionEstimator) throws -> Bool) rethrows -> StreamTable {
        var kept = StreamTable()
        for entry in entries where try isIncluded(entry.key, entry.value) { kept.append(entry) }
        return kept
    }

    /// Removes the streams for which `shouldBeRemoved` is true, in place (no second table is
    /// built: pruning a million streams allocates nothing but the new index); the others keep
    /// their order.
    public mutating func removeAll(where shouldBeRemoved: (Key, ReceptionEstimator) throws -> Bool) rethrows {
        var kept = 0
        for position in 0..<count {
            let entry = entry(at: position)
            guard try !shouldBeRemoved(entry.key, entry.value) else { continue }
            if kept != position { self[position: kept] = entry.value; setKey(entry.key, at: kept) }
            kept += 1
        }
        guard kept < count else { return }
        while count > kept {
            if count <= Self.chunkSize {
                head.removeLast(count - kept)
            } else {
                let inLast = ((count - 1) & Self.chunkMask) + 1
                let drop = Swift.min(inLast, count - kept)
                chunks[chunks.count - 1].removeLast(drop)
                if chunks[chunks.count - 1].isEmpty { chunks.removeLast() }
            }
        }
        if count > Self.linearLimit { rebuildIndex() } else { index = [] }
    }

    /// A cheap hash of the identity (the 16 id bytes are random: UUIDs, Eddystone ids) and the
    /// scanner's name, spread by multiplies. (The scanner was once left out: the streams of one
    /// beacon then shared one probe run, and a beacon reported under thousands of room names, a
    /// misconfigured or hostile MQTT publisher, made every sighting of it walk them all.)
    @inline(__always)
    static func hash(_ key: Key) -> UInt64 {
        hash(key.identity, scannerHash: key.scannerID.map(hash))
    }

    /// ``hash(_:)-(StreamTable.Key)`` of a key with `identity` and a scanner whose name hashes to
    /// `scannerHash` (``hash(_:)-(String)``; `nil`: no scanner).
    @inline(__always)
    static func hash(_ identity: BeaconIdentity, scannerHash: UInt64?) -> UInt64 {
        let (high, low) = withUnsafeBytes(of: identity.uuid.uuid) {
            ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
        let tag = UInt64(identity.format.rawValue) << 32 | UInt64(identity.major) << 16 | UInt64(identity.minor)
        var h = high ^ (low &* 0x9E37_79B9_7F4A_7C15) ^ (tag &* 0xC2B2_AE3D_27D4_EB4F)
        if let scannerHash { h ^= scannerHash }
        h ^= h >> 32
        h &*= 0xD6E8_FEB8_6659_FD93
        h ^= h >> 29
        return h
    }

    /// A scanner name's bytes mixed 8 at a time (names are short: a room, an address), with its
    /// length and a seed drawn per process: names come from the network, and a publisher who
    /// knew the function could pick names that share a probe run. Positions in the index
    /// depend on it, nothing else does (streams are kept in insertion order). Also the engine's
    /// hash of region identifiers (``RegionTable``) and of scanner names (``ScannerNumbers``).
    ///
    /// Strings that are equal (`==`: canonically equivalent, as "Café" precomposed and with a
    /// combining accent, or the Kelvin sign and "K") hash alike, as `Hashable` requires. ASCII
    /// text (the common case: one OR a word to tell) is hashed by its bytes. Other text can equal
    /// ASCII text only through the three scalars whose canonical decomposition is ASCII (every
    /// scalar checked; ``asciiEquivalent(_:)``): text of ASCII and those is hashed by its bytes
    /// with them replaced; any other text's normal form holds a scalar outside ASCII, so it equals
    /// no ASCII text and takes `String`'s own hash (seeded per process, normalising as it goes:
    /// ≈ 60 ns, where Foundation's NFC measured ≈ 1.3 µs).
    static func hash(_ scanner: String) -> UInt64 {
        func mix(_ bytes: UnsafeBufferPointer<UInt8>) -> (hash: UInt64, isASCII: Bool) {
            var h = scannerSeed ^ UInt64(bytes.count)
            var high: UInt64 = 0
            var offset = 0
            while offset + 8 <= bytes.count {
                let word = UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                high |= word
                h = (h ^ word) &* 0x9E37_79B9_7F4A_7C15
                h ^= h >> 29
                offset += 8
            }
            var tail: UInt64 = 0
            while offset < bytes.count {
                tail = tail << 8 | UInt64(bytes[offset])
                offset += 1
            }
            high |= tail
            h = (h ^ tail) &* 0xC2B2_AE3D_27D4_EB4F
            return (h ^ (h >> 32), high & 0x8080_8080_8080_8080 == 0)
        }
        let (hash, isASCII) = scanner.utf8.withContiguousStorageIfAvailable(mix) ?? Array(scanner.utf8).withUnsafeBufferPointer(mix)
        if isASCII { return hash }
        guard scanner.unicodeScalars.allSatisfy({ $0.isASCII || asciiEquivalent($0) != nil }) else {
            return scannerSeed ^ UInt64(UInt(bitPattern: scanner.hashValue))
        }
        let folded = scanner.unicodeScalars.map { $0.isASCII ? UInt8(truncatingIfNeeded: $0.value) : asciiEquivalent($0)! }
        return folded.withUnsafeBufferPointer(mix).hash
    }

    /// The ASCII character a scalar outside ASCII is canonically equivalent to, if any: only
    /// these three have a canonical decomposition that is ASCII (every scalar of Unicode 14 checked).
    static func asciiEquivalent(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar.value {
        case 0x212A: 0x4B   // KELVIN SIGN ≡ "K"
        case 0x037E: 0x3B   // GREEK QUESTION MARK ≡ ";"
        case 0x1FEF: 0x60   // GREEK VARIA ≡ "`"
        default: nil
        }
    }

    /// The seed of ``hash(_:)-(String)``.
    static let scannerSeed = UInt64.random(in: .min ... .max)

    private mutating func append(_ entry: Entry) {
        if count < Self.chunkSize {
            head.append(entry)
        } else {
            if count & Self.chunkMask == 0 {
                // Allocated whole: a chunk grown by doubling would leave its smaller copies behind.
                var chunk: [Entry] = []
                chunk.reserveCapacity(Self.chunkSize)
                chunks.append(chunk)
            }
            chunks[chunks.count - 1].append(entry)
        }
        if index.isEmpty {
            if count > Self.linearLimit { rebuildIndex() }
        } else if count * 2 > index.count {
            rebuildIndex()
        } else {
            insertIntoIndex(position: count - 1)
        }
    }

    private mutating func remove(at position: Int) {
        let last = count - 1
        if !index.isEmpty {
            deleteFromIndex(position: position)
            if position != last {
                // The last entry moves into the hole: repoint its index slot.
                let bucket = bucket(of: last)
                index[bucket] = UInt32(position + 1)
            }
        }
        if position != last { self[position: position] = entry(at: last).value; setKey(entry(at: last).key, at: position) }
        if last < Self.chunkSize {
            head.removeLast()
        } else {
            chunks[chunks.count - 1].removeLast()
            if chunks[chunks.count - 1].isEmpty { chunks.removeLast() }
        }
        if !index.isEmpty, count <= Self.linearLimit / 2 { index = [] }
    }

    private mutating func setKey(_ key: Key, at position: Int) {
        if position < Self.chunkSize {
            head[position].key = key
        } else {
            chunks[(position >> Self.chunkShift) - 1][position & Self.chunkMask].key = key
        }
    }

    /// The index slot holding `position`.
    private func bucket(of position: Int) -> Int {
        let mask = index.count - 1
        var bucket = Int(truncatingIfNeeded: Self.hash(key(at: position))) & mask
        while Int(index[bucket]) != position + 1 { bucket = (bucket + 1) & mask }
        return bucket
    }

    private mutating func insertIntoIndex(position: Int) {
        let mask = index.count - 1
        var bucket = Int(truncatingIfNeeded: Self.hash(key(at: position))) & mask
        while index[bucket] != 0 { bucket = (bucket + 1) & mask }
        index[bucket] = UInt32(position + 1)
    }

    /// Backward-shift deletion (no tombstones).
    private mutating func deleteFromIndex(position: Int) {
        let mask = index.count - 1
        var hole = bucket(of: position)
        var next = (hole + 1) & mask
        while index[next] != 0 {
            let home = Int(truncatingIfNeeded: Self.hash(key(at: Int(index[next]) - 1))) & mask
            // The entry at `next` may move into the hole when its home is not in (hole, next].
            if (next - home) & mask >= (next - hole) & mask {
                index[hole] = index[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        index[hole] = 0
    }

    private mutating func rebuildIndex() {
        var size = 16
        while size < count * 2 { size *= 2 }
        // Positions are stored + 1 in 32 bits: a table beyond 2³² − 2 streams cannot exist in memory here.
        index = Array(repeating: 0, count: size)
        for position in 0..<count { insertIntoIndex(position: position) }
    }
}

extension StreamTable: Hashable {
    /// Same streams, whatever their order.
    public static func == (lhs: StreamTable, rhs: StreamTable) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for entry in lhs.entries {
            guard let position = rhs.index(forKey: entry.key), rhs[position: position] == entry.value else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for entry in entries { combined ^= entry.hashValue }
        hasher.combine(count)
        hasher.combine(combined)
    }
}

extension StreamTable: Codable {
    /// Encoded as a dictionary with non-String keys is: key, value, key, value, …
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for entry in entries {
            try container.encode(entry.key)
            try container.encode(entry.value)
        }
    }

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        self.init()
        while !container.isAtEnd {
            let key = try container.decode(Key.self)
            guard !container.isAtEnd else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "stream table: a key without a value")
            }
            self[key] = try container.decode(ReceptionEstimator.self)
        }
    }
}
