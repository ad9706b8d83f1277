/// MQTT 3.1.1 topic filters (§4.7): `/` separates levels, `+` matches exactly one level, `#` (last,
/// alone in its level) matches the parent level and any number of levels below it, and topics
/// starting with `$` are not matched by a filter starting with a wildcard.
///
/// ```swift
/// MQTTTopicFilter.matches(filter: "espresense/devices/+/+", topic: "espresense/devices/iBeacon:x/kitchen") // true
/// MQTTTopicFilter.matches(filter: "sport/#", topic: "sport")           // true
/// MQTTTopicFilter.matches(filter: "#", topic: "$SYS/broker/uptime")     // false
/// ```
public enum MQTTTopicFilter {
    private static let slash = UInt8(ascii: "/")
    private static let plus = UInt8(ascii: "+")
    private static let hash = UInt8(ascii: "#")

    /// Whether `topic` (a topic name) matches `filter`. Allocates nothing.
    public static func matches(filter: String, topic: String) -> Bool {
        var f = Substring(filter).utf8
        var t = Substring(topic).utf8
        if t.first == UInt8(ascii: "$"), let first = f.first, first == plus || first == hash { return false }
        while true {
            let fEnd = f.firstIndex(of: slash) ?? f.endIndex
            let fLevel = f[f.startIndex..<fEnd]
            if fLevel.count == 1, fLevel.first == hash { return true }
            let tEnd = t.firstIndex(of: slash) ?? t.endIndex
            let tLevel = t[t.startIndex..<tEnd]
            guard (fLevel.count == 1 && fLevel.first == plus) || fLevel.elementsEqual(tLevel) else { return false }
            let filterDone = fEnd == f.endIndex
            let topicDone = tEnd == t.endIndex
            if filterDone { return topicDone }
            let fRest = f[f.index(after: fEnd)...]
            if topicDone {
                // "a/#" also matches "a".
                return fRest.count == 1 && fRest.first == hash
            }
            f = fRest
            t = t[t.index(after: tEnd)...]
        }
    }

    /// Throws `MQTTError.invalidTopicFilter` unless `filter` is a valid subscription filter:
    /// non-empty, at most 65,535 UTF-8 bytes, no U+0000, `+` and `#` only as whole levels, `#` last.
    public static func validateFilter(_ filter: String) throws(MQTTError) {
        let bytes = filter.utf8
        guard !bytes.isEmpty else { throw .invalidTopicFilter(filter, reason: "empty") }
        guard bytes.count <= Int(UInt16.max) else { throw .invalidTopicFilter(filter, reason: "longer than 65535 bytes") }
        var levelStart = true
        var previous: UInt8 = 0
        var index = 0
        if let problem = characterProblem(filter) { throw .invalidTopicFilter(filter, reason: problem) }
        for byte in bytes {
            if previous == plus || previous == hash, byte != slash {
                throw .invalidTopicFilter(filter, reason: "wildcard not alone in its level at byte \(index - 1)")
            }
            if previous == hash { throw .invalidTopicFilter(filter, reason: "'#' is not the last level") }
            if byte == plus || byte == hash, !levelStart {
                throw .invalidTopicFilter(filter, reason: "wildcard not alone in its level at byte \(index)")
            }
            levelStart = byte == slash
            previous = byte
            index += 1
        }
    }

    /// Throws `MQTTError.invalidTopic` unless `topic` is a valid topic name to publish to:
    /// non-empty, at most 65,535 UTF-8 bytes, no wildcards, and none of the characters MQTT
    /// refuses or advises against (``characterProblem(_:)``).
    public static func validateTopicName(_ topic: String) throws(MQTTError) {
        let bytes = topic.utf8
        guard !bytes.isEmpty else { throw .invalidTopic(topic, reason: "empty") }
        guard bytes.count <= Int(UInt16.max) else { throw .invalidTopic(topic, reason: "longer than 65535 bytes") }
        if let problem = characterProblem(topic) { throw .invalidTopic(topic, reason: problem) }
        for (index, byte) in bytes.enumerated() {
            if byte == plus || byte == hash {
                throw .invalidTopic(topic, reason: "contains the wildcard '\(Character(Unicode.Scalar(byte)))' at byte \(index)")
            }
        }
    }

    /// The first character of `text` that MQTT strings must not (U+0000) or should not hold
    /// (MQTT 3.1.1 §1.5.3: the control characters U+0001–U+001F and U+007F–U+009F, and Unicode
    /// noncharacters), with its byte offset, or nil. Mosquitto enforces the "should not" too: a
    /// client whose PUBLISH or SUBSCRIBE holds one is disconnected as sending a malformed packet,
    /// so a topic holding one is refused here, before it reaches the connection.
    ///
    /// ```swift
    /// MQTTTopicFilter.characterProblem("home/kitchen")          // nil
    /// MQTTTopicFilter.characterProblem("home/bad\u{FDD0}room")  // "contains the noncharacter U+FDD0 at byte 8"
    /// ```
    public static func characterProblem(_ text: String) -> String? {
        // ASCII only (nearly every topic): the bytes are the characters.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return nil }
        func code(_ value: UInt32) -> String {
            let hex = String(value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        var offset = 0
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value == 0 { return "contains U+0000 at byte \(offset)" }
            if value < 0x20 || (0x7F...0x9F).contains(value) { return "contains the control character \(code(value)) at byte \(offset)" }
            if scalar.properties.isNoncharacterCodePoint { return "contains the noncharacter \(code(value)) at byte \(offset)" }
            offset += scalar.utf8.count
        }
        return nil
    }
}
