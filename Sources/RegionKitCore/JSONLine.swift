/// A minimal ordered JSON object writer for one-object-per-line output, so that keys appear in a
/// fixed, readable order (`t`, `type`, `region`, ...) that `JSONEncoder` does not promise.
///
/// ```swift
/// var line = JSONLine()
/// line.add("t", 1.5)
/// line.add("type", "didEnterRegion")
/// line.text // {"t":1.5,"type":"didEnterRegion"}
/// ```
public struct JSONLine: Sendable {
    private var parts: [String] = []

    public init() {}

    public mutating func add(_ key: String, _ value: String) { parts.append("\(Self.quote(key)):\(Self.quote(value))") }
    public mutating func add(_ key: String, _ value: Double) { parts.append("\(Self.quote(key)):\(Self.number(value))") }
    /// A number rounded to `decimals`; a non-finite value is written as `fallback`.
    public mutating func add(_ key: String, _ value: Double, decimals: Int, fallback: Double = 0) {
        parts.append("\(Self.quote(key)):\(Self.number(value.isFinite ? value : fallback, decimals: decimals))")
    }
    public mutating func add(_ key: String, _ value: Int) { parts.append("\(Self.quote(key)):\(value)") }
    public mutating func add(_ key: String, _ value: Bool) { parts.append("\(Self.quote(key)):\(value)") }
    public mutating func add(_ key: String, object: JSONLine) { parts.append("\(Self.quote(key)):\(object.text)") }
    public mutating func add(_ key: String, array: [JSONLine]) {
        parts.append("\(Self.quote(key)):[\(array.map(\.text).joined(separator: ","))]")
    }
    public mutating func addRaw(_ key: String, json: String) { parts.append("\(Self.quote(key)):\(json)") }

    public var isEmpty: Bool { parts.isEmpty }
    public var text: String { "{\(parts.joined(separator: ","))}" }

    /// A JSON number rounded to 6 decimals; non-finite values become `null`.
    public static func number(_ value: Double, decimals: Int = 6) -> String {
        guard value.isFinite else { return "null" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int64(rounded)) }
        return "\(rounded)"
    }

    /// `text` as a JSON string literal: `"`, `\\` and control characters escaped, everything else
    /// as it is (UTF-8).
    ///
    /// ```swift
    /// JSONLine.quote("a \"b\"\n")   // "a \"b\"\n" with its quotes
    /// ```
    public static func quote(_ text: String) -> String {
        // Most strings need no escape (identifiers, types, room names): copied whole. The bytes
        // looked for are ASCII, which no multi-byte UTF-8 sequence contains. (Appending scalar
        // by scalar was 15 % of the MQTT hub's thread under a flood of new beacons: `perf`.)
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            return "\"" + text + "\""
        }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
