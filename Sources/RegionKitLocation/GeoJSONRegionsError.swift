/// Why a GeoJSON region file could not be imported: every problem found, each with the feature it
/// is in (`features[3]`), the region identifier when known, a stable ``Code`` and a message.
///
/// ```swift
/// do {
///     _ = try GeoJSONRegions.decode(data)
/// } catch {
///     for problem in error.problems { print(problem) }
///     // features[1] ('gate'): missingRadius: Point feature needs a numeric "radius" property in metres
/// }
/// ```
public struct GeoJSONRegionsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, switchable category of problem.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The bytes are not JSON.
        public static let malformedJSON = Code(rawValue: "malformedJSON")
        /// The top level is not a `FeatureCollection` (or a single `Feature`).
        public static let notAFeatureCollection = Code(rawValue: "notAFeatureCollection")
        /// A feature is not an object of type `Feature` with a `geometry`.
        public static let malformedFeature = Code(rawValue: "malformedFeature")
        /// No identifier in `properties.identifier`, the feature `id` or `properties.name`.
        public static let missingIdentifier = Code(rawValue: "missingIdentifier")
        /// Two features have the same identifier.
        public static let duplicateIdentifier = Code(rawValue: "duplicateIdentifier")
        /// A Point feature has no `radius` property.
        public static let missingRadius = Code(rawValue: "missingRadius")
        /// `radius` is not a finite number of metres ≥ 0.
        public static let badRadius = Code(rawValue: "badRadius")
        /// Coordinates are missing, not numbers, or outside longitude −180...180 / latitude −90...90.
        public static let badCoordinates = Code(rawValue: "badCoordinates")
        /// A geometry other than Point (or Polygon, when approximation is enabled).
        public static let unsupportedGeometry = Code(rawValue: "unsupportedGeometry")
        /// An optional property (`notifyOnEntry`, `notifyOnExit`) has the wrong type.
        public static let badProperty = Code(rawValue: "badProperty")
        /// The values form no valid region (identifier rules of `CircularRegion`).
        public static let invalidRegion = Code(rawValue: "invalidRegion")

        public var description: String { rawValue }
    }

    /// One problem in the file.
    public struct Problem: Error, Hashable, Sendable, CustomStringConvertible {
        /// 0-based index in `features` (`nil` for problems with the whole document).
        public var featureIndex: Int?
        /// The region identifier, when it could be read.
        public var identifier: String?
        public var code: Code
        public var message: String

        public init(featureIndex: Int?, identifier: String? = nil, code: Code, message: String) {
            self.featureIndex = featureIndex
            self.identifier = identifier
            self.code = code
            self.message = message
        }

        public var description: String {
            var where_ = featureIndex.map { "features[\($0)]" } ?? "document"
            if let identifier { where_ += " ('\(identifier.prefix(80))\(identifier.count > 80 ? "…" : "")')" }
            return "\(where_): \(code): \(message)"
        }
    }

    /// Every problem, in document order (never empty).
    public var problems: [Problem]
    /// The file, when read from one.
    public var path: String?

    public init(problems: [Problem], path: String? = nil) {
        self.problems = problems
        self.path = path
    }

    public var description: String {
        let head = (path.map { "\($0): " } ?? "") + "GeoJSON regions: "
        if problems.count == 1 { return head + problems[0].description }
        return head + "\(problems.count) problems:\n" + problems.map { "  \($0)" }.joined(separator: "\n")
    }
}
