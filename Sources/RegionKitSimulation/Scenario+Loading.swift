import Foundation
import RegionKit

extension Scenario {
    /// Decodes and validates a scenario from JSON; errors name the file, the field path and why.
    ///
    /// ```swift
    /// let scenario = try Scenario.load(from: URL(fileURLWithPath: "hall.json"))
    /// ```
    public static func decode(_ data: Data, source: String) throws -> Scenario {
        let scenario: Scenario
        do {
            scenario = try StrictKeys.decode(Scenario.self) { try JSONDecoder().decode($0, from: data) }
        } catch let error as DecodingError {
            throw RegionKitError(.malformedInput, describe(error, in: data, source: source))
        } catch {
            throw RegionKitError(.malformedInput, "\(source): not valid JSON", cause: error)
        }
        if let duplicate = JSONDuplicateKey.first(in: data) { throw RegionKitError(.malformedInput, "\(source):\(duplicate)") }
        try scenario.validate(source: source)
        return scenario
    }

    public static func load(from url: URL) throws -> Scenario {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw RegionKitError(.malformedInput, "\(url.path): cannot read the scenario file", cause: error)
        }
        return try decode(data, source: url.path)
    }

    /// The scenario as pretty-printed JSON (the file format).
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// The longest scenario: 7 days of virtual time.
    public static let maximumDuration: Double = 604_800
    /// The largest number of world items (advertisements heard, fixes, actions) a scenario may
    /// generate: its timeline is built in memory.
    public static let maximumTimelineItems = 5_000_000
    /// Bounds on list sizes and coordinates (metres on the local plane).
    public static let maximumBeacons = 10_000
    public static let maximumWaypoints = 1_000_000
    public static let maximumActions = 100_000
    public static let maximumWindows = 10_000
    public static let maximumCoordinate: Double = 10_000_000
    /// The shortest interval between location fixes (100 Hz).
    public static let minimumFixInterval: Double = 0.01

    /// Checks every value a decoder cannot: times, positions, regions, references, and the bounds
    /// that keep a run finite (``maximumDuration``, ``maximumTimelineItems`` and the list limits).
    public func validate(source: String) throws {
        func bad(_ message: String) -> RegionKitError { RegionKitError(.malformedInput, "\(source): \(message)") }
        guard duration.isFinite, duration > 0 else { throw bad("duration \(duration) must be > 0 seconds") }
        guard duration <= Self.maximumDuration else { throw bad("duration \(duration) exceeds the maximum \(Int(Self.maximumDuration)) seconds (7 days)") }
        guard beacons.count <= Self.maximumBeacons else { throw bad("beacons: \(beacons.count) beacons exceed the maximum \(Self.maximumBeacons)") }
        guard path.count <= Self.maximumWaypoints else { throw bad("path: \(path.count) waypoints exceed the maximum \(Self.maximumWaypoints)") }
        guard (actions ?? []).count <= Self.maximumActions else { throw bad("actions: \((actions ?? []).count) actions exceed the maximum \(Self.maximumActions)") }
        if let profile, MonitoringProfile.named(profile) == nil {
            throw bad("profile '\(profile)' is not one of \(MonitoringProfile.namesDescription)")
        }
        try radio?.validate("\(source): radio")
        guard !path.isEmpty else { throw bad("path needs at least one waypoint") }
        for (index, point) in path.enumerated() {
            guard point.t.isFinite, point.x.isFinite, point.y.isFinite else { throw bad("path[\(index)] has a non-finite value") }
            guard abs(point.x) <= Self.maximumCoordinate, abs(point.y) <= Self.maximumCoordinate else {
                throw bad("path[\(index)] position (\(point.x), \(point.y)) is beyond ±\(Int(Self.maximumCoordinate)) m")
            }
            if index > 0, point.t < path[index - 1].t { throw bad("path[\(index)].t \(point.t) is earlier than path[\(index - 1)].t") }
        }
        for (index, beacon) in beacons.enumerated() {
            guard UUID(flexibleString: beacon.uuid) != nil else { throw bad("beacons[\(index)].uuid '\(beacon.uuid)' is not a UUID") }
            guard beacon.x.isFinite, beacon.y.isFinite else { throw bad("beacons[\(index)] position is not finite") }
            guard abs(beacon.x) <= Self.maximumCoordinate, abs(beacon.y) <= Self.maximumCoordinate else {
                throw bad("beacons[\(index)] position (\(beacon.x), \(beacon.y)) is beyond ±\(Int(Self.maximumCoordinate)) m")
            }
            guard (beacon.on ?? []).count <= Self.maximumWindows else {
                throw bad("beacons[\(index)].on: \((beacon.on ?? []).count) windows exceed the maximum \(Self.maximumWindows)")
            }
            if let interval = beacon.advertisingInterval, !(interval.isFinite && interval >= 0.02) {
                throw bad("beacons[\(index)].advertisingInterval \(interval) must be >= 0.02 s (BLE allows 20 ms at the fastest)")
            }
            if let power = beacon.measuredPower, !(-127...20).contains(power) {
                throw bad("beacons[\(index)].measuredPower \(power) must be within -127...20 dBm")
            }
            for (w, window) in (beacon.on ?? []).enumerated() where !(window.from.isFinite && window.to.isFinite && window.from <= window.to) {
                throw bad("beacons[\(index)].on[\(w)] must have from <= to")
            }
        }
        var identifiers = Set<String>()
        for (index, spec) in regions.enumerated() {
            do { _ = try spec.region() } catch let error as RegionKitError { throw bad("regions[\(index)]: \(error.message)") }
            guard identifiers.insert(spec.identifier).inserted else { throw bad("regions[\(index)]: identifier '\(spec.identifier)' is used twice") }
            if spec.latitude != nil && geo == nil { throw bad("regions[\(index)] is circular but the scenario has no geo settings (origin and fixes)") }
        }
        for id in monitorAtStart ?? [] where !identifiers.contains(id) { throw bad("monitorAtStart names unknown region '\(id)'") }
        for (index, action) in (actions ?? []).enumerated() {
            guard action.at.isFinite, action.at >= 0 else { throw bad("actions[\(index)].at must be >= 0") }
            switch action.action {
            case .startMonitoring, .stopMonitoring, .requestState, .startRanging, .stopRanging:
                guard let id = action.region else { throw bad("actions[\(index)] (\(action.action.rawValue)) needs a region") }
                guard identifiers.contains(id) else { throw bad("actions[\(index)] names unknown region '\(id)'") }
            default:
                break
            }
        }
        if let geo {
            guard (-90...90).contains(geo.latitude), (-180...180).contains(geo.longitude) else { throw bad("geo origin is outside valid coordinates") }
            if let interval = geo.fixInterval, !(interval.isFinite && interval >= Self.minimumFixInterval) {
                throw bad("geo.fixInterval \(interval) must be >= \(Self.minimumFixInterval) seconds")
            }
            if let accuracy = geo.horizontalAccuracy, !(accuracy.isFinite && (0...10_000).contains(accuracy)) {
                throw bad("geo.horizontalAccuracy \(accuracy) must be within 0...10000 m")
            }
        }
        // The timeline is built in memory: bound the items it would hold.
        var items = Double((actions ?? []).count)
        for beacon in beacons { items += duration / (beacon.advertisingInterval ?? 0.1) }
        if let geo { items += duration / (geo.fixInterval ?? 1) }
        guard items <= Double(Self.maximumTimelineItems) else {
            throw bad("the scenario would generate about \(Int(saturating: items)) advertisements and fixes (duration × beacons / advertisingInterval + duration / geo.fixInterval): more than the maximum \(Self.maximumTimelineItems); shorten duration or lengthen the intervals")
        }
    }

    /// The message for `error`, decoding the file `source`: ``describe(_:choices:)`` after the
    /// file's name; when Foundation's decoder calls the text "not valid JSON" (it names no place),
    /// the line and column where the syntax breaks (``JSONSyntaxError``); and when it calls valid
    /// JSON "not valid JSON" at the top level (what it says, on Linux, of a number that does not
    /// fit its field: `"major": 70000`, `"seed": -1`), the field and the value: the whole numbers of
    /// scenarios and region files are checked in `data` for the range of their type.
    ///
    /// ```swift
    /// Scenario.describe(error, in: data, source: "s.json")   // "s.json: beacons[0].major: 70000 is not a whole number within 0...65535"
    /// Scenario.describe(error, in: data, source: "s.json")   // "s.json:3:16: expected ',' or '}', found ']'"
    /// ```
    public static func describe(_ error: DecodingError, in data: Data, source: String) -> String {
        guard case .dataCorrupted(let context) = error, context.codingPath.isEmpty else { return "\(source): \(describe(error))" }
        if let syntax = JSONSyntaxError.first(in: data) { return "\(source):\(syntax)" }
        guard let tree = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
              let problem = numberProblem(in: tree, path: "") else { return "\(source): \(describe(error))" }
        return "\(source): \(problem)"
    }

    /// The whole-number fields of scenarios and region files: the values their type holds, and how
    /// to say it (the bounds of the 64-bit types are the nearest Doubles inside them).
    private static let wholeNumberFields: [String: (range: ClosedRange<Double>, text: String)] = [
        "major": (0...65535, "0...65535"), "minor": (0...65535, "0...65535"),
        "seed": (0...18_446_744_073_709_549_568, "0...18446744073709551615"),
        "measuredPower": (-9_223_372_036_854_775_808...9_223_372_036_854_774_784, "an Int's range"),
    ]

    /// The first whole-number field of `tree` whose value its type cannot hold (a boolean there
    /// is a type mismatch, which the decoder reports with its path).
    private static func numberProblem(in tree: Any, path: String) -> String? {
        if let object = tree as? [String: Any] {
            for key in object.keys.sorted() {
                let here = path.isEmpty ? key : "\(path).\(key)"
                if let field = wholeNumberFields[key], let number = object[key] as? NSNumber {
                    let value = number.doubleValue
                    if !(value.rounded() == value && field.range.contains(value)) {
                        return "\(here): \(number) is not a whole number within \(field.text)"
                    }
                }
                if let problem = numberProblem(in: object[key]!, path: here) { return problem }
            }
        } else if let array = tree as? [Any] {
            for (index, element) in array.enumerated() {
                if let problem = numberProblem(in: element, path: "\(path)[\(index)]") { return problem }
            }
        }
        return nil
    }

    /// A decoding error as a user reads it: the field's path, what it takes in words (not Swift's
    /// type names), and for a name it does not know, the names it does when `choices` has them
    /// (keyed by the type's name, as the decoder's message gives it).
    ///
    /// ```swift
    /// Scenario.describe(error, choices: ["SightingMessageFormat": ["espresense", "theengs"]])
    /// // "sources[0].mqtt.format: 'espresence' is not one of espresense, theengs"
    /// ```
    public static func describe(_ error: DecodingError, choices: [String: [String]] = [:]) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let text = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return text.isEmpty ? "top level" : String(text.drop(while: { $0 == "." }))
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing field '\(key.stringValue)' at \(path(context))"
        case .typeMismatch(let type, let context):
            // YAMLDecoder's own words name its node kinds ("found Scalar"), and an empty file is a
            // "Node" where the mapping should be.
            let found = context.debugDescription.range(of: "but found ").map { context.debugDescription[$0.upperBound...] }
            if context.codingPath.isEmpty, found?.hasPrefix("Node") == true { return "the file is empty" }
            return "\(path(context)): expected \(words(for: type))\(found.flatMap(foundWords).map { ", found \($0)" } ?? "")"
        case .valueNotFound(let type, let context):
            return "\(path(context)): expected \(words(for: type)), found null"
        case .dataCorrupted(let context):
            // A RawRepresentable's refusal: "Cannot initialize T from invalid String value v".
            let text = context.debugDescription
            if text.hasPrefix("Cannot initialize "), let from = text.range(of: " from invalid "), let value = text.range(of: " value ", range: from.upperBound..<text.endIndex) {
                let type = String(text[text.index(text.startIndex, offsetBy: 18)..<from.lowerBound])
                let given = String(text[value.upperBound...].prefix(80))
                return "\(path(context)): '\(given)' is not " + (choices[type].map { "one of \($0.joined(separator: ", "))" } ?? "a value this field takes")
            }
            return "\(path(context)): \(text)"
        @unknown default:
            return "\(error)"
        }
    }

    /// What a field of `type` takes, in words.
    static func words(for type: Any.Type) -> String {
        switch type {
        case is UInt8.Type: "a whole number within 0...255"
        case is UInt16.Type: "a whole number within 0...65535"
        case is Int8.Type: "a whole number within -128...127"
        case is Int16.Type: "a whole number within -32768...32767"
        case is UInt32.Type: "a whole number within 0...4294967295"
        case is Int32.Type: "a whole number within -2147483648...2147483647"
        case is Int.Type, is Int64.Type, is UInt.Type, is UInt64.Type: "a whole number"
        case is Double.Type, is Float.Type: "a number"
        case is Bool.Type: "true or false"
        case is String.Type: "text"
        default:
            // YAMLDecoder names its node kinds when a node is not of the kind asked for.
            switch String(describing: type) {
            case "Sequence": "a list"
            case "Scalar": "a single value"
            case "Mapping": "a mapping (key: value)"
            case let name where name.hasPrefix("Array<"): "a list"
            case let name where name.hasPrefix("Dictionary<") || name.hasPrefix("KeyedDecodingContainer"): "a mapping (key: value)"
            case let name: name
            }
        }
    }

    /// What the decoder found, in words: YAML's node kinds and JSON's words; nil when it says
    /// nothing a user can read.
    static func foundWords(_ found: Substring) -> String? {
        let kind = found.prefix { $0.isLetter }
        switch kind {
        case "Mapping": return "a mapping (key: value)"
        case "Sequence": return "a list"
        case "a", "an": return found.hasSuffix(" instead.") ? String(found.dropLast(" instead.".count)) : String(found)
        default: return nil
        }
    }
}
