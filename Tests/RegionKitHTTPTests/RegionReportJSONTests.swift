import Foundation
import Testing
import RegionKitCore
import RegionKitEngine
@testable import RegionKitHTTP

/// The region listing's hand-written JSON (``RegionReport/listingJSON(_:changesRefused:)``) is
/// the bytes Foundation's `JSONEncoder` with `.sortedKeys` writes, which the routes answered
/// before: the same key order, escapes and number forms, for every field present or absent.
@Suite("Region reports written by hand, byte for byte as JSONEncoder")
struct RegionReportJSONTests {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// What the listing route encoded before, with the refusal of a cluster member.
    struct RefusedListing: Encodable {
        var regions: [RegionReport]
        var changesRefused: String
    }

    /// A page of the listing (`?limit=`), with or without a refusal; `nextCursor` null on the last page.
    struct PagedListing: Encodable {
        var regions: [RegionReport]
        var changesRefused: String?
        var nextCursor: String?
        var preceding: Int
        var total: Int

        func encode(to encoder: any Encoder) throws {
            enum Key: String, CodingKey { case regions, changesRefused, nextCursor, preceding, total }
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(regions, forKey: .regions)
            try container.encodeIfPresent(changesRefused, forKey: .changesRefused)
            try container.encode(nextCursor, forKey: .nextCursor)   // null written, not left out
            try container.encode(preceding, forKey: .preceding)
            try container.encode(total, forKey: .total)
        }
    }

    /// Every byte JSONEncoder escapes (controls, `"`, `\`, `/`), the ones it leaves (DEL, U+2028),
    /// and multi-byte text.
    static let pieces = ["lobby", "\"", "\\", "/", "\n", "\r", "\t", "\u{08}", "\u{0C}", "\u{00}", "\u{1F}", "\u{7F}",
                         "é", "😀", "\u{2028}", "ü/ö", " ", "ab\\\"cd", "</script>", "hall:b"]
    /// Integral, tiny, huge, negative zero, long fractions, exponent forms.
    static let numbers: [Double] = [0, -0.0, 1, 100, 1e15, 1e16, 1e20, 1e21, 0.1, 1e-5, 5e-324, 35.681236, -122.41941550000001,
                                    1_733_400_000.123456, 1_733_400_000, 0.000123, 2.5, -90, 180, .greatestFiniteMagnitude]

    static func text(_ rng: inout SeededRandom) -> String {
        (0..<Int.random(in: 0...4, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    static func number(_ rng: inout SeededRandom) -> Double {
        if Bool.random(using: &rng) { return numbers.randomElement(using: &rng)! }
        let value = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &rng))
        return value.isFinite ? value : Double.random(in: -1e6...1e6, using: &rng)
    }

    static func maybe<T>(_ rng: inout SeededRandom, _ value: (inout SeededRandom) -> T) -> T? {
        Bool.random(using: &rng) ? value(&rng) : nil
    }

    static func beacon(_ rng: inout SeededRandom) -> BeaconIdentity {
        let uuid = UUID(uuid: (UInt8.random(in: 0...255, using: &rng), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, UInt8.random(in: 0...255, using: &rng)))
        let major = UInt16.random(in: 0...UInt16.max, using: &rng), minor = UInt16.random(in: 0...UInt16.max, using: &rng)
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return BeaconIdentity(uuid: uuid, major: major, minor: minor)
        case 1: return BeaconIdentity(uuid: uuid, major: major, minor: minor, format: .altBeacon)
        case 2: return BeaconIdentity(uuid: uuid, major: 0, minor: 0, format: .eddystoneUID)
        default: return BeaconIdentity(deviceID: "phone:\(minor)") ?? BeaconIdentity(uuid: uuid, major: major, minor: minor)
        }
    }

    static func report(_ rng: inout SeededRandom) throws -> RegionReport {
        let region: Region = Bool.random(using: &rng)
            ? .beacon(try BeaconRegion(identifier: "r\(Int.random(in: 0..<1000, using: &rng))", uuid: UUID(), major: 1, minor: nil))
            : .circular(try CircularRegion(identifier: "c", latitude: 35.68, longitude: 139.76, radius: 100))
        var report = RegionReport(region: region, origin: Bool.random(using: &rng) ? .api : nil,
                                  state: [.inside, .outside, .unknown].randomElement(using: &rng)!, since: nil, stale: Bool.random(using: &rng))
        // Every field in turn present or absent, with awkward text and numbers.
        report.identifier = text(&rng)
        report.kind = text(&rng)
        report.origin = text(&rng)
        report.format = maybe(&rng) { text(&$0) }
        report.uuid = maybe(&rng) { text(&$0) }
        report.major = maybe(&rng) { UInt16.random(in: 0...UInt16.max, using: &$0) }
        report.minor = maybe(&rng) { UInt16.random(in: 0...UInt16.max, using: &$0) }
        report.namespace = maybe(&rng) { text(&$0) }
        report.instance = maybe(&rng) { text(&$0) }
        report.device = maybe(&rng) { text(&$0) }
        report.scanner = maybe(&rng) { text(&$0) }
        report.latitude = maybe(&rng) { number(&$0) }
        report.longitude = maybe(&rng) { number(&$0) }
        report.radius = maybe(&rng) { number(&$0) }
        report.notifyOnEntry = Bool.random(using: &rng)
        report.notifyOnExit = Bool.random(using: &rng)
        report.notifyEntryStateOnDisplay = maybe(&rng) { Bool.random(using: &$0) }
        report.since = maybe(&rng) { number(&$0) }
        report.lastReason = maybe(&rng) { text(&$0) }
        report.waitingForSource = maybe(&rng) { text(&$0) }
        report.lastEvidence = maybe(&rng) { r in
            EventEvidence(rssi: maybe(&r) { Int.random(in: Int.min...Int.max, using: &$0) }, scannerID: maybe(&r) { text(&$0) },
                          beacon: maybe(&r) { beacon(&$0) }, lastSightingAge: maybe(&r) { number(&$0) },
                          exitThreshold: maybe(&r) { number(&$0) }, distance: maybe(&r) { number(&$0) },
                          horizontalAccuracy: maybe(&r) { number(&$0) }, dwell: maybe(&r) { number(&$0) },
                          reason: maybe(&r) { text(&$0) })
        }
        return report
    }

    @Test("2,000 random reports, listed with and without a refusal and one by one: the same bytes as JSONEncoder", arguments: [1, 2, 3])
    func sameBytes(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let reports = try (0..<2_000).map { _ in try Self.report(&rng) }
        let listing = String(decoding: RegionReport.listingJSON(reports, changesRefused: nil), as: UTF8.self)
        #expect(listing == String(decoding: try Self.encoder.encode(["regions": reports]), as: UTF8.self))
        let refusal = "regions are changed through the cluster's leader: \"/v1\"\n"
        let refused = String(decoding: RegionReport.listingJSON(reports, changesRefused: refusal), as: UTF8.self)
        #expect(refused == String(decoding: try Self.encoder.encode(RefusedListing(regions: reports, changesRefused: refusal)), as: UTF8.self))
        for report in reports {
            let mine = String(decoding: report.json, as: UTF8.self), theirs = String(decoding: try Self.encoder.encode(report), as: UTF8.self)
            guard mine == theirs else {
                Issue.record("report differs:\nmine   \(mine)\ntheirs \(theirs)")
                return
            }
        }
        #expect(try JSONDecoder().decode([String: [RegionReport]].self, from: Data(listing.utf8))["regions"] == reports, "and it decodes back")
        // A page: its cursor (any text, escaped as the identifiers are) or null, and the total.
        let cursors: [String?] = [nil, "room-9"] + Self.pieces.enumerated().map { "\($0.element)\($0.offset)" }
        for (index, cursor) in cursors.enumerated() {
            let refusal: String? = index.isMultiple(of: 2) ? nil : refusal
            let page = Array(reports.prefix(index * 3))
            let mine = String(decoding: RegionReport.listingJSON(page, changesRefused: refusal, page: (reports.count, index * 7, cursor)), as: UTF8.self)
            let theirs = String(decoding: try Self.encoder.encode(PagedListing(regions: page, changesRefused: refusal, nextCursor: cursor,
                                                                                preceding: index * 7, total: reports.count)), as: UTF8.self)
            #expect(mine == theirs, "cursor \(cursor ?? "null")")
        }
    }

    @Test("An empty listing, and the reports the daemon builds from an engine's regions (beacon, circle, Eddystone, device)")
    func realReports() throws {
        #expect(String(decoding: RegionReport.listingJSON([], changesRefused: nil), as: UTF8.self) == #"{"regions":[]}"#)
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        let regions: [Region] = [
            .beacon(try BeaconRegion(identifier: "lobby/north", uuid: uuid, major: 1, minor: 2)),
            .circular(try CircularRegion(identifier: "park", latitude: 35.681236, longitude: 139.767125, radius: 150)),
            .beacon(try BeaconRegion(identifier: "eddy", constraint: try BeaconIdentityConstraint(eddystoneNamespace: "00112233445566778899", instance: "aabbccddeeff"))),
            .beacon(try BeaconRegion(identifier: "alice", constraint: try BeaconIdentityConstraint(device: "phone:alice"))),
        ]
        let reports = regions.map { RegionReport(region: $0, origin: .api, state: .inside, since: 1_733_400_000.25, stale: false) }
        #expect(RegionReport.listingJSON(reports, changesRefused: nil) == Array(try Self.encoder.encode(["regions": reports])))
        let first = String(decoding: reports[0].json, as: UTF8.self)
        #expect(first == #"{"format":"ibeacon","identifier":"lobby\/north","kind":"beacon","major":1,"minor":2,"notifyEntryStateOnDisplay":false,"notifyOnEntry":true,"notifyOnExit":true,"origin":"api","since":1733400000.25,"stale":false,"state":"inside","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}"#)
    }
}
