import Logging
import RegionKitTestSupport
import Testing
@testable import regionkit

/// The daemon's log lines quote text from the network; none of it may start a line of its own.
@Suite("Escaping log handler: no forged log lines")
struct EscapingLogHandlerTests {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "refused\nforged line" }
    }

    @Test("Control characters of the message, metadata keys and values (nested too), logger metadata and an error's text are escaped; printable text, non-ASCII included, is left as it is")
    func escapes() {
        let store = InMemoryLogHandler.Store()
        var logger = Logger(label: "test") { _ in EscapingLogHandler(InMemoryLogHandler(store: store)) }
        logger[metadataKey: "site\n"] = "home\r"
        logger.warning("rejected \("x\n2026-12-04T15:00:00+0000 critical regionkit: FORGED")",
                       metadata: ["scanner": "ev\u{0}il\tname\u{85}", "list": ["a\nb", ["k": "\u{202E}txt"]], "room": "Küche キッチン"])
        logger.error("failed", error: Failure())
        let lines = store.all
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { !$0.contains("\n") && !$0.contains("\r") && !$0.contains("\u{0}") && !$0.contains("\u{85}") && !$0.contains("\u{202E}") }, "\(lines)")
        #expect(lines[0].contains(#"rejected x\n2026-12-04T15:00:00+0000 critical regionkit: FORGED"#), "\(lines[0])")
        #expect(lines[0].contains(#"scanner=ev\u{0}il\tname\u{85}"#) && lines[0].contains(#"site\n=home\r"#), "\(lines[0])")
        // (Nested values are rendered by the receiving handler: an array's debug description doubles the backslash.)
        #expect(lines[0].contains(#"nb"#) && lines[0].contains(#"u{202E}txt"#) && lines[0].contains("room=Küche キッチン"), "\(lines[0])")
        #expect(lines[1].contains(#"error.message=refused\nforged line"#), "\(lines[1])")
    }

    @Test("Printable ASCII comes back as the same string")
    func untouched() {
        #expect(EscapingLogHandler.escaped("regionkit/home/beacons") == "regionkit/home/beacons")
        #expect(EscapingLogHandler.escaped("") == "")
        #expect(EscapingLogHandler.escaped("\u{7F}") == #"\u{7F}"#)
    }
}
