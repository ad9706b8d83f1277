/// What may name a scanner (a room): the rule every way a name comes in is checked against —
/// MQTT sightings and statuses (ESPresense's room level, a Theengs gateway, a RegionKit batch's
/// `scanner`), `regionkit scan --scanner`, an MQTT source's `scanner:`.
///
/// A name is 1 to ``maximumBytes`` bytes of UTF-8 without a control character (C0, DEL, C1: a
/// newline in a name forged lines in the daemon's log, and MQTT brokers refuse topics holding one)
/// and without a Unicode noncharacter (U+FDD0–U+FDEF, U+FFFE, U+FFFF and their counterparts in
/// every plane: Mosquitto disconnects a client that publishes a topic holding one, and the hub
/// publishes a room's name as a topic level). Anything else is kept as it is: `Küche`, `キッチン`,
/// `Living Room`.
///
/// ```swift
/// ScannerName.problem("kitchen")      // nil
/// ScannerName.problem("a\nb")         // "contains the control character U+000A at character 1"
/// ScannerName.problem("")             // "is empty (1–128 bytes)"
/// ```
public enum ScannerName {
    /// The longest name, in UTF-8 bytes (as MQTT topic levels are counted).
    public static let maximumBytes = 128

    /// Why `name` cannot name a scanner, or nil when it can.
    public static func problem(_ name: String) -> String? {
        let bytes = name.utf8.count
        guard bytes > 0 else { return "is empty (1–\(maximumBytes) bytes)" }
        guard bytes <= maximumBytes else { return "is \(bytes) bytes long (1–\(maximumBytes))" }
        for (offset, scalar) in name.unicodeScalars.enumerated() {
            if scalar.properties.generalCategory == .control {
                return "contains the control character \(code(scalar)) at character \(offset)"
            }
            if scalar.properties.isNoncharacterCodePoint {
                return "contains the Unicode noncharacter \(code(scalar)) at character \(offset)"
            }
        }
        return nil
    }

    /// `U+000A`, `U+FDD0`, `U+10FFFF`.
    static func code(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
