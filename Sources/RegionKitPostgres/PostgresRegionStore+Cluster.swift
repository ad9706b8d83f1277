import Foundation
import Logging
import PostgresNIO
import RegionKitCore
import RegionKitStore

/// Cluster mode on PostgreSQL: members with heartbeats, one lease row per partition (owner, epoch,
/// expiry on the server's clock), and per-partition contributions merged into the region's state
/// and event log in one transaction.
///
/// Lease rounds are serialised by a transaction-level advisory lock, so two members never take the
/// same partition in one instant. A contribution is written only while its lease row says the
/// writer holds the partition with that epoch and the lease has not expired; the row is locked
/// `FOR KEY SHARE` until the commit. A round that takes a partition (a new owner or epoch) first
/// locks its row `FOR UPDATE`, which waits for those writes to finish instead of overtaking them
/// (fencing). A renewal only moves the expiry: its plain `UPDATE` (a `FOR NO KEY UPDATE` row lock)
/// does not conflict with `FOR KEY SHARE`, so renewing never waits behind the data writes. (With
/// `FOR SHARE` it did: under load a renewal waited seconds for the writers, the leases lapsed, and
/// the partitions were stopped with acknowledged sightings' decisions still queued.)
extension PostgresRegionStore: ClusterStoring {
    /// The server's clock, seconds since 1970 (every lease time is on it, not on the members' clocks).
    static let serverNow = "extract(epoch from clock_timestamp())::double precision"

    static func now(_ connection: PostgresConnection, _ logger: Logger) async throws -> Double {
        var now = 0.0
        for try await value in try await connection.query(PostgresQuery(unsafeSQL: "SELECT \(serverNow)"), logger: logger).decode(Double.self) {
            now = value
        }
        return now
    }

    public func heartbeat(member: String, ttl: Double) async throws {
        try await transaction("heartbeat of \(member)") { connection, logger in
            let now = try await Self.now(connection, logger)
            try await connection.query("""
                INSERT INTO regionkit_cluster_member (member, expires_at) VALUES (\(member), \(now + ttl))
                ON CONFLICT (member) DO UPDATE SET expires_at = EXCLUDED.expires_at
                """, logger: logger)
        }
    }

    public func leave(member: String) async throws {
        try await execute("remove member \(member)", "DELETE FROM regionkit_cluster_member WHERE member = \(member)")
    }

    @discardableResult
    public func join(member: String, instance: String, regions: String?, ttl: Double, preparing partitions: Int?,
                     deciding: @escaping @Sendable (_ region: String) -> [Int]) async throws -> Bool {
        guard ttl.isFinite, ttl > 0, ttl <= 3600 else {
            throw RegionKitError(.invalidArgument, "cluster: a lease of \(ttl) s is not in (0, 3600]")
        }
        if let partitions, !(1...65_536).contains(partitions) {
            throw RegionKitError(.invalidArgument, "cluster: \(partitions) partitions is not in 1…65536")
        }
        let description = description
        return try await transaction("join the cluster as \(member)") { connection, logger in
            // Under the lock of the lease rounds: two processes joining with one name are serialised.
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.clusterLock))", logger: logger)
            try await Self.refuseDaemon(store: description, connection, logger)
            let now = try await Self.now(connection, logger)
            let heartbeat = try await Self.checkMember(member, instance: instance, now: now, store: description, connection, logger)
            // In the same transaction: a refusal leaves no heartbeat behind (a member that keeps
            // being refused would otherwise count as live and shrink everyone's fair share), and
            // members starting together with one new count are serialised (the first re-partitions).
            if let partitions {
                try await Self.prepare(partitions, member: member, deciding: deciding, store: description, connection, logger)
            }
            // Live from now on, so that the name is this process's until its rounds stop.
            try await connection.query("""
                INSERT INTO regionkit_cluster_member (member, expires_at, instance, regions) VALUES (\(member), \(now + ttl), \(instance), \(regions))
                ON CONFLICT (member) DO UPDATE SET instance = EXCLUDED.instance, regions = EXCLUDED.regions,
                    expires_at = GREATEST(regionkit_cluster_member.expires_at, EXCLUDED.expires_at)
                """, logger: logger)
            return heartbeat.map { $0 <= now } ?? false
        }
    }

    /// Refuses (`clusterConflict`, naming it: a start waits it out for a lease, as a daemon refused
    /// on the cluster's store holds the lock for a moment) to join while a daemon holds the store
    /// (``acquireDaemonLock(holder:probeInterval:onLost:)``); otherwise holds the daemon lock shared
    /// until the transaction ends: a daemon starting meanwhile cannot take its lock, and one
    /// starting after finds the member's row (the store is a cluster's).
    static func refuseDaemon(store: String, _ connection: PostgresConnection, _ logger: Logger) async throws {
        var free = false
        for try await value in try await connection.query("SELECT pg_try_advisory_xact_lock_shared(\(daemonLock))", logger: logger).decode(Bool.self) {
            free = value
        }
        guard !free else { return }
        var holder = "a daemon that did not say who it is"
        for try await (name, since) in try await connection.query(
            "SELECT holder, since FROM regionkit_daemon_lock WHERE key = \(daemonLock)", logger: logger).decode((String, Double).self) {
            holder = "\(name), since \(Date(timeIntervalSince1970: since).ISO8601Format())"
        }
        throw RegionKitError(.clusterConflict, """
            store \(store) is in use by a regionkit daemon (\(holder)): a cluster member beside it would merge states the daemon \
            overwrites; stop the daemon or give the cluster another store
            """)
    }

    @discardableResult
    public func leave(member: String, instance: String, partitions: [PartitionLease], singletons: [String]) async throws -> Bool {
        let numbers = partitions.map { Int64($0.partition) }
        let epochs = partitions.map(\.epoch)
        return try await transaction("hand back and leave: \(member)") { connection, logger in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.clusterLock))", logger: logger)
            for try await holder in try await connection.query(
                "SELECT instance FROM regionkit_cluster_member WHERE member = \(member)", logger: logger).decode(String?.self) {
                // The name passed to another process (this one was frozen past its heartbeat):
                // its leases and heartbeat are that process's now.
                if let holder, holder != instance { return false }
            }
            if !partitions.isEmpty {
                try await connection.query("""
                    UPDATE regionkit_partition_lease SET expires_at = 0
                    WHERE owner = \(member) AND (partition, epoch) IN (SELECT * FROM unnest(\(numbers)::bigint[], \(epochs)::bigint[]))
                    """, logger: logger)
            }
            if !singletons.isEmpty {
                try await connection.query("""
                    UPDATE regionkit_singleton_lease SET expires_at = 0 WHERE owner = \(member) AND name = ANY(\(singletons)::text[])
                    """, logger: logger)
            }
            try await connection.query("DELETE FROM regionkit_cluster_member WHERE member = \(member)", logger: logger)
            return true
        }
    }

    /// Checks (under the cluster lock) that `instance` may hold the member name: refused with
    /// `RegionKitError.Code.clusterConflict` while another instance holds it with a live
    /// heartbeat. Returns when the member's heartbeat expires (nil: no such member). The caller's
    /// upsert of the member row then records `instance`.
    static func checkMember(_ member: String, instance: String, now: Double, store: String,
                            _ connection: PostgresConnection, _ logger: Logger) async throws -> Double? {
        var found: (expiresAt: Double, holder: String?)?
        for try await (expiresAt, holder) in try await connection.query(
            "SELECT expires_at, instance FROM regionkit_cluster_member WHERE member = \(member)", logger: logger).decode((Double, String?).self) {
            found = (expiresAt, holder)
        }
        guard let found else { return nil }
        if let holder = found.holder, holder != instance {
            guard found.expiresAt <= now else {
                throw RegionKitError(.clusterConflict, """
                    store \(store): member name '\(member)' is in use by another process (\(holder)), whose heartbeat is live for \
                    \(String(format: "%.1f", found.expiresAt - now)) s more: two members are configured with one name, or this process was \
                    replaced after its heartbeat expired (it was frozen); every member of a cluster needs its own name (cluster: {member: ...})
                    """)
            }
        }
        return found.expiresAt
    }

    /// The partition count the cluster was prepared for (nil: not recorded yet).
    static func recordedPartitions(_ connection: PostgresConnection, _ logger: Logger) async throws -> Int64? {
        var recorded: Int64?
        for try await value in try await connection.query("SELECT partitions FROM regionkit_cluster", logger: logger).decode(Int64.self) {
            recorded = value
        }
        return recorded
    }

    static func recordPartitions(_ count: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO regionkit_cluster (only_row, partitions) VALUES (true, \(count))
            ON CONFLICT (only_row) DO UPDATE SET partitions = EXCLUDED.partitions
            """, logger: logger)
    }

    public func balanceLeases(member: String, instance: String, regions: String?, partitions: Int, ttl: Double,
                              reclaimOnly: Bool) async throws -> LeaseRound {
        guard partitions >= 1, partitions <= 65_536 else {
            throw RegionKitError(.invalidArgument, "cluster: \(partitions) partitions is not in 1…65536")
        }
        guard ttl.isFinite, ttl > 0, ttl <= 3600 else {
            throw RegionKitError(.invalidArgument, "cluster: a lease of \(ttl) s is not in (0, 3600]")
        }
        let count = Int64(partitions)
        let description = description
        return try await transaction("balance the partition leases of \(member)") { connection, logger in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.clusterLock))", logger: logger)
            let now = try await Self.now(connection, logger)
            let expires = now + ttl
            // Every member hashes beacons to partitions alike, or a beacon's sightings would be
            // decided by two partitions (or none).
            if let recorded = try await Self.recordedPartitions(connection, logger) {
                guard recorded == count else {
                    throw RegionKitError(.clusterConflict, """
                        store \(description): the cluster has \(recorded) partitions and member '\(member)' is configured for \(count): \
                        every member of a cluster uses one partition count (to change it, stop every member and start them with the new one)
                        """)
                }
            } else {
                try await Self.recordPartitions(count, connection, logger)
            }
            // A member whose own heartbeat expired was away (the store unreachable, or the member
            // stalled): this round reclaims, as if asked to.
            let heartbeat = try await Self.checkMember(member, instance: instance, now: now, store: description, connection, logger)
            let away = heartbeat.map { $0 <= now } ?? false
            let reclaimOnly = reclaimOnly || away
            try await connection.query("""
                INSERT INTO regionkit_cluster_member (member, expires_at, instance, regions) VALUES (\(member), \(expires), \(instance), \(regions))
                ON CONFLICT (member) DO UPDATE SET expires_at = EXCLUDED.expires_at, instance = EXCLUDED.instance, regions = EXCLUDED.regions
                """, logger: logger)
            // Members gone for a minute are forgotten (their leases expired long before).
            try await connection.query("DELETE FROM regionkit_cluster_member WHERE expires_at < \(now - 60)", logger: logger)
            try await connection.query("""
                INSERT INTO regionkit_partition_lease (partition) SELECT generate_series(0, \(count - 1))
                ON CONFLICT (partition) DO NOTHING
                """, logger: logger)
            // The live members, with the region definitions each recorded.
            var live: Int64 = 0
            var definitions: [String: String] = [:]
            for try await (name, digest) in try await connection.query(
                "SELECT member, regions FROM regionkit_cluster_member WHERE expires_at > \(now)", logger: logger).decode((String, String?).self) {
                live += 1
                if let digest { definitions[name] = digest }
            }
            live = max(1, live)
            let fair = (count + live - 1) / live
            var held: [PartitionLease] = []
            for try await (partition, epoch) in try await connection.query("""
                UPDATE regionkit_partition_lease SET expires_at = \(expires)
                WHERE owner = \(member) AND expires_at > \(now) AND partition >= 0 AND partition < \(count)
                RETURNING partition, epoch
                """, logger: logger).decode((Int64, Int64).self) {
                held.append(PartitionLease(partition: Int(partition), epoch: epoch))
            }
            var taken: [PartitionLease] = []
            if reclaimOnly {
                // Its own partitions that expired while it could not renew them, and nobody took.
                // A new epoch: locked FOR UPDATE first, so the old epoch's writes finish (or are fenced).
                for try await (partition, epoch) in try await connection.query("""
                    UPDATE regionkit_partition_lease SET epoch = epoch + 1, expires_at = \(expires)
                    WHERE partition IN (SELECT partition FROM regionkit_partition_lease
                                        WHERE owner = \(member) AND expires_at <= \(now) AND partition >= 0 AND partition < \(count) FOR UPDATE)
                    RETURNING partition, epoch
                    """, logger: logger).decode((Int64, Int64).self) {
                    taken.append(PartitionLease(partition: Int(partition), epoch: epoch))
                }
                let all = (held + taken).sorted()
                return LeaseRound(held: all, taken: taken.sorted(), surplus: 0, liveMembers: Int(live), reclaimed: true,
                                  regionDefinitions: definitions)
            }
            let wanted = fair - Int64(held.count)
            if wanted > 0 {
                // Taken rows are locked FOR UPDATE first: that waits for the old holder's writes in flight.
                for try await (partition, epoch) in try await connection.query("""
                    UPDATE regionkit_partition_lease SET owner = \(member), epoch = epoch + 1, expires_at = \(expires)
                    WHERE partition IN (SELECT partition FROM regionkit_partition_lease
                                        WHERE expires_at <= \(now) AND partition >= 0 AND partition < \(count) ORDER BY partition LIMIT \(wanted)
                                        FOR UPDATE)
                    RETURNING partition, epoch
                    """, logger: logger).decode((Int64, Int64).self) {
                    taken.append(PartitionLease(partition: Int(partition), epoch: epoch))
                }
            }
            let all = (held + taken).sorted()
            return LeaseRound(held: all, taken: taken.sorted(), surplus: max(0, all.count - Int(fair)), liveMembers: Int(live),
                              regionDefinitions: definitions)
        }
    }

    public func releaseLeases(member: String, partitions: [Int]) async throws {
        guard !partitions.isEmpty else { return }
        let numbers = partitions.map(Int64.init)
        try await execute("release partitions \(partitions) of \(member)", """
            UPDATE regionkit_partition_lease SET expires_at = 0 WHERE owner = \(member) AND partition = ANY(\(numbers))
            """)
    }

    public func holdSingleton(_ name: String, member: String, ttl: Double) async throws -> Int64? {
        guard ttl.isFinite, ttl > 0, ttl <= 3600 else {
            throw RegionKitError(.invalidArgument, "cluster: a lease of \(ttl) s is not in (0, 3600]")
        }
        return try await transaction("hold the \(name) lease for \(member)") { connection, logger in
            let now = try await Self.now(connection, logger)
            var epoch: Int64?
            // Renewed by its holder while unexpired (same epoch); taken when expired (next epoch).
            for try await value in try await connection.query("""
                INSERT INTO regionkit_singleton_lease (name, owner, epoch, expires_at) VALUES (\(name), \(member), 1, \(now + ttl))
                ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at,
                    epoch = CASE WHEN regionkit_singleton_lease.owner = EXCLUDED.owner AND regionkit_singleton_lease.expires_at > \(now)
                                 THEN regionkit_singleton_lease.epoch ELSE regionkit_singleton_lease.epoch + 1 END
                WHERE regionkit_singleton_lease.expires_at <= \(now) OR regionkit_singleton_lease.owner = EXCLUDED.owner
                RETURNING epoch
                """, logger: logger).decode(Int64.self) {
                epoch = value
            }
            return epoch
        }
    }

    public func recordSightings(member: String, total: Int64) async throws {
        try await execute("record the progress of \(member)", "UPDATE regionkit_cluster_member SET sightings = \(total) WHERE member = \(member)")
    }

    public func members() async throws -> [(member: String, expiresIn: Double, sightings: Int64)] {
        let query = PostgresQuery(unsafeSQL: "SELECT member, expires_at - \(Self.serverNow), sightings FROM regionkit_cluster_member ORDER BY member")
        return try await rows("read the cluster members", query) { row in
            let (member, remaining, sightings) = try row.decode((String, Double, Int64).self)
            return (member: member, expiresIn: remaining, sightings: sightings)
        }
    }

    public func leases() async throws -> [(partition: Int, owner: String?, epoch: Int64, expiresIn: Double)] {
        let query = PostgresQuery(unsafeSQL: """
            SELECT partition, owner, epoch, expires_at - \(Self.serverNow) FROM regionkit_partition_lease ORDER BY partition
            """)
        return try await rows("read the partition leases", query) { row in
            let (partition, owner, epoch, remaining) = try row.decode((Int64, String?, Int64, Double).self)
            return (partition: Int(partition), owner: owner, epoch: epoch, expiresIn: remaining)
        }
    }

    public func clusterStatus() async throws -> ClusterStatus {
        try await transaction("read the cluster's status") { connection, logger in
            // One snapshot for every table, and one "now" for every expiry.
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            let now = try await Self.now(connection, logger)
            let count = try await Self.recordedPartitions(connection, logger)
            var members: [ClusterStatus.Member] = []
            for try await (member, instance, expiresAt, sightings, regions) in try await connection.query(
                "SELECT member, instance, expires_at, sightings, regions FROM regionkit_cluster_member ORDER BY member", logger: logger
            ).decode((String, String?, Double, Int64, String?).self) {
                members.append(ClusterStatus.Member(member: member, instance: instance, expiresIn: expiresAt - now, sightings: sightings,
                                                    regions: regions))
            }
            var partitions: [ClusterStatus.Lease] = []
            for try await (partition, owner, epoch, expiresAt) in try await connection.query(
                "SELECT partition, owner, epoch, expires_at FROM regionkit_partition_lease ORDER BY partition", logger: logger
            ).decode((Int64, String?, Int64, Double).self) {
                partitions.append(ClusterStatus.Lease(name: String(partition), owner: owner, epoch: epoch, expiresIn: expiresAt - now))
            }
            var singletons: [ClusterStatus.Lease] = []
            for try await (name, owner, epoch, expiresAt) in try await connection.query(
                "SELECT name, owner, epoch, expires_at FROM regionkit_singleton_lease ORDER BY name", logger: logger
            ).decode((String, String, Int64, Double).self) {
                singletons.append(ClusterStatus.Lease(name: name, owner: owner, epoch: epoch, expiresIn: expiresAt - now))
            }
            return ClusterStatus(partitionCount: count.map(Int.init), members: members, partitions: partitions, singletons: singletons)
        }
    }

    public func preparePartitions(_ count: Int, member: String?, deciding: @escaping @Sendable (_ region: String) -> [Int]) async throws {
        guard count >= 1, count <= 65_536 else {
            throw RegionKitError(.invalidArgument, "cluster: \(count) partitions is not in 1…65536")
        }
        let description = description
        try await transaction("prepare \(count) partitions") { connection, logger in
            // Under the lock of the lease rounds: no round runs meanwhile.
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.clusterLock))", logger: logger)
            try await Self.prepare(count, member: member, deciding: deciding, store: description, connection, logger)
        }
    }

    /// ``preparePartitions(_:member:deciding:)``'s work, in the caller's transaction (which holds the cluster lock).
    static func prepare(_ count: Int, member: String?, deciding: @Sendable (_ region: String) -> [Int], store description: String,
                        _ connection: PostgresConnection, _ logger: Logger) async throws {
        // The recorded count; a store made before it was recorded has one lease row per partition.
        var existing: Int64 = 0
        if let recorded = try await Self.recordedPartitions(connection, logger) {
            existing = recorded
        } else {
            for try await value in try await connection.query("SELECT COUNT(*) FROM regionkit_partition_lease", logger: logger).decode(Int64.self) {
                existing = value
            }
        }
        guard existing != 0, existing != Int64(count) else {
            try await Self.recordPartitions(Int64(count), connection, logger)
            return
        }
        for try await (partition, owner) in try await connection.query("""
            SELECT partition, owner FROM regionkit_partition_lease
            WHERE owner IS NOT NULL AND owner IS DISTINCT FROM \(member) AND expires_at > \(unescaped: Self.serverNow) ORDER BY partition LIMIT 1
            """, logger: logger).decode((Int64, String).self) {
            throw RegionKitError(.invalidArgument, """
                store \(description): the cluster has \(existing) partitions and member '\(owner)' holds partition \(partition): \
                stop every member before changing the partition count to \(count) (or wait for its lease to expire)
                """)
        }
        // A live member with the old count holds no partition yet (between its start and its
        // first round), or none at all (more members than partitions): its heartbeat says it runs.
        for try await running in try await connection.query("""
            SELECT member FROM regionkit_cluster_member WHERE member IS DISTINCT FROM \(member) AND expires_at > \(unescaped: Self.serverNow)
            ORDER BY member LIMIT 1
            """, logger: logger).decode(String.self) {
            throw RegionKitError(.invalidArgument, """
                store \(description): the cluster has \(existing) partitions and member '\(running)' is running: \
                stop every member before changing the partition count to \(count) (a member that just stopped \
                counts until its heartbeat expires)
                """)
        }
        try await connection.query("DELETE FROM regionkit_region_contribution", logger: logger)
        // A region inside stays inside until the partitions now deciding it say otherwise:
        // each starts from an inside contribution, as at a takeover (one of them alone saying
        // outside first would exit it, and another hearing its beacons would enter it again).
        var inside: [String] = []
        for try await region in try await connection.query(
            "SELECT identifier FROM region_state WHERE state = \(RegionState.inside.rawValue)", logger: logger).decode(String.self) {
            inside.append(region)
        }
        var seededRegions: [String] = []
        var seededPartitions: [Int64] = []
        for region in inside {
            for partition in Set(deciding(region)) where (0..<count).contains(partition) {
                seededRegions.append(region)
                seededPartitions.append(Int64(partition))
            }
        }
        if !seededRegions.isEmpty {
            try await connection.query("""
                INSERT INTO regionkit_region_contribution (region, partition, state, since, epoch, updated_at)
                SELECT s.identifier, p.partition, s.state, s.since, 0, \(Date().timeIntervalSince1970)
                FROM unnest(\(seededRegions)::text[], \(seededPartitions)::bigint[]) AS p(region, partition)
                JOIN region_state s ON s.identifier = p.region
                """, logger: logger)
        }
        try await connection.query("DELETE FROM regionkit_partition_lease WHERE partition < 0 OR partition >= \(Int64(count))", logger: logger)
        try await Self.recordPartitions(Int64(count), connection, logger)
        logger.notice("re-partitioned: every contribution forgotten, the regions inside seeded", metadata: [
            "from": "\(existing)", "to": "\(count)", "inside": "\(inside.count)", "seeded": "\(seededRegions.count)",
        ])
    }

    public func ensureRegions(_ regions: [Region], at time: Double) async throws {
        let definitions = try regions.map { ($0, try Self.json($0)) }
        let description = description
        try await transaction("register the configured regions") { connection, logger in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.clusterLock))", logger: logger)
            for (region, definition) in definitions {
                var stored: Region?
                for try await text in try await connection.query(
                    "SELECT definition FROM monitored_region WHERE identifier = \(region.identifier)", logger: logger).decode(String.self) {
                    // A stored definition no region reads (a hand edit, a damaged store) is replaced by
                    // the configured one, as a changed definition is: refusing it stopped every start.
                    do {
                        stored = try JSONDecoder().decode(Region.self, from: Data(text.utf8))
                    } catch {
                        logger.error("a stored region definition cannot be read: replaced by the configured one, its state determined afresh",
                                     metadata: ["store": "\(description)", "region": "\(region.identifier.prefix(200))", "error": "\(error)"])
                    }
                }
                guard stored != region else { continue }
                // Under the region's lock, as a contribution's write takes it before its rows: a
                // write racing this one waits instead of deadlocking with it (40P01 ended the start).
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.regionLockClass), hashtext(\(region.identifier)))", logger: logger)
                try await connection.query("""
                    INSERT INTO monitored_region (identifier, kind, definition, registered_at, origin)
                    VALUES (\(region.identifier), \(region.kind.rawValue), \(definition), \(time), \(RegionOrigin.configuration.rawValue))
                    ON CONFLICT (identifier) DO UPDATE SET kind = excluded.kind, definition = excluded.definition,
                        registered_at = excluded.registered_at
                    """, logger: logger)
                try await connection.query("DELETE FROM region_state WHERE identifier = \(region.identifier)", logger: logger)
                try await connection.query("DELETE FROM regionkit_region_contribution WHERE region = \(region.identifier)", logger: logger)
            }
        }
    }

    public func contributions(partition: Int) async throws -> [String: RegionContribution] {
        let found = try await rows("read the contributions of partition \(partition)", """
            SELECT region, state, since FROM regionkit_region_contribution WHERE partition = \(Int64(partition))
            """) { try $0.decode((String, String, Double?).self) }
        var result: [String: RegionContribution] = [:]
        for (region, text, since) in found {
            // A row no state reads (a hand edit, a damaged store) is left out: the partition
            // determines the region afresh and its next contribution replaces the row. Refusing
            // it stopped the partition from being taken, and every round with it.
            guard let state = RegionState(rawValue: text) else {
                Self.reportUnreadable(region: region, partition: Int64(partition), state: text, store: description, logger)
                continue
            }
            result[region] = RegionContribution(partition: partition, state: state, since: since)
        }
        return result
    }

    /// Logs a contribution row whose state is none RegionKit writes, naming it.
    static func reportUnreadable(region: String, partition: Int64, state: String, store: String, _ logger: Logger) {
        logger.error("a contribution with an unknown state is left out until its partition writes it again", metadata: [
            "store": "\(store)", "region": "\(region.prefix(200))", "partition": "\(partition)", "state": "\(state.prefix(40))",
        ])
    }

    public func applyContribution(region: String, lease: PartitionLease, member: String, write: ClusterWriteID?, state: RegionState, since: Double?, time: Double,
                                  events: @escaping @Sendable (RegionState?, RegionState, Double?) -> [ClusterEventRow]) async throws -> ContributionOutcome {
        let description = description
        let partition = Int64(lease.partition)
        return try await transaction("write the contribution of partition \(lease.partition) to \(region)") { connection, logger in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.regionLockClass), hashtext(\(region)))", logger: logger)
            guard try await Self.holds(lease, member: member, connection, logger) else {
                return try await Self.committedBefore(write, partition: partition, connection, logger) ?? .fenced
            }
            if let write, let committed = try await Self.claim(write, partition: partition, connection, logger) { return committed }
            var monitored = false
            for try await _ in try await connection.query("SELECT 1::bigint FROM monitored_region WHERE identifier = \(region)", logger: logger).decode(Int64.self) {
                monitored = true
            }
            guard monitored else { return .unchanged }
            try await connection.query("""
                INSERT INTO regionkit_region_contribution (region, partition, state, since, epoch, updated_at)
                VALUES (\(region), \(partition), \(state.rawValue), \(since), \(lease.epoch), \(time))
                ON CONFLICT (region, partition) DO UPDATE SET state = excluded.state, since = excluded.since,
                    epoch = excluded.epoch, updated_at = excluded.updated_at
                """, logger: logger)
            var contributions: [RegionContribution] = []
            for try await (number, text, since) in try await connection.query(
                "SELECT partition, state, since FROM regionkit_region_contribution WHERE region = \(region)", logger: logger)
                .decode((Int64, String, Double?).self) {
                // Another partition's unreadable row has no say (as `unknown`) until that
                // partition writes again; refusing it stopped every write to the region.
                guard let state = RegionState(rawValue: text) else {
                    Self.reportUnreadable(region: region, partition: number, state: text, store: description, logger)
                    continue
                }
                contributions.append(RegionContribution(partition: Int(number), state: state, since: since))
            }
            let merged = RegionContribution.merged(contributions)
            var previous: RegionState?
            for try await text in try await connection.query("SELECT state FROM region_state WHERE identifier = \(region)", logger: logger).decode(String.self) {
                previous = RegionState(rawValue: text)
            }
            guard merged.state != .unknown, merged.state != previous else { return .unchanged }
            try await connection.query("""
                INSERT INTO region_state (identifier, state, since, evidence, updated_at)
                VALUES (\(region), \(merged.state.rawValue), \(merged.since), NULL, \(time))
                ON CONFLICT (identifier) DO UPDATE SET state = excluded.state, since = excluded.since,
                    evidence = excluded.evidence, updated_at = excluded.updated_at
                """, logger: logger)
            let rows = events(previous, merged.state, merged.since)
            guard !rows.isEmpty else { return .changed([]) }
            let stored = try await Self.insert(rows, connection, logger, store: description, dueAtOnce: true)
            if write != nil { try await Self.recordCommitted(stored, partition: partition, connection, logger) }
            return .changed(stored)
        }
    }

    public func appendEvents(_ rows: [ClusterEventRow], lease: PartitionLease, member: String, write: ClusterWriteID?) async throws -> ContributionOutcome {
        let description = description
        guard !rows.isEmpty else { return .unchanged }
        let partition = Int64(lease.partition)
        return try await transaction("append \(rows.count) event(s) of partition \(lease.partition)") { connection, logger in
            guard try await Self.holds(lease, member: member, connection, logger) else {
                return try await Self.committedBefore(write, partition: partition, connection, logger) ?? .fenced
            }
            if let write, let committed = try await Self.claim(write, partition: partition, connection, logger) { return committed }
            let stored = try await Self.insert(rows, connection, logger, store: description, dueAtOnce: true)
            if write != nil { try await Self.recordCommitted(stored, partition: partition, connection, logger) }
            return .changed(stored)
        }
    }

    /// Records `write` as its partition's last write, unless that writer has already committed it
    /// (or a later one): then the outcome to answer with (the events it committed, read back by
    /// id; ``ContributionOutcome/unchanged`` when it committed none), and nothing may be written.
    /// Nil: the write is new, the caller goes on (and ``recordCommitted(_:partition:_:_:)`` its events).
    ///
    /// The row stays locked until the transaction ends, so a retry racing the attempt whose reply
    /// was lost (that attempt's transaction may still be running) waits for it, then finds it
    /// committed, or rolled back and claims the write itself.
    static func claim(_ write: ClusterWriteID, partition: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> ContributionOutcome? {
        var claimed = false
        for try await _ in try await connection.query("""
            INSERT INTO regionkit_partition_write (partition, writer, sequence, events) VALUES (\(partition), \(write.writer), \(write.sequence), '{}')
            ON CONFLICT (partition) DO UPDATE SET writer = excluded.writer, sequence = excluded.sequence, events = excluded.events
            WHERE regionkit_partition_write.writer <> excluded.writer OR regionkit_partition_write.sequence < excluded.sequence
            RETURNING 1::bigint
            """, logger: logger).decode(Int64.self) {
            claimed = true
        }
        guard !claimed else { return nil }
        return try await answer(write, partition: partition, connection, logger)
    }

    /// With the lease no longer held: the answer for `write` when its writer committed it before
    /// (its reply lost, the lease gone by the retry) and no later holder has written the partition
    /// since; nil (fenced) otherwise. Read `FOR SHARE`, so an attempt still in flight (its
    /// transaction holds the row) is waited for. A retry of a committed write answered `fenced`
    /// left its events unreported and its acknowledgements withheld.
    static func committedBefore(_ write: ClusterWriteID?, partition: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> ContributionOutcome? {
        guard let write else { return nil }
        var committed = false
        for try await (writer, sequence) in try await connection.query(
            "SELECT writer, sequence FROM regionkit_partition_write WHERE partition = \(partition) FOR SHARE", logger: logger).decode((String, Int64).self) {
            committed = writer == write.writer && sequence >= write.sequence
        }
        return committed ? try await answer(write, partition: partition, connection, logger) : nil
    }

    /// The answer to a write its writer has already committed: the events it committed, read back
    /// by id; ``ContributionOutcome/unchanged`` when it committed none or a later write replaced the record.
    private static func answer(_ write: ClusterWriteID, partition: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> ContributionOutcome {
        var ids: [Int64] = []
        for try await (sequence, events) in try await connection.query(
            "SELECT sequence, events FROM regionkit_partition_write WHERE partition = \(partition)", logger: logger).decode((Int64, [Int64]).self) {
            // A later write of this writer committed (writes are sequential: a stale retry): nothing to answer with.
            if sequence == write.sequence { ids = events }
        }
        guard !ids.isEmpty else { return .unchanged }
        var stored: [StoredEvent] = []
        for try await (id, time, type, region, state, reason, json) in try await connection.query("""
            SELECT id, time, type, region, state, reason, json FROM event_log WHERE id = ANY(\(ids)) ORDER BY id
            """, logger: logger).decode((Int64, Double, String, String?, String?, String?, String).self) {
            stored.append(StoredEvent(id: id, time: time, type: type, region: region, state: state, reason: reason, json: json))
        }
        logger.notice("a write retried after its reply was lost was already committed: not written again",
                      metadata: ["partition": "\(partition)", "write": "\(write)", "events": "\(stored.count)"])
        return .changed(stored)
    }

    /// Notes the ids of the events the partition's claimed write committed (``claim(_:partition:_:_:)``).
    static func recordCommitted(_ stored: [StoredEvent], partition: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !stored.isEmpty else { return }
        try await connection.query("UPDATE regionkit_partition_write SET events = \(stored.map(\.id)) WHERE partition = \(partition)", logger: logger)
    }

    /// Whether `member` still holds `lease` (same epoch, unexpired); the row stays locked
    /// `FOR KEY SHARE` until the transaction ends, so no lease round can take the partition meanwhile
    /// (a take locks the row `FOR UPDATE`), while renewals of the lease go ahead.
    static func holds(_ lease: PartitionLease, member: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> Bool {
        var holds = false
        for try await _ in try await connection.query(PostgresQuery(unsafeSQL: """
            SELECT 1 FROM regionkit_partition_lease
            WHERE partition = $1 AND owner = $2 AND epoch = $3 AND expires_at > \(Self.serverNow) FOR KEY SHARE
            """, binds: Self.bindings(Int64(lease.partition), member, lease.epoch)), logger: logger).decode(Int64.self) {
            holds = true
        }
        return holds
    }

    /// Appends `rows` (in order, under the log's append lock) with their pending hook deliveries.
    /// - Parameter dueAtOnce: the hook deliveries are due at once (a cluster's: the rows' times are
    ///   the writing member's clock), not at the event's time (one daemon's, as on SQLite).
    static func insert(_ rows: [ClusterEventRow], _ connection: PostgresConnection, _ logger: Logger, store description: String,
                       dueAtOnce: Bool = false) async throws -> [StoredEvent] {
        try await lockAppends(connection, logger)
        return try await insertLocked(rows, connection, logger, store: description, dueAtOnce: dueAtOnce)
    }

    /// Takes the log's append lock until the transaction ends: ids drawn after it become visible
    /// in increasing order (the next append waits for this commit).
    static func lockAppends(_ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(\(Self.appendLock))", logger: logger)
    }

    /// ``insert(_:_:_:store:dueAtOnce:)`` in a transaction that already holds the append lock (``lockAppends(_:_:)``).
    static func insertLocked(_ rows: [ClusterEventRow], _ connection: PostgresConnection, _ logger: Logger, store description: String,
                             dueAtOnce: Bool = false) async throws -> [StoredEvent] {
        var stored: [StoredEvent] = []
        for row in rows {
            var id: Int64?
            // One statement (one round trip) for the event and its deliveries: the deliveries'
            // data-modifying CTE runs whether or not the final SELECT reads it; a hook named twice
            // gets one delivery (DO NOTHING skips a conflict within the statement too). A cluster's
            // are due at once (0), not at the event's time: that is the writing member's clock, and
            // the outputs holder asks with its own, so a writer 10 minutes ahead delayed its hooks
            // (and every later one of their regions) by 10 minutes. Due ones go in log order.
            let query: PostgresQuery = row.hooks.isEmpty ? """
                INSERT INTO event_log (time, type, region, state, reason, json)
                VALUES (\(row.time), \(row.type), \(row.region), \(row.state), \(row.reason), \(row.json)) RETURNING id
                """ : """
                WITH event AS (
                    INSERT INTO event_log (time, type, region, state, reason, json)
                    VALUES (\(row.time), \(row.type), \(row.region), \(row.state), \(row.reason), \(row.json)) RETURNING id),
                deliveries AS (
                    INSERT INTO hook_delivery (event_id, hook, status, next_attempt_at)
                    SELECT event.id, hook, 'pending', \(dueAtOnce ? 0 : row.time) FROM event, unnest(\(row.hooks)::text[]) AS hook
                    ON CONFLICT (event_id, hook) DO NOTHING)
                SELECT id FROM event
                """
            for try await value in try await connection.query(query, logger: logger).decode(Int64.self) {
                id = value
            }
            guard let id else { throw RegionKitError(.storeFailed, "store \(description): the event insert returned no id") }
            if let room = row.room {
                try await connection.query(saveRoomQuery(room.beacon, scanner: room.scanner, at: row.time), logger: logger)
            }
            stored.append(StoredEvent(id: id, time: row.time, type: row.type, region: row.region, state: row.state, reason: row.reason, json: row.json))
        }
        return stored
    }

    static func bindings(_ partition: Int64, _ member: String, _ epoch: Int64) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(partition)
        binds.append(member)
        binds.append(epoch)
        return binds
    }
}
