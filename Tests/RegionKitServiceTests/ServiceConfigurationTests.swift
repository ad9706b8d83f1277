import Foundation
import Logging
import Testing
import RegionKit
import RegionKitStore
import RegionKitSimulation
import RegionKitTestSupport
@testable import RegionKitService

/// The `regionkit run` configuration file: its shape, its errors (file and field named), and what
/// it implies for the sources' initial availability.
@Suite("Service configuration")
struct ServiceConfigurationTests {
    static let path = "/etc/regionkit/test.yaml"

    @Test("The documented example decodes to the five source kinds, in order, with the broker and Home Assistant blocks")
    func documentedExample() throws {
        let configuration = try ServiceConfiguration.decode("""
        store: /var/lib/regionkit/regionkit.sqlite
        profile: altbeacon
        regions:
          - {identifier: lobby, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1}
        sources:
          - simulator: {scenario: museum, speed: 2, repeat: true, seed: 7}
          - gateway: {file: /data/run.json.gz, speed: 1, reorderWindow: 3}
          - hci: {device: "tcp:127.0.0.1:1234", scannerID: lobby}
          - gpsd: {host: 127.0.0.1, port: 2947}
          - mqtt: {format: theengs, topic: "home/+/BTtoMQTT/+", scanner: garage}
        mqtt: {url: "mqtt://127.0.0.1:1883", site: home, username: hub}
        homeAssistant: {discovery: true, mqttRoom: true}
        hooks:
          onEnter: ["logger -t regionkit entered $REGIONKIT_REGION"]
          webhooks: [{url: "http://127.0.0.1:8080/events"}]
        """, path: Self.path)
        #expect(configuration.store == "/var/lib/regionkit/regionkit.sqlite")
        #expect(try configuration.monitoringProfile(Self.path).name == "altbeacon")
        #expect(try configuration.monitoredRegions().map(\.identifier) == ["lobby"])
        #expect(configuration.sources == [
            .simulator(.init(scenario: "museum", speed: 2, repeat: true, seed: 7)),
            .gateway(.init(file: "/data/run.json.gz", speed: 1, reorderWindow: 3)),
            .hci(.init(device: "tcp:127.0.0.1:1234", scannerID: "lobby")),
            .gpsd(.init(host: "127.0.0.1", port: 2947)),
            .mqtt(.init(format: .theengs, topic: "home/+/BTtoMQTT/+", scanner: "garage")),
        ])
        #expect(configuration.sources.map(\.kind) == ServiceSource.Kind.allCases)
        #expect(configuration.mqtt?.siteName == "home" && configuration.mqtt?.username == "hub")
        #expect(configuration.homeAssistant == HomeAssistantConfiguration(discovery: true, mqttRoom: true))
        #expect(configuration.initialSourceStatuses[.beacon] == .authorized, "the simulation serves the beacon regions while the devices connect")
        #expect(ServiceConfiguration(sources: [configuration.sources[4]]).initialSourceStatuses[.beacon] == .notDetermined,
                "the broker reports the MQTT source's availability")
        #expect(try configuration.monitoringProfile(Self.path).nearestScanner != nil, "rooms are tracked with many-scanner sources")
        #expect(configuration.hooks?.webhooks.map(\.url) == ["http://127.0.0.1:8080/events"])
    }

    @Test("minimumExitSilence raises the profile's exit detector; out of range it is refused with the file, the field and the range")
    func minimumExitSilence() throws {
        let sources = "sources:\n  - simulator: {scenario: museum}\n"
        let configuration = try ServiceConfiguration.decode("minimumExitSilence: 150\n" + sources, path: "c.yaml")
        #expect(try configuration.monitoringProfile("c.yaml").exitDetector == MonitoringProfile.responsive.exitDetector.withMinimumSilence(150))
        #expect(try ServiceConfiguration.decode(sources, path: "c.yaml").monitoringProfile("c.yaml").exitDetector == MonitoringProfile.responsive.exitDetector)
        // With MQTT scanners (rooms), a scanner keeps its say in a beacon's room as long.
        let hub = "minimumExitSilence: 150\nsources:\n  - mqtt: {format: theengs}\nmqtt: {url: \"mqtt://127.0.0.1:1883\", site: home}\n"
        #expect(try ServiceConfiguration.decode(hub, path: "c.yaml").monitoringProfile("c.yaml").nearestScanner?.longestQuiet == 150)
        for bad in ["0", "-5", "1e9", ".nan"] {
            let error = #expect(throws: RegionKitError.self) { try ServiceConfiguration.decode("minimumExitSilence: \(bad)\n" + sources, path: "c.yaml") }
            #expect(error?.message.hasPrefix("c.yaml: minimumExitSilence must be within 1...3600 seconds, got ") == true, "\(bad): \(error?.message ?? "")")
        }
    }

    @Test("A broker URL the client cannot use (a port out of range, a path or query: not echoed), an HCI device no transport reads, a scenario neither built in nor a file: refused at the load, naming the field (they failed once the daemon had created its store)")
    func sourcesCheckedAtLoad() throws {
        for (text, expected) in [
            ("sources:\n  - mqtt: {format: espresense}\nmqtt: {url: \"mqtt://127.0.0.1:99999\"}\n", "mqtt.url 'mqtt://127.0.0.1:99999': the port '99999' is not a number"),
            ("sources:\n  - mqtt: {format: espresense}\nmqtt: {url: \"mqtt://127.0.0.1:1/?password=hunter2\"}\n", "mqtt.url 'mqtt://127.0.0.1:1…': only mqtt[s]://host[:port]"),
            ("sources:\n  - mqtt: {format: espresense}\nmqtt: {urls: [\"mqtt://a:1883\", \"mqtt://b:0\"]}\n", "mqtt.urls[1] 'mqtt://b:0'"),
            ("sources:\n  - hci: {device: bogus}\n", "sources[0].hci.device: "),
            ("sources:\n  - simulator: {scenario: musuem}\n", "sources[0].simulator.scenario: 'musuem' is neither a built-in scenario"),
        ] {
            let error = #expect(throws: RegionKitError.self) { try ServiceConfiguration.decode(text, path: Self.path).validate(Self.path) }
            #expect(error?.message.contains(expected) == true && error?.message.contains("hunter2") == false, "\(error?.message ?? "")")
        }
        #expect(throws: Never.self) { try ServiceConfiguration.decode("sources:\n  - hci: {device: \"tcp:127.0.0.1:1\"}\n  - simulator: {scenario: museum}\n", path: Self.path).validate(Self.path) }
    }

    @Test("automation: a retry delay, attempt count or wake delay out of range is refused, naming the file, line and key (delay 0 with unbounded attempts made the daemon retry at one instant for ever, growing to 24 GB)")
    func automationRanges() throws {
        for (block, key, range) in [("{retry: {delay: 0, maximumAttempts: 9223372036854775807}}", "automation.retry.delay", "from 0.1 to 86400 seconds"),
                                    ("{retry: {delay: -1}}", "automation.retry.delay", "from 0.1 to 86400 seconds"),
                                    ("{retry: {delay: 1e308}}", "automation.retry.delay", "from 0.1 to 86400 seconds"),
                                    ("{retry: {delay: .nan}}", "automation.retry.delay", "from 0.1 to 86400 seconds"),
                                    ("{retry: {maximumAttempts: 9223372036854775807}}", "automation.retry.maximumAttempts", "from 0 to 10000"),
                                    ("{retry: {maximumAttempts: -1}}", "automation.retry.maximumAttempts", "from 0 to 10000"),
                                    ("{wakeRequestDelay: -1}", "automation.wakeRequestDelay", "from 0 to 3600 seconds"),
                                    ("{wakeRequestDelay: .inf}", "automation.wakeRequestDelay", "from 0 to 3600 seconds")] {
            let error = #expect(throws: RegionKitError.self) {
                try ServiceConfiguration.decode("sources:\n  - gpsd: {}\nautomation: \(block)\n", path: Self.path)
            }
            #expect(error?.message.contains("\(Self.path):3:") == true && error?.message.contains(key) == true && error?.message.contains(range) == true,
                    "\(block): \(error?.message ?? "")")
        }
        let edges = try ServiceConfiguration.decode("sources:\n  - gpsd: {}\nautomation: {wakeRequestDelay: 0, retry: {delay: 0.1, maximumAttempts: 10000}}\n", path: Self.path)
        #expect(edges.automation?.retry == Automation.Retry(delay: 0.1, maximumAttempts: 10_000))
        // A library caller's value out of range is held to it by the engine.
        #expect(Automation.Retry(delay: 0).boundedDelay == 0.1 && Automation.Retry(delay: 1e308).boundedDelay == 86_400)
        #expect(Automation.Retry(delay: .nan).boundedDelay == 1 && Automation.Retry(delay: -.infinity).boundedDelay == 0.1)
    }

    @Test("automation: a block may name only the helpers it turns on (the others off), and retry only what it changes; unknown keys are still refused")
    func partialAutomation() throws {
        let one = try ServiceConfiguration.decode("sources:\n  - gpsd: {}\nautomation: {requestStateOnStart: true}\n", path: Self.path)
        #expect(one.automation == Automation(requestStateOnStart: true))
        let retry = try ServiceConfiguration.decode("sources:\n  - gpsd: {}\nautomation: {retry: {delay: 2}}\n", path: Self.path)
        #expect(retry.automation?.retry == Automation.Retry(delay: 2, maximumAttempts: 5))
        #expect(try ServiceConfiguration.decode("sources:\n  - gpsd: {}\nautomation: {}\n", path: Self.path).automation == Automation())
        #expect(try ServiceConfiguration.decode("sources:\n  - gpsd: {}\n", path: Self.path).automation == nil, "absent: the daemon's default, every helper")
        #expect { try ServiceConfiguration.decode("sources:\n  - gpsd: {}\nautomation: {requestStateOnStrat: true}\n", path: Self.path) } throws: {
            "\($0)".contains("requestStateOnStrat")
        }
    }

    @Test("mqtt.urls: the nodes of a clustered broker, tried in order by the hub's client")
    func clusteredBroker() throws {
        let configuration = try ServiceConfiguration.decode("""
        sources:
          - mqtt: {format: espresense}
        mqtt: {urls: ["mqtt://127.0.0.1:4001", "mqtt://127.0.0.1:4002", "mqtt://[::1]:4003"], site: airport}
        """, path: Self.path)
        let mqtt = try #require(configuration.mqtt)
        #expect(mqtt.url == "mqtt://127.0.0.1:4001", "the first node is the primary")
        #expect(mqtt.brokerURLs == ["mqtt://127.0.0.1:4001", "mqtt://127.0.0.1:4002", "mqtt://[::1]:4003"])
        #expect(mqtt.brokerDescription == "mqtt://127.0.0.1:4001,mqtt://127.0.0.1:4002,mqtt://[::1]:4003")
        // It encodes back to urls (and one broker back to url).
        let encoded = String(decoding: try JSONEncoder().encode(mqtt), as: UTF8.self)
        #expect(encoded.contains("\"urls\"") && !encoded.contains("\"url\""), "\(encoded)")
        #expect(try JSONDecoder().decode(MQTTHubConfiguration.self, from: Data(encoded.utf8)) == mqtt)
        let single = String(decoding: try JSONEncoder().encode(MQTTHubConfiguration(url: "mqtt://h")), as: UTF8.self)
        #expect(single.contains("\"url\"") && !single.contains("\"urls\""), "\(single)")

        // The hub's client gets every node, in order (it fails over along this list).
        let service = try MonitoringService(store: RegionStore(path: temporaryStorePath()), clock: VirtualClock(), sources: [.beacon: .notDetermined])
        let hub = try PresenceHub(configuration: mqtt, homeAssistant: nil, sources: configuration.mqttSources, service: service,
                                  logger: Logger(label: "test"), environment: [:])
        #expect(hub.client.configuration.servers.map(\.url) == ["mqtt://127.0.0.1:4001", "mqtt://127.0.0.1:4002", "mqtt://[::1]:4003"])
        #expect(hub.activity.name.hasSuffix("@mqtt://127.0.0.1:4001,mqtt://127.0.0.1:4002,mqtt://[::1]:4003"), "\(hub.activity.name)")
    }

    @Test("mqtt: a URL with credentials is refused at load, and no error repeats the password")
    func mqttCredentialsInURL() {
        for block in [#"mqtt: {url: "mqtt://hub:s3cret@127.0.0.1:1883"}"#,
                      #"mqtt: {urls: ["mqtt://127.0.0.1:4001", "mqtt://hub:s3cret@127.0.0.1:4002"]}"#,
                      #"mqtt: {url: "http://hub:s3cret@127.0.0.1"}"#] {
            do {
                _ = try ServiceConfiguration.decode("sources:\n  - mqtt: {format: espresense}\n\(block)\n", path: Self.path)
                Issue.record("accepted: \(block)")
            } catch {
                let message = "\(error)"
                #expect(message.contains("credentials do not go in the URL") && message.contains("***@127.0.0.1"), "\(message)")
                #expect(!message.contains("s3cret"), "\(message)")
            }
        }
    }

    @Test("mqtt.maximumBacklog: read, round-tripped, and refused out of range naming the field")
    func mqttMaximumBacklog() throws {
        let configuration = try ServiceConfiguration.decode("sources:\n  - mqtt: {format: espresense}\nmqtt: {url: \"mqtt://h\", maximumBacklog: 2000}\n", path: Self.path)
        let mqtt = try #require(configuration.mqtt)
        #expect(mqtt.maximumBacklog == 2_000)
        #expect(try JSONDecoder().decode(MQTTHubConfiguration.self, from: JSONEncoder().encode(mqtt)) == mqtt)
        for value in ["0", "-5", "99", "10000001"] {
            do {
                _ = try ServiceConfiguration.decode("sources:\n  - mqtt: {format: espresense}\nmqtt: {url: \"mqtt://h\", maximumBacklog: \(value)}\n", path: Self.path)
                Issue.record("accepted maximumBacklog \(value)")
            } catch {
                #expect("\(error)".contains("mqtt.maximumBacklog \(value) must be within 100...10000000"), "\(error)")
            }
        }
    }

    @Test("mqtt.retainDepartures: announced (the default) or all, round-tripped; anything else refused naming the field and the choices")
    func mqttRetainDepartures() throws {
        func decode(_ value: String?) throws -> MQTTHubConfiguration {
            let field = value.map { ", retainDepartures: \($0)" } ?? ""
            return try #require(try ServiceConfiguration.decode("sources:\n  - mqtt: {format: espresense}\nmqtt: {url: \"mqtt://h\"\(field)}\n", path: Self.path).mqtt)
        }
        #expect(try decode(nil).retainDepartures == nil && !(try decode(nil).retainsAllDepartures))
        #expect(try decode("announced").retainDepartures == .announced && !(try decode("announced").retainsAllDepartures))
        let all = try decode("all")
        #expect(all.retainsAllDepartures)
        #expect(try JSONDecoder().decode(MQTTHubConfiguration.self, from: JSONEncoder().encode(all)) == all)
        do {
            _ = try decode("forever")
            Issue.record("accepted retainDepartures forever")
        } catch {
            #expect("\(error)".contains("retainDepartures") && "\(error)".contains("announced, all"), "\(error)")
        }
    }

    @Test("contrib/config.example.yaml (the file the README runs) loads")
    func contribExample() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("contrib/config.example.yaml").path
        let configuration = try ServiceConfiguration.load(path)
        #expect(configuration.sources == [.simulator(.init(scenario: "museum", speed: 4, repeat: true))])
        #expect(try configuration.monitoredRegions().map(\.identifier) == ["museum", "exhibit-2"])
        #expect(configuration.initialSourceStatuses == [.beacon: .authorized])
        #expect(configuration.hooks?.webhooks.isEmpty == true, "no webhook to nothing in the file the README runs")
        // Its commented examples work when uncommented: the webhook, a geofence and its gpsd source.
        let text = try String(contentsOfFile: path, encoding: .utf8)
            .replacingOccurrences(of: "  # webhooks:", with: "  webhooks:")
            .replacingOccurrences(of: "  #   - {url:", with: "    - {url:")
            .replacingOccurrences(of: "  # - gpsd:", with: "  - gpsd:")
            .replacingOccurrences(of: "  # - {identifier: station", with: "  - {identifier: station")
        let uncommented = try ServiceConfiguration.decode(text, path: path)
        #expect(uncommented.hooks?.webhooks.first?.types == ["didEnterRegion", "didExitRegion"])
        #expect(uncommented.sources.contains(.gpsd(.init(host: "127.0.0.1", port: 2947))))
        #expect(try uncommented.monitoredRegions().map(\.identifier) == ["museum", "station", "exhibit-2"])
    }

    @Test("JSON is YAML too, and a source round-trips through its encoding")
    func jsonAndRoundTrip() throws {
        let configuration = try ServiceConfiguration.decode(#"{"sources": [{"gpsd": {}}]}"#, path: Self.path)
        #expect(configuration.sources == [.gpsd(.init())])
        let source = ServiceSource.simulator(.init(scenario: "museum", speed: 4))
        let data = try JSONEncoder().encode(source)
        #expect(String(decoding: data, as: UTF8.self).hasPrefix(#"{"simulator":"#))
        #expect(try JSONDecoder().decode(ServiceSource.self, from: data) == source)
    }

    @Test("Regions of every format and vendor layouts for an hci source")
    func formatsInConfiguration() throws {
        let configuration = try ServiceConfiguration.decode("""
            sources:
              - hci: {device: hci0, layouts: ["m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24"]}
            regions:
              - {identifier: hall, format: altbeacon, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1}
              - {identifier: shop, format: eddystone-uid, namespace: 8b0ca750e7a74e14bd99}
              - {identifier: shelf, namespace: 8b0ca750e7a74e14bd99, instance: 0000000000a1}
              - {identifier: alice, device: "irk:0123456789abcdef0123456789abcdef"}
              - {identifier: keys, device: "known:c80f104dc7eb"}
              - {identifier: bob, format: device, device: bob-watch}
            """, path: Self.path)
        let regions = try configuration.monitoredRegions()
        let constraints = regions.compactMap { region -> String? in if case .beacon(let beacon) = region { return beacon.constraint.description } else { return nil } }
        #expect(constraints == ["altbeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1", "eddystone-uid:8b0ca750e7a74e14bd99",
                                "eddystone-uid:8b0ca750e7a74e14bd99:0000000000a1", "device:irk:0123456789abcdef0123456789abcdef",
                                "device:C8:0F:10:4D:C7:EB", "device:bob-watch"])
        // A device region takes its device only; an id that cannot be one is named.
        for (line, problem) in [("{identifier: x, device: bob, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}", "takes device only"),
                                ("{identifier: x, format: device}", "takes device only"),
                                ("{identifier: x, format: altbeacon, device: bob}", "device goes with format device"),
                                ("{identifier: x, device: \"bob watch\"}", "device id 'bob watch' is not one")] {
            let error = #expect(throws: RegionKitError.self) {
                try ServiceConfiguration.decode("sources: [{hci: {device: hci0}}]\nregions:\n  - \(line)", path: Self.path).monitoredRegions()
            }
            #expect(error?.message.contains(problem) == true && error?.message.contains("region 'x'") == true, "\(error?.message ?? "")")
        }
        guard case .hci(let hci) = configuration.sources.first else { Issue.record("not hci"); return }
        #expect(try hci.beaconLayouts().first?.format == .altBeacon)
    }

    @Test("An hci source's layouts: a string (format inferred or FORMAT:-prefixed) or {layout, format}")
    func layoutFormats() throws {
        let configuration = try ServiceConfiguration.decode("""
            sources:
              - hci:
                  device: hci0
                  layouts:
                    - "m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24"
                    - "m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24"
                    - "ibeacon:m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24"
                    - {layout: "m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24", format: altbeacon}
                    - {layout: "m:2-3=abcd,i:4-13,i:14-19"}
            """, path: Self.path)
        guard case .hci(let hci) = configuration.sources.first else { Issue.record("not hci"); return }
        let layouts = try hci.beaconLayouts()
        #expect(layouts.map(\.format) == [.altBeacon, .iBeacon, .iBeacon, .altBeacon, .eddystoneUID])
        #expect(layouts.map(\.expression) == ["m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24", "m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24",
                                             "m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24", "m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24",
                                             "m:2-3=abcd,i:4-13,i:14-19"])
        // The settings encode back to what they were: a string, or a map when a format was given in one.
        let json = String(decoding: try JSONEncoder().encode(hci.layouts), as: UTF8.self)
        #expect(json.contains(#""ibeacon:m:2-3=1234"#) && json.contains(#"{"layout":"m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24","format":"altbeacon"}"#)
                || json.contains(#"{"format":"altbeacon","layout":"m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24"}"#), "\(json)")
        #expect(try JSONDecoder().decode([BeaconLayoutSetting].self, from: JSONEncoder().encode(hci.layouts)) == hci.layouts)
    }

    @Test("Errors name the file and the field", arguments: [
        ("sources:\n  - simulator: {speed: 2}\n", "missing field 'scenario' at sources[0].simulator"),
        ("sources:\n  - {simulator: {scenario: museum}, gpsd: {}}\n", "sources[0]: must be exactly one of: simulator, gateway, hci, gpsd, mqtt"),
        ("sources:\n  - {radio: {}}\n", "sources[0]: must be exactly one of: simulator, gateway, hci, gpsd, mqtt"),
        ("sources:\n  - mqtt: {format: espresense}\n", "sources[0].mqtt needs the broker"),
        ("sources:\n  - mqtt: {format: espresense, topic: \"a/#/b\"}\nmqtt: {url: \"mqtt://h\"}\n", "sources[0].mqtt.topic"),
        ("sources:\n  - mqtt: {format: zigbee}\nmqtt: {url: \"mqtt://h\"}\n", "sources[0]"),
        ("sources:\n  - gpsd: {}\nmqtt: {url: \"http://h\"}\n", "mqtt.url 'http://h' must start with mqtt:// or mqtts://"),
        ("sources:\n  - gpsd: {}\nmqtt: {url: \"mqtt://h\", password: hunter2}\n", "mqtt.password: do not write the password in the configuration"),
        // A clustered broker: urls instead of url.
        ("sources:\n  - gpsd: {}\nmqtt: {url: \"mqtt://a\", urls: [\"mqtt://a\", \"mqtt://b\"]}\n", "give either url or urls, not both"),
        ("sources:\n  - gpsd: {}\nmqtt: {urls: []}\n", "urls: needs at least one broker"),
        ("sources:\n  - gpsd: {}\nmqtt: {urls: [\"mqtt://a\", \"http://b\"]}\n", "mqtt.urls[1] 'http://b' must start with mqtt:// or mqtts://"),
        ("sources:\n  - gpsd: {}\nmqtt: {urls: [\"mqtt://a\", \"mqtts://b\"]}\n", "mqtt.urls: mix mqtt:// and mqtts://"),
        ("sources:\n  - gpsd: {}\nmqtt: {site: x}\n", "mqtt: missing the broker: url (one) or urls (a cluster)"),
        ("sources:\n  - gpsd: {}\nhomeAssistant: {discovery: true}\n", "homeAssistant needs the broker"),
        ("sources: []\n", "sources: give at least one source (simulator, gateway, hci, gpsd, mqtt)"),
        ("sources:\n  - simulator: {scenario: museum, speed: 0}\n", "sources[0].simulator.speed 0.0 must be within 0.001...1000000"),
        ("sources:\n  - gpsd: {}\n  - gateway: {file: x, speed: -1}\n", "sources[1].gateway.speed -1.0 must be within 0.001...1000000"),
        ("sources:\n  - simulator: {scenario: museum, speed: 1e300}\n", "sources[0].simulator.speed 1e+300 must be within 0.001...1000000"),
        ("sources:\n  - gateway: {file: x, reorderWindow: -1}\n", "sources[0].gateway.reorderWindow -1.0 must be within 0...3600 seconds"),
        ("sources:\n  - gateway: {file: x, maxGap: 1e12}\n", "sources[0].gateway.maxGap 1000000000000.0 must be within 0...86400 seconds"),
        // Unknown keys, with the line and column of the key.
        ("sources:\n  - gpsd: {}\nregoins:\n  - {identifier: x, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}\n", ":3:1: regoins: unknown key 'regoins'"),
        ("sources:\n  - gpsd: {hots: 127.0.0.1}\n", ":2:12: sources[0].gpsd.hots: unknown key 'hots' (known keys here: host, port)"),
        ("sources:\n  - gpsd: {}\nhooks: {onEnter: [], timeot: 3}\n", "hooks.timeot: unknown key"),
        // Duplicate region identifiers.
        ("sources:\n  - gpsd: {}\nregions:\n  - {identifier: a, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}\n  - {identifier: a, latitude: 1, longitude: 2, radius: 100}\n",
         "regions[1].identifier 'a' is already used by regions[0]"),
        // Identifiers a new region may not have: a control character (a newline forged log lines).
        ("sources:\n  - gpsd: {}\nregions:\n  - {identifier: \"a\\nb\", uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}\n",
         "regions[0]: a region identifier must not contain a control character (U+000A at character 1)"),
        ("sources:\n  - gpsd: {}\nregions:\n  - {identifier: \"lobby \", uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}\n",
         "regions[0]: a region identifier must not end with white space or an invisible character: 'lobby ' looks like 'lobby'"),
        // Out-of-range numbers name the field and where it is.
        ("sources:\n  - gpsd: {port: 70000}\n", ":2:12: sources[0].gpsd.port"),
        // A webhook's event types: only those the daemon logs (a typo delivered nothing, silently).
        ("sources:\n  - gpsd: {}\nhooks: {webhooks: [{url: \"http://127.0.0.1:9/x\", events: [didEnterRgion]}]}\n",
         "hooks.webhooks[0].events[0]: 'didEnterRgion' is not an event type the daemon logs"),
        ("sources:\n  - gpsd: {}\nhooks: {webhooks: [{url: \"http://127.0.0.1:9/x\", events: [didEnterRegion, didRangeBeacons]}]}\n",
         "hooks.webhooks[0].events[1]: 'didRangeBeacons' is not an event type the daemon logs (ranging is logged as rangedBeaconCountChanged"),
        ("sources:\n  - gpsd: {}\nhooks: {webhooks: [{url: \"http://127.0.0.1:9/x\", events: []}]}\n",
         "hooks.webhooks[0].events is empty"),
        // gpsd settings that can never connect (retried for ever before).
        ("sources:\n  - gpsd: {port: 0}\n", "sources[0].gpsd.port 0 is not a port"),
        ("sources:\n  - gpsd: {host: \"\", port: 2947}\n", "sources[0].gpsd.host must not be empty"),
        ("sources:\n  - gpsd: {}\nhooks: {timeout: 1e300}\n", "hooks.timeout 1e+300 must be within 0.1...3600 seconds"),
        // YAML syntax errors with line and column; duplicate keys.
        ("sources:\n  - gpsd: {}\nprofile: [responsive\n", ":4:1: not valid YAML"),
        ("sources:\n  - gpsd: {}\nprofile: responsive\nprofile: altbeacon\n", "duplicate key(s) 'profile'"),
        ("sources:\n  - gpsd: {port: 70000}\n", "sources[0].gpsd.port"),
        ("profile: fast\nsources:\n  - gpsd: {}\n", "profile 'fast' is not one of corelocation, altbeacon, responsive"),
        ("sources:\n  - gpsd: {}\nregions:\n  - {identifier: x}\n", "regions[0]:"),
        ("sources:\n  - gpsd: {}\nhooks: {onEnter: [], onExit: [], webhooks: [{url: 'ftp://x'}]}\n", "hooks.webhooks[0].url: 'ftp://x' is not an http(s) URL"),
        ("sources:\n  - gpsd: {}\nhooks: {webhooks: [{url: 'http://'}]}\n", "hooks.webhooks[0].url: 'http://' names no host"),
        // A circle larger than the profile monitors: refused at start, as the API refuses it (it only failed in the log).
        ("sources:\n  - gpsd: {}\nregions:\n  - {identifier: big, latitude: 1, longitude: 2, radius: 5e7}\n",
         "regions[0]: region 'big': radius 50000000 m exceeds the profile's maximumRegionMonitoringDistance"),
        ("sources: [\n", "not valid YAML"),
        ("sources:\n  - hci: {device: hci0, layouts: ['m:2-3=beac']}\n", "sources[0].hci"),
        ("sources:\n  - hci: {device: hci0, layouts: ['m:2-3=beac,i:4-7', 'zigbee:m:2-3=beac,i:4-7']}\n", "layouts[1]: beacon layout 'zigbee:m:2-3=beac,i:4-7': 'zigbee' is not a format"),
        ("sources:\n  - hci: {device: hci0, layouts: [{layout: 'm:2-3=beac,i:4-7', format: ibeacon}]}\n", "layouts[0]: beacon layout 'm:2-3=beac,i:4-7' cannot be ibeacon"),
        ("sources:\n  - hci: {device: hci0, layouts: [{layout: 'altbeacon:m:2-3=beac,i:4-19,i:20-21,i:22-23', format: ibeacon}]}\n", "format ibeacon and the prefix altbeacon disagree"),
        ("sources:\n  - hci: {device: hci0, layouts: [{layout: 'm:2-3=beac,i:4-19,i:20-21,i:22-23', format: zigbee}]}\n", "sources[0].hci.layouts[0].format"),
        ("sources:\n  - hci: {device: hci0, layouts: [{layot: 'm:2-3=beac,i:4-19,i:20-21,i:22-23'}]}\n", "missing field 'layout' at sources[0].hci.layouts[0]"),
        ("sources:\n  - hci: {device: hci0, layouts: [{layout: 'm:2-3=beac,i:4-19,i:20-21,i:22-23', fromat: ibeacon}]}\n", "sources[0].hci.layouts[0].fromat: unknown key 'fromat' (known keys here: format, layout)"),
        ("sources:\n  - gpsd: {}\nregions:\n  - {identifier: x, format: eddystone-uid, namespace: 8b0c}\n", "not 20 hex digits"),
        ("sources:\n  - gpsd: {}\nregions:\n  - {identifier: x, format: zigbee, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}\n", "format 'zigbee'"),
        // A region with a format is a beacon region: without uuid it must not become a circle.
        ("sources:\n  - gpsd: {}\nregions:\n  - {identifier: x, format: altbeacon, latitude: 52.5, longitude: 13.4, radius: 100}\n",
         "regions[0]: region 'x': format altbeacon needs uuid (id1); a circular region (latitude/longitude/radius) takes no format"),
        ("sources:\n  - gpsd: {}\nregions:\n  - {identifier: a, latitude: 52.5, longitude: 13.4, radius: 100}\n  - {identifier: b, format: ibeacon, latitude: 52.5, longitude: 13.4, radius: 100}\n",
         "regions[1]: region 'b': format ibeacon needs uuid;"),
        ("sources:\n  - gpsd: {}\nregions:\n  - {identifier: x, format: eddystone-uid, latitude: 52.5, longitude: 13.4, radius: 100}\n",
         "regions[0]: region 'x': an eddystone-uid region takes namespace (and instance) only"),
        ("sources:\n  - gpsd: {}\nretention: {}\n", "retention: give maxAgeDays, maxEvents or both"),
        ("sources:\n  - gpsd: {}\nretention: {maxAgeDays: 0}\n", "retention: maxAgeDays 0.0 must be more than 0"),
        ("sources:\n  - gpsd: {}\nretention: {maxAgeDays: .nan}\n", "retention: maxAgeDays nan must be"),
        ("sources:\n  - gpsd: {}\nretention: {maxAgeDays: 40000}\n", "at most 36500"),
        ("sources:\n  - gpsd: {}\nretention: {maxEvents: 0}\n", "retention: maxEvents 0 must be within 1...2147483647"),
        ("sources:\n  - gpsd: {}\nretention: {maxEvents: 10, maxAge: 3}\n", "maxAge"),
        // Named values and types in words, not Swift's ("Cannot initialize SightingMessageFormat
        // from invalid String value espresence", "expected UInt16 — … found Scalar instead").
        ("mqtt: {url: 'mqtt://127.0.0.1:1883'}\nsources:\n  - mqtt: {format: espresence}\n", ":3:12: sources[0].mqtt.format: 'espresence' is not one of espresense, theengs, regionkit"),
        ("mqtt: {url: 'mqtt://127.0.0.1:1883'}\nhomeAssistant: {discovery: true, beacons: some}\nsources:\n  - mqtt: {format: espresense}\n",
         "homeAssistant.beacons: 'some' is not one of all, regions"),
        ("mqtt: {url: 'mqtt://127.0.0.1:1883', retainDepartures: some}\nsources:\n  - mqtt: {format: espresense}\n", "mqtt.retainDepartures: 'some' is not one of"),
        ("sources:\n  - gpsd: {}\nregions:\n  - {identifier: x, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 70000}\n", "regions[0].major: expected a whole number within 0...65535"),
        ("sources:\n  - gpsd: {port: [1]}\n", "sources[0].gpsd.port: expected a single value, found a list"),
        ("sources: {gpsd: {}}\n", "sources: expected a list"),
        ("", "the file is empty"),
        ("profile: fast\nsources:\n  - gpsd: {}\n", "or the experimental periodic and evidence, the reference cautiousprior"),
    ])
    func errors(text: String, expected: String) throws {
        let error = #expect(throws: RegionKitError.self) { try ServiceConfiguration.decode(text, path: Self.path) }
        #expect(error?.message.hasPrefix("\(Self.path):") == true, "\(String(describing: error))")
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
    }

    @Test("An unreadable file is named, with why: missing, a directory")
    func unreadable() {
        let error = #expect(throws: RegionKitError.self) { try ServiceConfiguration.load("/nonexistent/regionkit.yaml") }
        #expect(error?.message == "/nonexistent/regionkit.yaml: cannot read the configuration file: no such file")
        let directory = #expect(throws: RegionKitError.self) { try ServiceConfiguration.load(TestScratch.directory.path) }
        #expect(directory?.message == "\(TestScratch.directory.path): cannot read the configuration file: it is a directory")
    }

    @Test("Initial availability: simulations and files start authorized (and keep their kinds available), devices alone start undetermined", arguments: [
        ([ServiceSource.gateway(.init(file: "x"))], [RegionKind.beacon: AuthorizationStatus.authorized]),
        ([.hci(.init(device: "hci0")), .gateway(.init(file: "x"))], [.beacon: .authorized]),
        ([.gateway(.init(file: "x")), .hci(.init(device: "hci0"))], [.beacon: .authorized]),
        ([.hci(.init(device: "hci0"))], [.beacon: .notDetermined]),
        ([.gpsd(.init())], [.circular: .notDetermined]),
        // The museum walk has no map path; geofence-walk does.
        ([.simulator(.init(scenario: "museum"))], [.beacon: .authorized]),
        ([.simulator(.init(scenario: "geofence-walk")), .gpsd(.init())], [.beacon: .authorized, .circular: .authorized]),
        ([.gpsd(.init()), .simulator(.init(scenario: "museum"))], [.beacon: .authorized, .circular: .notDetermined]),
        ([.simulator(.init(scenario: "geofence-walk"))], [.beacon: .authorized, .circular: .authorized]),
    ])
    func initialStatuses(sources: [ServiceSource], expected: [RegionKind: AuthorizationStatus]) {
        #expect(ServiceConfiguration(sources: sources).initialSourceStatuses == expected)
    }
}
