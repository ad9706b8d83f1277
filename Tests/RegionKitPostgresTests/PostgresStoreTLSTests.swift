import Foundation
import Testing
import RegionKitCore
@testable import RegionKitPostgres
import RegionKitTestSupport

/// The store's TLS, asked for in the URL as libpq asks (`sslmode`, `sslrootcert`), against a real
/// PostgreSQL with and without `ssl=on`: whether the session is encrypted is read from the server
/// (`pg_stat_ssl`), and every refusal names why.
@Suite("PostgreSQL store: TLS (sslmode, sslrootcert)", .serialized, .tags(.endToEnd),
       .enabled(if: PostgresServer.isAvailable && MosquittoBroker.openssl != nil, "PostgreSQL server binaries or openssl not found: SKIPPED, not passed"))
struct PostgresStoreTLSTests {
    static func open(_ server: PostgresServer, _ query: String, host: String = "127.0.0.1") async throws -> PostgresRegionStore {
        let url = try #require(try PostgresStoreURL(parsing: "postgres://\(server.user)@\(host):\(server.port)/postgres?\(query)"))
        return try await PostgresRegionStore(host: url.host, port: url.port, username: url.user, database: url.database, tls: url.tls(),
                                             operationTimeout: .seconds(10))
    }

    /// Whether the store's session is encrypted, as the server sees it.
    static func encrypted(_ store: PostgresRegionStore) async throws -> Bool {
        try await store.rows("read pg_stat_ssl", "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()") { try $0.decode(String.self) } == ["true"]
    }

    /// The message of the error opening a store with `query` throws (nil: it opened).
    static func refusal(_ server: PostgresServer, _ query: String) async -> String? {
        do {
            let store = try await open(server, query)
            await store.shutdown()
            return nil
        } catch let error as RegionKitError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test("A server without TLS: disable and prefer connect unencrypted; require and verify-full are refused, saying the server does not offer TLS",
          .timeLimit(.minutes(2)))
    func serverWithoutTLS() async throws {
        let server = try PostgresServer()
        try await server.start()
        defer { server.stop() }
        for query in ["sslmode=disable", "sslmode=prefer"] {
            let store = try await Self.open(server, query)
            #expect(try await Self.encrypted(store) == false, "\(query)")
            await store.shutdown()
        }
        for query in ["sslmode=require", "sslmode=verify-full"] {
            let message = await Self.refusal(server, query)
            #expect(message?.contains("does not offer TLS") == true, "\(query): \(message ?? "opened")")
        }
    }

    @Test("A server with TLS: prefer, require and verify-ca are encrypted; verify-full checks the name (a certificate for another host is refused, one for 127.0.0.1 accepted); a CA that did not sign it is refused",
          .timeLimit(.minutes(3)))
    func serverWithTLS() async throws {
        let server = try PostgresServer()
        let ca = try server.enableTLS(subjectAltName: "DNS:db.regionkit.test")
        try await server.start()
        defer { server.stop() }
        for query in ["sslmode=prefer", "sslmode=require", "sslmode=verify-ca&sslrootcert=\(ca)", "sslmode=require&sslrootcert=\(ca)"] {
            let store = try await Self.open(server, query)
            #expect(try await Self.encrypted(store), "\(query)")
            await store.shutdown()
        }
        // The certificate names db.regionkit.test, not the address connected to.
        let mismatch = await Self.refusal(server, "sslmode=verify-full&sslrootcert=\(ca)")
        #expect(mismatch?.contains("certificate") == true, "\(mismatch ?? "opened")")
        // Another CA: the chain is not trusted (verify-ca as verify-full).
        let other = try PostgresServer()
        let otherCA = try other.enableTLS(subjectAltName: "IP:127.0.0.1")
        for query in ["sslmode=verify-ca&sslrootcert=\(otherCA)", "sslmode=verify-full&sslrootcert=\(otherCA)"] {
            let untrusted = await Self.refusal(server, query)
            #expect(untrusted?.contains("certificate") == true, "\(query): \(untrusted ?? "opened")")
        }
        // A certificate for the address itself: verify-full connects.
        try server.enableTLS(subjectAltName: "IP:127.0.0.1")
        try await server.restart()
        let store = try await Self.open(server, "sslmode=verify-full&sslrootcert=\(ca)")
        #expect(try await Self.encrypted(store))
        await store.shutdown()
    }

    @Test("sslmode and sslrootcert in the URL: parsed and shown; other parameters, unknown modes, a root certificate without verification and an unreadable one are refused, naming why")
    func urlParameters() throws {
        let url = try #require(try PostgresStoreURL(parsing: "postgres://rk@db.lan/site?sslmode=verify-full&sslrootcert=/etc/ssl/ca.pem"))
        #expect(url.sslMode == .verifyFull && url.sslRootCertificate == "/etc/ssl/ca.pem")
        #expect(url.description == "postgres://rk@db.lan:5432/site?sslmode=verify-full&sslrootcert=/etc/ssl/ca.pem")
        #expect(try #require(try PostgresStoreURL(parsing: "postgres://rk@db.lan/site")).sslMode == .disable)
        for (text, reason) in [("postgres://rk@h/db?sslmode=allow", "sslmode must be one of disable, prefer, require, verify-ca, verify-full"),
                               ("postgres://rk@h/db?sslmode=verify-full&password=s3cret-pw", "other than sslmode and sslrootcert"),
                               ("postgres://rk@h/db?sslrootcert=/ca.pem", "only with sslmode=require, verify-ca or verify-full"),
                               ("postgres://rk@h/db?sslmode=require&sslrootcert=", "sslrootcert names no file")] {
            do {
                _ = try PostgresStoreURL(parsing: text)
                Issue.record("\(text) was accepted")
            } catch let error as RegionKitError {
                #expect(error.code == .invalidArgument && error.message.contains(reason) && !error.message.contains("s3cret"), "\(error.message)")
            }
        }
        let missing = try #require(try PostgresStoreURL(parsing: "postgres://rk@h/db?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem"))
        #expect(throws: RegionKitError.self) { try missing.tls() }
        let notPEM = FileManager.default.temporaryDirectory.appendingPathComponent("regionkit-not-a-ca-\(UUID()).pem").path
        try "not a certificate\n".write(toFile: notPEM, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: notPEM) }
        do {
            _ = try #require(try PostgresStoreURL(parsing: "postgres://rk@h/db?sslmode=verify-ca&sslrootcert=\(notPEM)")).tls()
            Issue.record("a file without a certificate was accepted")
        } catch let error as RegionKitError {
            #expect(error.message.contains("holds no PEM certificate"), "\(error.message)")
        }
    }
}
