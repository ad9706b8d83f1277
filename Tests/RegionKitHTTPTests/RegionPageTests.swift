import Foundation
import Testing
import RegionKit
import RegionKitCore
@testable import RegionKitHTTP
import RegionKitService

/// `GET /v1/regions?limit=&cursor=&prefix=`: pages in identifier order, chosen out of every
/// region without sorting them all (``RegionPage/Selection``), their rows read by key.
@Suite("GET /v1/regions in pages")
struct RegionPageTests {
    /// Identifiers of one to four pieces: ASCII of both cases and digits, `é` in its two spellings
    /// (one identifier, as Swift compares text), an emoji.
    static func identifier(_ rng: inout SeededRandom) -> String {
        let pieces = ["a", "b", "c", "Z", "0", "-", "é", "e\u{301}", "😀"]
        return (0..<Int.random(in: 1...4, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    /// NFC, as the daemon compares identifiers.
    static func nfc(_ text: String) -> [UInt8] { Array(text.precomposedStringWithCanonicalMapping.utf8) }

    /// `identifiers` in the listing's order: the bytes of their NFC (Swift's `<` is no order for
    /// text in two spellings), written out here rather than taken from the selection.
    static func ordered(_ identifiers: [String]) -> [String] {
        identifiers.sorted { nfc($0).lexicographicallyPrecedes(nfc($1)) }
    }

    @Test("The selection picks what filtering and sorting every identifier picks: 2,000 random listings, cursors, prefixes and limits")
    func selectionAgreesWithSorting() {
        var rng = SeededRandom(seed: 11)
        for round in 0..<2_000 {
            var identifiers = Set<String>()
            let count = Int.random(in: 0...60, using: &rng)
            while identifiers.count < count { identifiers.insert(Self.identifier(&rng)) }
            // In NFC, as regions keep their identifiers; the cursor and prefix in either spelling.
            let listed = Array(Set(identifiers.map { $0.precomposedStringWithCanonicalMapping })).shuffled(using: &rng)
            let cursor: String? = switch Int.random(in: 0..<3, using: &rng) {
            case 0: nil
            case 1: listed.randomElement(using: &rng)   // the last of a page before
            default: Self.identifier(&rng)               // one removed since, or never listed
            }
            let prefix: String? = Bool.random(using: &rng) ? nil : String(Self.identifier(&rng).prefix(Int.random(in: 1...2, using: &rng)))
            let query = RegionPage.Query(cursor: cursor, limit: Int.random(in: 1...70, using: &rng), prefix: prefix)
            var selection = RegionPage.Selection(query)
            for identifier in listed { selection.offer(identifier) }
            let matching = listed.filter { identifier in prefix.map { Self.nfc(identifier).starts(with: Self.nfc($0)) } ?? true }
            let following = Self.ordered(matching.filter { identifier in
                cursor.map { Self.nfc($0).lexicographicallyPrecedes(Self.nfc(identifier)) } ?? true
            })
            let page = selection.page
            #expect(page.identifiers == Array(following.prefix(query.limit)), "round \(round): \(query)")
            #expect(page.more == (following.count > query.limit), "round \(round): \(query)")
            #expect(selection.total == matching.count, "round \(round): \(query)")
            #expect(selection.preceding == matching.count - following.count, "round \(round): \(query)")
        }
    }

    @Test("The byte comparisons (memcmp) agree with comparing the UTF-8 arrays: 20,000 random pairs, empty text, one a prefix of the other")
    func byteOrder() {
        var rng = SeededRandom(seed: 5)
        let texts = ["", "a", "ab", "abc", "b", "é", "😀", "café-salle-1", "café-salle-10"]
        var pairs = texts.flatMap { a in texts.map { (a, $0) } }
        for _ in 0..<20_000 {
            let a = Bool.random(using: &rng) ? Self.identifier(&rng) : ""
            pairs.append((a, Bool.random(using: &rng) ? a + Self.identifier(&rng) : Self.identifier(&rng)))
        }
        for (a, b) in pairs {
            #expect(RegionPage.Selection.precedes(a, b) == Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)), "\(a) < \(b)")
            #expect(RegionPage.Selection.begins(a, with: b) == Array(a.utf8).starts(with: Array(b.utf8)), "\(a) begins with \(b)")
            #expect(RegionPage.Selection.begins(b, with: a) == Array(b.utf8).starts(with: Array(a.utf8)), "\(b) begins with \(a)")
        }
    }

    static let names = (1...30).map { "room-\($0)" } + ["room", "Zebra", "apple", "cafe\u{301}", "😀 lounge", "a/b",
                                                        "Room 204", "Room 205", "Room!", "Room+1"]

    /// The test daemon's lobby, a beacon region for each of ``names``, and the park, a circle
    /// waiting for gpsd (its source is restricted).
    static func daemon() async throws -> TestDaemon {
        let beacons = try names.map { Region.beacon(try BeaconRegion(identifier: $0, uuid: TestDaemon.uuid, major: 7)) }
        let park = Region.circular(try CircularRegion(identifier: "park", latitude: 48.85, longitude: 2.35, radius: 80))
        let daemon = try await TestDaemon(configured: [TestDaemon.lobby] + beacons + [park])
        daemon.service.manager.setSourceStatus(.restricted(reason: "gpsd reconnecting"), for: .circular)
        daemon.sight(from: 1, to: 3)   // the lobby: inside
        return daemon
    }

    static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    /// `text` as an HTML form, Python's `requests` or `curl -G --data-urlencode` send it: a space as `+`.
    static func formEncoded(_ text: String) -> String {
        text.split(separator: " ", omittingEmptySubsequences: false).map { escaped(String($0)) }.joined(separator: "+")
    }

    /// Every page from the first, `limit` at a time: the identifiers listed, each page's total, how
    /// many pages; each page's `preceding` is checked against the regions listed before it.
    static func walk(_ client: LoopbackClient, limit: Int, prefix: String? = nil,
                     encode: (String) -> String = escaped) async throws -> (reports: [[String: Any]], totals: Set<Int>, pages: Int) {
        var reports: [[String: Any]] = []
        var totals = Set<Int>()
        var cursor: String?
        var pages = 0
        repeat {
            var path = "/v1/regions?limit=\(limit)"
            if let prefix { path += "&prefix=" + encode(prefix) }
            if let cursor { path += "&cursor=" + encode(cursor) }
            let page = try await client.request("GET", path)
            #expect(page.status == 200, "\(path): \(page.text)")
            let listed = page.json["regions"] as? [[String: Any]] ?? []
            #expect(listed.count <= limit)
            #expect(page.json.keys.contains("nextCursor"), "present, null on the last page: \(page.text)")
            #expect(page.json["preceding"] as? Int == reports.count, "\(path): \(page.json["preceding"] ?? "-") before, \(reports.count) listed")
            reports += listed
            totals.insert(page.json["total"] as? Int ?? -1)
            cursor = page.json["nextCursor"] as? String
            pages += 1
        } while cursor != nil && pages < 100
        return (reports, totals, pages)
    }

    @Test("Pages of 7 list every region once in identifier order, the one waiting for its source too, each as GET of it reports it; without a limit, every region as before")
    func pagesWalkEveryRegion() async throws {
        let daemon = try await Self.daemon()
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        let expected = Self.ordered(["lobby", "park"] + Self.names)
        let (reports, totals, pages) = try await Self.walk(client, limit: 7)
        #expect(reports.compactMap { $0["identifier"] as? String } == expected)
        #expect(totals == [expected.count] && pages == 6, "42 regions, 7 a page: \(totals), \(pages) pages")
        // Each as the region's own GET reports it: its state, origin, evidence, waiting.
        for report in reports {
            let identifier = try #require(report["identifier"] as? String)
            let own = try await client.request("GET", "/v1/regions/" + Self.escaped(identifier))
            #expect(NSDictionary(dictionary: report) == NSDictionary(dictionary: own.json), "\(identifier): \(report) ≠ \(own.text)")
        }
        let lobby = try #require(reports.first { $0["identifier"] as? String == "lobby" })
        #expect(lobby["state"] as? String == "inside" && lobby["lastEvidence"] != nil, "\(lobby)")
        let park = try #require(reports.first { $0["identifier"] as? String == "park" })
        #expect((park["waitingForSource"] as? String)?.contains("gpsd reconnecting") == true, "\(park)")
        // A page of every region at once ends at once.
        let whole = try await client.request("GET", "/v1/regions?limit=10000").json
        #expect((whole["regions"] as? [[String: Any]])?.count == expected.count && whole["nextCursor"] is NSNull, "\(whole)")
        // Without limit, cursor or prefix: every region, monitored in registration order then the
        // waiting, and no page members (clients of the listing before pages see what they saw).
        let all = try await client.request("GET", "/v1/regions").json
        #expect((all["regions"] as? [[String: Any]])?.compactMap { $0["identifier"] as? String } == ["lobby"] + Self.names + ["park"])
        #expect(all["total"] == nil && all["nextCursor"] == nil, "\(all.keys)")
    }

    @Test("A prefix pages through its regions alone and counts them; a cursor removed since still leads on; a cursor alone pages by 100")
    func prefixAndCursors() async throws {
        let daemon = try await Self.daemon()
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        let rooms = try await Self.walk(client, limit: 10, prefix: "room-")
        #expect(rooms.reports.compactMap { $0["identifier"] as? String } == Self.ordered((1...30).map { "room-\($0)" }))
        #expect(rooms.totals == [30] && rooms.pages == 3)
        #expect(try await Self.walk(client, limit: 100, prefix: "room").totals == [31], "room itself begins with room")
        let emoji = try await Self.walk(client, limit: 5, prefix: "😀")
        #expect(emoji.reports.compactMap { $0["identifier"] as? String } == ["😀 lounge"])
        // `é` asked in either spelling finds the region (registered as e + U+0301, kept in NFC).
        for spelling in ["caf\u{E9}", "cafe\u{301}"] {
            let cafe = try await Self.walk(client, limit: 5, prefix: spelling)
            #expect(cafe.reports.compactMap { $0["identifier"] as? String } == ["cafe\u{301}"], "\(Array(spelling.unicodeScalars))")
        }
        // Form-encoded (a space as `+`), one a page: every `Room…` in order. Read as a literal
        // plus, the cursor `Room+204` sorted after `Room 205` and `Room!`, and they were on no page.
        let form = try await Self.walk(client, limit: 1, prefix: "Room", encode: Self.formEncoded)
        #expect(form.reports.compactMap { $0["identifier"] as? String } == ["Room 204", "Room 205", "Room!", "Room+1"])
        #expect(try await Self.walk(client, limit: 5, prefix: "Room 2", encode: Self.formEncoded).reports.count == 2)
        let plus = try await client.request("GET", "/v1/regions?prefix=Room%2B").json["regions"] as? [[String: Any]]
        #expect(plus?.compactMap { $0["identifier"] as? String } == ["Room+1"], "a literal plus is %2B")
        #expect(try await Self.walk(client, limit: 5, prefix: "nowhere").reports.isEmpty)

        // room-2 removed: a page that begins after it still begins with room-20.
        #expect(try await client.request("DELETE", "/v1/regions/room-2").status == 204)
        let after = try await client.request("GET", "/v1/regions?cursor=room-2&limit=2").json
        #expect((after["regions"] as? [[String: Any]])?.compactMap { $0["identifier"] as? String } == ["room-20", "room-21"], "\(after)")
        #expect(after["total"] as? Int == 41 && after["nextCursor"] as? String == "room-21")
        #expect(after["preceding"] as? Int == Self.ordered(["lobby", "park"] + Self.names).prefix { $0 != "room-20" }.count - 1, "room-2 is gone")
        // A cursor (or prefix) alone: a page of at most 100.
        let fromApple = try await client.request("GET", "/v1/regions?cursor=apple").json
        let expected = Self.ordered((["lobby", "park"] + Self.names).filter { $0 != "room-2" && Self.nfc("apple").lexicographicallyPrecedes(Self.nfc($0)) })
        #expect((fromApple["regions"] as? [[String: Any]])?.compactMap { $0["identifier"] as? String } == expected)
        #expect(fromApple["nextCursor"] is NSNull)
    }

    @Test("Bad page parameters are a 400 naming the parameter", arguments: [
        ("limit=0", "limit"), ("limit=10001", "limit"), ("limit=seven", "limit"), ("limit=-1", "limit"),
        ("cursor=", "cursor"), ("cursor=a%00b", "cursor"), ("prefix=", "prefix"), ("prefix=%00", "prefix"),
        ("cursor=%FF", "cursor"), ("prefix=%zz", "prefix"), ("prefix=a%2", "prefix"),
    ])
    func badParameters(query: String, field: String) async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let response = try await daemon.client().request("GET", "/v1/regions?" + query)
        #expect(response.status == 400, "\(query): \(response.text)")
        #expect(response.json["field"] as? String == field, "\(query): \(response.text)")
    }
}
