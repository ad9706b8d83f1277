import Logging
import RegionKitConcurrency

/// A swift-log handler that keeps every record in memory, so that tests can read what was logged
/// (for example: that a password never appears).
///
/// ```swift
/// let logs = InMemoryLogHandler.Store()
/// let logger = Logger(label: "test") { _ in InMemoryLogHandler(store: logs) }
/// ```
struct InMemoryLogHandler: LogHandler {
    final class Store: Sendable {
        private let lines = LockedBox<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
        var text: String { all.joined(separator: "\n") }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    init(store: Store) { self.store = store }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        store.append("\(event.level) \(event.message) \(rendered)")
    }
}
