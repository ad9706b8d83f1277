import Foundation
import Logging
import PostgresNIO
import RegionKitCore
import Synchronization

/// One daemon's claim on a PostgreSQL store: a session-level advisory lock held on a connection of
/// its own for as long as the daemon runs (PostgreSQL's counterpart of the SQLite store's `flock`).
/// A second daemon on the same database is refused with an error naming the holder, so two engines
/// never both decide and log the same regions. The server releases the lock when the holder's
/// connection ends, however the daemon ends (`kill -9` included).
///
/// The holding connection is probed every `probeInterval`; when it is lost (the server restarted,
/// the network failed) the lock is gone too and `onLost` is called once with the reason: the daemon
/// must stop, since another one may now take the store.
///
/// ```swift
/// let lease = try await store.acquireDaemonLock(holder: "pid \(getpid()) on \(host)") { reason in
///     stop("the store lock was lost: \(reason)")
/// }
/// // … run …
/// await lease.release()
/// ```
public final class PostgresDaemonLease: Sendable {
    /// What the lock row says about this holder.
    public let holder: String
    /// Set by ``release()``; read by the holding task.
    final class StopFlag: Sendable {
        private let flag = Atomic<Bool>(false)
        var isSet: Bool { flag.load(ordering: .acquiring) }
        func set() { flag.store(true, ordering: .releasing) }
    }

    private let stopRequested: StopFlag
    private let task: Task<Void, Never>

    init(holder: String, stopRequested: StopFlag, task: Task<Void, Never>) {
        self.holder = holder
        self.stopRequested = stopRequested
        self.task = task
    }

    /// Unlocks and returns the connection (waits for the holding task).
    public func release() async {
        stopRequested.set()
        await task.value
    }
}

extension PostgresRegionStore {
    /// Takes the store's daemon lock, or throws `storeFailed` naming the holder (its description,
    /// e.g. "pid 4242 on gw-1", and since when) when another daemon holds it.
    public func acquireDaemonLock(holder: String, probeInterval: Duration = .seconds(2),
                                  onLost: @escaping @Sendable (String) -> Void) async throws -> PostgresDaemonLease {
        let key = Self.daemonLock
        let client = client
        let logger = logger
        let description = description
        let stopRequested = PostgresDaemonLease.StopFlag()
        let (outcomes, outcome) = AsyncStream.makeStream(of: Result<Void, RegionKitError>.self)
        let task = Task {
            var held = false
            do {
                try await client.withConnection { connection in
                    var acquired = false
                    for try await value in try await connection.query("SELECT pg_try_advisory_lock(\(key))", logger: logger).decode(Bool.self) {
                        acquired = value
                    }
                    guard acquired else {
                        var holderText = "a daemon starting, or a cluster member joining"
                        let rows = try await connection.query("SELECT holder, since FROM regionkit_daemon_lock WHERE key = \(key)", logger: logger)
                        for try await (name, since) in rows.decode((String, Double).self) {
                            holderText = "\(name), since \(Date(timeIntervalSince1970: since).ISO8601Format())"
                        }
                        throw RegionKitError(.storeFailed, """
                            store \(description) is in use by another regionkit daemon (\(holderText)): two daemons on one store \
                            would both write every event; stop it or give another --store
                            """)
                    }
                    // A store a cluster uses is the cluster's: a daemon beside its members would
                    // overwrite the states they merge from their contributions (and forget the
                    // regions it does not configure), and share their outputs' cursor and hook queue.
                    // A member joining holds this lock shared while it joins (``join``), so the
                    // check cannot miss one that joins meanwhile.
                    if let cluster = try await Self.clusterUse(connection, logger) {
                        try await connection.query("SELECT pg_advisory_unlock(\(key))", logger: logger)
                        throw RegionKitError(.storeFailed, """
                            store \(description) is a RegionKit cluster's (\(cluster)): a daemon on it would overwrite the states \
                            the members merge and share their outputs; run the members (the configuration's cluster: block) or give another --store
                            """)
                    }
                    held = true
                    let now = Date().timeIntervalSince1970
                    try await connection.query("""
                        INSERT INTO regionkit_daemon_lock (key, holder, since) VALUES (\(key), \(holder), \(now))
                        ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, since = EXCLUDED.since
                        """, logger: logger)
                    outcome.yield(.success(()))
                    // Hold until released, probing the connection (the lock lives and dies with it).
                    let clock = ContinuousClock()
                    var nextProbe = clock.now.advanced(by: probeInterval)
                    while !stopRequested.isSet {
                        try? await Task.sleep(for: .milliseconds(100))
                        if clock.now >= nextProbe {
                            try await connection.query("SELECT 1", logger: logger)
                            nextProbe = clock.now.advanced(by: probeInterval)
                        }
                    }
                    try await connection.query("DELETE FROM regionkit_daemon_lock WHERE key = \(key) AND holder = \(holder)", logger: logger)
                    try await connection.query("SELECT pg_advisory_unlock(\(key))", logger: logger)
                }
            } catch {
                let failure = (error as? RegionKitError)
                    ?? RegionKitError(.storeFailed, "store \(description): the daemon lock: \(Self.explain(error))", cause: error)
                if held {
                    if !stopRequested.isSet { onLost(failure.message) }
                } else {
                    outcome.yield(.failure(failure))
                }
            }
            outcome.finish()
        }
        for await result in outcomes {
            switch result {
            case .success: return PostgresDaemonLease(holder: holder, stopRequested: stopRequested, task: task)
            case .failure(let error): throw error
            }
        }
        throw RegionKitError(.storeFailed, "store \(description): cannot take the daemon lock")
    }

    /// How a cluster uses the store ("4 partitions; live members engine-0, engine-1"), or nil when
    /// none ever did: no partition count recorded, no member, no partition lease.
    static func clusterUse(_ connection: PostgresConnection, _ logger: Logger) async throws -> String? {
        var partitions: Int64?
        for try await count in try await connection.query("SELECT partitions FROM regionkit_cluster", logger: logger).decode(Int64.self) {
            partitions = count
        }
        var leases: Int64 = 0
        for try await count in try await connection.query("SELECT count(*) FROM regionkit_partition_lease", logger: logger).decode(Int64.self) {
            leases = count
        }
        let now = try await Self.now(connection, logger)
        var members: [String] = []
        for try await member in try await connection.query(
            "SELECT member FROM regionkit_cluster_member WHERE expires_at > \(now) ORDER BY member LIMIT 6", logger: logger).decode(String.self) {
            members.append(member)
        }
        guard partitions != nil || leases > 0 || !members.isEmpty else { return nil }
        let count = partitions.map { "\($0) partitions" } ?? "\(leases) partition leases"
        let live = members.isEmpty ? "no member live now" : "live members " + members.prefix(5).joined(separator: ", ") + (members.count > 5 ? ", …" : "")
        return "\(count); \(live)"
    }
}
