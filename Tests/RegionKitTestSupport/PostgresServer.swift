import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL cluster for tests (Debian: `apt-get install -y postgresql`), as the
/// side-by-side benchmark's `scripts/bench-compare.sh` makes one: `initdb` into a temporary
/// directory (trust authentication for the one user, UTF-8, no locale), then the `postgres` server
/// itself on 127.0.0.1 and a free port, its Unix socket in that directory, `fsync=off`. The
/// postmaster is the test's own child (its PID is the server's, through `setpriv` when running as
/// root, since PostgreSQL refuses to run as root and the cluster then belongs to the `postgres`
/// system user); stopped by PID (SIGINT, PostgreSQL's fast shutdown) or killed (SIGKILL).
///
/// ```swift
/// let server = try PostgresServer()
/// try await server.start()
/// defer { server.stop() }
/// let store = try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: server.database)
/// ```
public final class PostgresServer: @unchecked Sendable {
    /// The newest `/usr/lib/postgresql/<major>/bin` with `initdb` and `postgres`.
    public static let binDirectory: String? = {
        let root = "/usr/lib/postgresql"
        let majors = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        for major in majors {
            let bin = "\(root)/\(major)/bin"
            if FileManager.default.isExecutableFile(atPath: bin + "/initdb"), FileManager.default.isExecutableFile(atPath: bin + "/postgres") {
                return bin
            }
        }
        return nil
    }()
    static let setpriv = MosquittoBroker.tool("setpriv")
    static let runsAsRoot = geteuid() == 0
    /// The `postgres` system user's uid and gid (needed when running as root).
    static let postgresUser: (uid: uid_t, gid: gid_t)? = {
        guard let entry = getpwnam("postgres") else { return nil }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }()

    /// Whether a private server can be started here (the condition for `.enabled(if:)`).
    public static let isAvailable = binDirectory != nil && (!runsAsRoot || (setpriv != nil && postgresUser != nil))
    public static let skipReason: Comment = "PostgreSQL server binaries (initdb, postgres under /usr/lib/postgresql/*/bin) not found, or running as root without the 'postgres' user or setpriv: apt-get install -y postgresql (./scripts/test.sh does): SKIPPED, not passed"

    public let directory: String
    public let port: Int
    /// The superuser made by `initdb` (trust authentication on loopback).
    public let user = "regionkit"
    /// The database that always exists.
    public let database = "postgres"
    public var dataDirectory: String { directory + "/data" }
    public var logFile: String { directory + "/server.log" }
    private let lock = NSLock()
    private var process: Process?
    /// Where the log stood when the server was last launched (a restart appends to it).
    private var logOffset = 0
    private var extraSettings: [String] = []

    /// More `-c name=value` settings for the next launch (``start(timeout:)``, ``restart(timeout:)``).
    public var settings: [String] {
        get { lock.withLock { extraSettings } }
        set { lock.withLock { extraSettings = newValue } }
    }

    /// Reserves a directory and a free port (kept across restarts).
    public init() throws {
        port = Int(try Loopback.freePort())
        let template = TestScratch.directory.appendingPathComponent("regionkit-postgres-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw TestFailure("mkdtemp \(template) failed: errno \(errno)") }
        directory = String(cString: made)
        if Self.runsAsRoot, let owner = Self.postgresUser {
            guard chown(directory, owner.uid, owner.gid) == 0 else { throw TestFailure("chown \(directory) to postgres failed: errno \(errno)") }
        }
    }

    deinit {
        stop()
        if ProcessInfo.processInfo.environment["REGIONKIT_KEEP_TEST_DIRS"] != "1" {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// The server's PID while it runs.
    public var pid: Int32? { lock.withLock { process.flatMap { $0.isRunning ? $0.processIdentifier : nil } } }

    /// A new server, started, with database `name` created: the four lines every store test
    /// began with. Stop it with `defer { server.stop() }` (a failure here stops it at `deinit`).
    ///
    /// ```swift
    /// let server = try await PostgresServer.started(database: "leases")
    /// defer { server.stop() }
    /// ```
    public static func started(database name: String) async throws -> PostgresServer {
        let server = try PostgresServer()
        try await server.start()
        try await server.createDatabase(name)
        return server
    }

    /// `initdb` (once), then starts the server and waits until it accepts TCP connections.
    public func start(timeout: Duration = .seconds(60)) async throws {
        guard let bin = Self.binDirectory else { throw TestFailure("PostgreSQL binaries not found") }
        if !FileManager.default.fileExists(atPath: dataDirectory + "/PG_VERSION") {
            let (executable, arguments) = command(bin + "/initdb", ["-D", dataDirectory, "-U", user, "--auth=trust", "-E", "UTF8", "--no-locale"])
            let result = try await Tool.run(executable, arguments, timeout: .seconds(120))
            guard result.status == 0 else {
                throw TestFailure("initdb exited with \(result.status):\n\(result.stdout)\n\(result.stderr)")
            }
        }
        try launch(bin: bin)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard pid != nil else { throw TestFailure("postgres exited during start; log:\n\(logTail())") }
            if MosquittoBroker.isListening(port: port) {
                // Listening comes before recovery ends: wait for the "ready" line too.
                if logSinceLaunch().contains("database system is ready to accept connections") { return }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestFailure("postgres did not accept connections on 127.0.0.1:\(port) within \(timeout); log:\n\(logTail())")
    }

    private func command(_ executable: String, _ arguments: [String]) -> (String, [String]) {
        guard Self.runsAsRoot, let setpriv = Self.setpriv else { return (executable, arguments) }
        // setpriv execs (no fork): the PID stays the server's own.
        return (setpriv, ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", executable] + arguments)
    }

    private func launch(bin: String) throws {
        let (executable, arguments) = command(bin + "/postgres", [
            "-D", dataDirectory, "-p", "\(port)", "-c", "listen_addresses=127.0.0.1",
            "-c", "unix_socket_directories=\(directory)", "-c", "fsync=off", "-c", "synchronous_commit=on",
            "-c", "max_connections=100", "-c", "jit=off",
        ] + settings.flatMap { ["-c", $0] })
        if !FileManager.default.fileExists(atPath: logFile) { _ = FileManager.default.createFile(atPath: logFile, contents: nil) }
        let offset = (try? FileManager.default.attributesOfItem(atPath: logFile)[.size] as? Int) ?? 0
        lock.withLock { logOffset = offset }
        if Self.runsAsRoot, let owner = Self.postgresUser { _ = chown(logFile, owner.uid, owner.gid) }
        let log = FileHandle(forWritingAtPath: logFile)
        log?.seekToEndOfFile()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = log ?? FileHandle.nullDevice
        process.standardError = log ?? FileHandle.nullDevice
        try process.run()
        lock.withLock { self.process = process }
    }

    /// Fast shutdown (SIGINT: running transactions are rolled back, clients disconnected), SIGKILL
    /// after 10 s. Safe to call when stopped.
    public func stop() {
        guard let process = lock.withLock({ self.process }) else { return }
        process.stop(signal: SIGINT, grace: .seconds(10))
        lock.withLock { self.process = nil }
    }

    /// SIGKILL the postmaster (a crash: its backends exit when they notice, and the next start recovers from the WAL).
    public func kill() {
        guard let process = lock.withLock({ self.process }) else { return }
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        lock.withLock { self.process = nil }
    }

    /// Starts the server again on the same port and data directory.
    public func restart(timeout: Duration = .seconds(60)) async throws {
        stop()
        try await start(timeout: timeout)
    }

    /// Creates a database with `psql` (a name of letters, digits and `_`).
    public func createDatabase(_ name: String) async throws {
        guard name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }), !name.isEmpty else {
            throw TestFailure("database name '\(name)' must be letters, digits and _")
        }
        try await psql("CREATE DATABASE \(name)")
    }

    /// Runs one SQL command with `psql` as the superuser on database `postgres` (or `database`);
    /// returns its unaligned, tuples-only output.
    @discardableResult
    public func psql(_ sql: String, database: String? = nil) async throws -> String {
        guard let bin = Self.binDirectory, FileManager.default.isExecutableFile(atPath: bin + "/psql") else { throw TestFailure("psql not found") }
        let result = try await Tool.run(bin + "/psql", ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)",
                                                         "-U", user, "-d", database ?? self.database, "-c", sql], timeout: .seconds(60))
        guard result.status == 0 else { throw TestFailure("psql -c \(sql) exited with \(result.status): \(result.stderr)") }
        return result.stdout
    }

    private func logSinceLaunch() -> String {
        guard let data = FileManager.default.contents(atPath: logFile) else { return "" }
        let offset = lock.withLock { logOffset }
        return String(decoding: data.dropFirst(min(offset, data.count)), as: UTF8.self)
    }

    /// The last `lines` lines of the server's log.
    public func logTail(lines: Int = 40) -> String {
        let text = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "(no log at \(logFile))"
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}
