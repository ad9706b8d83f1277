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

    @Test("What Mosquitto refuses in a topic (it disconnects the client): control characters and noncharacters, named with their byte offset; other Unicode is fine")
    func characters() throws {
        try MQTTTopicFilter.validateTopicName("regionkit/home/mqtt_room/Küche")
        try MQTTTopicFilter.validateTopicName("espresense/rooms/キッチン/status")
        try MQTTTopicFilter.validateTopicName("emoji/☕️/\u{1F600}")
        // (Swift's literals refuse noncharacters: made from their code points.)
        func with(_ code: UInt32) -> String { "a" + String(Unicode.Scalar(code)!) }
        let bad = "a/bad" + String(Unicode.Scalar(0xFDD0)!) + "room"
        #expect(throws: MQTTError.invalidTopic(bad, reason: "contains the noncharacter U+FDD0 at byte 5")) {
            try MQTTTopicFilter.validateTopicName(bad)
        }
        #expect(throws: MQTTError.invalidTopic("ü\nx", reason: "contains the control character U+000A at byte 2")) {
            try MQTTTopicFilter.validateTopicName("ü\nx")
        }
        for bad in [0x7F, 0x85, 0x9F, 0x1, 0xFFFE, 0xFFFF, 0x1FFFF, 0x10FFFE, 0xFDEF].map(with) {
            #expect(throws: MQTTError.self, "\(bad.unicodeScalars.map { $0.value })") { try MQTTTopicFilter.validateTopicName(bad) }
            #expect(throws: MQTTError.self, "\(bad.unicodeScalars.map { $0.value })") { try MQTTTopicFilter.validateFilter(bad + "/#") }
        }
        #expect(MQTTTopicFilter.characterProblem("a\u{A0}b") == nil, "no-break space: a character like others")
    }
}
