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

    @Test("Refused with the reason: a password (not repeated), no user, no host, a bad port, a nested path, query parameters",
          arguments: [("postgres://rk:s3cret-pw@h/db", "REGIONKIT_STORE_PASSWORD"), ("postgres://h:5432/db", "names no user"),
                      ("postgres://rk@:5432/db", "no host"), ("postgres://rk@h:0/db", "port 0"), ("postgres://rk@h/a/b", "contains '/'"),
                      ("postgres://rk@h/db?sslmode=require", "query parameters")])
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
        #expect(url.password(environment: ["REGIONKIT_STORE_PASSWORD": "pw"]) == "pw")
        #expect(url.password(environment: ["REGIONKIT_STORE_PASSWORD": ""]) == nil)
        #expect(url.password(environment: [:]) == nil)
    }
}
