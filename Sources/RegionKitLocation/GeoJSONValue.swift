import Foundation

/// Any JSON value, as GeoJSON reading needs it: numbers, booleans and strings kept apart (so a
/// `"radius": "100"` is reported as a string, not silently converted).
///
/// ```swift
/// let value = try JSONDecoder().decode(GeoJSONValue.self, from: Data(#"{"radius":100}"#.utf8))
/// value["radius"]?.number   // 100
/// ```
enum GeoJSONValue: Decodable, Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([GeoJSONValue])
    case object([String: GeoJSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(Bool.self) { self = .bool(value); return }
        if let value = try? container.decode(Double.self) { self = .number(value); return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if let value = try? container.decode([GeoJSONValue].self) { self = .array(value); return }
        self = .object(try container.decode([String: GeoJSONValue].self))
    }

    subscript(key: String) -> GeoJSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var number: Double? { if case .number(let value) = self { value } else { nil } }
    var string: String? { if case .string(let value) = self { value } else { nil } }
    var array: [GeoJSONValue]? { if case .array(let value) = self { value } else { nil } }
    var isObject: Bool { if case .object = self { true } else { false } }

    /// The JSON type name, for messages ("got a string").
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
