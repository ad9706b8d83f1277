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
        // A backslash is escaped too: the two characters `\n` from the network read apart from a newline.
        #expect(EscapingLogHandler.escaped(#"a\nb"#) == #"a\\nb"# && EscapingLogHandler.escaped("a\nb") == #"a\nb"#)
    }

    @Test("A metadata provider's values are escaped as well")
    func provider() {
        let store = InMemoryLogHandler.Store()
        var handler = EscapingLogHandler(ProviderHandler(store: store))
        handler.metadataProvider = Logger.MetadataProvider { ["request": "a\nforged"] }
        let logger = Logger(label: "test") { _ in handler }
        logger.info("hello")
        #expect(store.all.count == 1 && !store.text.contains("\n") && store.text.contains(#"request=a\nforged"#), "\(store.all)")
    }

    /// Writes the provider's metadata with the record's, as the stream handler does.
    struct ProviderHandler: LogHandler {
        let store: InMemoryLogHandler.Store
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(metadataProvider?.get() ?? [:]) { $1 }.merging(event.metadata ?? [:]) { $1 }
            store.append("\(event.message) " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        }
    }
}
