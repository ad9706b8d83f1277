import Foundation
import Logging
import NIOPosix
import PostgresNIO
import RegionKitConcurrency
import RegionKitCore
import RegionKitEngine
import RegionKitStore

/// The shared store of a RegionKit cluster: `RegionStoring` on PostgreSQL through postgres-nio,
/// with the SQLite store's schema (monitored regions, region states, the event log, hook
/// deliveries, output cursors), so that every engine and every output of a cluster reads and
/// writes one place.
///
/// Event ids come from one identity sequence, so they are unique across every engine writing to
/// the database. Appends take a transaction-level advisory lock before they draw their id, so ids
/// become visible in increasing order: a reader asking for `afterID: n` never misses an event that
/// commits later with a smaller id (the cursor guarantee of `RegionStoring`), at the price of
/// serialising appends (events, not sightings: a few per second per region change).
///
/// Every operation is bounded by `operationTimeout` (default 10 s): an unreachable or stuck server
/// is a `storeFailed` error naming the store and the operation, never a hang.
///
/// The schema is created (or brought up to date) when the store opens, under an advisory lock, so
/// several engines may start at once.
///
/// ```swift
/// let store = try await PostgresRegionStore(host: "127.0.0.1", port: 5432, username: "regionkit",
///                                           password: nil, database: "regionkit")
/// let id = try await store.append(time: 12.5, type: "didEnterRegion", region: "lobby", state: "inside",
///                                 reason: "first sighting", json: "{}", hooks: [])
/// await store.shutdown()
/// ```
public final class PostgresRegionStore: RegionStoring, CustomStringConvertible {
    /// The current schema version (recorded in `regionkit_schema`).
    public static let schemaVersion: Int64 = migrations.last?.version ?? 0
    /// Advisory lock keys (one namespace, "RK" in ASCII, then the use).
    static let migrationLock: Int64 = 0x524B_0001
    static let appendLock: Int64 = 0x524B_0002
    /// The session lock one daemon holds on the whole store
    /// (``acquireDaemonLock(holder:probeInterval:onLost:)``).
    static let daemonLock: Int64 = 0x524B_0003
    /// Serialises cluster lease rounds and region registration (``balanceLeases(member:instance:regions:partitions:ttl:reclaimOnly:)``).
    static let clusterLock: Int64 = 0x524B_0004
    /// With `hashtext(region)`: serialises contributions to one region (two-key advisory lock, int4 each).
    static let regionLockClass: Int32 = 0x524B_0005

    /// `postgres://user@host:port/database` (never the password).
    public let description: String
    let client: PostgresClient
    private let running: Task<Void, Never>
    /// Event-loop threads of this store's own, when asked for (shut down with the store).
    private let ownThreads: MultiThreadedEventLoopGroup?
    let logger: Logger
    /// The longest any one operation may take, waiting for a connection included.
    public let operationTimeout: Duration
    /// Each region's stored evidence as ``states()`` last read it (decoded again only when its text changed).
    private let decodedEvidence = StoredEvidenceCache()

    /// Connects with `configuration`, then creates or migrates the schema.
    /// - Parameter threads: event-loop threads of the store's own (nil: NIO's shared ones). A cluster
    ///   engine gives its store one, so lease renewals are not queued behind the sightings its MQTT
    ///   connections are delivering on the shared loops when it is overloaded.
    /// - Parameter idleInTransactionTimeout: how long the server lets one of this store's sessions
    ///   sit in an open transaction without sending a statement
    ///   (`idle_in_transaction_session_timeout`; default `operationTimeout`). A process that
    ///   freezes or loses its host mid-transaction (SIGSTOP, a VM pause, a power cut the server
    ///   does not see for hours) would otherwise hold its row and advisory locks, and every other
    ///   writer waiting for them, until the server notices the connection is gone. A cluster
    ///   member passes half its lease. A statement waits for a lock at most `operationTimeout`
    ///   (`lock_timeout`), as long as the client waits for it. Parameters the configuration
    ///   already sets are kept. (Startup parameters: PgBouncer refuses them unless listed in its
    ///   `ignore_startup_parameters`.)
    /// - Parameter connectionCheck: a connection made once before the pool (then closed), so that
    ///   what refuses it is said at once (the pool retries a refused connection until the operation
    ///   times out, saying only that); nil: only whether the server's port accepts TCP is checked.
    public init(configuration: PostgresClient.Configuration, operationTimeout: Duration = .seconds(10), idleInTransactionTimeout: Duration? = nil,
                threads: Int? = nil, connectionCheck: PostgresConnection.Configuration? = nil, logger: Logger = Logger(label: "regionkit.postgres")) async throws {
        var configuration = configuration
        func milliseconds(_ duration: Duration) -> String {
            // 1 ms … PostgreSQL's largest (INT_MAX ms); never 0, which would mean "no limit".
            "\(Int(min(2_147_483_647, max(1, (duration.inSeconds * 1000).rounded(.up)))))"
        }
        for (name, value) in [("idle_in_transaction_session_timeout", milliseconds(idleInTransactionTimeout ?? operationTimeout)),
                              ("lock_timeout", milliseconds(operationTimeout))]
        where !configuration.options.additionalStartupParameters.contains(where: { $0.0 == name }) {
            configuration.options.additionalStartupParameters.append((name, value))
        }
        self.operationTimeout = operationTimeout
        let group = threads.map { MultiThreadedEventLoopGroup(numberOfThreads: max(1, min($0, 16))) }
        ownThreads = group
        let target = configuration.host.map { "\($0):\(configuration.port ?? 5432)" } ?? configuration.unixSocketPath ?? "?"
        description = "postgres://\(configuration.username)@\(target)/\(configuration.database ?? configuration.username)"
        self.logger = logger
        if let host = configuration.host {
            let timeout = min(operationTimeout, configuration.options.connectTimeout)
            do {
                try await Self.checkListening(host: host, port: configuration.port ?? 5432, timeout: timeout, description: description)
                if let connectionCheck {
                    try await Self.checkConnecting(connectionCheck, timeout: operationTimeout, description: description, logger: logger)
                }
            } catch {
                try? await group?.shutdownGracefully()
                throw error
            }
        }
        let client = group.map { PostgresClient(configuration: configuration, eventLoopGroup: $0, backgroundLogger: logger) }
            ?? PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        running = Task { await client.run() }
        do {
            try await migrate()
        } catch {
            running.cancel()
            await running.value
            try? await group?.shutdownGracefully()
            throw error
        }
    }

    /// Whether anything accepts a TCP connection at `host:port`, before the client's pool is made:
    /// a refused port, an unknown host or no answer within `timeout` is a `RegionKitError.Code.storeFailed`
    /// error naming the store at once. (The pool retries a failed connection until the operation
    /// times out: `regionkit events --store postgres://…` against a stopped server waited 10 s to
    /// say so.) The probe's connection closes before it sends a byte.
    static func checkListening(host: String, port: Int, timeout: Duration, description: String) async throws {
        let milliseconds = Int64(min(max(timeout.inSeconds * 1000, 1), 86_400_000))
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(.milliseconds(milliseconds))
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            let reason: String = switch error {
            case let error as NIOConnectionError:
                error.connectionErrors.isEmpty ? "\(error)" : error.connectionErrors.map { "\($0.target): \($0.error)" }.joined(separator: "; ")
            case ChannelError.connectTimeout: "no answer within \(Double(milliseconds) / 1000) s"
            default: "\(error)"
            }
            throw RegionKitError(.storeFailed, "store \(description): cannot connect: \(reason)")
        }
        try? await channel.close()
    }

    /// One connection made with `configuration` and closed: its refusal is a `storeFailed` error
    /// naming the store and why (the server does not offer TLS, its certificate is not trusted or
    /// names another host, authentication failed, no such database), or that no answer came within `timeout`.
    static func checkConnecting(_ configuration: PostgresConnection.Configuration, timeout: Duration, description: String, logger: Logger) async throws {
        var configuration = configuration
        configuration.options.connectTimeout = .milliseconds(Int64(min(max(timeout.inSeconds * 1000, 1), 86_400_000)))
        let race = FirstResult<Bool>()
        let work = Task {
            do {
                let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
                try? await connection.close()
                _ = race.finish(.success(true))
            } catch {
                _ = race.finish(.failure(error))
            }
        }
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            _ = race.finish(.failure(RegionKitError(.storeFailed, "no answer within \(timeout)")))
        }
        defer {
            timer.cancel()
            work.cancel()
        }
        do {
            _ = try await race.value
        } catch let error as RegionKitError {
            throw RegionKitError(.storeFailed, "store \(description): cannot connect: \(error.message)")
        } catch {
            throw RegionKitError(.storeFailed, "store \(description): cannot connect: \(explainConnecting(error))", cause: error)
        }
    }

    /// Why a connection was refused, in words (PSQLError's description hides everything on purpose).
    static func explainConnecting(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if error.code == .sslUnsupported {
            return "the server does not offer TLS (sslmode asks for it; set ssl = on on the server, or sslmode=prefer or disable)"
        }
        if let underlying = error.underlying {
            let text = "\(underlying)"
            if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate") || underlying is NIOSSLExtraError {
                return "the server's TLS certificate is not accepted (\(text.prefix(200)); sslrootcert names the CA to trust, verify-full also checks the host name)"
            }
            return "\(error.code): \(text.prefix(200))"
        }
        return explain(error)
    }

    /// A TCP connection to `host:port`; TLS off by default (a loopback or private network), else
    /// pass `tls: .require(...)` (``PostgresStoreURL/tls()`` makes it from a URL's `sslmode`). One
    /// connection is made first, so that what refuses it (TLS not offered, a certificate not
    /// trusted, authentication) is said at once, not after the operation timeout.
    public convenience init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String?,
                            tls: PostgresStoreTLS = .disable, operationTimeout: Duration = .seconds(10),
                            idleInTransactionTimeout: Duration? = nil, threads: Int? = nil,
                            logger: Logger = Logger(label: "regionkit.postgres")) async throws {
        var configuration = PostgresClient.Configuration(host: host, port: port, username: username, password: password,
                                                         database: database, tls: tls.client)
        configuration.options.connectTimeout = min(configuration.options.connectTimeout, operationTimeout)
        let check: PostgresConnection.Configuration
        do {
            check = PostgresConnection.Configuration(host: host, port: port, username: username, password: password, database: database,
                                                     tls: try tls.connection())
        } catch {
            throw RegionKitError(.storeFailed, "store postgres://\(username)@\(host):\(port)/\(database ?? username): cannot set up TLS: \(error)")
        }
        try await self.init(configuration: configuration, operationTimeout: operationTimeout, idleInTransactionTimeout: idleInTransactionTimeout,
                            threads: threads, connectionCheck: check, logger: logger)
    }

    /// Closes every connection. The store cannot be used afterwards.
    public func shutdown() async {
        running.cancel()
        await running.value
        try? await ownThreads?.shutdownGracefully()
    }

    // MARK: - Schema

    private func migrate() async throws {
        try await transaction("migrate the schema") { connection, logger in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS regionkit_schema (version bigint NOT NULL)", logger: logger)
            var version: Int64 = 0
            for try await (value) in try await connection.query("SELECT COALESCE(MAX(version), 0) FROM regionkit_schema", logger: logger).decode(Int64.self) {
                version = value
            }
            guard version <= Self.schemaVersion else {
                throw RegionKitError(.storeFailed, "store \(self.description): schema version \(version) is newer than this RegionKit's (\(Self.schemaVersion))")
            }
            // Each version's statements in order, each version recorded once applied.
            for (target, statements) in Self.migrations where version < target {
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("INSERT INTO regionkit_schema (version) VALUES (\(target))", logger: logger)
            }
        }
    }

    /// The schema's versions and their statements, in order (``schemaVersion`` is the last).
    static let migrations: [(version: Int64, statements: [String])] = [
        (1, schemaV1),
        // Who holds a daemon lock (the advisory lock itself names only a server process).
        (2, [schemaV2]),
        // Cluster mode: members, partition leases, per-partition contributions to region states.
        (3, schemaV3),
        // Cluster mode: which process holds a member name, and the cluster's partition count.
        (4, schemaV4),
        // Cluster mode: each member's region definitions (their digest).
        (5, [schemaV5]),
        // What the retention deleted, so /metrics' totals do not drop at a prune (``PrunedTally``).
        (6, [schemaV6]),
        // The room each beacon is placed in now, so rooms survive a restart (``beaconRooms()``);
        // the beacons announced to Home Assistant (``announcedBeacons(_:)``).
        (7, schemaV7),
        // The beacons whose devices were deleted in Home Assistant (``dismissedBeacons(_:)``).
        (8, [schemaV8]),
        // Cluster mode: each partition's last committed write, so a retry after a lost reply is
        // not committed twice (``ClusterWriteID``).
        (9, [schemaV9]),
    ]

    /// Version 9: per partition, the last write committed (its writer and sequence) and the ids
    /// of the events it committed.
    static let schemaV9 = """
        CREATE TABLE regionkit_partition_write (
            partition bigint PRIMARY KEY, writer text NOT NULL, sequence bigint NOT NULL, events bigint[] NOT NULL)
        """

    /// Version 8: the beacons each output no longer announces because their devices were deleted in Home Assistant.
    static let schemaV8 = "CREATE TABLE dismissed_beacon (output text NOT NULL, beacon text NOT NULL, PRIMARY KEY (output, beacon))"

    /// Version 7: the room each beacon is placed in now (key: its identity's `description`), and
    /// the beacons each output announced to Home Assistant.
    static let schemaV7 = [
        "CREATE TABLE beacon_room (beacon text PRIMARY KEY, scanner text NOT NULL, updated_at double precision NOT NULL)",
        "CREATE TABLE announced_beacon (output text NOT NULL, beacon text NOT NULL, PRIMARY KEY (output, beacon))",
    ]

    /// Version 6: `PrunedTally`, the events and failed delivery attempts the retention deleted.
    static let schemaV6 = "CREATE TABLE \(PrunedTally.table) (counter text PRIMARY KEY, count bigint NOT NULL)"

    /// Version 2: the holder of each daemon lock (key: the advisory lock key).
    static let schemaV2 = """
        CREATE TABLE regionkit_daemon_lock (
            key bigint PRIMARY KEY,
            holder text NOT NULL,
            since double precision NOT NULL)
        """

    /// Version 3: cluster mode (`ClusterStoring`). Times are the server's clock (seconds since 1970),
    /// so members on machines with skewed clocks agree on when a lease expires.
    static let schemaV3 = [
        "CREATE TABLE regionkit_cluster_member (member text PRIMARY KEY, expires_at double precision NOT NULL, sightings bigint NOT NULL DEFAULT 0)",
        """
        CREATE TABLE regionkit_partition_lease (
            partition bigint PRIMARY KEY,
            owner text,
            epoch bigint NOT NULL DEFAULT 0,
            expires_at double precision NOT NULL DEFAULT 0)
        """,
        """
        CREATE TABLE regionkit_region_contribution (
            region text NOT NULL,
            partition bigint NOT NULL,
            state text NOT NULL,
            since double precision,
            epoch bigint NOT NULL,
            updated_at double precision NOT NULL,
            PRIMARY KEY (region, partition))
        """,
        """
        CREATE TABLE regionkit_singleton_lease (
            name text PRIMARY KEY,
            owner text NOT NULL,
            epoch bigint NOT NULL,
            expires_at double precision NOT NULL)
        """,
    ]

    /// Version 4: the process that holds each member name (`ClusterStoring.join(member:instance:ttl:)`;
    /// null: not claimed yet), and the partition count the cluster was prepared for (one row).
    static let schemaV4 = [
        "ALTER TABLE regionkit_cluster_member ADD COLUMN instance text",
        """
        CREATE TABLE regionkit_cluster (
            only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            partitions bigint NOT NULL)
        """,
    ]

    /// Version 5: the digest of each member's configured region definitions
    /// (`RegionDefinitions.digest(of:)`; null: not recorded), so members running different ones are seen.
    static let schemaV5 = "ALTER TABLE regionkit_cluster_member ADD COLUMN regions text"

    /// The SQLite store's tables (same names and columns), in PostgreSQL's types.
    static let schemaV1 = [
        """
        CREATE TABLE monitored_region (
            identifier text PRIMARY KEY,
            kind text NOT NULL,
            definition text NOT NULL,
            registered_at double precision NOT NULL,
            sequence bigint GENERATED ALWAYS AS IDENTITY,
            origin text NOT NULL DEFAULT 'config')
        """,
        """
        CREATE TABLE region_state (
            identifier text PRIMARY KEY,
            state text NOT NULL,
            since double precision,
            evidence text,
            updated_at double precision NOT NULL)
        """,
        """
        CREATE TABLE event_log (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            time double precision NOT NULL,
            type text NOT NULL,
            region text,
            state text,
            reason text,
            json text NOT NULL)
        """,
        "CREATE INDEX event_log_time ON event_log (time)",
        "CREATE INDEX event_log_region ON event_log (region)",
        """
        CREATE TABLE hook_delivery (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            event_id bigint NOT NULL REFERENCES event_log (id) ON DELETE CASCADE,
            hook text NOT NULL,
            status text NOT NULL,
            attempts bigint NOT NULL DEFAULT 0,
            next_attempt_at double precision NOT NULL,
            last_error text,
            delivered_at double precision,
            UNIQUE (event_id, hook))
        """,
        "CREATE INDEX hook_delivery_status ON hook_delivery (status, next_attempt_at)",
        "CREATE TABLE output_cursor (output text PRIMARY KEY, event_id bigint NOT NULL)",
    ]

    // MARK: - Regions and states

    public func saveRegion(_ region: Region, at time: Double, origin: RegionOrigin? = nil) async throws {
        let definition = try Self.json(region)
        try await transaction("save region \(region.identifier)") { connection, logger in
            try await Self.saveRegion(region, definition: definition, at: time, origin: origin, connection, logger)
        }
    }

    static func saveRegion(_ region: Region, definition: String, at time: Double, origin: RegionOrigin?,
                           _ connection: PostgresConnection, _ logger: Logger) async throws {
        let newOrigin = (origin ?? .configuration).rawValue
        let keptOrigin = origin?.rawValue
        try await connection.query("""
            INSERT INTO monitored_region (identifier, kind, definition, registered_at, origin)
            VALUES (\(region.identifier), \(region.kind.rawValue), \(definition), \(time), \(newOrigin))
            ON CONFLICT (identifier) DO UPDATE SET kind = excluded.kind, definition = excluded.definition,
                registered_at = excluded.registered_at, origin = COALESCE(\(keptOrigin)::text, monitored_region.origin)
            """, logger: logger)
        try await connection.query("DELETE FROM region_state WHERE identifier = \(region.identifier)", logger: logger)
        try await connection.query("DELETE FROM regionkit_region_contribution WHERE region = \(region.identifier)", logger: logger)
    }

    public func removeRegion(_ identifier: String) async throws {
        try await transaction("remove region \(identifier)") { connection, logger in
            try await Self.removeRegion(identifier, connection, logger)
        }
    }

    static func removeRegion(_ identifier: String, _ connection: PostgresConnection, _ logger: Logger) async throws {
        // Looked up as regions keep it (``Region/canonical(identifier:)``): the API's path may spell it otherwise.
        let identifier = Region.canonical(identifier: identifier)
        try await connection.query("DELETE FROM monitored_region WHERE identifier = \(identifier)", logger: logger)
        try await connection.query("DELETE FROM region_state WHERE identifier = \(identifier)", logger: logger)
        try await connection.query("DELETE FROM regionkit_region_contribution WHERE region = \(identifier)", logger: logger)
    }

    public func storedRegions() async throws -> [StoredRegion] {
        let found = try await rows("read regions", "SELECT identifier, definition, origin, registered_at FROM monitored_region ORDER BY sequence") { try $0.decode((String, String, String, Double).self) }
        return try found.map(storedRegion(row:))
    }

    public func storedRegion(_ identifier: String) async throws -> StoredRegion? {
        let identifier = Region.canonical(identifier: identifier)
        let found = try await rows("read region \(identifier)",
                                   "SELECT identifier, definition, origin, registered_at FROM monitored_region WHERE identifier = \(identifier)") {
            try $0.decode((String, String, String, Double).self)
        }
        return try found.first.map(storedRegion(row:))
    }

    private func storedRegion(row: (String, String, String, Double)) throws -> StoredRegion {
        let (identifier, definition, originText, registeredAt) = row
        guard let origin = RegionOrigin(rawValue: originText) else {
            throw RegionKitError(.malformedInput, "store \(description): monitored region '\(identifier)' has unknown origin '\(originText)'")
        }
        do {
            let region = try JSONDecoder().decode(Region.self, from: Data(definition.utf8))
            return StoredRegion(region: region, origin: origin, registeredAt: registeredAt)
        } catch {
            throw RegionKitError(.malformedInput, "store \(description): monitored region '\(identifier)' cannot be decoded", cause: error)
        }
    }

    public func regionOrigins() async throws -> [String: RegionOrigin] {
        var origins: [String: RegionOrigin] = [:]
        let found = try await rows("read region origins", "SELECT identifier, origin FROM monitored_region") { try $0.decode((String, String).self) }
        for (identifier, text) in found {
            origins[identifier] = RegionOrigin(rawValue: text)
        }
        return origins
    }

    public func saveState(_ identifier: String, state: RegionState, since: Double?, evidence: EventEvidence?, at time: Double) async throws {
        let evidenceJSON = try evidence.map(Self.json)
        try await execute("save the state of \(identifier)", Self.saveStateQuery(identifier, state: state, since: since, evidenceJSON: evidenceJSON, at: time))
    }

    static func saveStateQuery(_ identifier: String, state: RegionState, since: Double?, evidenceJSON: String?, at time: Double) -> PostgresQuery {
        let identifier = Region.canonical(identifier: identifier)
        return """
        INSERT INTO region_state (identifier, state, since, evidence, updated_at)
        VALUES (\(identifier), \(state.rawValue), \(since), \(evidenceJSON), \(time))
        ON CONFLICT (identifier) DO UPDATE SET state = excluded.state, since = excluded.since,
            evidence = excluded.evidence, updated_at = excluded.updated_at
        """
    }

    /// `StoreWrite.room(_:scanner:at:)` as a statement: the beacon's row set, or removed.
    static func saveRoomQuery(_ beacon: String, scanner: String?, at time: Double) -> PostgresQuery {
        guard let scanner else { return "DELETE FROM beacon_room WHERE beacon = \(beacon)" }
        return """
            INSERT INTO beacon_room (beacon, scanner, updated_at) VALUES (\(beacon), \(scanner), \(time))
            ON CONFLICT (beacon) DO UPDATE SET scanner = excluded.scanner, updated_at = excluded.updated_at
            """
    }

    public func announcedBeacons(_ output: String) async throws -> [String] {
        try await rows("read announced beacons", "SELECT beacon FROM announced_beacon WHERE output = \(output) ORDER BY beacon") { try $0.decode(String.self) }
    }

    public func addAnnouncedBeacons(_ beacons: [String], output: String) async throws {
        guard !beacons.isEmpty else { return }
        try await transaction("record \(beacons.count) announced beacons of \(output)") { connection, logger in
            try await connection.query("INSERT INTO announced_beacon (output, beacon) SELECT \(output), unnest(\(beacons)::text[]) ON CONFLICT DO NOTHING", logger: logger)
            try await connection.query("DELETE FROM dismissed_beacon WHERE output = \(output) AND beacon = ANY(\(beacons)::text[])", logger: logger)
        }
    }

    public func dismissedBeacons(_ output: String) async throws -> [String] {
        try await rows("read dismissed beacons", "SELECT beacon FROM dismissed_beacon WHERE output = \(output) ORDER BY beacon") { try $0.decode(String.self) }
    }

    public func dismissAnnouncedBeacons(_ beacons: [String], output: String) async throws {
        guard !beacons.isEmpty else { return }
        try await transaction("dismiss \(beacons.count) announced beacons of \(output)") { connection, logger in
            try await connection.query("DELETE FROM announced_beacon WHERE output = \(output) AND beacon = ANY(\(beacons)::text[])", logger: logger)
            try await connection.query("INSERT INTO dismissed_beacon (output, beacon) SELECT \(output), unnest(\(beacons)::text[]) ON CONFLICT DO NOTHING", logger: logger)
        }
    }

    public func beaconRooms() async throws -> [String: String] {
        let found = try await rows("read beacon rooms", "SELECT beacon, scanner FROM beacon_room") { try $0.decode((String, String).self) }
        return Dictionary(found, uniquingKeysWith: { $1 })
    }

    public func states() async throws -> [String: RegionStore.StoredState] {
        var states: [String: RegionStore.StoredState] = [:]
        let found = try await stateRows("read states", "SELECT \(unescaped: Self.stateColumns) FROM region_state")
        states.reserveCapacity(found.count)
        var pass = decodedEvidence.beginPass()
        for row in found { states[row.0] = try storedState(row: row) { pass.evidence(of: $0, text: $1) } }
        decodedEvidence.finish(pass)
        return states
    }

    public func state(of identifier: String) async throws -> RegionStore.StoredState? {
        let identifier = Region.canonical(identifier: identifier)
        let found = try await stateRows("read the state of \(identifier)",
                                        "SELECT \(unescaped: Self.stateColumns) FROM region_state WHERE identifier = \(identifier)")
        return try found.first.map { row in
            try storedState(row: row) { _, text in try? JSONDecoder().decode(EventEvidence.self, from: Data(text.utf8)) }
        }
    }

    public func regionOrigins(of identifiers: [String]) async throws -> [String: RegionOrigin] {
        let keys = Region.canonical(identifiers: identifiers)
        guard !keys.isEmpty else { return [:] }
        let found = try await rows("read the origins of \(keys.count) regions",
                                   "SELECT identifier, origin FROM monitored_region WHERE identifier = ANY(\(keys)::text[])") {
            try $0.decode((String, String).self)
        }
        var origins: [String: RegionOrigin] = [:]
        for (identifier, text) in found { origins[identifier] = RegionOrigin(rawValue: text) }
        return origins
    }

    public func states(of identifiers: [String]) async throws -> [String: RegionStore.StoredState] {
        let keys = Region.canonical(identifiers: identifiers)
        guard !keys.isEmpty else { return [:] }
        let found = try await stateRows("read the states of \(keys.count) regions",
                                        "SELECT \(unescaped: Self.stateColumns) FROM region_state WHERE identifier = ANY(\(keys)::text[])")
        let decoder = JSONDecoder()
        var states: [String: RegionStore.StoredState] = [:]
        for row in found {
            states[row.0] = try storedState(row: row) { _, text in try? decoder.decode(EventEvidence.self, from: Data(text.utf8)) }
        }
        return states
    }

    /// The columns of a `region_state` row as `storedState(row:evidence:)` reads them, in the
    /// order `stateRows(_:_:)` decodes them (a constant: interpolated unescaped).
    static let stateColumns = "identifier, state, since, evidence, updated_at"

    /// The `region_state` rows of `query`, which selects ``stateColumns``.
    private func stateRows(_ what: String, _ query: PostgresQuery) async throws -> [(String, String, Double?, String?, Double)] {
        try await rows(what, query) { try $0.decode((String, String, Double?, String?, Double).self) }
    }

    /// A `region_state` row; `evidence` turns the region's stored evidence text into the evidence.
    private func storedState(row: (String, String, Double?, String?, Double),
                             evidence decode: (_ identifier: String, _ text: String) -> EventEvidence?) throws -> RegionStore.StoredState {
        let (identifier, text, since, evidence, updatedAt) = row
        guard let state = RegionState(rawValue: text) else {
            throw RegionKitError(.malformedInput, "store \(description): region '\(identifier)' has unknown state '\(text)'")
        }
        return RegionStore.StoredState(state, since: since,
                                       evidence: evidence.flatMap { decode(identifier, $0) },
                                       updatedAt: updatedAt)
    }

    // MARK: - Event log

    @discardableResult
    public func append(time: Double, type: String, region: String?, state: String?, reason: String?, json: String,
                       hooks: [String] = []) async throws -> Int64 {
        let row = ClusterEventRow(time: time, type: type, region: region, state: state, reason: reason, json: json, hooks: hooks)
        let description = description
        let stored = try await transaction("append a \(type) event") { connection, logger in
            try await Self.insert([row], connection, logger, store: description)
        }
        guard let id = stored.first?.id else { throw RegionKitError(.storeFailed, "store \(description): the event insert returned no id") }
        return id
    }

    /// Commits `writes` in order in one transaction (one round trip for BEGIN and one for COMMIT,
    /// the append lock taken once, one flush of the WAL): all or none. Returns the stored event of
    /// every `.event` write, in order. A failure names the write that failed.
    ///
    /// A batch with events holds the append lock from its start to its commit, its region and
    /// state writes included, so appends by other writers wait for the whole batch. (A cluster
    /// contribution takes its region's rows before the append lock: a daemon's batch and a
    /// cluster sharing one database could deadlock, and PostgreSQL would abort one of them. A
    /// daemon and a cluster on one database is a misconfiguration anyway: both would log the
    /// regions' events.)
    ///
    /// ```swift
    /// let stored = try await store.apply(backlog)   // hundreds of events, one commit
    /// ```
    public func apply(_ writes: [StoreWrite]) async throws -> [StoredEvent] {
        guard !writes.isEmpty else { return [] }
        let encoded = try writes.map { try $0.jsonColumn() }
        let description = description
        let events = writes.count(where: { if case .event = $0 { true } else { false } })
        // Bounded per write, not for the batch: a batch of slow round trips that keeps going is not a stuck server.
        let progress = LockedBox(0)
        return try await transaction("write \(writes.count) changes (\(events) events)", progress: progress) { connection, logger in
            // Taken before the first id is drawn (and held to the commit), as every append takes it.
            if events > 0 { try await Self.lockAppends(connection, logger) }
            var stored: [StoredEvent] = []
            for (index, (write, json)) in zip(writes, encoded).enumerated() {
                do {
                    switch write {
                    case .region(let region, let time, let origin):
                        try await Self.saveRegion(region, definition: json ?? "", at: time, origin: origin, connection, logger)
                    case .removeRegion(let identifier):
                        try await Self.removeRegion(identifier, connection, logger)
                    case .state(let identifier, let state, let since, _, let time):
                        try await connection.query(Self.saveStateQuery(identifier, state: state, since: since, evidenceJSON: json, at: time), logger: logger)
                    case .event(let time, let type, let region, let state, let reason, let line, let hooks):
                        let row = ClusterEventRow(time: time, type: type, region: region, state: state, reason: reason, json: line, hooks: hooks)
                        stored += try await Self.insertLocked([row], connection, logger, store: description)
                    case .room(let beacon, let scanner, let time):
                        try await connection.query(Self.saveRoomQuery(beacon, scanner: scanner, at: time), logger: logger)
                    }
                } catch {
                    throw RegionKitError(.storeFailed, "store \(description): cannot write \(index + 1) of \(writes.count) (\(write.summary)): \(Self.explain(error)); the transaction was rolled back", cause: error)
                }
                progress.withLock { $0 += 1 }
            }
            return stored
        }
    }

    public func events(since: Double? = nil, region: String? = nil, type: String? = nil, afterID: Int64? = nil,
                       limit: Int? = nil) async throws -> [StoredEvent] {
        var clauses: [String] = []
        var binds = PostgresBindings()
        if let since { binds.append(since); clauses.append("time >= $\(binds.count)") }
        if let region { binds.append(Region.canonical(identifier: region)); clauses.append("region = $\(binds.count)") }
        if let type { binds.append(type); clauses.append("type = $\(binds.count)") }
        if let afterID { binds.append(afterID); clauses.append("id > $\(binds.count)") }
        var sql = "SELECT id, time, type, region, state, reason, json FROM event_log"
        if !clauses.isEmpty { sql += " WHERE " + clauses.joined(separator: " AND ") }
        sql += " ORDER BY id"
        if let limit { binds.append(Int64(max(0, limit))); sql += " LIMIT $\(binds.count)" }
        let found = try await rows("read events", PostgresQuery(unsafeSQL: sql, binds: binds)) { try $0.decode((Int64, Double, String, String?, String?, String?, String).self) }
        return found.map { StoredEvent(id: $0.0, time: $0.1, type: $0.2, region: $0.3, state: $0.4, reason: $0.5, json: $0.6) }
    }

    /// See `RegionStoring.eventCounts()`: the log's rows and `PrunedTally` in one statement
    /// (one snapshot), so a prune between two reads cannot count its events twice or not at all.
    public func eventCounts() async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        let prefix = PrunedTally.eventPrefix
        let found = try await rows("count events", """
            SELECT type, LEAST(SUM(n), 9223372036854775807)::bigint FROM (
                SELECT type, COUNT(*)::numeric AS n FROM event_log GROUP BY type
                UNION ALL
                SELECT substr(counter, \(unescaped: String(prefix.utf8.count + 1))), GREATEST(count, 0)::numeric
                FROM \(unescaped: PrunedTally.table) WHERE starts_with(counter, \(prefix))) AS t
            GROUP BY type
            """) { try $0.decode((String, Int64).self) }
        for (type, count) in found {
            counts[type] = Int(count)
        }
        return counts
    }

    public func lastEventID() async throws -> Int64 {
        try await rows("read the last event id", "SELECT COALESCE(MAX(id), 0)::bigint FROM event_log") { try $0.decode(Int64.self) }.first ?? 0
    }

    /// See `RegionStoring.pruneEvents(olderThan:keepingNewest:limit:)`. As on SQLite: the
    /// count's cutoff is `newest − count` (at most `count` kept), and the candidates come through
    /// an id range, then the time index, in two statements (one with `time < … OR id <= …` would
    /// walk the primary key through the whole log). Rows another member is deleting at the same
    /// moment are skipped (`SKIP LOCKED`), not waited for.
    @discardableResult
    public func pruneEvents(olderThan time: Double?, keepingNewest count: Int?, limit: Int) async throws -> Int {
        guard time != nil || count != nil, limit > 0 else { return 0 }
        let newest = try await lastEventID()
        guard newest > 0 else { return 0 }
        var deleted = 0
        let owed = "NOT EXISTS (SELECT 1 FROM hook_delivery AS h WHERE h.event_id = e.id AND h.status = 'pending')"
        if let count, case let cutoff = RegionStore.countCutoff(newest: newest, keeping: count), cutoff > 0 {
            deleted += try await prune("prune the event log (by count)", candidates: """
                SELECT e.id FROM event_log AS e WHERE e.id <= $3 AND e.id < $4 AND \(owed)
                ORDER BY e.id LIMIT $5 FOR UPDATE SKIP LOCKED
                """) { $0.append(cutoff); $0.append(newest); $0.append(Int64(limit)) }
        }
        if let time, deleted < limit {
            deleted += try await prune("prune the event log (by age)", candidates: """
                SELECT e.id FROM event_log AS e WHERE e.time < $3 AND e.id < $4 AND \(owed)
                LIMIT $5 FOR UPDATE SKIP LOCKED
                """) { $0.append(time); $0.append(newest); $0.append(Int64(limit - deleted)) }
        }
        return deleted
    }

    /// Deletes the events `candidates` selects (one id column, locked; its parameters from `$3`,
    /// bound by `bind`) with their deliveries and adds them, and their deliveries' failed attempts,
    /// to ``PrunedTally`` — one statement, so one transaction and one snapshot: the tally counts
    /// exactly the rows deleted.
    private func prune(_ what: String, candidates: String, bind: (inout PostgresBindings) -> Void) async throws -> Int {
        let table = PrunedTally.table
        var binds = PostgresBindings()
        binds.append(PrunedTally.eventPrefix)
        binds.append(PrunedTally.failedAttempts)
        bind(&binds)
        let query = PostgresQuery(unsafeSQL: """
            WITH doomed AS (\(candidates)),
            failed AS (
                SELECT COALESCE(SUM(CASE WHEN status = 'delivered' THEN GREATEST(attempts, 1) - 1 ELSE GREATEST(attempts, 0) END), 0) AS n
                FROM hook_delivery WHERE event_id IN (SELECT id FROM doomed)),
            pruned AS (DELETE FROM event_log WHERE id IN (SELECT id FROM doomed) RETURNING type),
            tallied AS (
                INSERT INTO \(table) (counter, count)
                SELECT $1 || type, COUNT(*) FROM pruned GROUP BY type
                UNION ALL
                SELECT $2, LEAST(n, 4611686018427387903)::bigint FROM failed WHERE n > 0
                ORDER BY 1
                ON CONFLICT (counter) DO UPDATE
                SET count = LEAST(GREATEST(\(table).count, 0), 4611686018427387903) + EXCLUDED.count
                RETURNING 1)
            SELECT COUNT(*) FROM pruned
            """, binds: binds)
        return Int(try await rows(what, query) { try $0.decode(Int64.self) }.first ?? 0)
    }

    // MARK: - Hook deliveries

    public func deliveryCounts() async throws -> (byStatus: [String: Int], failedAttempts: Int) {
        var counts: [String: Int] = [:]
        let byStatus = try await rows("count deliveries", "SELECT status, COUNT(*) FROM hook_delivery GROUP BY status") { try $0.decode((String, Int64).self) }
        for (status, count) in byStatus {
            counts[status] = Int(count)
        }
        // With the attempts of deliveries pruned with their events (``PrunedTally``): a total.
        let failed = try await rows("count failed attempts", """
            SELECT LEAST(COALESCE((SELECT SUM(CASE WHEN status = 'delivered' THEN GREATEST(attempts, 1) - 1 ELSE GREATEST(attempts, 0) END)
                                   FROM hook_delivery), 0)
                         + COALESCE((SELECT SUM(GREATEST(count, 0)) FROM \(unescaped: PrunedTally.table)
                                     WHERE counter = \(PrunedTally.failedAttempts)), 0),
                         9223372036854775807)::bigint
            """) { try $0.decode(Int64.self) }.first ?? 0
        return (counts, Int(failed))
    }

    private static let deliveryColumns = deliveryColumns(prefix: "")

    private static func deliveryColumns(prefix: String) -> String {
        ["id", "event_id", "hook", "status", "attempts", "next_attempt_at", "last_error", "delivered_at"].map { prefix + $0 }.joined(separator: ", ")
    }
    private typealias DeliveryRow = (Int64, Int64, String, String, Int64, Double, String?, Double?)

    /// A region's deliveries in log order per channel, as the SQLite store (`RegionStore.regionHeads`).
    public func dueDeliveries(now: Double, limit: Int) async throws -> [HookDelivery] {
        try await rows("read due deliveries", """
            \(unescaped: RegionStore.regionHeads) SELECT \(unescaped: Self.deliveryColumns(prefix: "d."))
            FROM hook_delivery d \(unescaped: RegionStore.headsJoin)
            WHERE d.status = 'pending' AND d.next_attempt_at <= \(now) AND (h.first IS NULL OR d.event_id = h.first)
            ORDER BY d.next_attempt_at, d.id LIMIT \(Int64(max(0, limit)))
            """) { try $0.decode(DeliveryRow.self) }.map(delivery)
    }

    public func nextDeliveryTime() async throws -> Double? {
        try await rows("read the next delivery time", """
            \(unescaped: RegionStore.regionHeads) SELECT MIN(d.next_attempt_at) FROM hook_delivery d \(unescaped: RegionStore.headsJoin)
            WHERE d.status = 'pending' AND (h.first IS NULL OR d.event_id = h.first)
            """) { try $0.decode(Double?.self) }.first ?? nil
    }

    public func deliveries(status: HookDelivery.Status? = nil) async throws -> [HookDelivery] {
        let query: PostgresQuery = if let status {
            "SELECT \(unescaped: Self.deliveryColumns) FROM hook_delivery WHERE status = \(status.rawValue) ORDER BY id"
        } else {
            "SELECT \(unescaped: Self.deliveryColumns) FROM hook_delivery ORDER BY id"
        }
        return try await rows("read deliveries", query) { try $0.decode(DeliveryRow.self) }.map(delivery)
    }

    public func markDelivered(_ id: Int64, at time: Double) async throws {
        try await execute("mark delivery \(id) delivered", """
            UPDATE hook_delivery SET status = 'delivered', attempts = LEAST(attempts, 9223372036854775806) + 1, delivered_at = \(time), last_error = NULL WHERE id = \(id)
            """)
    }

    public func markAttemptFailed(_ id: Int64, error: String, retryAt: Double?) async throws {
        // Attempts saturate below Int64.max: a damaged row's count must not overflow (PostgreSQL would refuse the write, for ever).
        if let retryAt {
            try await execute("record a failed attempt of delivery \(id)", """
                UPDATE hook_delivery SET attempts = LEAST(attempts, 9223372036854775806) + 1, last_error = \(error), next_attempt_at = \(retryAt) WHERE id = \(id)
                """)
        } else {
            try await execute("mark delivery \(id) failed", """
                UPDATE hook_delivery SET attempts = LEAST(attempts, 9223372036854775806) + 1, last_error = \(error), status = 'failed' WHERE id = \(id)
                """)
        }
    }

    @discardableResult
    public func trimPendingDeliveries(toAtMost limit: Int) async throws -> Int {
        let dropped = try await rows("trim pending deliveries", """
            WITH dropped AS (
                UPDATE hook_delivery SET status = 'dropped', last_error = 'queue full'
                WHERE id IN (SELECT id FROM hook_delivery WHERE status = 'pending' ORDER BY id DESC OFFSET \(Int64(max(0, limit))))
                RETURNING 1)
            SELECT COUNT(*) FROM dropped
            """) { try $0.decode(Int64.self) }.first ?? 0
        return Int(dropped)
    }

    // MARK: - Output cursors

    public func outputCursor(_ output: String, createAtEnd: Bool = false) async throws -> Int64 {
        try await transaction("read the cursor of \(output)") { connection, logger in
            for try await id in try await connection.query("SELECT event_id FROM output_cursor WHERE output = \(output)", logger: logger).decode(Int64.self) {
                return id
            }
            guard createAtEnd else { return 0 }
            // Concurrent creators agree: the first insert wins and every caller reads it back.
            try await connection.query("""
                INSERT INTO output_cursor (output, event_id) SELECT \(output), COALESCE(MAX(id), 0) FROM event_log
                ON CONFLICT (output) DO NOTHING
                """, logger: logger)
            var id: Int64 = 0
            for try await value in try await connection.query("SELECT event_id FROM output_cursor WHERE output = \(output)", logger: logger).decode(Int64.self) {
                id = value
            }
            return id
        }
    }

    public func setOutputCursor(_ output: String, to id: Int64) async throws {
        try await execute("set the cursor of \(output)", """
            INSERT INTO output_cursor (output, event_id) VALUES (\(output), \(id))
            ON CONFLICT (output) DO UPDATE SET event_id = GREATEST(output_cursor.event_id, excluded.event_id)
            """)
    }

    // MARK: - Health

    public func checkWritable() async throws {
        try await transaction("check that the store is writable") { connection, logger in
            for try await _ in try await connection.query("UPDATE monitored_region SET kind = kind WHERE false", logger: logger) {}
        }
    }

    // MARK: - Helpers

    /// Runs `body` in a transaction; any failure becomes a `RegionKitError` (`storeFailed`) saying what was being done.
    /// `progress`: counted up by the body as it goes (a batch, a statement at a time); then the
    /// timeout bounds the wait for the next step, not the whole transaction.
    func transaction<T: Sendable>(_ what: String, progress: LockedBox<Int>? = nil,
                                  _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T) async throws -> T {
        let logger = logger
        let client = client
        do {
            return try await bounded(what, progress: progress) {
                try await client.withTransaction(logger: logger) { connection in try await body(connection, logger) }
            }
        } catch let error as RegionKitError {
            throw error
        } catch let error as PostgresTransactionError {
            if let closureError = error.closureError as? RegionKitError { throw closureError }
            throw RegionKitError(.storeFailed, "store \(description): cannot \(what): \(Self.explain(error))", cause: error)
        } catch {
            throw RegionKitError(.storeFailed, "store \(description): cannot \(what): \(Self.explain(error))", cause: error)
        }
    }

    func execute(_ what: String, _ query: PostgresQuery) async throws {
        let (client, logger) = (client, logger)
        do {
            // The rows consumed (there are none): an error the server sends after the statement
            // started reaches the caller instead of being dropped with the row sequence.
            try await bounded(what) { for try await _ in try await client.query(query, logger: logger) {} }
        } catch let error as RegionKitError {
            throw error
        } catch {
            throw RegionKitError(.storeFailed, "store \(description): cannot \(what): \(Self.explain(error))", cause: error)
        }
    }

    func rows<Row: Sendable>(_ what: String, _ query: PostgresQuery, _ decode: @escaping @Sendable (PostgresRow) throws -> Row) async throws -> [Row] {
        let (client, logger) = (client, logger)
        do {
            return try await bounded(what) {
                var result: [Row] = []
                for try await row in try await client.query(query, logger: logger) { result.append(try decode(row)) }
                return result
            }
        } catch let error as RegionKitError {
            throw error
        } catch {
            throw RegionKitError(.storeFailed, "store \(description): cannot \(what): \(Self.explain(error))", cause: error)
        }
    }

    /// Runs `body`, or throws `storeFailed` when it has not finished within ``operationTimeout``.
    /// The body is cancelled then, and not waited for: a query in flight on a connection whose
    /// server stopped answering does not end on cancellation (PostgresNIO waits for the reply), so
    /// waiting would not bound anything. Such a body ends when its connection does; its connection
    /// stays leased until then, and a write it was making may still land (an operation that timed
    /// out has an unknown outcome, as with any lost reply).
    ///
    /// With `progress`, the body counts it up as it makes progress (a long batch, statement by
    /// statement), and the timeout applies to each wait for progress instead: it fires once a whole
    /// ``operationTimeout`` has passed with the count unchanged.
    private func bounded<T: Sendable>(_ what: String, progress: LockedBox<Int>? = nil,
                                      _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = operationTimeout
        let race = FirstResult<T>()
        let work = Task {
            do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
        }
        let store = description
        let timer = Task {
            var seen = progress?.withLock { $0 }
            while true {
                // Cancelled once the work finished: no error is built then.
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                let now = progress?.withLock { $0 }
                if now == nil || now == seen { break }
                seen = now
            }
            race.finish(.failure(RegionKitError(.storeFailed, "store \(store): cannot \(what): no answer within \(timeout)")))
        }
        defer {
            timer.cancel()
            work.cancel()   // after a timeout; a no-op when it finished
        }
        return try await withTaskCancellationHandler {
            try await race.value
        } onCancel: {
            work.cancel()
            race.finish(.failure(CancellationError()))
        }
    }

    /// PSQLError's `description` hides the server's message on purpose; the server's message and
    /// SQLSTATE say what failed (they never contain bound values).
    static func explain(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                return "\(message) (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?"))"
            }
            return "\(error.code)"
        }
        if let error = error as? PostgresTransactionError {
            if let closureError = error.closureError { return explain(closureError) }
            if let beginError = error.beginError { return explain(beginError) }
            if let commitError = error.commitError { return explain(commitError) }
        }
        return "\(error)"
    }

    private func delivery(_ row: DeliveryRow) -> HookDelivery {
        HookDelivery(row.0, eventID: row.1, hook: row.2, status: HookDelivery.Status(rawValue: row.3) ?? .failed,
                     attempts: Int(row.4), nextAttemptAt: row.5, lastError: row.6, deliveredAt: row.7)
    }

    static func json<T: Encodable>(_ value: T) throws -> String {
        try StoreWrite.json(value)
    }
}
