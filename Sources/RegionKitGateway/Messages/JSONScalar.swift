import Foundation

/// One JSON value as a sighting message field sees it: a scalar, or "something else" (an object
/// or an array, skipped). Decoding a message's fields as `JSONScalar?` lets a wrong type become a
/// clear error naming the field instead of a generic decoding failure.
///
/// ```swift
/// struct Wire: Decodable { var rssi: JSONScalar? }
/// try JSONDecoder().decode(Wire.self, from: Data(#"{"rssi":"x"}"#.utf8)).rssi   // .string("x")
/// ```
enum JSONScalar: Decodable, Hashable, Sendable {
    case number(Double)
    case string(String)
    case bool(Bool)
    case null
    /// An object or an array.
    case composite

    init(from decoder: any Decoder) throws {
        if let container = try? decoder.singleValueContainer() {
            if container.decodeNil() { self = .null; return }
            if let value = try? container.decode(Bool.self) { self = .bool(value); return }
            if let value = try? container.decode(Double.self) { self = .number(value); return }
            if let value = try? container.decode(String.self) { self = .string(value); return }
        }
        if (try? decoder.unkeyedContainer()) != nil || (try? decoder.container(keyedBy: AnyKey.self)) != nil {
            self = .composite
            return
        }
        // Neither a scalar Foundation represents nor an object or array: a number beyond a Double
        // (`1e400`), out of every range. (It read as "an object or array, not a number".)
        self = .number(.infinity)
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    var typeName: String {
        switch self {
        case .number: "a number"
        case .string: "a string"
        case .bool: "a boolean"
        case .null: "null"
        case .composite: "an object or array"
        }
    }
}
