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
    /// The database file's identity when it was opened (see ``checkIdentity()``).
    let identity: StoreFileIdentity?
    /// Each region's stored evidence as ``states()`` last read it (decoded again only when its text changed).
    private let decodedEvidence = StoredEvidenceCache()

    /// The `PRAGMA application_id` RegionKit stores carry ("RKst"): how a RegionKit store is told
    /// from someone else's SQLite file before anything is written to it.
    public static let applicationID: Int32 = 0x524B_7374

    /// The default database: `$REGIONKIT_STORE`, else `$XDG_DATA_HOME/regionkit/regionkit.sqlite`,
    /// else `~/.local/share/regionkit/regionkit.sqlite`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["REGIONKIT_STORE"], !path.isEmpty { return path }
        let base = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return base + "/regionkit/regionkit.sqlite"
    }

    /// Opens (creating if needed) the database at `path` and migrates it to the current schema.
    ///
    /// A database that is not RegionKit's (another application's `application_id`, or tables but no
    /// RegionKit schema) is refused before anything is written to it, with a
    /// `RegionKitError.Code.storeFailed` error naming the file and what it holds; a missing or
    /// empty file becomes a new store.
    public init(path: String) throws {
        self.path = path
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw RegionKitError(.storeFailed, "store \(path): cannot create the directory \(directory.path)", cause: error)
        }
        // A new store is its owner's alone (mode 0600, whatever the umask): it holds every event
        // and the hooks' deliveries with their webhook URLs, whose paths often carry a token.
        // SQLite gives the -wal and -shm files the database file's mode. An existing file keeps its own.
        let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if created >= 0 { close(created) }
        try Self.refuseForeignDatabase(at: path)
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            pool = try Self.openPool(path: path, configuration: configuration)
            // GRDB puts a WAL database in `synchronous = NORMAL`, which does not sync the log at
            // each commit: a power loss could roll back events already acknowledged (printed,
            // streamed, published, handed to hooks) and let their AUTOINCREMENT ids be given
            // again. FULL syncs every commit (the writer is the only connection that commits).
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            try Self.migrate(pool)
            try pool.write { db in
                if try Int32.fetchOne(db, sql: "PRAGMA application_id") != Self.applicationID {
                    try db.execute(sql: "PRAGMA application_id = \(Self.applicationID)")
                }
            }
        } catch {
            throw RegionKitError(.storeFailed, "store \(path): cannot open the database", cause: error)
        }
        identity = StoreFileIdentity(path: path)
    }

    /// Throws unless the file at `path` is missing, empty, a RegionKit store (or one being created:
    /// nothing but GRDB's migrations table yet), or an SQLite database without any table. Reads it read-only, so a foreign file is left exactly as it was (not even
    /// switched to WAL). ``init(path:)`` calls it; a writer that locks the store first
    /// (``RegionStoreLock``) calls it before, so nothing is created beside a foreign file.
    ///
    /// ```swift
    /// try RegionStore.refuseForeignDatabase(at: path)
    /// let lock = try RegionStoreLock(storePath: path)
    /// ```
    public static func refuseForeignDatabase(at path: String) throws {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let size = attributes[.size] as? NSNumber, size.intValue > 0 else { return }
        var configuration = Configuration()
        configuration.readonly = true
        // Another process may be creating or migrating the store this instant (a daemon starting
        // while `regionkit events` reads): wait for its lock like the pool does, never fail on it.
        configuration.busyMode = .timeout(5)
        let verdict: (applicationID: Int32, tables: [String])
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            verdict = try queue.read { db in
                (try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0,
                 try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"))
            }
        } catch {
            throw RegionKitError(.storeFailed, "store \(path): cannot open the database: not a readable SQLite database", cause: error)
        }
        if verdict.applicationID == applicationID || verdict.tables.isEmpty { return }
        // A store another RegionKit process is creating this instant: GRDB's migrator commits its
        // empty bookkeeping table before the first migration (which sets the marker). A CI run saw
        // a daemon refuse the store that `regionkit events`-like reads were creating beside it.
        if verdict.applicationID == 0, verdict.tables == ["grdb_migrations"] { return }
        // A store written before the application_id marker: RegionKit's own migrations and log.
        if verdict.applicationID == 0, verdict.tables.contains("grdb_migrations"), verdict.tables.contains("event_log"),
           verdict.tables.contains("monitored_region") { return }
        let owner = verdict.applicationID == 0 ? "no application_id" : String(format: "application_id 0x%08X", UInt32(bitPattern: verdict.applicationID))
        throw RegionKitError(.storeFailed, """
            store \(path): not a RegionKit store (\(owner); tables: \(verdict.tables.prefix(8).joined(separator: ", "))\
            \(verdict.tables.count > 8 ? ", …" : "")): refusing to add RegionKit's tables to it; give another path
            """)
    }

    /// Opens the pool, waiting (up to 5 s) while another connection holds the lock that switching
    /// a new file to WAL needs: `PRAGMA journal_mode = WAL` can fail at once with `SQLITE_BUSY`
    /// without calling the busy handler, so the busy timeout does not cover it. A CI run saw 3
    /// openers of one new store fail that way twice in 60 rounds on a loaded machine.
    static func openPool(path: String, configuration: Configuration, patience: Double = 5) throws -> DatabasePool {
        let start = Date()
        var delay: UInt32 = 2_000   // µs, doubling to 100 ms
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && Date().timeIntervalSince(start) < patience {
                usleep(delay)
                delay = min(delay * 2, 100_000)
            }
        }
    }

    /// Migrates the store, safe against another process migrating it at the same time.
    ///
    /// GRDB's migrator reads which migrations are applied before, not inside, the transaction
    /// of each migration. Two processes opening a new or older store together (a daemon starting
    /// while `regionkit events` or a test polls the store) can then both run one migration; the
    /// second one's fails (`duplicate column name: origin`, `table … already exists`) and rolls
    /// back, and a daemon stopped there at start. When the applied set changed while this
    /// process was migrating, another process won that race: read the set again and go on, a
    /// few times at most. Any other failure is thrown as it is.
    static func migrate(_ pool: DatabasePool, attempts: Int = 5) throws {
        for attempt in 1...attempts {
            let before = try pool.read { try migrator.appliedIdentifiers($0) }
            do {
                try migrator.migrate(pool)
                return
            } catch {
                let after = try? pool.read { try migrator.appliedIdentifiers($0) }
                guard attempt < attempts, let after, after != before else { throw error }
            }
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
        migrator.registerMigration("region-sequence-index") { db in
            // Saving a region reads the largest sequence: without an index a scan of every region,
            // so registering n regions cost n² (bench eventlog, session 48).
            try db.create(index: "monitored_region_on_sequence", on: "monitored_region", columns: ["sequence"])
        }
        migrator.registerMigration("pruned-tally") { db in
            // What the retention deleted, so /metrics' totals do not drop at a prune (``PrunedTally``).
            try db.create(table: PrunedTally.table) { t in
                t.primaryKey("counter", .text)
                t.column("count", .integer).notNull()
            }
        }
        migrator.registerMigration("beacon-rooms") { db in
            // The room each beacon is placed in now (``beaconRooms()``), so rooms survive a restart.
            try db.create(table: "beacon_room") { t in
                t.primaryKey("beacon", .text)
                t.column("scanner", .text).notNull()
                t.column("updated_at", .double).notNull()
            }
        }
        migrator.registerMigration("announced-beacons") { db in
            // The beacons each output announced to Home Assistant (``announcedBeacons(_:)``), so
            // a restart neither forgets their entities nor grants a new quota of them.
            try db.create(table: "announced_beacon") { t in
                t.column("output", .text).notNull()
                t.column("beacon", .text).notNull()
                t.primaryKey(["output", "beacon"])
            }
        }
        migrator.registerMigration("dismissed-beacons") { db in
            // The beacons whose devices were deleted in Home Assistant (``dismissedBeacons(_:)``),
            // so a restart does not announce them again while they stay placed.
            try db.create(table: "dismissed_beacon") { t in
                t.column("output", .text).notNull()
                t.column("beacon", .text).notNull()
                t.primaryKey(["output", "beacon"])
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
        try write { db in try Self.saveRegion(region, definition: definition, at: time, origin: origin, in: db) }
    }

    static func saveRegion(_ region: Region, definition: String, at time: Double, origin: RegionOrigin?, in db: Database) throws {
        // Statements cached per connection (parsed once: a delivered run of events is many writes),
        // the maximum read through the sequence index (a scan of every region made registering n
        // regions cost n²).
        let sequence = try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(sequence), 0) + 1 FROM monitored_region")) ?? 1
        try db.cachedStatement(sql: """
            INSERT INTO monitored_region (identifier, kind, definition, registered_at, sequence, origin) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(identifier) DO UPDATE SET kind = excluded.kind, definition = excluded.definition,
                registered_at = excluded.registered_at, origin = COALESCE(?, origin)
            """).execute(arguments: [region.identifier, region.kind.rawValue, definition, time, sequence,
                                    (origin ?? .configuration).rawValue, origin?.rawValue])
        try db.cachedStatement(sql: "DELETE FROM region_state WHERE identifier = ?").execute(arguments: [region.identifier])
    }

    /// Forgets a monitored region and its state (its events stay in the log).
    public func removeRegion(_ identifier: String) throws {
        try write { db in try Self.removeRegion(identifier, in: db) }
    }

    static func removeRegion(_ identifier: String, in db: Database) throws {
        // Looked up as regions keep it (``Region/canonical(identifier:)``): the API's path may spell it otherwise.
        let identifier = Region.canonical(identifier: identifier)
        try db.execute(sql: "DELETE FROM monitored_region WHERE identifier = ?", arguments: [identifier])
        try db.execute(sql: "DELETE FROM region_state WHERE identifier = ?", arguments: [identifier])
    }

    /// Monitored regions in registration order. A row that no longer decodes is reported, not skipped.
    public func regions() throws -> [Region] {
        try storedRegions().map(\.region)
    }

    /// Where each monitored region came from, by identifier (no region is decoded).
    public func regionOrigins() throws -> [String: RegionOrigin] {
        try read { db in
            var origins: [String: RegionOrigin] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT rowid, identifier, origin FROM monitored_region") {
                let text: String = try column(row, "origin", of: "monitored_region")
                origins[try column(row, "identifier", of: "monitored_region")] = RegionOrigin(rawValue: text)
            }
            return origins
        }
    }

    /// Monitored regions in registration order, with where each came from.
    public func storedRegions() throws -> [StoredRegion] {
        let rows = try read { db in
            try Row.fetchAll(db, sql: "SELECT rowid, identifier, definition, origin, registered_at FROM monitored_region ORDER BY sequence")
        }
        return try rows.map(storedRegion(row:))
    }

    /// One monitored region by its identifier (the primary key), nil when none is stored.
    public func storedRegion(_ identifier: String) throws -> StoredRegion? {
        let row = try read { db in
            try Row.fetchOne(db, sql: "SELECT rowid, identifier, definition, origin, registered_at FROM monitored_region WHERE identifier = ?",
                             arguments: [Region.canonical(identifier: identifier)])
        }
        return try row.map(storedRegion(row:))
    }

    private func storedRegion(row: Row) throws -> StoredRegion {
        let identifier: String = try column(row, "identifier", of: "monitored_region")
        let definition: String = try column(row, "definition", of: "monitored_region")
        let originText: String = try column(row, "origin", of: "monitored_region")
        guard let origin = RegionOrigin(rawValue: originText) else {
            throw RegionKitError(.malformedInput, "store \(path): monitored region '\(identifier)' has unknown origin '\(originText)'")
        }
        do {
            let region = try JSONDecoder().decode(Region.self, from: Data(definition.utf8))
            return StoredRegion(region: region, origin: origin, registeredAt: try column(row, "registered_at", of: "monitored_region"))
        } catch let error as RegionKitError {
            throw error
        } catch {
            throw RegionKitError(.malformedInput, "store \(path): monitored region '\(identifier)' cannot be decoded", cause: error)
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
        try write { db in try Self.saveState(identifier, state: state, since: since, evidenceJSON: evidenceJSON, at: time, in: db) }
    }

    static func saveState(_ identifier: String, state: RegionState, since: Double?, evidenceJSON: String?, at time: Double, in db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO region_state (identifier, state, since, evidence, updated_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(identifier) DO UPDATE SET state = excluded.state, since = excluded.since,
                evidence = excluded.evidence, updated_at = excluded.updated_at
            """).execute(arguments: [Region.canonical(identifier: identifier), state.rawValue, since, evidenceJSON, time])
    }

    public func states() throws -> [String: StoredState] {
        let rows = try read { db in try Row.fetchAll(db, sql: "SELECT \(Self.stateColumns) FROM region_state") }
        var states: [String: StoredState] = [:]
        states.reserveCapacity(rows.count)
        var pass = decodedEvidence.beginPass()
        for row in rows {
            let (identifier, state) = try storedState(row: row) { pass.evidence(of: $0, text: $1) }
            states[identifier] = state
        }
        decodedEvidence.finish(pass)
        return states
    }

    /// One region's last stored state by its identifier (the primary key), nil when it has none.
    public func state(of identifier: String) throws -> StoredState? {
        let row = try read { db in try Row.fetchOne(db, sql: "SELECT \(Self.stateColumns) FROM region_state WHERE identifier = ?",
                                                       arguments: [Region.canonical(identifier: identifier)]) }
        return try row.map { row in
            try storedState(row: row) { _, text in try? JSONDecoder().decode(EventEvidence.self, from: Data(text.utf8)) }.state
        }
    }

    /// The columns ``storedState(row:evidence:)`` reads, by their index in this list (read by
    /// name, GRDB lowered the case of every column of every row to find it).
    static let stateColumns = "identifier, state, since, evidence, updated_at"

    /// A `region_state` row; `evidence` turns the region's stored evidence text into the evidence
    /// (`nil` for a text that does not decode: the state is still reported, without it).
    func storedState(row: Row, evidence decode: (_ identifier: String, _ text: String) -> EventEvidence?) throws
        -> (identifier: String, state: StoredState) {
        let identifier: String = try column(row, 0, "identifier", of: "region_state")
        let text: String = try column(row, 1, "state", of: "region_state")
        guard let state = RegionState(rawValue: text) else {
            throw RegionKitError(.malformedInput, "store \(path): region '\(identifier)' has unknown state '\(text)'")
        }
        let evidence: String? = try column(row, 3, "evidence", of: "region_state")
        return (identifier, StoredState(state: state, since: try column(row, 2, "since", of: "region_state"),
                                        evidence: evidence.flatMap { decode(identifier, $0) },
                                        updatedAt: try column(row, 4, "updated_at", of: "region_state")))
    }

    // MARK: - Event log

    /// Appends an event and creates one pending delivery per hook, in one transaction. Returns the
    /// event's id once it is durable (committed).
    @discardableResult
    public func append(time: Double, type: String, region: String?, state: String?, reason: String?, json: String, hooks: [String] = []) throws -> Int64 {
        try write { db in try Self.append(time: time, type: type, region: region, state: state, reason: reason, json: json, hooks: hooks, in: db) }
    }

    static func append(time: Double, type: String, region: String?, state: String?, reason: String?, json: String, hooks: [String],
                       in db: Database) throws -> Int64 {
        try db.cachedStatement(sql: "INSERT INTO event_log (time, type, region, state, reason, json) VALUES (?, ?, ?, ?, ?, ?)")
            .execute(arguments: [time, type, region, state, reason, json])
        let id = db.lastInsertedRowID
        for hook in hooks {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO hook_delivery (event_id, hook, status, next_attempt_at) VALUES (?, ?, 'pending', ?)")
                .execute(arguments: [id, hook, time])
        }
        return id
    }

    /// Logged events, oldest first, filtered by time, region, type and id.
    public func events(since: Double? = nil, region: String? = nil, type: String? = nil, afterID: Int64? = nil, limit: Int? = nil) throws -> [StoredEvent] {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let since { clauses.append("time >= ?"); _ = arguments.append(contentsOf: [since]) }
        if let region { clauses.append("region = ?"); _ = arguments.append(contentsOf: [Region.canonical(identifier: region)]) }
        if let type { clauses.append("type = ?"); _ = arguments.append(contentsOf: [type]) }
        if let afterID { clauses.append("id > ?"); _ = arguments.append(contentsOf: [afterID]) }
        var sql = "SELECT * FROM event_log"
        if !clauses.isEmpty { sql += " WHERE " + clauses.joined(separator: " AND ") }
        sql += " ORDER BY id"
        if let limit { sql += " LIMIT \(max(0, limit))" }
        return try read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                let table = "event_log"
                return StoredEvent(id: try column(row, "id", of: table), time: try column(row, "time", of: table),
                                   type: try column(row, "type", of: table), region: try column(row, "region", of: table),
                                   state: try column(row, "state", of: table), reason: try column(row, "reason", of: table),
                                   json: try column(row, "json", of: table))
            }
        }
    }

    /// How many events of each type were ever logged: those the log holds and those the
    /// retention pruned (``PrunedTally``), read together, so the totals never go back.
    public func eventCounts() throws -> [String: Int] {
        try read { db in
            var counts: [String: Int] = [:]
            // TOTAL (a REAL), taken within 0…: a damaged tally row must not fail /metrics.
            for row in try Row.fetchAll(db, sql: """
                SELECT type, TOTAL(n) AS n FROM (
                    SELECT type, COUNT(*) AS n FROM event_log GROUP BY type
                    UNION ALL
                    SELECT substr(counter, \(PrunedTally.eventPrefix.utf8.count + 1)) AS type, MAX(count, 0) AS n
                    FROM \(PrunedTally.table) WHERE substr(counter, 1, \(PrunedTally.eventPrefix.utf8.count)) = ?)
                GROUP BY type
                """, arguments: [PrunedTally.eventPrefix]) {
                let total: Double = try column(row, "n", of: "event_log")
                counts[try column(row, "type", of: "event_log")] = total < 9.2e18 ? Int(total) : Int(Int64.max)
            }
            return counts
        }
    }

    /// The id of the newest logged event (0 when the log is empty).
    public func lastEventID() throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM event_log") ?? 0 }
    }

    /// See ``RegionStoring/pruneEvents(olderThan:keepingNewest:limit:)``.
    ///
    /// The candidates come through index ranges only — ids up to the count's cutoff in id order,
    /// then times before `olderThan` through the time index — so a large log with little to prune
    /// holds the write lock for the rows it deletes, not for a scan of the log.
    @discardableResult
    public func pruneEvents(olderThan time: Double?, keepingNewest count: Int?, limit: Int) throws -> Int {
        guard time != nil || count != nil, limit > 0 else { return 0 }
        let owed = "NOT EXISTS (SELECT 1 FROM hook_delivery AS h WHERE h.event_id = e.id AND h.status = 'pending')"
        return try write { db in
            let newest = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM event_log") ?? 0
            guard newest > 0 else { return 0 }
            var deleted = 0
            if let count, case let cutoff = Self.countCutoff(newest: newest, keeping: count), cutoff > 0 {
                deleted = try Self.prune(db, candidates: """
                    SELECT e.id FROM event_log AS e WHERE e.id <= ? AND e.id < ? AND \(owed) ORDER BY e.id LIMIT ?
                    """, arguments: [cutoff, newest, limit])
            }
            if let time, deleted < limit {
                // `+e.id`: the time index, not a scan of the id range (every id is below the newest).
                deleted += try Self.prune(db, candidates: """
                    SELECT e.id FROM event_log AS e WHERE e.time < ? AND +e.id < ? AND \(owed) LIMIT ?
                    """, arguments: [time, newest, limit - deleted])
            }
            return deleted
        }
    }

    /// Deletes the events `candidates` selects (one id column) with their deliveries, adding them
    /// and their deliveries' failed attempts to ``PrunedTally`` in the same transaction. The ids
    /// go through a temporary table so the tally counts exactly the rows deleted.
    private static func prune(_ db: Database, candidates: String, arguments: StatementArguments) throws -> Int {
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS pruning (id INTEGER PRIMARY KEY)")
        try db.execute(sql: "DELETE FROM temp.pruning")
        try db.execute(sql: "INSERT INTO temp.pruning (id) " + candidates, arguments: arguments)
        guard db.changesCount > 0 else { return 0 }
        try db.execute(sql: """
            INSERT INTO \(PrunedTally.table) (counter, count)
            SELECT ? || type, COUNT(*) FROM event_log WHERE id IN (SELECT id FROM temp.pruning) GROUP BY type
            ON CONFLICT (counter) DO UPDATE SET count = MIN(MAX(count, 0), 4611686018427387903) + excluded.count
            """, arguments: [PrunedTally.eventPrefix])
        try db.execute(sql: """
            INSERT INTO \(PrunedTally.table) (counter, count)
            SELECT ?, CAST(MIN(TOTAL(CASE WHEN status = 'delivered' THEN MAX(attempts, 1) - 1 ELSE MAX(attempts, 0) END),
                               4611686018427387903) AS INTEGER)
            FROM hook_delivery WHERE event_id IN (SELECT id FROM temp.pruning)
            ON CONFLICT (counter) DO UPDATE SET count = MIN(MAX(count, 0), 4611686018427387903) + excluded.count
            """, arguments: [PrunedTally.failedAttempts])
        try db.execute(sql: "DELETE FROM event_log WHERE id IN (SELECT id FROM temp.pruning)")
        let deleted = db.changesCount
        try db.execute(sql: "DELETE FROM temp.pruning")
        return deleted
    }

    /// The highest id outside the newest `count` ids: `newest − count`. The newest `count` events
    /// are those above it — or fewer, where ids are missing (pruned around events kept for their
    /// pending delivery): at most `count` are kept, as the retention says. Finding the exact
    /// (count+1)-th newest event walked `count` rows of the log each time (≈ 0.25 s a million).
    public static func countCutoff(newest: Int64, keeping count: Int) -> Int64 {
        let (cutoff, overflow) = newest.subtractingReportingOverflow(Int64(clamping: max(0, count)))
        return overflow ? 0 : cutoff
    }

    // MARK: - Hook deliveries

    /// How many hook deliveries are in each status (`pending`, `delivered`, `failed`, `dropped`),
    /// and the attempts that ever failed (`failedAttempts`: every attempt of a delivery but a successful last
    /// one, with those of deliveries pruned with their event).
    public func deliveryCounts() throws -> (byStatus: [String: Int], failedAttempts: Int) {
        try read { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT status, COUNT(*) AS n FROM hook_delivery GROUP BY status") {
                counts[try column(row, "status", of: "hook_delivery")] = try column(row, "n", of: "hook_delivery")
            }
            // TOTAL (a REAL) and each row's count taken within 0…: a damaged row's huge count
            // made SUM fail with "integer overflow", and with it /metrics.
            // With the attempts of deliveries pruned with their events (``PrunedTally``): a total.
            let failed = try Double.fetchOne(db, sql: """
                SELECT TOTAL(CASE WHEN status = 'delivered' THEN MAX(attempts, 1) - 1 ELSE MAX(attempts, 0) END) FROM hook_delivery
                """) ?? 0
            let pruned = try Double.fetchOne(db, sql: "SELECT TOTAL(MAX(count, 0)) FROM \(PrunedTally.table) WHERE counter = ?",
                                             arguments: [PrunedTally.failedAttempts]) ?? 0
            return (counts, failed + pruned < 9.2e18 ? Int(failed + pruned) : Int(Int64.max))
        }
    }

    /// Pending deliveries whose next attempt is due, oldest first.
    public func dueDeliveries(now: Double, limit: Int) throws -> [HookDelivery] {
        try read { db in
            try Row.fetchAll(db, sql: """
                \(Self.regionHeads) SELECT d.* FROM hook_delivery d \(Self.headsJoin)
                WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (h.first IS NULL OR d.event_id = h.first)
                ORDER BY d.next_attempt_at, d.id LIMIT ?
                """, arguments: [now, limit]).map(delivery)
        }
    }

    /// A region's hook deliveries go in log order, per channel: of its pending deliveries on one
    /// channel only those of its earliest event are due (the others wait while it is retried), so
    /// a command that failed once cannot run after the commands of a later event of the same
    /// region — an exit's after the next entry's. The channels: every command hook together (they
    /// act on the same things, and an entry's and an exit's command are usually different
    /// commands), and each webhook on its own (one that is down holds back only its own later
    /// deliveries, not the commands). Events without a region are not ordered. `heads`: the
    /// earliest event with a pending delivery, by region and channel (one pass over the pending
    /// deliveries). The same SQL on PostgreSQL.
    public static let regionHeads = """
        WITH heads AS (SELECT e.region AS region, \(channel("d")) AS channel, MIN(d.event_id) AS first
                       FROM hook_delivery d JOIN event_log e ON e.id = d.event_id
                       WHERE d.status = 'pending' AND e.region IS NOT NULL GROUP BY e.region, \(channel("d")))
        """

    /// Joins a delivery `d` to its event `e` and its region and channel's head `h` (a delivery whose
    /// event is missing has no head, so it is due: the runner then marks it failed).
    public static let headsJoin = """
        LEFT JOIN event_log e ON e.id = d.event_id LEFT JOIN heads h ON h.region = e.region AND h.channel = \(channel("d"))
        """

    /// A delivery's ordering channel: `command` for every command hook, the hook itself for a webhook.
    static func channel(_ table: String) -> String {
        "CASE WHEN \(table).hook LIKE 'command:%' THEN 'command' ELSE \(table).hook END"
    }

    /// The earliest time a pending delivery is due, if any (one waiting behind an earlier event's
    /// delivery of its region and channel is not due before that one: see ``dueDeliveries(now:limit:)``).
    public func nextDeliveryTime() throws -> Double? {
        try read { db in
            try Double.fetchOne(db, sql: """
                \(Self.regionHeads) SELECT MIN(d.next_attempt_at) FROM hook_delivery d \(Self.headsJoin)
                WHERE d.status = 'pending' AND (h.first IS NULL OR d.event_id = h.first)
                """)
        }
    }

    public func deliveries(status: HookDelivery.Status? = nil) throws -> [HookDelivery] {
        try read { db in
            if let status {
                return try Row.fetchAll(db, sql: "SELECT * FROM hook_delivery WHERE status = ? ORDER BY id", arguments: [status.rawValue]).map(delivery)
            }
            return try Row.fetchAll(db, sql: "SELECT * FROM hook_delivery ORDER BY id").map(delivery)
        }
    }

    public func markDelivered(_ id: Int64, at time: Double) throws {
        try write { db in
            try db.execute(sql: "UPDATE hook_delivery SET status = 'delivered', attempts = MIN(attempts, 9223372036854775806) + 1, delivered_at = ?, last_error = NULL WHERE id = ?",
                           arguments: [time, id])
        }
    }

    /// Records a failed attempt: retried at `retryAt`, or marked failed when `retryAt` is nil.
    public func markAttemptFailed(_ id: Int64, error: String, retryAt: Double?) throws {
        // Attempts saturate below Int64.max: a damaged row's count must not overflow (SQLite would turn the sum into a REAL no row decoder reads).
        try write { db in
            if let retryAt {
                try db.execute(sql: "UPDATE hook_delivery SET attempts = MIN(attempts, 9223372036854775806) + 1, last_error = ?, next_attempt_at = ? WHERE id = ?",
                               arguments: [error, retryAt, id])
            } else {
                try db.execute(sql: "UPDATE hook_delivery SET attempts = MIN(attempts, 9223372036854775806) + 1, last_error = ?, status = 'failed' WHERE id = ?",
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

    /// One write transaction. When it commits but the path no longer names the file opened (the
    /// store was deleted or replaced under the process), it throws: what was written went to a
    /// file nobody will read again, so it must not be acknowledged.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        let result: T
        do {
            result = try pool.write(body)
        } catch let error as RegionKitError {
            throw error
        } catch {
            throw RegionKitError(.storeFailed, "store \(path): write failed", cause: error)
        }
        try checkIdentity()
        return result
    }

    /// Throws `RegionKitError.Code.storeFailed` when the store's path no longer names the
    /// database file this instance opened: deleted, or replaced by another file.
    public func checkIdentity() throws {
        guard let identity else { return }
        guard let current = StoreFileIdentity(path: path) else {
            throw RegionKitError(.storeFailed, "store \(path): the database file was deleted while in use")
        }
        guard current == identity else {
            throw RegionKitError(.storeFailed, "store \(path): the database file was replaced by another file while in use")
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

    private func delivery(_ row: Row) throws -> HookDelivery {
        let table = "hook_delivery"
        let status: String = try column(row, "status", of: table)
        return HookDelivery(id: try column(row, "id", of: table), eventID: try column(row, "event_id", of: table),
                            hook: try column(row, "hook", of: table), status: HookDelivery.Status(rawValue: status) ?? .failed,
                            attempts: try column(row, "attempts", of: table), nextAttemptAt: try column(row, "next_attempt_at", of: table),
                            lastError: try column(row, "last_error", of: table), deliveredAt: try column(row, "delivered_at", of: table))
    }

    /// The value of `name` in `row` of `table`, or a `RegionKitError.Code.malformedInput` error
    /// naming the table, the row (its id, identifier or rowid) and the column when the stored value
    /// does not have the expected type (GRDB's subscript would stop the process instead).
    func column<Value: DatabaseValueConvertible>(_ row: Row, _ name: String, of table: String) throws -> Value {
        do {
            return try row.decode(Value.self, forColumn: name)
        } catch {
            throw columnError(row, name, of: table, expected: Value.self, error)
        }
    }

    /// ``column(_:_:of:)`` by the column's `index` in a query that names its columns (`name` for
    /// the message).
    func column<Value: DatabaseValueConvertible>(_ row: Row, _ index: Int, _ name: String, of table: String) throws -> Value {
        do {
            return try row.decode(Value.self, atIndex: index)
        } catch {
            throw columnError(row, name, of: table, expected: Value.self, error)
        }
    }

    /// A column of a row that does not hold a `Value`, named with the table and the row's key.
    private func columnError<Value>(_ row: Row, _ name: String, of table: String, expected: Value.Type, _ error: any Error) -> RegionKitError {
        let found: DatabaseValue = row[name] ?? .null
        let key = ["id", "identifier", "rowid"].first { row.hasColumn($0) && $0 != name }
        let location = key.map { key -> String in
            let value: DatabaseValue = row[key] ?? .null
            return " row \(key)=\(value.description)"
        } ?? ""
        return RegionKitError(.malformedInput, "store \(path): table \(table)\(location) column \(name): expected \(Value.self), found \(found.description)",
                              cause: error)
    }

    static func json<T: Encodable>(_ value: T) throws -> String {
        try StoreWrite.json(value)
    }
}
