import Foundation
import Logging
import RegionKit
import RegionKitPostgres
import RegionKitStore

/// The daemon's store, opened with its one-writer claim: a SQLite path (refused when it is another
/// application's database; an exclusive `flock` on `STORE.lock`), or `postgres://user@host:port/db`
/// (password from `$REGIONKIT_STORE_PASSWORD` or `$REGIONKIT_STORE_PASSWORD_FILE`; the store's advisory daemon lock, naming the holder
/// to a second daemon). Keep it until the daemon stops, then ``close()``.
///
/// ```swift
/// let opened = try await DaemonStore.open("postgres://regionkit@127.0.0.1:5432/site", logger: logger) { reason in stop(reason) }
/// let service = MonitoringService(store: opened.store, sources: sources)
/// await opened.close()
/// ```
struct DaemonStore: Sendable {
    let store: any RegionStoring
    /// The path or the URL (never the password), for logs.
    let name: String
    private let release: @Sendable () async -> Void

    /// Opens `location` for the daemon. `onLost` is called if a PostgreSQL store's daemon lock is
    /// lost while running (the connection holding it broke): another daemon may take the store.
    static func open(_ location: String, logger: Logger,
                     onLost: @escaping @Sendable (String) -> Void) async throws -> DaemonStore {
        if let url = try PostgresStoreURL(parsing: location) {
            let postgres = try await PostgresRegionStore(host: url.host, port: url.port, username: url.user, password: url.password(),
                                                         database: url.database, tls: url.tls(), logger: logger)
            let holder = "regionkit pid \(ProcessInfo.processInfo.processIdentifier) on \(ProcessInfo.processInfo.hostName)"
            let lease: PostgresDaemonLease
            do {
                lease = try await postgres.acquireDaemonLock(holder: holder, onLost: onLost)
            } catch {
                await postgres.shutdown()
                throw error
            }
            return DaemonStore(store: postgres, name: url.description, release: {
                await lease.release()
                await postgres.shutdown()
            })
        }
        // One daemon per store: a second one would write every event twice. (Someone else's
        // database is refused before anything, even the lock file, is created beside it.)
        try RegionStore.refuseForeignDatabase(at: location)
        // A new store starts with no regions and no history: say so, so that a mistyped path (or
        // a service started with another $HOME) is not taken for state lost on restart.
        let directory = URL(fileURLWithPath: location).deletingLastPathComponent().path
        let hadDirectory = FileManager.default.fileExists(atPath: directory)
        let hadFile = FileManager.default.fileExists(atPath: location)
        let lock = try RegionStoreLock(storePath: location)
        let database = try RegionStore(path: location)
        if !hadFile {
            logger.notice(hadDirectory ? "new store: no database was there, one was created (no regions, no event history)"
                                       : "new store: neither the database nor its directory existed; both were created (no regions, no event history)",
                          metadata: ["store": "\(location)"])
        }
        return DaemonStore(store: database, name: location, release: { withExtendedLifetime(lock) {} })
    }

    /// Releases the claim (and a PostgreSQL store's connections).
    func close() async {
        await release()
    }
}
