import Foundation
import GRDB
import RegionKitCore
import RegionKitEngine

/// Durable state for a long-running RegionKit: monitored regions with their flags, each region's
/// last state and the evidence behind it, an append-only event log, and hook deliveries.
/// SQLite through GRDB in WAL mode; the only module that imports GRDB.
///
/// ```swift
/// let store = try RegionStore(path: RegionStore.defaultPath())
/// try store.saveRegion(region, at: now)
/// let id = try store.append(event, hooks: ["webhook:http://127.0.0.1:8080/"])
/// ```
public final class RegionStore: Sendable {
    public let path: String
    private let pool: DatabasePool

    /// The default database: `$REGIONKIT_STORE`, else `$XDG_DATA_HOME/regionkit/regionkit.sqlite`,
    /// else `~/.local/share/regionkit/regionkit.sqlite`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["REGIONKIT_STORE"], !path.isEmpty { return path }
        let base = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return base + "/regionkit/regionkit.sqlite"
    }

    /// Opens (creating if needed) the database at `path` and migrates it to the current schema.
    public init(path: String) throws {
        self.path = path
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
        } catch {
            throw RegionKitError(.storeFailed, "store \(path): cannot open the database", cause: error)
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "monitored_region") { t in
                t.primaryKey("identifier", .text)
                t.column("kind", .text).notNull()
                t.column("definition", .text).notNull()        // the Region as JSON
                t.column("registered_at", .double).notNull()
                t.column("sequence", .integer).notNull()
            }
            try db.create(table: "region_state") { t in
                t.primaryKey("identifier", .text)
                t.column("state", .text).notNull()
                t.column("since", .double)
                t.column("evidence", .text)                     // EventEvidence as JSON
                t.column("updated_at", .double).notNull()
            }
            try db.create(table: "event_log") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("time", .double).notNull().indexed()
                t.column("type", .text).notNull()
                t.column("region", .text).indexed()
                t.column("state", .text)
                t.column("reason", .text)
                t.column("json", .text).notNull()
            }
            try db.create(table: "hook_delivery") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("event_id", .integer).notNull().indexed().references("event_log", onDelete: .cascade)
                t.column("hook", .text).notNull()
                t.column("status", .text).notNull().indexed()
                t.column("attempts", .integer).notNull().defaults(to: 0)
                t.column("next_attempt_at", .double).notNull()
                t.column("last_error", .text)
                t.column("delivered_at", .double)
                t.uniqueKey(["event_id", "hook"])
            }
        }
        migrator.registerMigration("output-cursors") { db in
            // How far each output (e.g. the MQTT events topic of one site) has handed the log on.
            try db.create(table: "output_cursor") { t in
                t.primaryKey("output", .text)
                t.column("event_id", .integer).notNull()
            }
        }
        migrator.registerMigration("region-origin") { db in
            // Where each monitored region came from: the configuration (the initial set, kept in
            // step with it at start) or the HTTP API (kept across restarts whatever the configuration says).
            try db.alter(table: "monitored_region") { t in
                t.add(column: "origin", .text).notNull().defaults(to: RegionOrigin.configuration.rawValue)
            }
        }
        return migrator
    }

    // MARK: - Regions and states

    /// Saves (or replaces) a monitored region.
    /// - Parameter origin: where the region came from; `nil` keeps the stored origin of a region
    ///   already saved (``RegionOrigin/configuration`` for a new one).
    public func saveRegion(_ region: Region, at time: Double, origin: RegionOrigin? = nil) throws {
        let definition = try Self.json(region)
        try write { db in
            let sequence = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(sequence), 0) + 1 FROM monitored_region") ?? 1
            try db.execute(sql: """
                INSERT INTO monitored_region (identifier, kind, definition, registered_at, sequence, origin) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(identifier) DO UPDATE SET kind = excluded.kind, definition = excluded.definition,
                    registered_at = excluded.registered_at, origin = COALESCE(?, origin)
                """, arguments: [region.identifier, region.kind.rawValue, definition, time, sequence,
                                 (origin ?? .configuration).rawValue, origin?.rawValue])
            try db.execute(sql: "DELETE FROM region_state WHERE identifier = ?", arguments: [region.identifier])
        }
    }

    /// Forgets a monitored region and its state (its events stay in the log).
    public func removeRegion(_ identifier: String) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM monitored_region WHERE identifier = ?", arguments: [identifier])
            try db.execute(sql: "DELETE FROM region_state WHERE identifier = ?", arguments: [identifier])
        }
    }

    /// Monitored regions in registration order. A row that no longer decodes is reported, not skipped.
    public func regions() throws -> [Region] {
        try storedRegions().map(\.region)
    }

    /// Where each monitored region came from, by identifier (no region is decoded).
    public func regionOrigins() throws -> [String: RegionOrigin] {
        try read { db in
            var origins: [String: RegionOrigin] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT identifier, origin FROM monitored_region") {
                let text: String = row["origin"]
                origins[row["identifier"]] = RegionOrigin(rawValue: text)
            }
            return origins
        }
    }

    /// Monitored regions in registration order, with where each came from.
    public func storedRegions() throws -> [StoredRegion] {
        let rows = try read { db in
            try Row.fetchAll(db, sql: "SELECT identifier, definition, origin, registered_at FROM monitored_region ORDER BY sequence")
        }
        return try rows.map { row in
            let identifier: String = row["identifier"]
            let definition: String = row["definition"]
            let originText: String = row["origin"]
            guard let origin = RegionOrigin(rawValue: originText) else {
                throw RegionKitError(.malformedInput, "store \(path): monitored region '\(identifier)' has unknown origin '\(originText)'")
            }
            do {
                let region = try JSONDecoder().decode(Region.self, from: Data(definition.utf8))
                return StoredRegion(region: region, origin: origin, registeredAt: row["registered_at"])
            } catch {
                throw RegionKitError(.malformedInput, "store \(path): monitored region '\(identifier)' cannot be decoded", cause: error)
            }
        }
    }

    /// The last stored state of a region.
    public struct StoredState: Hashable, Sendable {
        public var state: RegionState
        public var since: Double?
        public var evidence: EventEvidence?
        public var updatedAt: Double
    }

    public func saveState(_ identifier: String, state: RegionState, since: Double?, evidence: EventEvidence?, at time: Double) throws {
        let evidenceJSON = try evidence.map(Self.json)
        try write { db in
            try db.execute(sql: """
                INSERT INTO region_state (identifier, state, since, evidence, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(identifier) DO UPDATE SET state = excluded.state, since = excluded.since,
                    evidence = excluded.evidence, updated_at = excluded.updated_at
                """, arguments: [identifier, state.rawValue, since, evidenceJSON, time])
        }
    }

    public func states() throws -> [String: StoredState] {
        let rows = try read { db in try Row.fetchAll(db, sql: "SELECT * FROM region_state") }
        var states: [String: StoredState] = [:]
        for row in rows {
            let identifier: String = row["identifier"]
            let text: String = row["state"]
            guard let state = RegionState(rawValue: text) else {
                throw RegionKitError(.malformedInput, "store \(path): region '\(identifier)' has unknown state '\(text)'")
            }
            let evidence: String? = row["evidence"]
            states[identifier] = StoredState(state: state, since: row["since"],
                                             evidence: evidence.flatMap { try? JSONDecoder().decode(EventEvidence.self, from: Data($0.utf8)) },
                                             updatedAt: row["updated_at"])
        }
        return states
    }

    // MARK: - Event log

    /// Appends an event and creates one pending delivery per hook, in one transaction. Returns the
    /// event's id once it is durable (committed).
    @discardableResult
    public func append(time: Double, type: String, region: String?, state: String?, reason: String?, json: String, hooks: [String] = []) throws -> Int64 {
        try write { db in
            try db.execute(sql: "INSERT INTO event_log (time, type, region, state, reason, json) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [time, type, region, state, reason, json])
            let id = db.lastInsertedRowID
            for hook in hooks {
                try db.execute(sql: "INSERT OR IGNORE INTO hook_delivery (event_id, hook, status, next_attempt_at) VALUES (?, ?, 'pending', ?)",
                               arguments: [id, hook, time])
            }
            return id
        }
    }

    /// Logged events, oldest first, filtered by time, region, type and id.
    public func events(since: Double? = nil, region: String? = nil, type: String? = nil, afterID: Int64? = nil, limit: Int? = nil) throws -> [StoredEvent] {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let since { clauses.append("time >= ?"); _ = arguments.append(contentsOf: [since]) }
        if let region { clauses.append("region = ?"); _ = arguments.append(contentsOf: [region]) }
        if let type { clauses.append("type = ?"); _ = arguments.append(contentsOf: [type]) }
        if let afterID { clauses.append("id > ?"); _ = arguments.append(contentsOf: [afterID]) }
        var sql = "SELECT * FROM event_log"
        if !clauses.isEmpty { sql += " WHERE " + clauses.joined(separator: " AND ") }
        sql += " ORDER BY id"
        if let limit { sql += " LIMIT \(max(0, limit))" }
        return try read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                StoredEvent(id: row["id"], time: row["time"], type: row["type"], region: row["region"], state: row["state"],
                            reason: row["reason"], json: row["json"])
            }
        }
    }

    /// How many events of each type the log holds.
    public func eventCounts() throws -> [String: Int] {
        try read { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT type, COUNT(*) AS n FROM event_log GROUP BY type") {
                counts[row["type"]] = row["n"]
            }
            return counts
        }
    }

    /// The id of the newest logged event (0 when the log is empty).
    public func lastEventID() throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM event_log") ?? 0 }
    }

    // MARK: - Hook deliveries

    /// How many hook deliveries are in each status (`pending`, `delivered`, `failed`, `dropped`),
    /// and the attempts that failed (`failedAttempts`: every attempt of a delivery but a successful last one).
    public func deliveryCounts() throws -> (byStatus: [String: Int], failedAttempts: Int) {
        try read { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT status, COUNT(*) AS n FROM hook_delivery GROUP BY status") {
                counts[row["status"]] = row["n"]
            }
            let failed = try Int.fetchOne(db, sql: """
                SELECT COALESCE(SUM(CASE WHEN status = 'delivered' THEN attempts - 1 ELSE attempts END), 0) FROM hook_delivery
                """) ?? 0
            return (counts, failed)
        }
    }

    /// Pending deliveries whose next attempt is due, oldest first.
    public func dueDeliveries(now: Double, limit: Int) throws -> [HookDelivery] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM hook_delivery WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?
                """, arguments: [now, limit]).map(Self.delivery)
        }
    }

    /// The earliest time a pending delivery is due, if any.
    public func nextDeliveryTime() throws -> Double? {
        try read { db in try Double.fetchOne(db, sql: "SELECT MIN(next_attempt_at) FROM hook_delivery WHERE status = 'pending'") }
    }

    public func deliveries(status: HookDelivery.Status? = nil) throws -> [HookDelivery] {
        try read { db in
            if let status {
                return try Row.fetchAll(db, sql: "SELECT * FROM hook_delivery WHERE status = ? ORDER BY id", arguments: [status.rawValue]).map(Self.delivery)
            }
            return try Row.fetchAll(db, sql: "SELECT * FROM hook_delivery ORDER BY id").map(Self.delivery)
        }
    }

    public func markDelivered(_ id: Int64, at time: Double) throws {
        try write { db in
            try db.execute(sql: "UPDATE hook_delivery SET status = 'delivered', attempts = attempts + 1, delivered_at = ?, last_error = NULL WHERE id = ?",
                           arguments: [time, id])
        }
    }

    /// Records a failed attempt: retried at `retryAt`, or marked failed when `retryAt` is nil.
    public func markAttemptFailed(_ id: Int64, error: String, retryAt: Double?) throws {
        try write { db in
            if let retryAt {
                try db.execute(sql: "UPDATE hook_delivery SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE id = ?",
                               arguments: [error, retryAt, id])
            } else {
                try db.execute(sql: "UPDATE hook_delivery SET attempts = attempts + 1, last_error = ?, status = 'failed' WHERE id = ?",
                               arguments: [error, id])
            }
        }
    }

    /// Keeps at most `limit` pending deliveries: the oldest beyond it are marked dropped. Returns how many.
    @discardableResult
    public func trimPendingDeliveries(toAtMost limit: Int) throws -> Int {
        try write { db in
            try db.execute(sql: """
                UPDATE hook_delivery SET status = 'dropped', last_error = 'queue full'
                WHERE id IN (SELECT id FROM hook_delivery WHERE status = 'pending' ORDER BY id DESC LIMIT -1 OFFSET ?)
                """, arguments: [max(0, limit)])
            return db.changesCount
        }
    }

    // MARK: - Maintenance

    /// `PRAGMA integrity_check`: "ok" when the database is sound.
    public func integrityCheck() throws -> String {
        try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ") }
    }

    /// Whether a write transaction can be committed now (the readiness probe).
    public func checkWritable() throws {
        try write { db in try db.execute(sql: "UPDATE monitored_region SET sequence = sequence WHERE 0") }
    }

    /// The journal mode in force ("wal").
    public func journalMode() throws -> String {
        try read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "" }
    }

    // MARK: - Helpers

    func write<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try pool.write(body)
        } catch let error as RegionKitError {
            throw error
        } catch {
            throw RegionKitError(.storeFailed, "store \(path): write failed", cause: error)
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try pool.read(body)
        } catch let error as RegionKitError {
            throw error
        } catch {
            throw RegionKitError(.storeFailed, "store \(path): read failed", cause: error)
        }
    }

    private static func delivery(_ row: Row) -> HookDelivery {
        let status: String = row["status"]
        return HookDelivery(id: row["id"], eventID: row["event_id"], hook: row["hook"], status: HookDelivery.Status(rawValue: status) ?? .failed,
                            attempts: row["attempts"], nextAttemptAt: row["next_attempt_at"], lastError: row["last_error"],
                            deliveredAt: row["delivered_at"])
    }

    private static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
