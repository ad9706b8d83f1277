import Testing
@testable import RegionKitMQTT

/// The topic-filter rules of MQTT 3.1.1 §4.7, with the specification's own examples.
@Suite("MQTT topic filters")
struct MQTTTopicFilterTests {
    @Test("matching: the spec's examples for #, + and $ topics",
          arguments: [
            ("sport/tennis/player1/#", "sport/tennis/player1", true),
            ("sport/tennis/player1/#", "sport/tennis/player1/ranking", true),
            ("sport/tennis/player1/#", "sport/tennis/player1/score/wimbledon", true),
            ("sport/#", "sport", true),
            ("#", "sport/tennis", true),
            ("sport/tennis/#", "sport/tennis", true),
            ("sport/tennis/+", "sport/tennis/player1", true),
            ("sport/tennis/+", "sport/tennis/player1/ranking", false),
            ("sport/+", "sport", false),
            ("sport/+", "sport/", true),
            ("+/+", "/finance", true),
            ("/+", "/finance", true),
            ("+", "/finance", false),
            ("+/tennis/#", "sport/tennis/x", true),
            ("#", "$SYS/broker", false),
            ("+/monitor/Clients", "$SYS/monitor/Clients", false),
            ("$SYS/#", "$SYS/monitor/Clients", true),
            ("$SYS/monitor/+", "$SYS/monitor/Clients", true),
            ("espresense/devices/+/+", "espresense/devices/iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2/kitchen", true),
            ("espresense/devices/+/+", "espresense/devices/x", false),
            ("a/b", "a/b", true),
            ("a/b", "a/B", false),
            ("a/b", "a/b/c", false),
            ("a/b/c", "a/b", false),
            ("ACCOUNTS", "Accounts", false),
            ("a/+/c", "a//c", true),
            ("home/TheengsGateway/BTtoMQTT/+", "home/TheengsGateway/BTtoMQTT/AABBCCDDEEFF", true),
          ])
    func matches(filter: String, topic: String, expected: Bool) {
        #expect(MQTTTopicFilter.matches(filter: filter, topic: topic) == expected, "\(filter) vs \(topic)")
    }

    @Test("filter validation: wildcards only as whole levels, # last",
          arguments: [
            ("#", true), ("+", true), ("sport/#", true), ("+/+/+", true), ("a//b", true), ("/", true),
            ("sport/tennis#", false), ("sport/tennis/#/ranking", false), ("sport+", false), ("+a", false),
            ("#/", false), ("", false), ("a\u{0}b", false),
          ])
    func validateFilter(filter: String, valid: Bool) {
        let accepted = (try? MQTTTopicFilter.validateFilter(filter)) != nil
        #expect(accepted == valid, "\(filter)")
    }

    @Test("topic names: no wildcards, not empty, no U+0000")
    func validateTopicName() throws {
        try MQTTTopicFilter.validateTopicName("regionkit/home/events")
        try MQTTTopicFilter.validateTopicName("/")
        #expect(throws: MQTTError.invalidTopic("a/+", reason: "contains the wildcard '+' at byte 2")) {
            try MQTTTopicFilter.validateTopicName("a/+")
        }
        #expect(throws: MQTTError.self) { try MQTTTopicFilter.validateTopicName("") }
        #expect(throws: MQTTError.self) { try MQTTTopicFilter.validateTopicName("a#") }
        #expect(throws: MQTTError.self) { try MQTTTopicFilter.validateTopicName("a\u{0}") }
        #expect(throws: MQTTError.self) { try MQTTTopicFilter.validateTopicName(String(repeating: "a", count: 65_536)) }
    }
}
