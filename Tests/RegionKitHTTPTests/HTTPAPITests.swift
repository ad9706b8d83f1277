import Foundation
import Testing
import RegionKit
import RegionKitHTTP
import RegionKitService
import RegionKitStore
import RegionKitTestSupport

@Suite("HTTP API over loopback", .serialized, .tags(.realTime))
struct HTTPAPITests {
    static let lobbyBody = #"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 2}"#

    @Test("Reads and writes need the bearer token: missing → 401, wrong → 403, right → 200; health and the OpenAPI file are open")
    func authentication() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let anonymous = daemon.client(token: nil)
        #expect(try await anonymous.request("GET", "/healthz").status == 200)
        let openapi = try await anonymous.request("GET", "/openapi.yaml")
        #expect(openapi.status == 200)
        #expect(openapi.text.hasPrefix("openapi: 3.1.0"))
        for (method, path, body) in [("GET", "/v1/regions", nil), ("PUT", "/v1/regions/x", Self.lobbyBody), ("GET", "/metrics", nil),
                                     ("DELETE", "/v1/regions/lobby", nil), ("GET", "/v1/events", nil)] as [(String, String, String?)] {
            let missing = try await anonymous.request(method, path, body: body)
            #expect(missing.status == 401, "\(method) \(path)")
            #expect(missing.headers["content-type"] == "application/problem+json")
            #expect(missing.json["field"] as? String == "Authorization")
            #expect(missing.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            // Same length as the real token, one byte off; and a different length.
            for wrong in ["test-tokeN", "nope"] {
                let refused = try await daemon.client(token: wrong).request(method, path, body: body)
                #expect(refused.status == 403, "\(method) \(path) with a wrong token")
                #expect(!refused.text.contains("test-token"), "the token never appears in a response")
            }
        }
        #expect(try await daemon.client().request("GET", "/v1/regions").status == 200)
        #expect(try await anonymous.request("GET", "/v1/regions", headers: ["Authorization": "Basic dGVzdA=="]).status == 401)
    }

    @Test("public: true opens reads, not writes")
    func publicReads() async throws {
        let daemon = try await TestDaemon(isPublic: true)
        defer { Task { try? await daemon.stop() } }
        let anonymous = daemon.client(token: nil)
        #expect(try await anonymous.request("GET", "/v1/regions").status == 200)
        #expect(try await anonymous.request("GET", "/v1/beacons").status == 200)
        #expect(try await anonymous.request("PUT", "/v1/regions/x", body: Self.lobbyBody).status == 401)
        #expect(try await anonymous.request("POST", "/v1/regions/lobby/request-state").status == 401)
    }

    @Test("public: true serves reads without the token only to IP addresses, localhost and http.allowedHosts (no DNS rebinding)")
    func publicReadsByHost() async throws {
        let daemon = try await TestDaemon(isPublic: true, allowedHosts: ["Gateway.LAN"])
        defer { Task { try? await daemon.stop() } }
        let anonymous = daemon.client(token: nil)
        for host in ["127.0.0.1:\(daemon.port)", "192.168.1.20", "[::1]:\(daemon.port)", "localhost:\(daemon.port)", "LOCALHOST.",
                     "dashboard.localhost", "gateway.lan:8080", "GATEWAY.lan.", "[fe80::1%25eth0]"] {
            #expect(try await anonymous.request("GET", "/v1/regions", headers: ["Host": host]).status == 200, "\(host)")
        }
        // A page at a name of its own, re-pointed at the daemon: refused, saying what to do.
        for host in ["attacker.example", "attacker.example:\(daemon.port)", "127.0.0.1.nip.io", "gateway.lan.attacker.example",
                     "localhost.attacker.example", "gateway.lan:80:80", "[::1]x", "[::1", "1.2.3.4.5", "256.1.1.1", ":8080", ""] {
            let refused = try await anonymous.request("GET", "/v1/events", headers: ["Host": host])
            #expect(refused.status == 403, "\(host)")
            #expect(refused.json["field"] as? String == "Host" && (refused.json["detail"] as? String)?.contains("http.allowedHosts") == true, "\(refused.json)")
        }
        let named = try await anonymous.request("GET", "/v1/regions", headers: ["Host": "attacker.example"]).json["detail"] as? String
        #expect(named?.contains("'attacker.example'") == true, "\(named ?? "")")
        // The token opens any name (a rebinding page cannot have it); a wrong one is still wrong.
        #expect(try await daemon.client().request("GET", "/v1/regions", headers: ["Host": "attacker.example"]).status == 200)
        #expect(try await daemon.client(token: "nope").request("GET", "/v1/regions", headers: ["Host": "attacker.example"]).status == 403)
        // What carries no data stays open; writes need the token as before.
        #expect(try await anonymous.request("GET", "/healthz", headers: ["Host": "attacker.example"]).status == 200)
        #expect(try await anonymous.request("PUT", "/v1/regions/x", body: Self.lobbyBody, headers: ["Host": "gateway.lan"]).status == 401)
        // `*` serves every name.
        let open = try await TestDaemon(isPublic: true, allowedHosts: ["*"])
        defer { Task { try? await open.stop() } }
        #expect(try await open.client(token: nil).request("GET", "/v1/regions", headers: ["Host": "attacker.example"]).status == 200)
    }

    @Test("http.allowedHosts reaches the server; an entry that is not a host name (a port, a scheme, a path, a space) is refused, naming its index")
    func allowedHostsSettings() throws {
        let settings = try JSONDecoder().decode(HTTPSettings.self, from: Data(#"{"allowedHosts": ["gateway.lan", "Kiosk-2.local", "*"], "public": true}"#.utf8))
        #expect(try HTTPConfiguration(settings: settings, environment: [:]).allowedHosts == ["gateway.lan", "Kiosk-2.local", "*"])
        #expect(try HTTPConfiguration(settings: HTTPSettings(), environment: [:]).allowedHosts == [])
        for (name, index) in [("gateway.lan:8080", 1), ("http://gateway.lan", 1), ("gateway.lan/x", 1), ("gate way", 1), ("", 1), ("a..b", 1),
                              (String(repeating: "a", count: 64), 1), ("*.lan", 1)] {
            #expect { try HTTPSettings(allowedHosts: ["ok.lan", name]).validate() } throws: {
                ($0 as? RegionKitError)?.message.contains("http.allowedHosts[\(index)]") == true
            }
        }
    }

    @Test("Without a configured token every protected route is refused")
    func noTokenConfigured() async throws {
        let daemon = try await TestDaemon(token: nil)
        defer { Task { try? await daemon.stop() } }
        let response = try await daemon.client(token: "anything").request("GET", "/v1/regions")
        #expect(response.status == 401)
        #expect((response.json["detail"] as? String)?.contains("no API token") == true)
    }

    @Test("Regions: create 201, replace 200, read, request state 202, delete 204, then 404")
    func regionLifecycle() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        let created = try await client.request("PUT", "/v1/regions/shop", body: Self.lobbyBody)
        #expect(created.status == 201)
        #expect(created.json["identifier"] as? String == "shop")
        #expect(created.json["origin"] as? String == "api")
        #expect(created.json["major"] as? Int == 2)
        let replaced = try await client.request("PUT", "/v1/regions/shop", body: #"{"latitude": 48.85, "longitude": 2.35, "radius": 100, "notifyOnExit": false}"#)
        #expect(replaced.status == 200)
        #expect(replaced.json["kind"] as? String == "circular")
        #expect(replaced.json["notifyOnExit"] as? Bool == false)
        let list = try await client.request("GET", "/v1/regions").json["regions"] as? [[String: Any]] ?? []
        #expect(list.compactMap { $0["identifier"] as? String } == ["lobby", "shop"])
        #expect(list.first?["origin"] as? String == "config")
        #expect(try await client.request("GET", "/v1/regions/shop").json["radius"] as? Double == 100)
        daemon.sight(from: 1, to: 3)
        let determined = try daemon.service.sqlite.events(region: "lobby", type: "didDetermineState").count
        let requested = try await client.request("POST", "/v1/regions/lobby/request-state")
        #expect(requested.status == 202)
        #expect(requested.json["state"] as? String == "inside")
        #expect(try daemon.service.sqlite.events(region: "lobby", type: "didDetermineState").count == determined + 1)
        #expect(try await client.request("DELETE", "/v1/regions/shop").status == 204)
        let gone = try await client.request("GET", "/v1/regions/shop")
        #expect(gone.status == 404)
        #expect(gone.json["field"] as? String == "id")
        #expect(try await client.request("DELETE", "/v1/regions/shop").status == 404)
        #expect(try await client.request("POST", "/v1/regions/shop/request-state").status == 404)
        #expect(try daemon.service.sqlite.events(region: "shop", type: "monitoringStopped").first?.reason == "deleted through the HTTP API")
        #expect(try await client.request("GET", "/v1/nothing").status == 404)
        // One daemon is no cluster member: /v1/cluster says so (a problem, 404).
        let cluster = try await client.request("GET", "/v1/cluster")
        #expect(cluster.status == 404 && (cluster.json["detail"] as? String)?.contains("not a cluster member") == true, "\(cluster.text)")
    }

    @Test("A region id in the path is percent-decoded, as the dashboard encodes it: one region 'Room 204/b', not 'Room%20204%2Fb'")
    func percentEncodedIDs() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        let created = try await client.request("PUT", "/v1/regions/Room%20204%2Fb", body: Self.lobbyBody)
        #expect(created.status == 201, "\(created.text)")
        #expect(created.json["identifier"] as? String == "Room 204/b")
        #expect(try await client.request("GET", "/v1/regions/Room%20204%2Fb").json["identifier"] as? String == "Room 204/b")
        #expect(try await client.request("POST", "/v1/regions/Room%20204%2Fb/request-state").status == 202)
        // The events filter (a query value, decoded by the server) finds the same region.
        let events = try await client.request("GET", "/v1/events?region=Room%20204%2Fb").json["events"] as? [[String: Any]] ?? []
        #expect(!events.isEmpty && events.allSatisfy { $0["region"] as? String == "Room 204/b" }, "\(events)")
        // Form-encoded, as Python's requests and `curl -G --data-urlencode` send it: `+` is a space
        // (it was read as a plus, and the filter matched no region at all); a plus is `%2B`.
        let formEncoded = try await client.request("GET", "/v1/events?region=Room+204%2Fb").json["events"] as? [[String: Any]] ?? []
        #expect(formEncoded.count == events.count, "\(formEncoded)")
        #expect(try await client.request("PUT", "/v1/regions/Room%2B1", body: Self.lobbyBody).status == 201)
        let plus = try await client.request("GET", "/v1/events?region=Room%2B1").json["events"] as? [[String: Any]] ?? []
        #expect(!plus.isEmpty && plus.allSatisfy { $0["region"] as? String == "Room+1" }, "\(plus)")
        #expect((try await client.request("GET", "/v1/events?region=Room+1").json["events"] as? [Any])?.isEmpty == true)
        // No identifier at all, or one no region can have: 400 naming the filter, on the stream too.
        for path in ["/v1/events?region=", "/v1/events?region=a%00b", "/v1/events?region=%FF", "/v1/events/stream?region="] {
            let refused = try await client.request("GET", path)
            #expect(refused.status == 400 && refused.json["field"] as? String == "region", "\(path): \(refused.text)")
        }
        #expect(try await client.request("DELETE", "/v1/regions/Room%2B1").status == 204)
        #expect(try await client.request("DELETE", "/v1/regions/Room%20204%2Fb").status == 204)
        #expect(try daemon.service.sqlite.regions().map(\.identifier) == ["lobby"])
        // Not UTF-8 once decoded: 400 naming the id.
        let bad = try await client.request("GET", "/v1/regions/%FF%FE")
        #expect(bad.status == 400 && bad.json["field"] as? String == "id", "\(bad.text)")
        // A NUL (the stores end text there: "lobby%00x" would have overwritten "lobby"): 400 naming the id.
        let nul = try await client.request("PUT", "/v1/regions/lobby%00x", body: Self.lobbyBody)
        #expect(nul.status == 400 && nul.json["field"] as? String == "id", "\(nul.text)")
        // A newline (it forged a line in the daemon's log), a tab, a right-to-left override, 257 characters: 400 naming the id and why.
        for (path, why) in [("a%0Ab", "control character (U+000A at character 1)"), ("a%09b", "U+0009"), ("%E2%80%AEevil", "bidirectional control (U+202E"),
                            (String(repeating: "%C3%A9", count: 257), "at most 256 characters"),
                            // 200 sent, 400 kept: U+0958 is two scalars in NFC, and the identifier
                            // GET reported could not be sent back.
                            (String(repeating: "%E0%A5%98", count: 200), "(this one has 400 in its NFC form"),
                            // Directories to a URL: /v1/regions/. is /v1/regions/ to browsers and curl.
                            ("%2E", "must not be '.'"), ("%2E%2E", "must not be '..'"),
                            // White space at an end ("lobby " was a second region beside "lobby"), or only white space.
                            ("lobby%20", "must not end with white space or an invisible character: 'lobby ' looks like 'lobby'"),
                            ("%C2%A0lobby", "must not begin with white space"), ("%EF%BB%BFlobby", "must not begin with white space"),
                            ("lobby%E2%80%8B", "must not end with white space or an invisible character"),   // a zero-width space
                            ("%20%20", "must not be white space or invisible characters only")] {
            let refused = try await client.request("PUT", "/v1/regions/\(path)", body: Self.lobbyBody)
            #expect(refused.status == 400 && refused.json["field"] as? String == "id" && (refused.json["detail"] as? String)?.contains(why) == true, "\(refused.text)")
        }
        // Every decoded byte is kept: a leading U+FEFF was dropped, and this read (and a PUT replaced) the lobby.
        #expect(try await client.request("GET", "/v1/regions/%EF%BB%BFlobby").status == 404)
        #expect(try await client.request("GET", "/v1/regions/lobby%2").status == 400, "a truncated escape")
        // An emoji's variation selector ends an identifier well ("coffee ☕️": U+2615 U+FE0F).
        #expect(try await client.request("PUT", "/v1/regions/coffee%20%E2%98%95%EF%B8%8F", body: Self.lobbyBody).status == 201)
        #expect(try await client.request("DELETE", "/v1/regions/coffee%20%E2%98%95%EF%B8%8F").status == 204)
        let longest = String(repeating: "%C3%A9", count: 256)   // 256 characters, 512 bytes
        #expect(try await client.request("PUT", "/v1/regions/\(longest)", body: Self.lobbyBody).status == 201)
        #expect(try await client.request("DELETE", "/v1/regions/\(longest)").status == 204)
        #expect(try daemon.service.sqlite.regions().map(\.identifier) == ["lobby"])
    }

    @Test("One identifier in two Unicode spellings (é precomposed, e + U+0301) is one region: one row, replaced, filtered and deleted by either, not back after a restart (the store compared bytes: two rows, and the deleted one came back)")
    func canonicallyEquivalentIDs() async throws {
        let path = TestDaemon.temporaryPath()
        let first = try await TestDaemon(path: path)
        let client = first.client()
        #expect(try await client.request("PUT", "/v1/regions/caf%C3%A9", body: Self.lobbyBody).status == 201)
        let replaced = try await client.request("PUT", "/v1/regions/cafe%CC%81", body: Self.lobbyBody)
        #expect(replaced.status == 200, "the same region: \(replaced.text)")
        #expect(try first.service.sqlite.regions().map { Array($0.identifier.utf8) } == [Array("lobby".utf8), Array("caf\u{E9}".utf8)])
        let events = try await client.request("GET", "/v1/events?region=cafe%CC%81&type=didStartMonitoring").json["events"] as? [[String: Any]] ?? []
        #expect(events.count == 2, "started, then started again when replaced: \(events)")
        #expect(try await client.request("DELETE", "/v1/regions/cafe%CC%81").status == 204)
        #expect(try first.service.sqlite.regions().map(\.identifier) == ["lobby"])
        try await first.stop()
        let second = try await TestDaemon(path: path)
        defer { Task { try? await second.stop() } }
        let regions = try await second.client().request("GET", "/v1/regions").json["regions"] as? [[String: Any]] ?? []
        #expect(regions.compactMap { $0["identifier"] as? String } == ["lobby"], "the deleted region stays deleted")
    }

    @Test("Regions of every format (AltBeacon, Eddystone-UID, scanner-bound): created, reported with their format, and what GET reports PUT back unchanged")
    func regionFormats() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        let bodies = [
            "alt": #"{"format": "altbeacon", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 2}"#,
            "eddy": #"{"format": "eddystone-uid", "namespace": "8b0ca750095477cb3e77", "scanner": "hall"}"#,
            "eddy1": #"{"format": "eddystone-uid", "namespace": "8B0CA750095477CB3E77", "instance": "0000000000a1"}"#,
            "bound": #"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 2, "scanner": "kitchen"}"#,
            // Dashes optional, as in the configuration (the API refused it with 400).
            "plain": #"{"uuid": "e2c56db5dffb48d2b060d0f5a71096e0", "major": 3}"#,
            "phone": #"{"format": "device", "device": "irk:0123456789ABCDEF0123456789abcdef"}"#,
            "tag": #"{"device": "known:c80f104dc7eb", "scanner": "hall"}"#,
        ]
        for (id, body) in bodies.sorted(by: { $0.key < $1.key }) {
            let created = try await client.request("PUT", "/v1/regions/\(id)", body: body)
            #expect(created.status == 201, "\(id): \(created.text)")
        }
        #expect(try await client.request("GET", "/v1/regions/plain").json["uuid"] as? String == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        let alt = try await client.request("GET", "/v1/regions/alt").json
        #expect(alt["format"] as? String == "altbeacon" && alt["uuid"] as? String == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0" && alt["minor"] as? Int == 2)
        let eddy = try await client.request("GET", "/v1/regions/eddy").json
        #expect(eddy["format"] as? String == "eddystone-uid" && eddy["namespace"] as? String == "8b0ca750095477cb3e77")
        #expect(eddy["uuid"] == nil && eddy["major"] == nil && eddy["instance"] == nil && eddy["scanner"] as? String == "hall")
        let eddy1 = try await client.request("GET", "/v1/regions/eddy1").json
        #expect(eddy1["instance"] as? String == "0000000000a1" && eddy1["namespace"] as? String == "8b0ca750095477cb3e77")
        #expect(try await client.request("GET", "/v1/regions/bound").json["scanner"] as? String == "kitchen")
        #expect(try await client.request("GET", "/v1/regions/lobby").json["format"] as? String == "ibeacon")
        let phone = try await client.request("GET", "/v1/regions/phone").json
        #expect(phone["format"] as? String == "device" && phone["device"] as? String == "irk:0123456789abcdef0123456789abcdef")
        #expect(phone["uuid"] == nil && phone["major"] == nil && phone["namespace"] == nil)
        let tag = try await client.request("GET", "/v1/regions/tag").json
        #expect(tag["device"] as? String == "C8:0F:10:4D:C7:EB" && tag["scanner"] as? String == "hall", "one form of an address")
        // GET → PUT: the definition survives (the dashboard's edit does exactly this).
        let definitionKeys = ["format", "uuid", "major", "minor", "namespace", "instance", "device", "scanner", "notifyOnEntry", "notifyOnExit", "notifyEntryStateOnDisplay"]
        for id in bodies.keys.sorted() {
            let before = try await client.request("GET", "/v1/regions/\(id)").json
            let definition = before.filter { definitionKeys.contains($0.key) }
            let body = String(decoding: try JSONSerialization.data(withJSONObject: definition), as: UTF8.self)
            let replaced = try await client.request("PUT", "/v1/regions/\(id)", body: body)
            #expect(replaced.status == 200, "\(id): \(replaced.text)")
            let after = try await client.request("GET", "/v1/regions/\(id)").json.filter { definitionKeys.contains($0.key) }
            func canonical(_ object: [String: Any]) throws -> String {
                String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
            }
            #expect(try canonical(after) == canonical(definition), "\(id): \(definition) → \(after)")
        }
        let stored = try daemon.service.sqlite.regions()
        guard case .beacon(let storedEddy)? = stored.first(where: { $0.identifier == "eddy1" }) else {
            Issue.record("eddy1 not stored as a beacon region: \(stored)")
            return
        }
        #expect(storedEddy.constraint.format == .eddystoneUID && storedEddy.constraint.major == 0, "namespace and instance stored")
    }

    @Test("Bad bodies → 400 problem+json naming the field; too large → 413; wrong media type → 415", arguments: [
        (#"{"format": "eddystone", "namespace": "8b0ca750095477cb3e77"}"#, 400, "format"),
        (#"{"format": "ibeacon"}"#, 400, "uuid"),
        (#"{"format": "eddystone-uid"}"#, 400, "namespace"),
        (#"{"format": "eddystone-uid", "namespace": "8b0ca750"}"#, 400, "namespace"),
        (#"{"format": "eddystone-uid", "namespace": "8b0ca750095477cb3e77", "instance": "a1"}"#, 400, "instance"),
        (#"{"format": "eddystone-uid", "namespace": "8b0ca750095477cb3e77", "major": 1}"#, 400, "major"),
        (#"{"namespace": "8b0ca750095477cb3e77"}"#, 400, "format"),
        (#"{"format": "device"}"#, 400, "device"),
        (#"{"device": "alice phone"}"#, 400, "device"),
        (#"{"device": "tractive:c80f104dc7eb"}"#, 400, "device"),
        (#"{"format": "ibeacon", "device": "alice"}"#, 400, "format"),
        (#"{"device": "alice", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}"#, 400, "uuid"),
        (#"{"device": "alice", "latitude": 1}"#, 400, "latitude"),
        (#"{"device": 7}"#, 400, "device"),
        (#"{"format": "altbeacon", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "instance": "0000000000a1"}"#, 400, "instance"),
        (#"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "scanner": ""}"#, 400, "scanner"),
        (#"{"uuid": "E2C56DB5DFFB48D2B060D0F5A71096E"}"#, 400, "uuid"),
        (#"{"latitude": 1, "longitude": 1, "radius": 5, "scanner": "hall"}"#, 400, "scanner"),
        (#"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "colour": "red"}"#, 400, "colour"),
        (#"{"identifier": "x", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}"#, 400, "identifier"),
        (#"{"uuid": "not-a-uuid"}"#, 400, "uuid"),
        (#"{"uuid": 12}"#, 400, "uuid"),
        (#"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": "1"}"#, 400, "major"),
        (#"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 70000}"#, 400, "major"),
        (#"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "minor": 1}"#, 400, "minor"),
        (#"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "radius": 5}"#, 400, "radius"),
        (#"{"latitude": 91, "longitude": 0, "radius": 10}"#, 400, "latitude"),
        (#"{"latitude": 1, "longitude": -181, "radius": 10}"#, 400, "longitude"),
        (#"{"latitude": 1, "longitude": 1}"#, 400, "radius"),
        (#"{"latitude": 1, "longitude": 1, "radius": -1}"#, 400, "radius"),
        (#"{"latitude": 1, "longitude": 1, "radius": 1e9}"#, 400, "radius"),
        // Beyond a Double: Foundation's decoder calls it "not valid JSON", the field is named all the same.
        (#"{"latitude": 1, "longitude": 1, "radius" :  1e309}"#, 400, "radius"),
        (#"[1e400]"#, 400, "body"),
        (#"{"latitude": 1, "longitude": 1, "radius": 5, "notifyOnEntry": "yes"}"#, 400, "notifyOnEntry"),
        (#"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "notifyEntryStateOnDisplay": null}"#, 400, "notifyEntryStateOnDisplay"),
        (#"{}"#, 400, "uuid"),
        // 100 characters but 200 bytes: the MQTT sources cap a scanner's name at 128 bytes, so it could never match.
        (#"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "scanner": ""# + String(repeating: "é", count: 100) + #""}"#, 400, "scanner"),
        (#"[1, 2]"#, 400, "body"),
        (#"{"uuid": "#, 400, "body"),
        // A field given twice (Foundation kept the first value, most senders' tools the last): named.
        (#"{"latitude": 1, "longitude": 1, "radius": 50, "radius": 5000}"#, 400, "radius"),
        (#"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "m\u0061jor": 1, "major": 2}"#, 400, "major"),
        // UTF-16 (Foundation reads it; the duplicate check above does not): JSON is UTF-8.
        (String(decoding: Array(#"{"latitude": 1, "longitude": 1, "radius": 50, "radius": 5000}"#.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }, as: UTF8.self), 400, "body"),
        (String(repeating: " ", count: 2_000) + "{}", 413, "body"),
    ])
    func badBodies(body: String, status: Int, field: String) async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let response = try await daemon.client().request("PUT", "/v1/regions/bad", body: body)
        #expect(response.status == status)
        #expect(response.headers["content-type"] == "application/problem+json")
        #expect(response.json["field"] as? String == field, "\(response.text)")
        #expect(try daemon.service.sqlite.regions().map(\.identifier) == ["lobby"], "nothing was stored")
    }

    @Test("A body that breaks JSON's syntax: 400 naming the line and column and what was expected there")
    func bodySyntaxErrorLocated() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let response = try await daemon.client().request("PUT", "/v1/regions/bad", body: "{\"latitude\": 1,\n \"longitude\" 1, \"radius\": 5}")
        #expect(response.status == 400)
        #expect(response.json["detail"] as? String == "the body is not valid JSON: 2:14: expected ':' after the key, found '1'", "\(response.text)")
        #expect(response.json["field"] as? String == "body")
    }

    @Test("A chunked body (no Content-Length to check first) over the limit is 413 too, found while it is read")
    func chunkedBodyTooLarge() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let connection = try LoopbackConnection(port: daemon.port)
        let chunk = String(repeating: " ", count: 2_000) + "{}"   // the test daemon accepts 1,024 bytes
        connection.send("PUT /v1/regions/bad HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer test-token\r\n"
                        + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n0\r\n\r\n")
        let (status, headers) = try await offPool { try connection.head(deadline: Date().addingTimeInterval(10)) }
        #expect(status == 413)
        #expect(headers["content-type"] == "application/problem+json")
        #expect(try daemon.service.sqlite.regions().map(\.identifier) == ["lobby"], "nothing was stored")
    }

    @Test("A chunked body that is not valid chunked encoding (a size that is no hex number) is 400 naming the body, not 500; nothing is stored and the daemon goes on")
    func malformedChunkedBody() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        for framing in ["zz\r\n{}\r\n0\r\n\r\n",          // the size line: no hex digits
                        "2\r\n{}XX0\r\n\r\n"] {             // no CRLF after the chunk's data
            let connection = try LoopbackConnection(port: daemon.port)
            connection.send("PUT /v1/regions/bad HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer test-token\r\n"
                            + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + framing)
            let (status, headers) = try await offPool { try connection.head(deadline: Date().addingTimeInterval(10)) }
            #expect(status == 400, "\(framing.debugDescription)")
            #expect(headers["content-type"] == "application/problem+json")
            #expect(headers["connection"]?.lowercased() == "close", "the rest of the stream cannot be framed")
            let body = try await offPool { try connection.bytes(Int(headers["content-length"] ?? "") ?? 0, deadline: Date().addingTimeInterval(10)) }
            let problem = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
            #expect(problem["field"] as? String == "body" && (problem["detail"] as? String)?.contains("chunked") == true, "\(problem)")
            #expect(try await offPool { try connection.fill(deadline: Date().addingTimeInterval(10)) } == false, "closed after the answer")
        }
        #expect(try daemon.service.sqlite.regions().map(\.identifier) == ["lobby"], "nothing was stored")
        #expect(try await daemon.client().request("GET", "/v1/regions/lobby").status == 200, "the daemon goes on")
    }

    @Test("A region the daemon cannot monitor (no source for its kind) is refused with 409 and not stored; a replaced one stays")
    func refusedByTheEngine() async throws {
        let daemon = try await TestDaemon(sources: [.beacon: .authorized])
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        let refused = try await client.request("PUT", "/v1/regions/park", body: #"{"latitude": 1, "longitude": 2, "radius": 50}"#)
        #expect(refused.status == 409)
        #expect(refused.json["field"] as? String == "latitude")
        #expect((refused.json["detail"] as? String)?.contains("failed") == true, "\(refused.text)")
        #expect(try daemon.service.sqlite.regions().map(\.identifier) == ["lobby"])
        // Replacing the beacon region "lobby" by a circular one fails too: lobby is kept as it was.
        #expect(try await client.request("PUT", "/v1/regions/lobby", body: #"{"latitude": 1, "longitude": 2, "radius": 50}"#).status == 409)
        let lobby = try await client.request("GET", "/v1/regions/lobby").json
        #expect(lobby["kind"] as? String == "beacon")
        #expect(try daemon.service.sqlite.storedRegions().first?.origin == .configuration)
    }

    @Test("A geofence PUT while the location source is down (gpsd reconnecting) is saved: 201 with waitingForSource naming why, listed, monitored when the source is back (it answered 409 and the region was lost)")
    func putDuringSourceOutage() async throws {
        let daemon = try await TestDaemon(sources: [.beacon: .authorized, .circular: .restricted(reason: "gpsd at 127.0.0.1:2947 unreachable")])
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        let put = try await client.request("PUT", "/v1/regions/park", body: #"{"latitude": 48.86, "longitude": 2.36, "radius": 50}"#)
        #expect(put.status == 201, "\(put.status) \(put.text)")
        #expect((put.json["waitingForSource"] as? String)?.contains("gpsd at 127.0.0.1:2947 unreachable") == true, "\(put.text)")
        #expect(put.json["state"] as? String == "unknown")
        #expect(try daemon.service.sqlite.storedRegions().map { "\($0.region.identifier):\($0.origin.rawValue)" } == ["lobby:config", "park:api"])
        // Put again while still waiting: replaced (200), still one region.
        let again = try await client.request("PUT", "/v1/regions/park", body: #"{"latitude": 48.86, "longitude": 2.36, "radius": 80}"#)
        #expect(again.status == 200 && again.json["radius"] as? Double == 80, "\(again.text)")
        let listed = (try await client.request("GET", "/v1/regions").json["regions"] as? [[String: Any]] ?? []).compactMap { $0["identifier"] as? String }
        #expect(listed == ["lobby", "park"])
        daemon.service.manager.setSourceStatus(.authorized, for: .circular)
        daemon.advance(to: 5)   // its retry's delay
        let park = try await client.request("GET", "/v1/regions/park")
        #expect(park.status == 200 && park.json["waitingForSource"] == nil && park.json["radius"] as? Double == 80, "\(park.text)")
    }

    @Test("No beacon source: the 409 names the field the region's format has (an Eddystone or device region's named uuid, hidden for them in the dashboard's form, which then showed no message)")
    func refusedNamesTheFormatsField() async throws {
        let daemon = try await TestDaemon(configured: [], sources: [.circular: .authorized])
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        for (body, field) in [(#"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}"#, "uuid"),
                              (#"{"format": "altbeacon", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}"#, "uuid"),
                              (#"{"format": "eddystone-uid", "namespace": "8b0ca750095477cb3e77"}"#, "namespace"),
                              (#"{"format": "device", "device": "my-keys"}"#, "device")] {
            let refused = try await client.request("PUT", "/v1/regions/keys", body: body)
            #expect(refused.status == 409 && refused.json["field"] as? String == field, "\(body): \(refused.text)")
        }
        #expect(try daemon.service.sqlite.regions().isEmpty)
    }

    @Test("A region refused for the region limit: 409 naming no field of the body (it named `latitude`, as if the coordinates were at fault); a replacement of a monitored region is no new region")
    func refusedByTheLimit() async throws {
        var profile = MonitoringProfile.responsive
        profile.regionLimit = 1
        let daemon = try await TestDaemon(profile: profile)
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        let refused = try await client.request("PUT", "/v1/regions/park", body: #"{"latitude": 1, "longitude": 2, "radius": 50}"#)
        #expect(refused.status == 409)
        #expect(refused.json["field"] == nil, "\(refused.text)")
        #expect((refused.json["detail"] as? String)?.contains("limit of 1 monitored regions") == true, "\(refused.text)")
        #expect(try await client.request("PUT", "/v1/regions/lobby", body: #"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 2}"#).status == 200)
    }

    @Test("PUTs and DELETEs of one region at the same time leave the engine and the store agreeing")
    func concurrentRegionWrites() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        // (Without the lock, one run in three or so failed at 20 rounds.)
        for round in 0..<60 {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { _ = try? await client.request("PUT", "/v1/regions/shop", body: #"{"latitude": 48.85, "longitude": 2.35, "radius": \#(100 + round)}"#) }
                group.addTask { _ = try? await client.request("DELETE", "/v1/regions/shop") }
                group.addTask { _ = try? await client.request("PUT", "/v1/regions/shop", body: #"{"latitude": 48.86, "longitude": 2.36, "radius": 50}"#) }
            }
            let monitored = daemon.service.manager.monitoredRegion("shop")?.region
            let stored = try daemon.service.sqlite.regions().first { $0.identifier == "shop" }
            #expect(monitored == stored, "round \(round): the engine monitors \(String(describing: monitored)), the store holds \(String(describing: stored))")
        }
    }

    @Test("A PUT or DELETE sent while the daemon stops before restoring its regions: 503, nothing changed (a DELETE answered 404 for a stored region the engine had not restored yet)")
    func writesWhileStoppingBeforeTheRestore() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        #expect(try await client.request("PUT", "/v1/regions/shop", body: #"{"latitude": 48.85, "longitude": 2.35, "radius": 100}"#).status == 201)
        // As `run` does when a stop comes before the restore.
        await daemon.service.holdRegionWritesUntilRestore()
        await daemon.service.releaseRegionWriteHold()
        let delete = try await client.request("DELETE", "/v1/regions/shop")
        #expect(delete.status == 503 && delete.text.contains("stopping before its regions were restored"), "\(delete.status) \(delete.text)")
        let put = try await client.request("PUT", "/v1/regions/hall", body: #"{"latitude": 48.86, "longitude": 2.36, "radius": 50}"#)
        #expect(put.status == 503, "\(put.status) \(put.text)")
        #expect(try daemon.service.sqlite.regions().map(\.identifier).sorted() == ["lobby", "shop"], "the configured lobby and the shop, as before")
    }

    @Test("A refused PUT leaves nothing behind: not monitored later when the source comes back, and a replaced region keeps its stored state")
    func refusalLeavesNothingBehind() async throws {
        let daemon = try await TestDaemon(sources: [.beacon: .authorized])
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        daemon.sight(from: 1, to: 3)   // lobby: inside, its state stored
        #expect(try daemon.service.sqlite.states()["lobby"]?.state == .inside)
        #expect(try await client.request("PUT", "/v1/regions/park", body: #"{"latitude": 1, "longitude": 2, "radius": 50}"#).status == 409)
        #expect(try await client.request("PUT", "/v1/regions/lobby", body: #"{"latitude": 1, "longitude": 2, "radius": 50}"#).status == 409)
        // The refused replacement did not touch lobby's stored state (saving and restoring its row wiped it).
        #expect(try daemon.service.sqlite.states()["lobby"]?.state == .inside)
        // The location source comes back and the engine's retry delay passes: neither refused
        // region is monitored (the engine had filed them to try again, unsaved).
        daemon.service.manager.setSourceStatus(.authorized, for: .circular)
        daemon.advance(to: 120)
        let identifiers = (try await client.request("GET", "/v1/regions").json["regions"] as? [[String: Any]] ?? []).compactMap { $0["identifier"] as? String }
        #expect(identifiers == ["lobby"])
        #expect(try await client.request("GET", "/v1/regions/lobby").json["kind"] as? String == "beacon")
        #expect(try daemon.service.sqlite.regions().map(\.identifier) == ["lobby"])
    }

    @Test("During a scanner outage the regions waiting for it are listed and read with waitingForSource and their last stored state, stale; a DELETE removes one for good (it answered 404, and the region came back with the scanner)")
    func regionsWaitingForTheirSource() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        #expect(try await client.request("PUT", "/v1/regions/shop", body: #"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 2}"#).status == 201)
        daemon.sight(from: 1, to: 3)   // lobby: inside, its state stored
        daemon.service.manager.setSourceStatus(.restricted(reason: "adapter unplugged"), for: .beacon)
        let listed = try await client.request("GET", "/v1/regions").json["regions"] as? [[String: Any]] ?? []
        #expect(listed.map { $0["identifier"] as? String } == ["lobby", "shop"], "\(listed)")
        for region in listed {
            #expect((region["waitingForSource"] as? String)?.contains("adapter unplugged") == true, "\(region)")
        }
        // The state each carries over when the scanner is back: the lobby's inside (stale), the shop's none.
        #expect(listed.first?["state"] as? String == "inside" && listed.first?["stale"] as? Bool == true, "\(listed)")
        #expect(listed.last?["state"] as? String == "unknown" && listed.last?["stale"] as? Bool == false, "\(listed)")
        #expect(listed.last?["origin"] as? String == "api")
        let shop = try await client.request("GET", "/v1/regions/shop")
        #expect(shop.status == 200 && shop.json["waitingForSource"] != nil, "\(shop.text)")
        // Its state cannot be asked for now: 409 saying why (it answered 404, "not monitored", for a region GET lists).
        let request = try await client.request("POST", "/v1/regions/shop/request-state")
        #expect(request.status == 409 && request.json["field"] as? String == "id", "\(request.text)")
        #expect((request.json["detail"] as? String)?.contains("adapter unplugged") == true, "\(request.text)")
        #expect(try await client.request("DELETE", "/v1/regions/shop").status == 204)
        #expect(try await client.request("POST", "/v1/regions/shop/request-state").status == 404)
        #expect(try await client.request("GET", "/v1/regions/shop").status == 404)
        #expect(try await client.request("DELETE", "/v1/regions/shop").status == 404)
        // The scanner is back, past the retries' delay: the lobby is monitored again, the shop is gone.
        daemon.service.manager.setSourceStatus(.authorized, for: .beacon)
        daemon.advance(to: 60)
        let after = try await client.request("GET", "/v1/regions").json["regions"] as? [[String: Any]] ?? []
        #expect(after.map { $0["identifier"] as? String } == ["lobby"], "\(after)")
        #expect(after.first?["waitingForSource"] == nil)
        #expect(try daemon.service.sqlite.regions().map(\.identifier) == ["lobby"])
    }

    @Test("A known path asked with another method → 405 with Allow")
    func methodNotAllowed() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let response = try await daemon.client().request("POST", "/v1/regions")
        #expect(response.status == 405)
        #expect(response.headers["allow"] == "GET, HEAD")
        #expect(try await daemon.client().request("TRACE", "/v1/regions/lobby").headers["allow"] == "GET, HEAD, PUT, DELETE")
        #expect(try await daemon.client().request("GET", "/v1/regions/lobby/elsewhere").status == 404)
    }

    @Test("HEAD is answered as GET without a body (it was 405): a region, the health check, the dashboard, the event stream's headers", .timeLimit(.minutes(1)))
    func head() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let client = daemon.client()
        let region = try await client.request("HEAD", "/v1/regions/lobby")
        #expect(region.status == 200 && region.body.isEmpty && region.headers["content-type"]?.hasPrefix("application/json") == true, "\(region.headers)")
        #expect(try await client.request("HEAD", "/v1/regions/nowhere").status == 404)
        #expect(try await client.request("HEAD", "/healthz").status == 200)
        #expect(try await client.request("HEAD", "/").status == 200)
        let stream = try await client.request("HEAD", "/v1/events/stream")
        #expect(stream.status == 200 && stream.headers["content-type"] == "text/event-stream" && stream.body.isEmpty)
        #expect(daemon.server.events.subscriberCount == 0, "a HEAD of the stream subscribed")
        // Still protected: HEAD without the token is refused as GET is.
        #expect(try await daemon.client(token: nil).request("HEAD", "/v1/regions/lobby").status == 401)
    }

    @Test("The OpenAPI document carries the daemon's radius limit")
    func openAPIRadius() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let text = try await daemon.client(token: nil).request("GET", "/openapi.yaml").text
        #expect(text.contains("maximum: \(daemon.service.manager.maximumRegionMonitoringDistance)"))
        #expect(!text.contains("MAXIMUM_RADIUS"))
    }

    @Test("A body sent as text/plain is refused with 415")
    func mediaType() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let connectionless = daemon.client()
        let response = try await connectionless.request("PUT", "/v1/regions/x", body: nil,
                                                  headers: ["Content-Type": "text/plain", "Content-Length": "2"])
        // No body was sent with Content-Length 2: the server must not hang (it answers on the type first).
        #expect(response.status == 415)
        #expect(response.json["field"] as? String == "Content-Type")
    }

    @Test("Regions created through the API survive a restart; configured ones follow the configuration")
    func survivesRestart() async throws {
        let path = TestDaemon.temporaryPath()
        let first = try await TestDaemon(path: path, configured: [TestDaemon.lobby, .circular(try CircularRegion(identifier: "park", latitude: 1, longitude: 2, radius: 50))])
        #expect(try await first.client().request("PUT", "/v1/regions/shop", body: Self.lobbyBody).status == 201)
        // Replacing a configured region through the API makes it the API's.
        #expect(try await first.client().request("PUT", "/v1/regions/park", body: #"{"latitude": 3, "longitude": 4, "radius": 60}"#).status == 200)
        try await first.stop()
        // Restarted with a configuration that no longer names park or shop.
        let second = try await TestDaemon(path: path, configured: [TestDaemon.lobby])
        defer { Task { try? await second.stop() } }
        let regions = try await second.client().request("GET", "/v1/regions").json["regions"] as? [[String: Any]] ?? []
        #expect(Set(regions.compactMap { $0["identifier"] as? String }) == ["lobby", "shop", "park"])
        let park = try await second.client().request("GET", "/v1/regions/park").json
        #expect(park["radius"] as? Double == 60)
        #expect(park["origin"] as? String == "api")
        let stored = try second.service.sqlite.storedRegions()
        #expect(stored.first { $0.region.identifier == "shop" }?.origin == .api)
    }

    @Test("Events: filtered by type and region, paged by cursor without gaps or repeats; bad parameters name the parameter")
    func eventsPaged() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        // Inside (determined at the first sighting), out after a long silence, in again.
        daemon.sight(from: 1, to: 4)
        daemon.advance(to: 120)
        daemon.sight(from: 121, to: 124)
        let client = daemon.client()
        for type in ["didEnterRegion", "didExitRegion"] {
            let events = try await client.request("GET", "/v1/events?type=\(type)&region=lobby").json["events"] as? [[String: Any]] ?? []
            #expect(events.count == 1, "\(type)")
            #expect(events.allSatisfy { ($0["reason"] as? String)?.isEmpty == false && $0["type"] as? String == type })
            #expect(events.allSatisfy { ($0["event"] as? [String: Any])?["type"] as? String == type })
        }
        #expect((try await client.request("GET", "/v1/events?region=nowhere").json["events"] as? [Any])?.isEmpty == true)
        let all = try daemon.service.sqlite.events().map(\.id)
        var seen: [Int64] = []
        var cursor: String?
        repeat {
            let page = try await client.request("GET", "/v1/events?limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")).json
            seen += (page["events"] as? [[String: Any]] ?? []).compactMap { ($0["id"] as? NSNumber)?.int64Value }
            cursor = page["nextCursor"] as? String
        } while cursor != nil
        #expect(seen == all)
        let since = try await client.request("GET", "/v1/events?since=1700000120").json["events"] as? [[String: Any]] ?? []
        #expect(since.allSatisfy { ($0["time"] as? Double ?? 0) >= 1_700_000_120 })
        #expect(!since.isEmpty)
        // A damaged row whose time is infinite: its page is served, the time null (it was a 500).
        let damaged = try daemon.service.sqlite.append(time: .infinity, type: "didEnterRegion", region: "damaged", state: "inside",
                                                      reason: nil, json: "{}", hooks: [])
        let damagedPage = try await client.request("GET", "/v1/events?region=damaged")
        #expect(damagedPage.status == 200)
        let damagedEvents = damagedPage.json["events"] as? [[String: Any]] ?? []
        #expect(damagedEvents.map { ($0["id"] as? NSNumber)?.int64Value } == [damaged])
        #expect(damagedEvents.first?["time"] is NSNull)
        for (query, field) in [("limit=0", "limit"), ("limit=abc", "limit"), ("cursor=-1", "cursor"), ("since=yesterday", "since"),
                               ("type=bogus", "type"), ("type=didEnterregion", "type"), ("type=didRangeBeacons", "type")] {
            let bad = try await client.request("GET", "/v1/events?\(query)")
            #expect(bad.status == 400, "\(query): \(bad.text)")
            #expect(bad.json["field"] as? String == field)
        }
        // A type the daemon never logs was an empty page, as if none had happened yet; the stream too.
        let typo = try await client.request("GET", "/v1/events?type=didEnterregion")
        #expect((typo.json["detail"] as? String)?.contains("one of didStartMonitoring") == true, "\(typo.text)")
        #expect((try await client.request("GET", "/v1/events?type=didRangeBeacons").json["detail"] as? String)?.contains("rangedBeaconCountChanged") == true)
        #expect(try await client.request("GET", "/v1/events/stream?type=bogus").status == 400)
        #expect(try await client.request("GET", "/v1/events?type=partitionTaken").status == 200, "a cluster member's own type")
    }

    @Test("SSE: live events arrive; a client that reconnects with Last-Event-ID gets exactly the missed events")
    func streamResume() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        let first = try await offPool { try EventStreamReader(port: daemon.port, token: "test-token", lastEventID: 0) }
        #expect(first.status == 200)
        let backlog = try daemon.service.sqlite.events()
        var received: [Int64] = []
        for _ in backlog { received.append(try await offPool { try first.next() }.id) }
        #expect(received == backlog.map(\.id))
        daemon.sight(from: 1, to: 4)
        let live = try await offPool { try first.next() }
        #expect(live.id == received.last.map { $0 + 1 })
        received.append(live.id)
        // The client drops; events are logged while it is away.
        let lastSeen = live.id
        _ = consume first
        daemon.advance(to: 120)
        daemon.sight(from: 121, to: 124)
        try await Task.sleep(for: .milliseconds(100))
        let missed = try daemon.service.sqlite.events(afterID: lastSeen).map(\.id)
        #expect(try daemon.service.sqlite.events(type: "didExitRegion").count == 1)
        #expect(try daemon.service.sqlite.events(type: "didEnterRegion").count == 1)
        #expect(missed.count >= 3)
        let second = try await offPool { try EventStreamReader(port: daemon.port, token: "test-token", lastEventID: lastSeen) }
        var again: [Int64] = []
        for _ in missed { again.append(try await offPool { try second.next() }.id) }
        #expect(again == missed)
        // Nothing else is pending: the next frame is a new event, not a repeat.
        daemon.service.manager.requestState(for: TestDaemon.lobby)
        let next = try await offPool { try second.next() }
        #expect(next.id > missed.last ?? 0)
        #expect(next.data["type"] as? String == next.type)
        // A Last-Event-ID past this log's end comes from another log (a restart on a new store):
        // the whole log is sent, not skipped up to the old id (the stream stayed silent).
        let all = try daemon.service.sqlite.events().map(\.id)
        let stranger = try await offPool { try EventStreamReader(port: daemon.port, token: "test-token", lastEventID: (all.last ?? 0) + 5_000) }
        var replayed: [Int64] = []
        for _ in all { replayed.append(try await offPool { try stranger.next() }.id) }
        #expect(replayed == all)
        // Digits past Int64 (the document's pattern allows them): past the end too, not a 400.
        let huge = try await offPool {
            try EventStreamReader(port: daemon.port, token: "test-token", path: "/v1/events/stream?lastEventId=99999999999999999999")
        }
        #expect(try await offPool { try huge.next(timeout: 5) }.id == all.first)
        // `backlog=N` with a filter: the newest N events that pass it, however many others came
        // after (it counted N events back, then filtered: the enter, long before, was never sent).
        let entered = try daemon.service.sqlite.events(type: "didEnterRegion").map(\.id)
        #expect(entered.count == 1 && (all.last ?? 0) - (entered.first ?? 0) >= 3)
        let filtered = try await offPool {
            try EventStreamReader(port: daemon.port, token: "test-token", path: "/v1/events/stream?type=didEnterRegion&backlog=5")
        }
        #expect(try await offPool { try filtered.next(timeout: 5) }.id == entered.first)
        // Unauthenticated streams are refused.
        let unauthorized = try await offPool { try EventStreamReader(port: daemon.port, token: nil) }
        #expect(unauthorized.status == 401)
        let bad = try await daemon.client().request("GET", "/v1/events/stream", headers: ["Last-Event-ID": "x"])
        #expect(bad.status == 400)
        #expect(bad.json["field"] as? String == "Last-Event-ID")
    }

    @Test("GET /v1/beacons lists the `limit` most recently heard, with the total heard; a bad limit is named")
    func beaconListLimit() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        // Five beacons of the lobby (major 1), heard in turn: minor 1 first, minor 5 last.
        for minor in UInt16(1)...5 {
            let time = Timestamp(seconds: 1_700_000_000 + Double(minor))
            daemon.clock.advance(to: time)
            daemon.service.manager.ingest(BeaconObservation(identity: BeaconIdentity(uuid: TestDaemon.uuid, major: 1, minor: minor),
                                                            rssi: -60, measuredPower: -59, timestamp: time, scannerID: "hall"))
        }
        let client = daemon.client()
        let two = try await client.request("GET", "/v1/beacons?limit=2").json
        #expect((two["beacons"] as? [[String: Any]])?.map { $0["minor"] as? Int } == [5, 4])
        #expect(two["total"] as? Int == 5)
        let all = try await client.request("GET", "/v1/beacons").json
        #expect((all["beacons"] as? [[String: Any]])?.count == 5)
        #expect(all["total"] as? Int == 5)
        #expect(all["offlineScanners"] as? [String] == [])
        #expect(all["time"] as? Double == 1_700_000_005)
        // The hall's node says it is offline (and a porch node never heard): listed, and counted on /metrics.
        daemon.service.manager.setScannerStatus("porch", online: false)
        daemon.service.manager.setScannerStatus("hall", online: false)
        #expect(try await client.request("GET", "/v1/beacons").json["offlineScanners"] as? [String] == ["hall", "porch"])
        #expect(try await client.request("GET", "/metrics").text.contains("regionkit_scanners_offline 2.0"))
        daemon.service.manager.setScannerStatus("hall", online: true)
        #expect(try await client.request("GET", "/v1/beacons").json["offlineScanners"] as? [String] == ["porch"])
        #expect(try await client.request("GET", "/metrics").text.contains("regionkit_scanners_offline 1.0"))
        // A minute with nothing coming in: the engine's clock stands still, the answer's time does
        // not (the dashboard drops a beacon from its room 30 s after its last sighting by it).
        daemon.clock.advance(to: Timestamp(seconds: 1_700_000_065))
        #expect(try await client.request("GET", "/v1/beacons").json["time"] as? Double == 1_700_000_065)
        for bad in ["0", "-1", "100001", "two", "1.5"] {
            let response = try await client.request("GET", "/v1/beacons?limit=\(bad)")
            #expect(response.status == 400, "limit=\(bad)")
            #expect(response.json["field"] as? String == "limit")
        }
    }

    /// The responsive profile with rooms: each beacon placed at its first sighting.
    static let rooms = withRooms(.responsive)

    static func withRooms(_ base: MonitoringProfile) -> MonitoringProfile {
        var profile = base
        profile.nearestScanner = NearestScannerPolicy()
        return profile
    }

    @Test("GET /v1/scanners: each scanner's word on being online, last sighting, rate and beacons in its room, most recently heard first; limit and total; a bad limit is named. Under a learned exit detector (responsive) and a fixed-silence one (corelocation) alike",
          arguments: ["responsive", "corelocation"])
    func scannerList(profile: String) async throws {
        let daemon = try await TestDaemon(profile: Self.withRooms(try #require(MonitoringProfile.named(profile))))
        defer { Task { try? await daemon.stop() } }
        let start = 1_700_000_000.0
        // The hall hears minors 1–3 ten times, 0.1 s apart, then the kitchen minor 4 once, 1 s later.
        for step in 0..<10 {
            let time = Timestamp(seconds: start + Double(step) / 10)
            daemon.clock.advance(to: time)
            for minor in UInt16(1)...3 {
                daemon.service.manager.ingest(BeaconObservation(identity: BeaconIdentity(uuid: TestDaemon.uuid, major: 1, minor: minor),
                                                                rssi: -60, measuredPower: -59, timestamp: time, scannerID: "hall"))
            }
        }
        let kitchenTime = Timestamp(seconds: start + 2)
        daemon.clock.advance(to: kitchenTime)
        daemon.service.manager.ingest(BeaconObservation(identity: BeaconIdentity(uuid: TestDaemon.uuid, major: 1, minor: 4),
                                                        rssi: -60, measuredPower: -59, timestamp: kitchenTime, scannerID: "kitchen"))
        // The kitchen's node says it is offline; a porch node that was never heard says so too.
        daemon.service.manager.setScannerStatus("kitchen", online: false)
        daemon.service.manager.setScannerStatus("porch", online: false)
        let client = daemon.client()
        let body = try await client.request("GET", "/v1/scanners").json
        #expect(body["time"] as? Double == start + 2)
        #expect(body["total"] as? Int == 3)
        let scanners = try #require(body["scanners"] as? [[String: Any]])
        #expect(scanners.map { $0["name"] as? String } == ["kitchen", "hall", "porch"], "most recently heard first, the never heard last")
        let (kitchen, hall, porch) = (scanners[0], scanners[1], scanners[2])
        #expect(kitchen["status"] as? String == "offline" && kitchen["offlineSince"] as? Double == start + 2)
        #expect(kitchen["lastHeard"] as? Double == start + 2 && kitchen["beaconsInRoom"] as? Int == 1)
        #expect(hall["status"] as? String == "online" && hall["offlineSince"] == nil)
        #expect(hall["lastHeard"] as? Double == start + 0.9 && hall["beaconsInRoom"] as? Int == 3)
        // 30 sightings in 0.9 s, each decayed e-fold per 10 s, read 1.1 s after the last.
        let rate = try #require(hall["sightingsPerSecond"] as? Double)
        #expect(rate > 2 && rate < 3, "\(rate)")
        #expect(porch["status"] as? String == "offline" && porch["lastHeard"] == nil && porch["beaconsInRoom"] as? Int == 0)
        #expect(porch["sightingsPerSecond"] as? Double == 0 && porch.count == 5, "\(porch)")
        // Back online: said so.
        daemon.service.manager.setScannerStatus("kitchen", online: true)
        let again = try await client.request("GET", "/v1/scanners?limit=1").json
        #expect((again["scanners"] as? [[String: Any]])?.map { "\($0["name"] ?? "") \($0["status"] ?? "")" } == ["kitchen online"])
        #expect(again["total"] as? Int == 3)
        // A minute with nothing coming in: the engine's clock stands still, the daemon's does not;
        // the hall's rate is read at the daemon's (e^-6 of what it was).
        daemon.clock.advance(to: Timestamp(seconds: start + 62))
        let later = try await client.request("GET", "/v1/scanners").json
        #expect(later["time"] as? Double == start + 62)
        let hallLater = (later["scanners"] as? [[String: Any]])?.first { $0["name"] as? String == "hall" }
        #expect((hallLater?["sightingsPerSecond"] as? Double).map { $0 < 0.01 } == true, "\(hallLater ?? [:])")
        // An hour later: the hall and kitchen, silent, are no longer listed; the porch, offline, is.
        daemon.clock.advance(to: Timestamp(seconds: start + 2 + 3_601))
        let gone = try await client.request("GET", "/v1/scanners").json
        #expect((gone["scanners"] as? [[String: Any]])?.map { $0["name"] as? String } == ["porch"] && gone["total"] as? Int == 1, "\(gone)")
        for bad in ["0", "-1", "100001", "two", "1.5"] {
            let response = try await client.request("GET", "/v1/scanners?limit=\(bad)")
            #expect(response.status == 400 && response.json["field"] as? String == "limit", "limit=\(bad)")
        }
        #expect(try await client.request("POST", "/v1/scanners").status == 405)
    }

    @Test("/metrics: a series per scanner (online, last sighting, rate, room), escaped names, removed once no longer listed, at most 1,000 scanners")
    func scannerMetrics() async throws {
        let daemon = try await TestDaemon(profile: Self.rooms)
        defer { Task { try? await daemon.stop() } }
        let start = 1_700_000_000.0
        // A name with a quote, a backslash and a newline: escaped in the label, not breaking the
        // exposition (a raw newline would end the line and start a forged series).
        let hall = #"hall "north"\1"# + "\nwing"
        func sight(_ minor: UInt16, by scanner: String, at seconds: Double) {
            let time = Timestamp(seconds: seconds)
            daemon.clock.advance(to: time)
            daemon.service.manager.ingest(BeaconObservation(identity: BeaconIdentity(uuid: TestDaemon.uuid, major: 1, minor: minor),
                                                            rssi: -60, measuredPower: -59, timestamp: time, scannerID: scanner))
        }
        sight(1, by: hall, at: start)
        sight(2, by: "kitchen", at: start + 1)
        daemon.service.manager.setScannerStatus("porch", online: false)   // never heard, says it is offline
        let client = daemon.client()
        let first = try await client.request("GET", "/metrics").text
        let lines = Set(first.split(separator: "\n").map(String.init))
        #expect(lines.contains("regionkit_scanners 3.0"), "\(first)")
        for line in [#"regionkit_scanner_online{scanner="hall \"north\"\\1\nwing"} 1.0"#,
                     #"regionkit_scanner_online{scanner="kitchen"} 1.0"#,
                     #"regionkit_scanner_online{scanner="porch"} 0.0"#,
                     #"regionkit_scanner_last_sighting_timestamp_seconds{scanner="hall \"north\"\\1\nwing"} 1700000000.0"#,
                     #"regionkit_scanner_last_sighting_timestamp_seconds{scanner="kitchen"} 1700000001.0"#,
                     #"regionkit_scanner_beacons_in_room{scanner="kitchen"} 1.0"#,
                     #"regionkit_scanner_beacons_in_room{scanner="porch"} 0.0"#,
                     #"regionkit_scanner_sightings_per_second{scanner="porch"} 0.0"#] {
            #expect(lines.contains(line), "\(line)")
        }
        #expect(!first.contains(#"regionkit_scanner_last_sighting_timestamp_seconds{scanner="porch"}"#), "never heard: no last sighting")
        let kitchenRate = lines.first { $0.hasPrefix(#"regionkit_scanner_sightings_per_second{scanner="kitchen"} "#) }
        #expect(kitchenRate.flatMap { Double($0.split(separator: " ").last ?? "") }.map { $0 > 0 } == true, "\(kitchenRate ?? "none")")
        // An hour later the hall and the kitchen, silent, are no longer listed: their series are
        // gone, not frozen; the porch, offline, stays.
        daemon.clock.advance(to: Timestamp(seconds: start + 1 + 3_601))
        let later = try await client.request("GET", "/metrics").text
        #expect(later.contains("regionkit_scanners 1.0"))
        #expect(!later.contains("hall") && !later.contains(#"scanner="kitchen""#), "\(later)")
        #expect(later.contains(#"regionkit_scanner_online{scanner="porch"} 0.0"#))
        // The porch back online without a sighting: listed no more.
        daemon.service.manager.setScannerStatus("porch", online: true)
        let none = try await client.request("GET", "/metrics").text
        #expect(none.contains("regionkit_scanners 0.0") && !none.contains("regionkit_scanner_"), "\(none)")
        // A flood of invented names: every one counted, series for the 1,000 most recently heard only.
        for index in 0..<1_200 { sight(3, by: "node-\(index)", at: start + 4_000 + Double(index) / 100) }
        let flood = try await client.request("GET", "/metrics").text
        #expect(flood.contains("regionkit_scanners 1200.0"))
        let online = flood.split(separator: "\n").filter { $0.hasPrefix("regionkit_scanner_online{") }
        #expect(online.count == ServerMetrics.scannerSeriesLimit)
        #expect(online.contains { $0.contains(#""node-1199""#) } && !online.contains { $0.contains(#""node-199""#) })
    }

    @Test("Beacons from the engine snapshot; sources; readiness; Prometheus metrics")
    func statusRoutes() async throws {
        let daemon = try await TestDaemon()
        defer { Task { try? await daemon.stop() } }
        daemon.sight(from: 1, to: 5, rssi: -62)
        let client = daemon.client()
        let beacons = try await client.request("GET", "/v1/beacons").json["beacons"] as? [[String: Any]] ?? []
        #expect(beacons.count == 1)
        let beacon = beacons.first ?? [:]
        #expect(beacon["rssi"] as? Int == -62 && beacon["rssiScanner"] as? String == "hall")
        #expect(beacon["major"] as? Int == 1)
        #expect(beacon["nearestScanner"] as? String == "hall")
        #expect((beacon["filteredRSSI"] as? Double).map { abs($0 + 62) < 0.5 } == true, "ranged while inside: \(beacon)")
        #expect((beacon["distance"] as? Double ?? -1) > 0)
        #expect(beacon["regions"] as? [String] == ["lobby"])
        #expect((beacon["lastSeen"] as? Double ?? 0) > 1_700_000_004)
        let sources = try await client.request("GET", "/v1/sources").json["sources"] as? [[String: Any]] ?? []
        #expect(sources.first?["name"] as? String == "test")
        #expect(try await client.request("GET", "/readyz").status == 200)
        daemon.sources.set([SourceStatus(name: "hci0", kind: "hci", state: .down, detail: "controller gone", reconnects: 3,
                                         decodeErrors: ["truncated": 2])])
        let notReady = try await client.request("GET", "/readyz")
        #expect(notReady.status == 503)
        #expect(notReady.text.contains("controller gone"))
        let metrics = try await client.request("GET", "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.headers["content-type"]?.hasPrefix("text/plain") == true)
        #expect(metrics.text.contains(#"regionkit_events_total{type="didDetermineState"} 1"#))
        #expect(metrics.text.contains(#"regionkit_events_total{type="processStarted"} 1"#))
        #expect(metrics.text.contains(#"regionkit_regions{state="inside"} 1.0"#))
        #expect(metrics.text.contains(#"regionkit_source_decode_errors_total{source="hci0",kind="hci",error="truncated"} 2"#))
        #expect(metrics.text.contains(#"regionkit_source_reconnects_total{source="hci0",kind="hci"} 3"#))
        #expect(metrics.text.contains("regionkit_http_requests_total{route=\"/v1/beacons\",method=\"GET\",status=\"200\"} 1"))
        // A 405 is counted under its route (it was "unmatched", with the paths no route has); a 404 for no route stays unmatched.
        #expect(try await client.request("POST", "/v1/regions/lobby").status == 405)
        #expect(try await client.request("GET", "/v1/nowhere").status == 404)
        let counted = try await client.request("GET", "/metrics").text
        #expect(counted.contains("regionkit_http_requests_total{route=\"/v1/regions/{id}\",method=\"POST\",status=\"405\"} 1"), "\(counted)")
        #expect(counted.contains("regionkit_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"} 1"))
        #expect(metrics.text.contains("regionkit_store_operation_duration_seconds_bucket"))
        #expect(metrics.text.contains("regionkit_hook_deliveries{status=\"pending\"} 0.0"))
        #expect(!metrics.text.contains("regionkit_output_"), "no output, no series")

        // The outputs (the MQTT hub): connected, published, behind the log by what is after its cursor.
        let last = try await daemon.service.store.lastEventID()
        daemon.outputs.withLock {
            $0 = [OutputStatus(name: "mqtt:home", kind: "mqtt", connected: true, eventsPublished: 7, cursor: last - 2, connections: 3, eventsUnpublishable: 1,
                               lateWillsAnswered: 8, homeAssistant: .init(discoveryRounds: 4, announcedBeacons: 12, unannouncedBeacons: 5, forgottenBeacons: 2, adoptedBeacons: 6)),
                  OutputStatus(name: "mqtt:office", kind: "mqtt", connected: false)]
        }
        let outputs = try await client.request("GET", "/metrics").text
        let labels = #"{output="mqtt:home",kind="mqtt"}"#
        for line in ["regionkit_output_connected\(labels) 1.0", "regionkit_output_events_published_total\(labels) 7",
                     "regionkit_output_events_behind\(labels) 2.0", "regionkit_output_connections_total\(labels) 3",
                     "regionkit_output_events_unpublishable_total\(labels) 1", "regionkit_output_late_wills_answered_total\(labels) 8",
                     "regionkit_homeassistant_discovery_rounds_total\(labels) 4",
                     "regionkit_homeassistant_beacons_announced\(labels) 12.0", "regionkit_homeassistant_beacons_unannounced_total\(labels) 5",
                     "regionkit_homeassistant_beacons_forgotten_total\(labels) 2", "regionkit_homeassistant_beacons_adopted_total\(labels) 6",
                     #"regionkit_output_connected{output="mqtt:office",kind="mqtt"} 0.0"#] {
            #expect(outputs.split(separator: "\n").contains { $0 == line }, "\(line) in \(outputs)")
        }
        #expect(!outputs.contains(#"regionkit_output_events_behind{output="mqtt:office""#), "no cursor read yet: not reported")
        #expect(!outputs.contains(#"regionkit_homeassistant_discovery_rounds_total{output="mqtt:office""#), "no discovery")
        #expect(!outputs.contains(#"regionkit_output_late_wills_answered_total{output="mqtt:office""#), "an output that answers no late will")
        // An output this process no longer runs (a cluster member that lost the outputs lease):
        // disconnected, its backlog and announced count gone rather than frozen.
        daemon.outputs.withLock { $0 = [] }
        let gone = try await client.request("GET", "/metrics").text.split(separator: "\n")
        #expect(gone.contains { $0 == "regionkit_output_connected\(labels) 0.0" }, "\(gone)")
        #expect(!gone.contains { $0.hasPrefix("regionkit_output_events_behind\(labels)") || $0.hasPrefix("regionkit_homeassistant_beacons_announced\(labels)") })
        #expect(gone.contains { $0 == "regionkit_output_events_published_total\(labels) 7" }, "a counter keeps its total")
        let page = try await daemon.client(token: nil).request("GET", "/")
        #expect(page.status == 200)
        #expect(page.text.contains("<title>RegionKit</title>"))
        // Hardening on every response, errors included: never sniffed, never framed, only its own script.
        for response in [page, metrics, try await daemon.client(token: nil).request("GET", "/v1/regions/%FF")] {
            #expect(response.headers["x-content-type-options"] == "nosniff" && response.headers["x-frame-options"] == "DENY", "\(response.headers)")
            #expect(response.headers["content-security-policy"]?.contains("frame-ancestors 'none'") == true)
            #expect(response.headers["content-security-policy"]?.contains("script-src 'self'") == true)
        }
    }
}
