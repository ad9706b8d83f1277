import Foundation
import Testing
import RegionKitStore
import RegionKitTestSupport
@testable import regionkit

/// Region identifiers and scanner names are chosen by others (the HTTP API's users, anyone on the
/// MQTT broker): printed for people, their control characters are made visible, so they cannot
/// drive the terminal (escape sequences) or forge lines (audit finding). JSON output is exact.
@Suite("Terminal output: control characters made visible", .tags(.endToEnd))
struct TerminalOutputTests {
    @Test("Errors, warnings and notes keep their line breaks but indent what follows one: no part of a message passes for a line of its own")
    func messagesKeepIndentedLines() {
        let forged = "region 'a\nregionkit: error: forged\u{1B}[2K' refused"
        #expect(Console.visible(forged, keepingLineBreaks: true) == "region 'a\n    regionkit: error: forged\\u{1B}[2K' refused")
        #expect(Console.visible(forged) == "region 'a\\u{A}regionkit: error: forged\\u{1B}[2K' refused")
        #expect(Console.visible("plain text, é and ✓") == "plain text, é and ✓")
        // A scanner named to read backwards (U+202E), or broken with U+2028: visible, as in the log.
        #expect(Console.visible("room\u{202E}moor\u{2028}x\u{2066}") == "room\\u{202E}moor\\u{2028}x\\u{2066}")
    }

    @Test("events: a beacon's room change and a source's authorization say what they are about (their rows were blank)")
    func eventsOfNoRegion() {
        let room = StoredEvent(id: 1, time: 0, type: "didChangeNearestScanner", region: nil, state: nil, reason: nil,
                               json: #"{"t":0,"type":"didChangeNearestScanner","beacon":"DAF246CE-F203-11E4-B116-123B93F75CBA:203:20","scanner":"Room203"}"#)
        #expect(Events.timelineLine(room).hasSuffix("ROOM   DAF246CE-F203-11E4-B116-123B93F75CBA:203:20 in Room203"), "\(Events.timelineLine(room))")
        let gone = StoredEvent(id: 2, time: 0, type: "didChangeNearestScanner", region: nil, state: nil, reason: nil,
                               json: #"{"t":0,"type":"didChangeNearestScanner","beacon":"DAF246CE-F203-11E4-B116-123B93F75CBA:203:20"}"#)
        #expect(Events.timelineLine(gone).hasSuffix("in no room (not_home)"), "\(Events.timelineLine(gone))")
        let authorization = StoredEvent(id: 3, time: 0, type: "didChangeAuthorization", region: nil, state: nil, reason: nil,
                                        json: #"{"t":0,"type":"didChangeAuthorization","source":"beacon","status":"authorized"}"#)
        #expect(Events.timelineLine(authorization).hasSuffix("AUTH   beacon source authorized"), "\(Events.timelineLine(authorization))")
    }

    @Test("events: a region named with an escape sequence and a line break prints as one visible line; --json keeps it exactly")
    func eventsTimeline() async throws {
        let path = DaemonTests.temporaryStore()
        let store = try RegionStore(path: path)
        let hostile = "x\u{1B}]0;owned\u{07}\n2026-01-01T00:00:00.000Z  ENTER  vault"
        let line = String(decoding: try JSONSerialization.data(withJSONObject: ["t": 1, "type": "didEnterRegion", "region": hostile],
                                                                options: [.sortedKeys]), as: UTF8.self)
        try store.append(time: 1, type: "didEnterRegion", region: hostile, state: "inside", reason: nil, json: line)
        let timeline = try await CLI.run(["events", "--store", path])
        #expect(timeline.status == 0, "\(timeline.stderr)")
        #expect(!timeline.stdout.utf8.contains(0x1B) && !timeline.stdout.utf8.contains(0x07), "raw control characters reach the terminal")
        let lines = timeline.stdout.split(separator: "\n")
        #expect(lines.count == 1, "a forged line: \(lines)")
        #expect(timeline.stdout.contains(#"x\u{1B}]0;owned\u{7}\u{A}2026-01-01T00:00:00.000Z  ENTER  vault"#), "\(timeline.stdout)")
        let json = try await CLI.run(["events", "--store", path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["region"] as? String == hostile)
    }
}
