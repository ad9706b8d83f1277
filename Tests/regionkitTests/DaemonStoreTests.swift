import Foundation
import Logging
import RegionKitCore
import RegionKitTestSupport
import Testing
@testable import regionkit

@Suite("The daemon's SQLite store: a new one is said to be new")
struct DaemonStoreTests {
    @Test("A store the daemon creates (and its directory) is logged as new; the same store opened again is not")
    func newStoreIsNoted() async throws {
        let directory = TestScratch.directory.appendingPathComponent("daemon-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("nested/events.sqlite").path
        let lines = InMemoryLogHandler.Store()
        let logger = Logger(label: "test") { _ in InMemoryLogHandler(store: lines) }

        // Each in its own scope: the lock file's claim goes with the last reference to the store.
        do {
            let first = try await DaemonStore.open(path, logger: logger) { _ in }
            await first.close()
        }
        #expect(lines.all.count == 1)
        #expect(lines.all.first?.contains("neither the database nor its directory existed") == true, "\(lines.all)")
        #expect(lines.all.first?.contains(path) == true, "\(lines.all)")

        do {
            let again = try await Self.reopen(path, logger: logger)
            await again.close()
        }
        #expect(lines.all.count == 1, "\(lines.all)")

        // Its directory there, the file not.
        let sibling = directory.appendingPathComponent("nested/other.sqlite").path
        let third = try await DaemonStore.open(sibling, logger: logger) { _ in }
        await third.close()
        #expect(lines.all.count == 2 && lines.all.last?.contains("no database was there, one was created") == true, "\(lines.all)")
    }

    /// Opens `path` again in this process. The first store's lock is released when it closes, but
    /// a child another test forks in the meantime shares the lock's open file until it execs
    /// (`O_CLOEXEC` closes it only then), so under a loaded CI the claim can outlive the close by a
    /// moment ("in use by another regionkit process", this one's pid: CI of session 73). Retried
    /// for up to 5 s on that error alone.
    static func reopen(_ path: String, logger: Logger) async throws -> DaemonStore {
        for _ in 0..<100 {
            do {
                return try await DaemonStore.open(path, logger: logger) { _ in }
            } catch let error as RegionKitError where error.code == .storeFailed && error.message.contains("pid \(getpid())") {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        return try await DaemonStore.open(path, logger: logger) { _ in }
    }
}
