import Foundation
import Testing
@testable import RegionKitEngine

/// Issue 13, memory per tracked beacon: the streams' table (``StreamTable``, dense chunks and an
/// open-addressing index) against a `Dictionary`, and the compact ``ReceptionEstimator`` (the
/// evidence detector's state out of line) against the estimator that tracks everything.
@Suite("Stream table and compact estimator: identical to a dictionary and to the full estimator")
struct StreamTableTests {
    static let uuids = [UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, UUID(uuidString: "B9407F30-F5F8-466E-AFF9-25556B57FE6D")!]

    static func key(_ n: Int, scanner: Int) -> StreamTable.Key {
        StreamTable.Key(identity: BeaconIdentity(uuid: uuids[n % 2], major: UInt16(n / 1000 % 65_536), minor: UInt16(n % 1000)),
                        scannerID: scanner == 0 ? nil : "s\(scanner)")
    }

    /// Random inserts, updates, removals and lookups: after each step the table holds exactly what
    /// a dictionary holds. Sizes cross the linear limit (8), the index's growth and two chunks (4,096).
    @Test("Random operations agree with a dictionary", arguments: [(seed: UInt64(1), span: 20, steps: 3_000), (seed: 2, span: 6_000, steps: 30_000)])
    func randomOperations(seed: UInt64, span: Int, steps: Int) {
        var random = SeededRandom(seed: seed)
        var table = StreamTable()
        var reference: [StreamTable.Key: ReceptionEstimator] = [:]
        for step in 0..<steps {
            let key = Self.key(Int(random.uniform() * Double(span)), scanner: Int(random.uniform() * 3))
            let action = random.uniform()
            if action < 0.6 {
                var stream = table[key] ?? ReceptionEstimator(firstSighting: .zero, priorInterval: 1, tracksEvidence: false)
                stream.record(at: Timestamp(seconds: Double(step)), rssi: -60 - step % 20)
                table[key] = stream
                reference[key] = stream
            } else if action < 0.85 {
                #expect(table.removeValue(forKey: key) == reference.removeValue(forKey: key))
            } else if action < 0.9 {
                table[key] = nil
                reference[key] = nil
            } else {
                #expect(table[key] == reference[key])
            }
            #expect(table.count == reference.count)
            if step % 997 == 0 || step == steps - 1 {
                // Every entry is found through the index, and iteration visits each exactly once.
                for (key, value) in reference { #expect(table[key] == value) }
                var seen = Set<StreamTable.Key>()
                for (key, value) in table {
                    #expect(reference[key] == value)
                    #expect(seen.insert(key).inserted, "visited twice: \(key)")
                }
                #expect(seen.count == reference.count)
            }
        }
        // Order-independent equality and hashing; filter; Codable round trip.
        var reversed = StreamTable()
        for (key, value) in table.reversed() { reversed[key] = value }
        #expect(reversed == table)
        #expect(reversed.hashValue == table.hashValue)
        let kept = table.filter { _, stream in stream.sightings > 1 }
        #expect(kept.count == reference.values.filter { $0.sightings > 1 }.count)
        let decoded = try? JSONDecoder().decode(StreamTable.self, from: JSONEncoder().encode(table))
        #expect(decoded == table)
        // In-place removal: the same streams as the filter, in the same order, all found.
        var pruned = table
        pruned.removeAll { _, stream in stream.sightings <= 1 }
        #expect(pruned == kept)
        #expect(pruned.keys == kept.keys)
        for (key, value) in kept { #expect(pruned[key] == value) }
    }

    /// Session 10: each stream keeps the gone-deadline the engine computed at its last change, so
    /// timer settling reads it instead of running the detector again. The kept value must never
    /// outlive a change of the estimator, and must not make equal tables unequal.
    @Test("One beacon under 10,000 scanner names spreads over the index (the scanner is hashed: they once shared one probe run), and every stream is found")
    func scannersSpreadOverTheIndex() {
        let identity = BeaconIdentity(uuid: Self.uuids[0], major: 1, minor: 1)
        let names = (0..<10_000).map { "room-\($0)" } + ["a", "", "AA:BB:CC:DD:EE:FF", "0123456789abcdef", "éé"]
        let buckets = Set(names.map { StreamTable.hash(StreamTable.Key(identity: identity, scannerID: $0)) & 0xFFFF })
        // 10,005 keys thrown at random into 65,536 buckets fill about 9,270 of them.
        #expect(buckets.count > 9_000, "\(buckets.count) distinct buckets")
        var table = StreamTable()
        for (index, name) in names.enumerated() {
            table[StreamTable.Key(identity: identity, scannerID: name)] = ReceptionEstimator(firstSighting: Timestamp(seconds: Double(index)), priorInterval: 1, tracksEvidence: false)
        }
        #expect(table.count == names.count)
        #expect(names.enumerated().allSatisfy { index, name in
            table[StreamTable.Key(identity: identity, scannerID: name)]?.firstSighting.seconds == Double(index)
        })
        #expect(table[StreamTable.Key(identity: identity, scannerID: nil)] == nil)
    }

    /// Equal scanner names must hash alike: `==` on `String` is canonical equivalence, so "Café"
    /// precomposed and with a combining accent, or the Kelvin sign and "K", are one key — as in a
    /// dictionary. (The byte hash once sent them to different buckets: in a table large enough
    /// for an index the second spelling was a second stream, in a small one the same stream.)
    @Test("Canonically equivalent scanner names are one stream, in a table with an index as without", arguments: [2, 100])
    func equivalentScannerNames(others: Int) {
        let identity = BeaconIdentity(uuid: Self.uuids[0], major: 1, minor: 1)
        #expect(StreamTable.hash("Caf\u{E9}") == StreamTable.hash("Cafe\u{301}"))
        #expect(StreamTable.hash("\u{212A}elvin") == StreamTable.hash("Kelvin"))
        #expect(StreamTable.hash("Kelvin") != StreamTable.hash("kelvin"))
        // The three scalars whose canonical decomposition is ASCII (checked over all of Unicode).
        #expect(StreamTable.hash("a\u{037E}b\u{1FEF}c") == StreamTable.hash("a;b`c"))
        #expect(StreamTable.hash("K\u{FC}che") == StreamTable.hash("Ku\u{308}che"))
        var table = StreamTable()
        for index in 0..<others {
            table[StreamTable.Key(identity: identity, scannerID: "room-\(index)")] = ReceptionEstimator(firstSighting: .zero, priorInterval: 1, tracksEvidence: false)
        }
        for (stored, asked) in [("Caf\u{E9}", "Cafe\u{301}"), ("\u{212A}elvin", "Kelvin"), ("Wohnzimmer-Ku\u{308}che", "Wohnzimmer-K\u{FC}che")] {
            table[StreamTable.Key(identity: identity, scannerID: stored)] = ReceptionEstimator(firstSighting: Timestamp(seconds: 7), priorInterval: 1, tracksEvidence: false)
            #expect(table[StreamTable.Key(identity: identity, scannerID: asked)]?.firstSighting.seconds == 7, "\(asked)")
            table[StreamTable.Key(identity: identity, scannerID: asked)] = ReceptionEstimator(firstSighting: Timestamp(seconds: 8), priorInterval: 1, tracksEvidence: false)
        }
        #expect(table.count == others + 3)
    }

    /// The engine looks a sighting's stream up with its scanner name's hash from the channel
    /// lookup (``StreamTable/index(forKey:scannerHash:)``): it must find exactly what a lookup that
    /// hashes the key finds, with and without an index, for stored and absent keys, and for a name
    /// canonically equivalent to the stored one.
    @Test("A lookup with the scanner's hash given finds what a lookup by key finds", arguments: [5, 300])
    func lookupWithScannerHash(streams: Int) {
        var table = StreamTable()
        for n in 0..<streams {
            table[Self.key(n, scanner: n % 7)] = ReceptionEstimator(firstSighting: Timestamp(seconds: Double(n)), priorInterval: 1, tracksEvidence: false)
        }
        let identity = BeaconIdentity(uuid: Self.uuids[1], major: 9, minor: 9)
        table[StreamTable.Key(identity: identity, scannerID: "Caf\u{E9}")] = ReceptionEstimator(firstSighting: .zero, priorInterval: 1, tracksEvidence: false)
        var asked = (0..<streams + 20).flatMap { n in (1..<9).map { Self.key(n, scanner: $0) } }
        asked.append(StreamTable.Key(identity: identity, scannerID: "Cafe\u{301}"))
        var found = 0
        for key in asked {
            let byKey = table.index(forKey: key)
            #expect(table.index(forKey: key, scannerHash: StreamTable.hash(key.scannerID!)) == byKey, "\(key)")
            if byKey != nil { found += 1 }
        }
        #expect(found == streams - (streams + 6) / 7 + 1, "every stored key with a scanner found, and the equivalent name")
    }

    @Test("A kept deadline survives reads, is forgotten by any change of its stream, and is not part of equality")
    func keptDeadlines() {
        var table = StreamTable()
        var estimator = ReceptionEstimator(firstSighting: .zero, priorInterval: 1, tracksEvidence: false)
        table.insertNew(Self.key(1, scanner: 0), estimator, deadline: Timestamp(seconds: 7))
        table[Self.key(2, scanner: 0)] = estimator                       // no deadline given
        func kept() -> [Double?] {
            var deadlines: [Double?] = []
            table.forEachStream { _, _, deadline in deadlines.append(deadline?.seconds) }
            return deadlines
        }
        #expect(kept() == [7, nil])
        _ = table[Self.key(1, scanner: 0)]                               // a read keeps it
        #expect(kept() == [7, nil])
        let position = table.index(forKey: Self.key(1, scanner: 0))!
        let sightings = table.update(position: position) { stream -> (Int, deadline: Timestamp?) in
            stream.record(at: Timestamp(seconds: 1), rssi: -60)
            return (stream.sightings, deadline: Timestamp(seconds: 9))
        }
        #expect(sightings == 2 && kept() == [9, nil])
        table.update(position: position) { stream -> ((), deadline: Timestamp?) in
            stream.record(at: Timestamp(seconds: 2), rssi: -60)
            return ((), deadline: nil)                                   // changed without a new deadline
        }
        #expect(kept() == [nil, nil])
        table.update(position: position) { _ in ((), deadline: Timestamp(seconds: 11)) }
        table[position: position].excusedSilence = 3                     // the in-place subscript forgets it
        #expect(kept() == [nil, nil])
        table.update(position: position) { _ in ((), deadline: Timestamp(seconds: 12)) }
        estimator.record(at: Timestamp(seconds: 5), rssi: -70)
        table[Self.key(1, scanner: 0)] = estimator                       // so does setting by key
        #expect(kept() == [nil, nil])
        table.update(position: position) { _ in ((), deadline: Timestamp(seconds: 13)) }
        table.forgetDeadlines()                                          // the engine's profile changed
        #expect(kept() == [nil, nil])

        // Equality and hashing ignore the kept deadlines.
        var other = table
        other.update(position: position) { _ in ((), deadline: Timestamp(seconds: 99)) }
        #expect(other == table && other.hashValue == table.hashValue)
        // Removal moves the last stream into the hole: its kept deadline is dropped, never misplaced.
        table.update(position: table.index(forKey: Self.key(2, scanner: 0))!) { _ in ((), deadline: Timestamp(seconds: 20)) }
        table.removeValue(forKey: Self.key(1, scanner: 0))
        #expect(table.count == 1 && kept() == [nil])
    }

    @Test("A table of one stream found by key; emptied by removal; a malformed encoding is a clear error")
    func smallTable() throws {
        var table: StreamTable = [Self.key(1, scanner: 0): ReceptionEstimator(firstSighting: .zero, priorInterval: 1)]
        #expect(table.count == 1)
        #expect(table.index(forKey: Self.key(1, scanner: 0)) == 0)
        #expect(table.index(forKey: Self.key(1, scanner: 1)) == nil)
        table[Self.key(1, scanner: 0)] = nil
        #expect(table.isEmpty)
        let key = try JSONEncoder().encode(Self.key(1, scanner: 0))
        let dangling = Data("[".utf8) + key + Data("]".utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(StreamTable.self, from: dangling) }
    }

    @Test("The estimator is 128 bytes; the evidence state lives out of line only when tracked")
    func estimatorLayout() {
        #expect(MemoryLayout<ReceptionEstimator>.stride == 128)
        #expect(!ReceptionEstimator(firstSighting: .zero, priorInterval: 1, tracksEvidence: false).tracksEvidence)
        #expect(ReceptionEstimator(firstSighting: .zero, priorInterval: 1).tracksEvidence)
    }

    /// The same sightings into an estimator that tracks the evidence and one that does not: every
    /// figure the other detectors read, and their thresholds, are identical to the bit.
    @Test("Without the evidence state every other figure and threshold is identical")
    func untrackedMatchesTracked() {
        var random = SeededRandom(seed: 9)
        var full = ReceptionEstimator(firstSighting: .zero, priorInterval: 1, rssi: -60)
        var lean = ReceptionEstimator(firstSighting: .zero, priorInterval: 1, rssi: -60, tracksEvidence: false)
        var t = 0.0
        for step in 0..<5_000 {
            t += random.uniform() < 0.02 ? 2 + random.uniform() * 3 : 0.1 + random.uniform() * 0.02
            let rssi = -60 - Int(random.uniform() * 10) - step / 500
            full.record(at: Timestamp(seconds: t), rssi: rssi)
            lean.record(at: Timestamp(seconds: t), rssi: rssi)
        }
        #expect(full.trendWeight > 0 && lean.trendWeight == 0)
        let detectors: [ExitDetector] = [
            .learnedGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1),
            .periodicGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1),
            .cautiousGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1),
            .adaptive(falseExitProbability: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1),
        ]
        for detector in detectors {
            #expect(detector.silenceThreshold(for: full).bitPattern == detector.silenceThreshold(for: lean).bitPattern, "\(detector)")
            #expect(detector.tailScale(of: full)?.bitPattern == detector.tailScale(of: lean)?.bitPattern, "\(detector)")
        }
        #expect(full.meanInterval.bitPattern == lean.meanInterval.bitPattern)
        #expect(full.sightings == lean.sightings && full.tailIntervals == lean.tailIntervals && full.periodIntervals == lean.periodIntervals)
        #expect(full.gridIntervals == lean.gridIntervals && full.lastRSSI == lean.lastRSSI && full.longestInterval == lean.longestInterval)
        // A stream that starts tracking later (a switch to the evidence profile) starts from the prior.
        lean.startTrackingEvidence()
        #expect(lean.tracksEvidence && lean.evidence == ReceptionEvidence())
    }
}
