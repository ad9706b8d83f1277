import Foundation
import RegionKitEngine
import Synchronization

/// Each region's stored evidence (`region_state.evidence`) as the last full read of the states
/// decoded it, text and value: a row whose text is unchanged is not decoded again. Decoding every
/// row's was a quarter of a `GET /v1/regions` at 10,000 regions, and the states change far more
/// slowly than a dashboard lists them. Each full read replaces the whole table, so the regions
/// removed since go with it; a text that does not decode is `nil` (the state is reported without
/// it), and read again once mended. At most ``capacity`` regions are kept (≈ 400 bytes each):
/// beyond, the rest are decoded at every read, so a store of a million regions does not hold
/// another 400 MB for its listings.
///
/// ```swift
/// var pass = cache.beginPass()
/// for row in rows { state.evidence = row.evidence.flatMap { pass.evidence(of: row.identifier, text: $0) } }
/// cache.finish(pass)
/// ```
public final class StoredEvidenceCache: Sendable {
    typealias Table = [String: (text: String, evidence: EventEvidence?)]
    private let table = Mutex<Table>([:])

    /// The most regions kept.
    public let capacity: Int

    public init(capacity: Int = 100_000) {
        self.capacity = max(0, capacity)
    }

    /// One full read of the states: the table as it is now, and the one it is replaced with.
    public struct Pass {
        let known: Table
        let capacity: Int
        var read: Table = [:]
        let decoder = JSONDecoder()

        /// The evidence `text` holds for region `identifier`: the one decoded last time when the
        /// text is the same, else decoded now.
        public mutating func evidence(of identifier: String, text: String) -> EventEvidence? {
            if let hit = known[identifier], hit.text == text {
                if read.count < capacity { read[identifier] = hit }
                return hit.evidence
            }
            let evidence = try? decoder.decode(EventEvidence.self, from: Data(text.utf8))
            if read.count < capacity { read[identifier] = (text, evidence) }
            return evidence
        }
    }

    public func beginPass() -> Pass {
        let known = table.withLock { $0 }
        var pass = Pass(known: known, capacity: capacity)
        pass.read.reserveCapacity(known.count)
        return pass
    }

    /// How many regions' evidence is kept now.
    var count: Int { table.withLock { $0.count } }

    /// Keeps what `pass` read (and only that) for the next one.
    public func finish(_ pass: Pass) {
        table.withLock { $0 = pass.read }
    }
}
