import Foundation
import Testing
import RegionKitCore
import RegionKitPostgres

@Suite("PostgreSQL store URLs")
struct PostgresStoreURLTests {
    @Test("postgres:// and postgresql:// parse; the port defaults to 5432 and the database to the user")
    func parses() throws {
        let full = try #require(try PostgresStoreURL(parsing: "postgres://rk@db.lan:5433/site"))
        #expect(full.user == "rk" && full.host == "db.lan" && full.port == 5433 && full.database == "site")
        #expect(full.description == "postgres://rk@db.lan:5433/site")
        let short = try #require(try PostgresStoreURL(parsing: "postgresql://rk@127.0.0.1"))
        #expect(short.port == 5432 && short.database == "rk")
    }

    @Test("A path is not a URL: nil, so the daemon opens it as SQLite")
    func sqlitePaths() throws {
        #expect(try PostgresStoreURL(parsing: "/var/lib/regionkit/regionkit.sqlite") == nil)
        #expect(try PostgresStoreURL(parsing: "postgres.sqlite") == nil)
    }

    @Test("Refused with the reason: a password (not repeated, also in a query or fragment), no user, no host, a bad port, a nested path, query parameters other than sslmode and sslrootcert",
          arguments: [("postgres://rk:s3cret-pw@h/db", "REGIONKIT_STORE_PASSWORD"), ("postgres://h:5432/db", "names no user"),
                      ("postgres://rk@:5432/db", "no host"), ("postgres://rk@h:0/db", "port 0"), ("postgres://rk@h/a/b", "contains '/'"),
                      ("postgres://rk@h/db?password=s3cret-pw", "query parameters"),
                      ("postgres://rk@h:5432/db#s3cret-pw", "fragments"), ("postgres://h/db?password=s3cret-pw", "query parameters"),
                      ("postgres://rk@h:0/db?password=s3cret-pw", "query parameters"), ("postgres://rk@h/a/b?password=s3cret-pw", "query parameters")])
    func refused(url: String, reason: String) {
        do {
            _ = try PostgresStoreURL(parsing: url)
            Issue.record("\(url) was accepted")
        } catch let error as RegionKitError {
            #expect(error.code == .invalidArgument && error.message.contains(reason), "\(error.message)")
            #expect(!error.message.contains("s3cret-pw"), "the password is never repeated")
        } catch {
            Issue.record("\(url): \(error)")
        }
    }

    @Test("The password comes from REGIONKIT_STORE_PASSWORD; empty or unset is none")
    func password() throws {
        let url = try #require(try PostgresStoreURL(parsing: "postgres://rk@h/db"))
        #expect(try url.password(environment: ["REGIONKIT_STORE_PASSWORD": "pw"]) == "pw")
        #expect(try url.password(environment: ["REGIONKIT_STORE_PASSWORD": ""]) == nil)
        #expect(try url.password(environment: [:]) == nil)
    }

    @Test("Or from the file REGIONKIT_STORE_PASSWORD_FILE names: its first line; both set, an unreadable or empty file are errors naming the variable, never the password")
    func passwordFile() throws {
        let url = try #require(try PostgresStoreURL(parsing: "postgres://rk@h/db"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rk-store-password-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func file(_ name: String, _ text: String) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        #expect(try url.password(environment: ["REGIONKIT_STORE_PASSWORD_FILE": try file("echo", "s3cret-pw\n")]) == "s3cret-pw")
        #expect(try url.password(environment: ["REGIONKIT_STORE_PASSWORD_FILE": try file("crlf", "s3cret-pw\r\nsecond line\n")]) == "s3cret-pw")
        #expect(try url.password(environment: ["REGIONKIT_STORE_PASSWORD_FILE": try file("bare", "s3cret pw")]) == "s3cret pw")
        #expect(try url.password(environment: ["REGIONKIT_STORE_PASSWORD_FILE": "", "REGIONKIT_STORE_PASSWORD": "pw"]) == "pw", "empty is unset")
        let cases: [([String: String], String)] = [
            (["REGIONKIT_STORE_PASSWORD_FILE": try file("both", "s3cret-pw"), "REGIONKIT_STORE_PASSWORD": "s3cret-pw"], "both REGIONKIT_STORE_PASSWORD and REGIONKIT_STORE_PASSWORD_FILE are set"),
            (["REGIONKIT_STORE_PASSWORD_FILE": directory.path + "/missing"], "REGIONKIT_STORE_PASSWORD_FILE: cannot read \(directory.path)/missing"),
            (["REGIONKIT_STORE_PASSWORD_FILE": try file("empty", "\ns3cret-pw")], "holds no password (its first line is empty)"),
        ]
        for (environment, expected) in cases {
            do {
                _ = try url.password(environment: environment)
                Issue.record("accepted \(environment.keys.sorted())")
            } catch let error as RegionKitError {
                #expect(error.code == .invalidArgument && error.message.contains(expected), "\(error.message)")
                #expect(!error.message.contains("s3cret-pw"), "the password is never repeated")
            }
        }
    }
}
