import RegionKitConcurrency

/// Rejects unknown keys in any `Decodable` input (JSON, YAML): it decodes through a wrapper that
/// notes which keys each object holds and which ones the types asked for, and throws a
/// `DecodingError.dataCorrupted` whose coding path ends at the first key nothing asked for
/// (a typo such as `regoins:` is an error, not a silently ignored block).
///
/// ```swift
/// let scenario = try StrictKeys.decode(Scenario.self) { try JSONDecoder().decode($0, from: data) }
/// // DecodingError at "regoins": "unknown key 'regoins' (known keys here: beacons, duration, …)"
/// ```
public enum StrictKeys {
    /// Decodes `type` with `decode` (which decodes the wrapper type it is given with any decoder),
    /// then checks that every key of every object was asked for by the decoded types.
    public static func decode<T: Decodable>(_ type: T.Type, _ decode: (Checked<T>.Type) throws -> Checked<T>) throws -> T {
        let ledger = Ledger()
        let checked = try $ledger.withValue(ledger) { try decode(Checked<T>.self) }
        if let unknown = ledger.firstUnknown() {
            throw DecodingError.dataCorrupted(.init(codingPath: unknown.path + [AnyKey(unknown.key)],
                debugDescription: "unknown key '\(unknown.key)'" + (unknown.known.isEmpty ? "" : " (known keys here: \(unknown.known.joined(separator: ", ")))")))
        }
        return checked.value
    }

    /// The wrapper decoded in place of `T`: it decodes `T` through the key-noting decoder.
    public struct Checked<T: Decodable>: Decodable {
        public var value: T

        public init(from decoder: any Decoder) throws {
            guard let ledger = StrictKeys.ledger else {
                value = try T(from: decoder)
                return
            }
            value = try T(from: StrictDecoder(base: decoder, ledger: ledger))
        }
    }

    @TaskLocal static var ledger: Ledger?

    /// Every keyed container seen: its path, the keys it holds and the keys asked for.
    final class Ledger: Sendable {
        struct Entry {
            var path: [any CodingKey]
            var present: Set<String>
            var requested: Set<String> = []
        }
        private let entries = LockedBox<[String: Entry]>([:])
        private let order = LockedBox<[String]>([])

        static func name(_ path: [any CodingKey]) -> String {
            path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }

        func present(_ path: [any CodingKey], keys: [String]) {
            let name = Self.name(path)
            let isNew = entries.withLock { entries -> Bool in
                if entries[name] != nil {
                    entries[name]!.present.formUnion(keys)
                    return false
                }
                entries[name] = Entry(path: path, present: Set(keys))
                return true
            }
            if isNew { order.withLock { $0.append(name) } }
        }

        func requested(_ path: [any CodingKey], _ key: String) {
            let name = Self.name(path)
            entries.withLock { entries in
                if entries[name] == nil { entries[name] = Entry(path: path, present: []) }
                entries[name]!.requested.insert(key)
            }
        }

        func firstUnknown() -> (path: [any CodingKey], key: String, known: [String])? {
            let names = order.withLock { $0 }
            return entries.withLock { entries in
                for name in names {
                    guard let entry = entries[name] else { continue }
                    if let key = entry.present.subtracting(entry.requested).sorted().first {
                        return (entry.path, key, entry.requested.sorted())
                    }
                }
                return nil
            }
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(_ string: String) { stringValue = string }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { stringValue = "\(intValue)"; self.intValue = intValue }
    }

    /// Hands a nested value's decoder back to the checking decoder.
    struct Hop<U: Decodable>: Decodable {
        var value: U
        init(from decoder: any Decoder) throws {
            guard let ledger = StrictKeys.ledger else {
                value = try U(from: decoder)
                return
            }
            value = try U(from: StrictDecoder(base: decoder, ledger: ledger))
        }
    }

    struct StrictDecoder: Decoder {
        let base: any Decoder
        let ledger: Ledger
        var codingPath: [any CodingKey] { base.codingPath }
        var userInfo: [CodingUserInfoKey: Any] { base.userInfo }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            let container = try base.container(keyedBy: type)
            let raw = try? base.container(keyedBy: AnyKey.self)
            ledger.present(codingPath, keys: raw?.allKeys.map(\.stringValue) ?? [])
            return KeyedDecodingContainer(StrictKeyed(base: container, ledger: ledger))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            StrictUnkeyed(base: try base.unkeyedContainer(), ledger: ledger)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            StrictSingle(base: try base.singleValueContainer(), ledger: ledger)
        }
    }

    /// Scalars and strings decode directly; everything else hops back through the checking decoder.
    static func isScalar<U>(_ type: U.Type) -> Bool {
        type == String.self || type == Bool.self || type == Double.self || type == Float.self || type == Int.self
            || type == Int8.self || type == Int16.self || type == Int32.self || type == Int64.self || type == UInt.self
            || type == UInt8.self || type == UInt16.self || type == UInt32.self || type == UInt64.self
    }

    struct StrictKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let base: KeyedDecodingContainer<Key>
        let ledger: Ledger
        var codingPath: [any CodingKey] { base.codingPath }
        var allKeys: [Key] { base.allKeys }

        func note(_ key: Key) { ledger.requested(codingPath, key.stringValue) }

        func contains(_ key: Key) -> Bool { note(key); return base.contains(key) }
        func decodeNil(forKey key: Key) throws -> Bool { note(key); return try base.decodeNil(forKey: key) }

        func decode<U: Decodable>(_ type: U.Type, forKey key: Key) throws -> U {
            note(key)
            if StrictKeys.isScalar(type) { return try base.decode(type, forKey: key) }
            return try base.decode(Hop<U>.self, forKey: key).value
        }

        func decodeIfPresent<U: Decodable>(_ type: U.Type, forKey key: Key) throws -> U? {
            note(key)
            if StrictKeys.isScalar(type) { return try base.decodeIfPresent(type, forKey: key) }
            return try base.decodeIfPresent(Hop<U>.self, forKey: key)?.value
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            note(key)
            return try StrictDecoder(base: try base.superDecoder(forKey: key), ledger: ledger).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            note(key)
            return StrictUnkeyed(base: try base.nestedUnkeyedContainer(forKey: key), ledger: ledger)
        }

        func superDecoder() throws -> any Decoder { StrictDecoder(base: try base.superDecoder(), ledger: ledger) }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            note(key)
            return StrictDecoder(base: try base.superDecoder(forKey: key), ledger: ledger)
        }
    }

    struct StrictUnkeyed: UnkeyedDecodingContainer {
        var base: any UnkeyedDecodingContainer
        let ledger: Ledger
        var codingPath: [any CodingKey] { base.codingPath }
        var count: Int? { base.count }
        var isAtEnd: Bool { base.isAtEnd }
        var currentIndex: Int { base.currentIndex }

        mutating func decodeNil() throws -> Bool { try base.decodeNil() }

        mutating func decode<U: Decodable>(_ type: U.Type) throws -> U {
            if StrictKeys.isScalar(type) { return try base.decode(type) }
            return try base.decode(Hop<U>.self).value
        }

        mutating func decodeIfPresent<U: Decodable>(_ type: U.Type) throws -> U? {
            if StrictKeys.isScalar(type) { return try base.decodeIfPresent(type) }
            return try base.decodeIfPresent(Hop<U>.self)?.value
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            try StrictDecoder(base: try base.superDecoder(), ledger: ledger).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            StrictUnkeyed(base: try base.nestedUnkeyedContainer(), ledger: ledger)
        }

        mutating func superDecoder() throws -> any Decoder { StrictDecoder(base: try base.superDecoder(), ledger: ledger) }
    }

    struct StrictSingle: SingleValueDecodingContainer {
        let base: any SingleValueDecodingContainer
        let ledger: Ledger
        var codingPath: [any CodingKey] { base.codingPath }

        func decodeNil() -> Bool { base.decodeNil() }

        func decode<U: Decodable>(_ type: U.Type) throws -> U {
            if StrictKeys.isScalar(type) { return try base.decode(type) }
            return try base.decode(Hop<U>.self).value
        }
    }
}
