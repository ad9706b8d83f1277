import RegionKitConcurrency
import Testing
@testable import RegionKitMQTT

@Suite("MQTT client configuration")
struct MQTTClientConfigurationTests {
    @Test("mqtt:// and mqtts:// URLs with default and explicit ports, IPv6 in brackets",
          arguments: [
            ("mqtt://127.0.0.1", "127.0.0.1", 1883, false),
            ("mqtt://broker.lan:1884", "broker.lan", 1884, false),
            ("mqtts://broker.lan", "broker.lan", 8883, true),
            ("MQTTS://broker.lan:9000/", "broker.lan", 9000, true),
            ("mqtt://[::1]:1883", "::1", 1883, false),
            ("mqtts://[fe80::1]", "fe80::1", 8883, true),
          ])
    func parses(url: String, host: String, port: Int, tls: Bool) throws {
        let configuration = try MQTTClientConfiguration(url: url)
        #expect(configuration.host == host)
        #expect(configuration.port == port)
        #expect(configuration.useTLS == tls)
    }

    @Test("rejected URLs say why",
          arguments: [
            ("http://broker", "scheme"), ("tcp://broker:1883", "scheme"), ("broker:1883", "scheme"),
            ("mqtt://", "host is missing"), ("mqtt://:1883", "host is missing"), ("mqtt://broker:0", "port"),
            ("mqtt://broker:70000", "port"), ("mqtt://broker:abc", "port"), ("mqtt://user:secret@broker", "credentials"),
            ("mqtt://broker/topic", "no path"), ("mqtt://[::1", "unterminated"), ("mqtt://broker:1/?password=secret", "no path"),
            ("mqtt://broker#secret", "no path"),
          ])
    func rejects(url: String, reason: String) {
        do {
            _ = try MQTTClientConfiguration(url: url)
            Issue.record("\(url) accepted")
        } catch {
            guard case .invalidURL(let rejected, let why) = error else {
                Issue.record("\(error)")
                return
            }
            // The error repeats the URL, its credentials masked (it reaches logs and the terminal).
            // A path, query or fragment is cut off (a query may carry a token).
            let cut = url.hasPrefix("mqtt://") ? url.dropFirst(7).firstIndex { "/?#".contains($0) } : nil
            let shown = url.contains("@") ? "mqtt://***@broker" : cut.map { String(url[..<$0]) + "…" } ?? url
            #expect(rejected == shown, "\(rejected)")
            #expect(!rejected.contains("secret"))
            #expect(why.contains(reason), "\(why)")
        }
    }

    @Test("credentials are masked wherever a URL is repeated, with or without a scheme, a port or a path")
    func redaction() {
        #expect(MQTTClientConfiguration.redactingCredentials("mqtt://user:secret@broker:1883") == "mqtt://***@broker:1883")
        #expect(MQTTClientConfiguration.redactingCredentials("mqtts://u:p@ss@[::1]:8883/x") == "mqtts://***@[::1]:8883/x")
        #expect(MQTTClientConfiguration.redactingCredentials("user:secret@broker") == "***@broker")
        #expect(MQTTClientConfiguration.redactingCredentials("tcp://user:secret@broker") == "tcp://***@broker")
        // A password holding "/", "?" or "#" (unescaped) ends the authority early: still hidden, whole.
        #expect(MQTTClientConfiguration.redactingCredentials("mqtt://hub:S3cr3t/x@127.0.0.1:18870") == "mqtt://***@127.0.0.1:18870")
        #expect(MQTTClientConfiguration.redactingCredentials("mqtt://hub:S3c?r3t@broker") == "mqtt://***@broker")
        #expect(MQTTClientConfiguration.redactingCredentials("mqtts://hub:a#b/c@broker:8883") == "mqtts://***@broker:8883")
        // An "@" only in the path: everything before it is hidden (harmless; never a password shown).
        #expect(MQTTClientConfiguration.redactingCredentials("mqtt://broker/a@b") == "mqtt://***@b")
        #expect(MQTTClientConfiguration.redactingCredentials("mqtt://broker:1883") == "mqtt://broker:1883")
        // Rejected for its scheme, still masked.
        do {
            _ = try MQTTClientConfiguration(url: "http://admin:hunter2@broker")
            Issue.record("accepted")
        } catch {
            #expect(!"\(error)".contains("hunter2"), "\(error)")
        }
    }

    @Test("defaults: random client id, 30 s keepalive, clean session, 2 MiB packets, 0.1…10 s backoff")
    func defaults() throws {
        let a = try MQTTClientConfiguration(url: "mqtt://h")
        let b = try MQTTClientConfiguration(url: "mqtt://h")
        #expect(a.clientID.hasPrefix("regionkit-") && a.clientID.count == 22)
        #expect(a.clientID != b.clientID)
        #expect(a.keepAlive == .seconds(30) && a.keepAliveSeconds == 30)
        #expect(a.cleanSession)
        #expect(a.maximumIncomingPacketSize == 2 * 1024 * 1024)
        #expect(a.reconnectMinimumDelay == .milliseconds(100) && a.reconnectMaximumDelay == .seconds(10))
        #expect(a.username == nil && a.password == nil && a.caFile == nil && a.will == nil)
    }

    @Test("keepalive is sent as 1…65535 whole seconds, never 0")
    func keepAliveSeconds() throws {
        var configuration = try MQTTClientConfiguration(url: "mqtt://h")
        configuration.keepAlive = .zero
        #expect(configuration.keepAliveSeconds == 1)
        configuration.keepAlive = .milliseconds(1500)
        #expect(configuration.keepAliveSeconds == 2)
        configuration.keepAlive = .seconds(100_000)
        #expect(configuration.keepAliveSeconds == 65_535)
    }

    @Test("description, debugDescription and dump never show the password")
    func passwordRedacted() throws {
        var configuration = try MQTTClientConfiguration(url: "mqtts://broker.lan")
        configuration.username = "hub"
        configuration.password = "s3cret-Pa55"
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [configuration.description, configuration.debugDescription, String(describing: configuration),
                     String(reflecting: configuration), "\(configuration)", dumped] {
            #expect(!text.contains("s3cret"), "\(text)")
            #expect(text.contains("hub"))
        }
        #expect(configuration.description.contains("<redacted>"))
    }

    @Test("backoff grows exponentially from the minimum to the maximum, jittered within [d/2, d]")
    func backoff() throws {
        var configuration = try MQTTClientConfiguration(url: "mqtt://h")
        configuration.reconnectMinimumDelay = .milliseconds(100)
        configuration.reconnectMaximumDelay = .seconds(10)
        let client = MQTTClient(configuration: configuration, onMessage: { _ in })
        for (failures, ceiling) in [(0, 0.1), (1, 0.2), (3, 0.8), (6, 6.4), (7, 10.0), (50, 10.0), (Int.max, 10.0)] {
            for _ in 0..<50 {
                let delay = client.backoffDelay(afterFailures: failures).inSeconds
                #expect(delay >= ceiling / 2 - 1e-9 && delay <= ceiling + 1e-9, "\(failures): \(delay)")
            }
        }
    }
}
