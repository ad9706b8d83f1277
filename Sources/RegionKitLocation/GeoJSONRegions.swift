import Foundation
import RegionKitCore

/// Circular regions to and from GeoJSON (RFC 7946) region files.
///
/// **Import.** A `FeatureCollection` (or a single `Feature`) whose features are:
/// - `Point` features with a `radius` property in metres (required, a finite number ≥ 0); the
///   identifier comes from `properties.identifier`, else the feature `id` (string or integer),
///   else `properties.name`; `properties.notifyOnEntry` / `notifyOnExit` are optional booleans
///   (default `true`). Coordinates are `[longitude, latitude]` (an altitude is ignored).
/// - `Polygon` features, only with ``Options/approximatePolygons``: each becomes the minimum
///   enclosing circle of its outer ring (see ``PolygonApproximation``), and is reported in
///   ``Document/approximations`` so the caller can say so. Without the option they are errors.
///
/// Every problem is collected, with the feature index and the reason, and thrown together as a
/// ``GeoJSONRegionsError``; nothing traps on bad input.
///
/// **Export** writes one `Point` feature per region with `identifier`, `radius`, `notifyOnEntry`
/// and `notifyOnExit` properties (and the identifier as the feature `id`), which imports back to
/// the same regions.
///
/// ```swift
/// let text = """
/// {"type":"FeatureCollection","features":[
///  {"type":"Feature","id":"gate","geometry":{"type":"Point","coordinates":[-0.1246,51.5007]},"properties":{"radius":100}}]}
/// """
/// let document = try GeoJSONRegions.decode(Data(text.utf8))
/// document.regions[0].identifier   // "gate"
/// let data = GeoJSONRegions.encode(document.regions)   // a FeatureCollection of Point features
/// ```
public enum GeoJSONRegions {
    /// What to accept besides Point features.
    public struct Options: Hashable, Sendable {
        /// Import Polygon features as their minimum enclosing circle (reported per feature).
        public var approximatePolygons: Bool

        public init(approximatePolygons: Bool = false) {
            self.approximatePolygons = approximatePolygons
        }
    }

    /// The regions of a file, in feature order, and the polygons that were approximated.
    public struct Document: Hashable, Sendable {
        public var regions: [CircularRegion]
        public var approximations: [PolygonApproximation]

        public init(regions: [CircularRegion], approximations: [PolygonApproximation] = []) {
            self.regions = regions
            self.approximations = approximations
        }
    }

    /// Reads a region file.
    public static func read(contentsOf url: URL, options: Options = Options()) throws(GeoJSONRegionsError) -> Document {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw GeoJSONRegionsError(problems: [.init(featureIndex: nil, code: .malformedJSON,
                                                       message: "cannot read the file: \(error.localizedDescription)")], path: url.path)
        }
        do {
            return try decode(data, options: options)
        } catch {
            throw GeoJSONRegionsError(problems: error.problems, path: url.path)
        }
    }

    /// Decodes a GeoJSON document into circular regions.
    public static func decode(_ data: Data, options: Options = Options()) throws(GeoJSONRegionsError) -> Document {
        let root: GeoJSONValue
        do {
            root = try JSONDecoder().decode(GeoJSONValue.self, from: data)
        } catch {
            let why = JSONSyntaxError.first(in: data).map(\.description) ?? describe(error)
            throw GeoJSONRegionsError(problems: [.init(featureIndex: nil, code: .malformedJSON, message: "not JSON: \(why)")])
        }
        if let duplicate = JSONDuplicateKey.first(in: data) {
            throw GeoJSONRegionsError(problems: [.init(featureIndex: nil, code: .malformedJSON, message: duplicate.description)])
        }
        let features: [GeoJSONValue]
        switch root["type"]?.string {
        case "FeatureCollection":
            guard let list = root["features"]?.array else {
                throw GeoJSONRegionsError(problems: [.init(featureIndex: nil, code: .notAFeatureCollection,
                                                           message: "a FeatureCollection needs a \"features\" array")])
            }
            features = list
        case "Feature":
            features = [root]
        case let other:
            let got = other.map { "type \"\($0)\"" } ?? (root.isObject ? "an object without a \"type\"" : root.typeName)
            throw GeoJSONRegionsError(problems: [.init(featureIndex: nil, code: .notAFeatureCollection,
                                                       message: "expected a FeatureCollection (or a Feature), got \(got)")])
        }
        var document = Document(regions: [])
        var problems: [GeoJSONRegionsError.Problem] = []
        var firstIndex: [String: Int] = [:]
        for (index, feature) in features.enumerated() {
            switch region(from: feature, index: index, options: options) {
            case .failure(let problem):
                problems.append(problem)
            case .success(let (region, approximation)):
                if let earlier = firstIndex[region.identifier] {
                    problems.append(.init(featureIndex: index, identifier: region.identifier, code: .duplicateIdentifier,
                                          message: "the identifier is already used by features[\(earlier)]"))
                    continue
                }
                firstIndex[region.identifier] = index
                document.regions.append(region)
                if let approximation { document.approximations.append(approximation) }
            }
        }
        if !problems.isEmpty { throw GeoJSONRegionsError(problems: problems) }
        return document
    }

    /// Encodes regions as a FeatureCollection of Point features with a `radius` property, one
    /// feature per line (UTF-8, ending with a newline).
    public static func encode(_ regions: [CircularRegion]) -> Data {
        var lines: [String] = []
        for region in regions {
            let id = JSONLine.quote(region.identifier)
            lines.append(#"{"type":"Feature","id":\#(id),"geometry":{"type":"Point","coordinates":[\#(number(region.longitude)),\#(number(region.latitude))]},"#
                + #""properties":{"identifier":\#(id),"radius":\#(number(region.radius)),"notifyOnEntry":\#(region.notifyOnEntry),"notifyOnExit":\#(region.notifyOnExit)}}"#)
        }
        let body = lines.isEmpty ? "" : "\n" + lines.joined(separator: ",\n") + "\n"
        return Data((#"{"type":"FeatureCollection","features":["# + body + "]}\n").utf8)
    }

    // MARK: - Features

    typealias FeatureResult = Result<(CircularRegion, PolygonApproximation?), GeoJSONRegionsError.Problem>

    static func region(from feature: GeoJSONValue, index: Int, options: Options) -> FeatureResult {
        func problem(_ code: GeoJSONRegionsError.Code, _ message: String, _ identifier: String? = nil) -> FeatureResult {
            .failure(.init(featureIndex: index, identifier: identifier, code: code, message: message))
        }
        guard feature.isObject else { return problem(.malformedFeature, "expected a Feature object, got \(feature.typeName)") }
        guard feature["type"]?.string == "Feature" else {
            return problem(.malformedFeature, "\"type\" must be \"Feature\", got \(feature["type"].map(describe) ?? "nothing")")
        }
        let properties = feature["properties"] ?? .null
        guard properties.isObject || properties == .null else {
            return problem(.malformedFeature, "\"properties\" must be an object or null, got \(properties.typeName)")
        }
        // Identifier: properties.identifier, then the feature id, then properties.name.
        var identifier: String?
        if let value = properties["identifier"] {
            guard let text = value.string else { return problem(.missingIdentifier, "\"properties.identifier\" must be a string, got \(value.typeName)") }
            identifier = text
        } else if let value = feature["id"] {
            switch value {
            case .string(let text): identifier = text
            case .number(let n) where n.isFinite && n == n.rounded() && abs(n) < 1e15: identifier = String(Int64(n))
            default: return problem(.missingIdentifier, "the feature \"id\" must be a string or an integer, got \(describe(value))")
            }
        } else if let value = properties["name"] {
            guard let text = value.string else { return problem(.missingIdentifier, "\"properties.name\" must be a string, got \(value.typeName)") }
            identifier = text
        }
        guard let identifier else {
            return problem(.missingIdentifier, "no identifier: set \"properties.identifier\", the feature \"id\" or \"properties.name\"")
        }
        var flags: [Bool] = []
        for key in ["notifyOnEntry", "notifyOnExit"] {
            switch properties[key] {
            case nil, .null?: flags.append(true)
            case .bool(let flag)?: flags.append(flag)
            case let other?: return problem(.badProperty, "\"properties.\(key)\" must be true or false, got \(describe(other))", identifier)
            }
        }
        guard let geometry = feature["geometry"], geometry.isObject else {
            return problem(.malformedFeature, "the feature has no geometry object", identifier)
        }
        let kind = geometry["type"]?.string ?? "(no type)"
        let centre: (latitude: Double, longitude: Double)
        let radius: Double
        var approximation: PolygonApproximation?
        switch kind {
        case "Point":
            switch position(geometry["coordinates"], what: "Point coordinates") {
            case .failure(let failure): return problem(.badCoordinates, failure.message, identifier)
            case .success(let p): centre = p
            }
            guard let value = properties["radius"], value != .null else {
                return problem(.missingRadius, "Point feature needs a numeric \"radius\" property in metres", identifier)
            }
            guard let r = value.number else { return problem(.badRadius, "\"radius\" must be a number of metres, got \(describe(value))", identifier) }
            guard r.isFinite, r >= 0 else { return problem(.badRadius, "\"radius\" must be a finite number of metres ≥ 0, got \(r)", identifier) }
            radius = r
        case "Polygon":
            guard options.approximatePolygons else {
                return problem(.unsupportedGeometry,
                               "Polygon features are imported only when approximating them by their enclosing circle is enabled (approximatePolygons)", identifier)
            }
            guard let rings = geometry["coordinates"]?.array, let outer = rings.first?.array else {
                return problem(.badCoordinates, "Polygon coordinates must be an array of rings, each an array of [longitude, latitude] positions", identifier)
            }
            var vertices: [(latitude: Double, longitude: Double)] = []
            for (i, value) in outer.enumerated() {
                switch position(value, what: "outer ring position \(i)") {
                case .failure(let failure): return problem(.badCoordinates, failure.message, identifier)
                case .success(let p): vertices.append(p)
                }
            }
            if vertices.count > 1, let first = vertices.first, let last = vertices.last, first == last { vertices.removeLast() }   // closed ring
            // A set: comparing every pair took 23 s for a ring of 20,000 vertices.
            let distinct = Set(vertices.map { DistinctPosition(latitude: $0.latitude, longitude: $0.longitude) })
            guard distinct.count >= 3 else {
                return problem(.badCoordinates, "the outer ring has \(distinct.count) distinct positions; a Polygon needs at least 3", identifier)
            }
            guard let circle = EnclosingCircle(points: vertices) else {
                return problem(.badCoordinates, "no enclosing circle for the outer ring", identifier)
            }
            centre = (circle.latitude, circle.longitude)
            radius = circle.radius
            approximation = PolygonApproximation(featureIndex: index, identifier: identifier, vertexCount: distinct.count,
                                                 latitude: circle.latitude, longitude: circle.longitude, radius: circle.radius,
                                                 polygonArea: circle.polygonArea)
        default:
            let supported = options.approximatePolygons ? "Point (with a radius) or Polygon" : "Point (with a radius); Polygon with approximatePolygons"
            return problem(.unsupportedGeometry, "geometry \(kind) is not supported: use \(supported)", identifier)
        }
        do {
            let region = try CircularRegion(identifier: identifier, latitude: centre.latitude, longitude: centre.longitude,
                                            radius: radius, notifyOnEntry: flags[0], notifyOnExit: flags[1])
            return .success((region, approximation))
        } catch {
            return problem(.invalidRegion, (error as? RegionKitError)?.message ?? "\(error)", identifier)
        }
    }

    /// A GeoJSON position `[longitude, latitude(, altitude)]`, validated.
    static func position(_ value: GeoJSONValue?, what: String) -> Result<(latitude: Double, longitude: Double), PositionProblem> {
        guard let items = value?.array else {
            return .failure(PositionProblem("\(what) must be [longitude, latitude], got \(value.map(describe) ?? "nothing")"))
        }
        guard items.count >= 2, let lon = items[0].number, let lat = items[1].number else {
            return .failure(PositionProblem("\(what) must be [longitude, latitude] numbers, got \(describe(.array(items)))"))
        }
        guard lat.isFinite, (-90...90).contains(lat) else { return .failure(PositionProblem("\(what): latitude \(lat) is outside -90...90 (GeoJSON order is [longitude, latitude])")) }
        guard lon.isFinite, (-180...180).contains(lon) else { return .failure(PositionProblem("\(what): longitude \(lon) is outside -180...180")) }
        return .success((lat, lon))
    }

    /// A message about a bad position (a `Result` failure needs an `Error`).
    struct PositionProblem: Error, ExpressibleByStringLiteral {
        var message: String
        init(_ message: String) { self.message = message }
        init(stringLiteral value: String) { message = value }
    }

    // MARK: - Text

    /// A short rendering of a JSON value for messages.
    static func describe(_ value: GeoJSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return String(b)
        case .number(let n): return number(n)
        case .string(let s): return JSONLine.quote(s.count > 40 ? String(s.prefix(40)) + "…" : s)
        case .array(let items): return items.count > 4 ? "[\(items.prefix(4).map(describe).joined(separator: ",")),…]" : "[\(items.map(describe).joined(separator: ","))]"
        case .object: return "an object"
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DecodingError {
            switch error {
            case .dataCorrupted(let context): return context.underlyingError.map { "\($0)" } ?? context.debugDescription
            default: return "\(error)"
            }
        }
        return "\(error)"
    }

    /// Shortest round-tripping text of a number (`100` rather than `100.0`).
    static func number(_ value: Double) -> String {
        value.compactDescription
    }
}

/// A position compared as `==` compares doubles (0 and −0 are one position).
private struct DistinctPosition: Hashable {
    var latitude: Double
    var longitude: Double
}
