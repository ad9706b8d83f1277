import Foundation
import Testing
import RegionKitEngine
@testable import RegionKitStore

@Suite("StoredEvidenceCache")
struct StoredEvidenceCacheTests {
    static func text(_ evidence: EventEvidence) throws -> String { try StoreWrite.json(evidence) }

    @Test("A pass answers every row's evidence, the same text from what it kept, a changed one anew, a damaged one nil; it keeps at most its capacity")
    func answersAndBounds() throws {
        let cache = StoredEvidenceCache(capacity: 2)
        let a = EventEvidence(rssi: -60, reason: "first sighting"), b = EventEvidence(reason: "no sighting for 3.0 s")
        let c = EventEvidence(lastSightingAge: 8.5, reason: "no sighting for 8.5 s")
        var pass = cache.beginPass()
        #expect(pass.evidence(of: "lobby", text: try Self.text(a)) == a)
        #expect(pass.evidence(of: "hall", text: try Self.text(b)) == b)
        #expect(pass.evidence(of: "shop", text: try Self.text(c)) == c, "beyond the capacity: decoded, not kept")
        cache.finish(pass)
        #expect(cache.count == 2)
        pass = cache.beginPass()
        #expect(pass.evidence(of: "lobby", text: try Self.text(c)) == c, "a changed text is decoded again")
        #expect(pass.evidence(of: "hall", text: try Self.text(b)) == b)
        #expect(pass.evidence(of: "shop", text: #"{"rssi": "loud"}"#) == nil, "a text that does not decode")
        cache.finish(pass)
        #expect(cache.count == 2)
        pass = cache.beginPass()
        #expect(pass.evidence(of: "hall", text: try Self.text(b)) == b)
        cache.finish(pass)
        #expect(cache.count == 1, "the regions a pass did not read are forgotten")
        #expect(StoredEvidenceCache(capacity: -5).capacity == 0)
    }
}
