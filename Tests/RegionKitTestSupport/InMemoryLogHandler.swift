import Logging
import RegionKitConcurrency

/// A swift-log handler that keeps every record in memory, so that tests can read what was logged
/// (for example: that a password never appears).
///
/// ```swift
/// let logs = InMemoryLogHandler.Store()
/// let logger = Logger(label: "test") { _ in InMemoryLogHandler(store: logs) }
/// ```
public struct InMemoryLogHandler: LogHandler {
    public final class Store: Sendable {
        public init() {}
        private let lines = LockedBox<[String]>([])
        public func append(_ line: String) { lines.withLock { $0.append(line) } }
        public var all: [String] { lines.withLock { $0 } }
        public var text: String { all.joined(separator: "\n") }
    }

    public let store: Store
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public init(store: Store) { self.store = store }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        store.append("\(event.level) \(event.message) \(rendered)")
    }
}
