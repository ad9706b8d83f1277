import Foundation
import RegionKitCore
/// A distance model file: what `regionkit calibrate` writes and `eval distance --model`,
/// `monitor`/`simulate --distance-model` and the daemon's `distanceModel:` read.
///
/// JSON, version 1:
///
/// ```json
/// {
///   "format": "regionkit-distance-model",
///   "version": 1,
///   "reference_power_dbm": -64,
///   "model": {"type": "linear", "intercept_m": 0.93, "slope_m_per_db": 0.073},
///   "filter": {"type": "median", "window_s": 5},
///   "device_offset_db": -9,
///   "calibration": {"files": ["a.csv"], "samples": 64775, "reference_distance_m": 1,
///                   "median_abs_error_m": 0.12, "p90_abs_error_m": 0.61}
/// }
/// ```
///
/// - `format`, `version`: must be `"regionkit-distance-model"` and `1`.
/// - `reference_power_dbm`: the RSSI at 1 m of the calibration recordings (median at the recorded
///   distance nearest 1 m). `eval distance --model` uses it as every model's measured power; the
///   engine uses each beacon's advertised measured power instead.
/// - `model.type`: `linear` (`intercept_m`, `slope_m_per_db`: d = intercept + slope · (power − rssi)),
///   `log-distance` (`exponent`) or `curve` (`coefficient`, `exponent`, `offset`: the iOS/Android form).
/// - `filter.type`: `raw`, `mean` (`window_s`), `trimmed-mean` (`window_s`, `trim_fraction`),
///   `exponential` (`half_life_s`) or `median` (`window_s`): the RSSI smoothing before the model.
/// - `device_offset_db` (optional): dB the receiving device reads above the receiver the model was
///   calibrated with (``DeviceOffsetDistanceModel``); `regionkit calibrate --model FILE` learns it
///   from a short recording at known distances. Within ±60 dB.
/// - `calibration` (optional, informational): what the model was fitted on and its error there.
///
/// ```swift
/// let file = try DistanceModelFile(json: text, source: "model.json")
/// var profile = MonitoringProfile.responsive
/// profile.use(file)
/// ```
public struct DistanceModelFile: Hashable, Sendable {
    public static let format = "regionkit-distance-model"
    public static let version = 1

    /// The model kinds a file can hold.
    public enum Model: Hashable, Sendable {
        case linear(LinearDistanceModel)
        case logDistance(LogDistanceModel)
        case curve(CurveDistanceModel)

        public var distanceModel: any DistanceModel {
            switch self {
            case .linear(let model): model
            case .logDistance(let model): model
            case .curve(let model): model
            }
        }
    }

    /// Where a model came from (informational).
    public struct Calibration: Hashable, Sendable {
        public var files: [String]
        public var samples: Int
        public var referenceDistance: Double
        public var medianAbsoluteError: Double
        public var p90AbsoluteError: Double

        public init(files: [String], samples: Int, referenceDistance: Double, medianAbsoluteError: Double, p90AbsoluteError: Double) {
            self.files = files
            self.samples = samples
            self.referenceDistance = referenceDistance
            self.medianAbsoluteError = medianAbsoluteError
            self.p90AbsoluteError = p90AbsoluteError
        }
    }

    public var model: Model
    public var filter: RSSIFilter
    public var referencePower: Double
    public var calibration: Calibration?
    /// dB the receiving device reads above the calibration receiver (`nil`: no correction).
    public var deviceOffset: Double?

    public init(model: Model, filter: RSSIFilter, referencePower: Double, calibration: Calibration? = nil, deviceOffset: Double? = nil) {
        self.model = model
        self.filter = filter
        self.referencePower = referencePower
        self.calibration = calibration
        self.deviceOffset = deviceOffset
    }

    /// The model the engine uses: the file's model, behind a ``DeviceOffsetDistanceModel`` when the
    /// file has a device offset.
    public var distanceModel: any DistanceModel {
        guard let deviceOffset else { return model.distanceModel }
        return DeviceOffsetDistanceModel(base: model.distanceModel, offset: deviceOffset)
    }

    /// Parses a model file; errors name `source` and the offending field.
    public init(json: String, source: String) throws {
        let object: Value
        do {
            object = try JSONDecoder().decode(Value.self, from: Data(json.utf8))
        } catch {
            if let syntax = JSONSyntaxError.first(in: json.utf8) { throw RegionKitError(.malformedInput, "\(source):\(syntax)") }
            throw RegionKitError(.malformedInput, "\(source): not valid JSON", cause: error)
        }
        if let duplicate = JSONDuplicateKey.first(in: Data(json.utf8)) { throw RegionKitError(.malformedInput, "\(source):\(duplicate)") }
        let root = Fields(object, path: "", source: source)
        guard try root.string("format") == Self.format else {
            throw root.error("format", "must be \"\(Self.format)\"")
        }
        guard try root.number("version") == Double(Self.version) else {
            throw root.error("version", "must be \(Self.version) (this RegionKit reads version \(Self.version) files)")
        }
        try root.rejectUnknown(["format", "version", "reference_power_dbm", "model", "filter", "device_offset_db", "calibration"])
        referencePower = try root.number("reference_power_dbm")
        guard referencePower < 0, referencePower >= -200 else { throw root.error("reference_power_dbm", "must be within -200...0 dBm (negative), got \(referencePower)") }

        let model = try root.object("model")
        switch try model.string("type") {
        case "linear":
            try model.rejectUnknown(["type", "intercept_m", "slope_m_per_db"])
            let slope = try model.number("slope_m_per_db")
            guard slope >= 0, slope <= 1000 else { throw model.error("slope_m_per_db", "must be within 0...1000, got \(slope)") }
            // A distance is not negative (below 0 it is held at 0: an intercept of -1e300 ranged
            // every beacon as immediate at 0 m).
            let intercept = try model.number("intercept_m")
            guard (-1000...1000).contains(intercept) else { throw model.error("intercept_m", "must be within -1000...1000 m, got \(intercept)") }
            self.model = .linear(LinearDistanceModel(intercept: intercept, slope: slope))
        case "log-distance":
            try model.rejectUnknown(["type", "exponent"])
            let exponent = try model.number("exponent")
            guard exponent > 0, exponent <= 100 else { throw model.error("exponent", "must be within (0, 100], got \(exponent)") }
            self.model = .logDistance(LogDistanceModel(exponent: exponent))
        case "curve":
            try model.rejectUnknown(["type", "coefficient", "exponent", "offset"])
            // a · r^b + c from r = 1 up: positive a and b make it grow with the distance, and
            // a + c ≥ 0 keeps it from going below 0 (a curve (-5, -3, 0) gave accuracies of -1.5 m,
            // which Core Location only ever uses as -1, unknown).
            let coefficient = try model.number("coefficient"), exponent = try model.number("exponent"), offset = try model.number("offset")
            guard coefficient > 0, coefficient <= 1000 else { throw model.error("coefficient", "must be within (0, 1000], got \(coefficient)") }
            guard exponent > 0, exponent <= 100 else { throw model.error("exponent", "must be within (0, 100], got \(exponent)") }
            guard offset >= -coefficient, offset <= 1000 else {
                throw model.error("offset", "must be within -coefficient...1000 (\(-coefficient)...1000: no distance below 0), got \(offset)")
            }
            self.model = .curve(CurveDistanceModel(coefficient: coefficient, exponent: exponent, offset: offset, name: "curve"))
        case let other:
            throw model.error("type", "'\(other)' is not one of linear, log-distance, curve")
        }

        let filter = try root.object("filter")
        func positive(_ key: String) throws -> Double {
            let value = try filter.number(key)
            guard value > 0, value <= RSSIFilter.maximumWindow else {
                throw filter.error(key, "must be within (0, \(Int(RSSIFilter.maximumWindow))] seconds, got \(value)")
            }
            return value
        }
        let filterKeys: [String: Set<String>] = ["raw": [], "mean": ["window_s"], "median": ["window_s"], "altbeacon-running-average": ["window_s"],
                                                 "exponential": ["half_life_s"], "trimmed-mean": ["window_s", "trim_fraction"]]
        if let keys = filterKeys[try filter.string("type")] { try filter.rejectUnknown(keys.union(["type"])) }
        switch try filter.string("type") {
        case "raw": self.filter = .latest
        case "mean": self.filter = .movingAverage(window: try positive("window_s"))
        case "median": self.filter = .median(window: try positive("window_s"))
        case "altbeacon-running-average": self.filter = .altBeaconRunningAverage(window: try positive("window_s"))
        case "exponential": self.filter = .exponential(halfLife: try positive("half_life_s"))
        case "trimmed-mean":
            let trim = try filter.number("trim_fraction")
            guard (0..<0.5).contains(trim) else { throw filter.error("trim_fraction", "must be in [0, 0.5), got \(trim)") }
            self.filter = .trimmedMean(window: try positive("window_s"), trimFraction: trim)
        case let other:
            throw filter.error("type", "'\(other)' is not one of raw, mean, trimmed-mean, exponential, median, altbeacon-running-average")
        }

        if root.has("device_offset_db") {
            let offset = try root.number("device_offset_db")
            let bound = DeviceOffsetDistanceModel.maximumOffset
            guard abs(offset) <= bound else { throw root.error("device_offset_db", "must be within -\(Int(bound))...\(Int(bound)) dB, got \(offset)") }
            deviceOffset = offset
        }
        if root.has("calibration") {
            let calibration = try root.object("calibration")
            try calibration.rejectUnknown(["files", "samples", "reference_distance_m", "median_abs_error_m", "p90_abs_error_m"])
            let samples = try calibration.number("samples")
            guard samples >= 0, samples <= Double(Int32.max), samples == samples.rounded() else {
                throw calibration.error("samples", "must be a whole number within 0...\(Int32.max), got \(samples)")
            }
            self.calibration = Calibration(
                files: try calibration.strings("files"), samples: Int(samples),
                referenceDistance: try calibration.number("reference_distance_m"),
                medianAbsoluteError: try calibration.number("median_abs_error_m"),
                p90AbsoluteError: try calibration.number("p90_abs_error_m"))
        }
    }

    /// The file's JSON text, keys in the documented order, ending with a newline.
    public var json: String {
        func number(_ value: Double) -> String {
            let rounded = (value * 1e9).rounded() / 1e9
            return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int64(rounded)) : "\(rounded)"
        }
        func quote(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case _ where scalar.value < 0x20: out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        let modelText: String
        switch model {
        case .linear(let model):
            modelText = #"{"type": "linear", "intercept_m": \#(number(model.intercept)), "slope_m_per_db": \#(number(model.slope))}"#
        case .logDistance(let model):
            modelText = #"{"type": "log-distance", "exponent": \#(number(model.exponent))}"#
        case .curve(let model):
            modelText = #"{"type": "curve", "coefficient": \#(number(model.coefficient)), "exponent": \#(number(model.exponent)), "offset": \#(number(model.offset))}"#
        }
        let filterText: String
        switch filter {
        case .latest: filterText = #"{"type": "raw"}"#
        case .movingAverage(let window): filterText = #"{"type": "mean", "window_s": \#(number(window))}"#
        case .median(let window): filterText = #"{"type": "median", "window_s": \#(number(window))}"#
        case .altBeaconRunningAverage(let window): filterText = #"{"type": "altbeacon-running-average", "window_s": \#(number(window))}"#
        case .exponential(let halfLife): filterText = #"{"type": "exponential", "half_life_s": \#(number(halfLife))}"#
        case .trimmedMean(let window, let trim):
            filterText = #"{"type": "trimmed-mean", "window_s": \#(number(window)), "trim_fraction": \#(number(trim))}"#
        }
        var lines = [
            #"  "format": "\#(Self.format)","#,
            #"  "version": \#(Self.version),"#,
            #"  "reference_power_dbm": \#(number(referencePower)),"#,
            #"  "model": \#(modelText),"#,
            #"  "filter": \#(filterText)"#,
        ]
        if let deviceOffset {
            lines[lines.count - 1] += ","
            lines.append(#"  "device_offset_db": \#(number(deviceOffset))"#)
        }
        if let calibration {
            lines[lines.count - 1] += ","
            lines.append(#"  "calibration": {"files": [\#(calibration.files.map(quote).joined(separator: ", "))], "samples": \#(calibration.samples), "reference_distance_m": \#(number(calibration.referenceDistance)), "median_abs_error_m": \#(number(calibration.medianAbsoluteError)), "p90_abs_error_m": \#(number(calibration.p90AbsoluteError))}"#)
        }
        return "{\n" + lines.joined(separator: "\n") + "\n}\n"
    }

    /// A JSON object being read, with its path for error messages.
    private struct Fields {
        let values: [String: Value]
        let path: String
        let source: String
        let isObject: Bool

        init(_ value: Value, path: String, source: String) {
            if case .object(let values) = value { self.values = values; isObject = true } else { values = [:]; isObject = false }
            self.path = path
            self.source = source
        }

        func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

        func error(_ key: String, _ message: String) -> RegionKitError {
            RegionKitError(.malformedInput, "\(source): field '\(name(key))' \(message)")
        }

        /// Throws for the first key (in sorted order) that is not one of `known`.
        func rejectUnknown(_ known: Set<String>) throws {
            if let key = values.keys.filter({ !known.contains($0) }).sorted().first {
                throw RegionKitError(.malformedInput, "\(source): unknown field '\(name(key))' (known here: \(known.sorted().joined(separator: ", ")))")
            }
        }

        func has(_ key: String) -> Bool {
            if let value = values[key], value != .null { return true }
            return false
        }

        func value(_ key: String) throws -> Value {
            guard isObject else {
                throw RegionKitError(.malformedInput, "\(source): \(path.isEmpty ? "the file" : "field '\(path)'") must be a JSON object")
            }
            guard let value = values[key], value != .null else { throw error(key, "is missing") }
            return value
        }

        func string(_ key: String) throws -> String {
            guard case .string(let text) = try value(key) else { throw error(key, "must be a string") }
            return text
        }

        func number(_ key: String) throws -> Double {
            guard case .number(let number) = try value(key), number.isFinite else { throw error(key, "must be a finite number") }
            return number
        }

        func strings(_ key: String) throws -> [String] {
            guard case .array(let list) = try value(key) else { throw error(key, "must be a list of strings") }
            return try list.map { item in
                guard case .string(let text) = item else { throw error(key, "must be a list of strings") }
                return text
            }
        }

        func object(_ key: String) throws -> Fields {
            let value = try value(key)
            guard case .object = value else { throw error(key, "must be a JSON object") }
            return Fields(value, path: name(key), source: source)
        }
    }

    /// Any JSON value (booleans kept apart from numbers).
    private enum Value: Decodable, Equatable {
        case null, bool(Bool), number(Double), string(String), array([Value]), object([String: Value])

        init(from decoder: any Decoder) throws {
            if var list = try? decoder.unkeyedContainer() {
                var items: [Value] = []
                while !list.isAtEnd { items.append(try list.decode(Value.self)) }
                self = .array(items)
                return
            }
            if let object = try? decoder.container(keyedBy: Key.self) {
                var values: [String: Value] = [:]
                for key in object.allKeys { values[key.stringValue] = try object.decode(Value.self, forKey: key) }
                self = .object(values)
                return
            }
            let single = try decoder.singleValueContainer()
            if single.decodeNil() { self = .null }
            else if let bool = try? single.decode(Bool.self) { self = .bool(bool) }
            else if let number = try? single.decode(Double.self) { self = .number(number) }
            else { self = .string(try single.decode(String.self)) }
        }

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }
}
