import Foundation

/// A beacon layout expression in the Android Beacon Library's `BeaconParser.setBeaconLayout`
/// syntax, so a vendor format can be added in configuration without code.
///
/// Terms, comma-separated; byte offsets count from the first byte after the AD type of a
/// Manufacturer Specific Data structure (offsets 0–1 are the company identifier), or of a
/// Service Data - 16-bit UUID structure when the layout has an `s:` term:
/// - `m:START-END=HEX` — the matcher ("beacon type code"): these bytes must equal HEX. Exactly one.
/// - `s:START-END=HEX` — the service UUID, written as the UUID value (`feaa`); on the air
///   little-endian. 16-bit only (2 bytes): Service Data - 16-bit UUID, AD type 0x16.
/// - `i:START-END` — an identifier (id1, id2, …), big-endian; suffix `l` little-endian, `v`
///   variable length (to the end of the structure, at most END).
/// - `p:START-END[:CORRECTION]` — the power byte: signed dBm, plus CORRECTION (Eddystone's `-41`
///   turns 0 m into 1 m).
/// - `d:START-END[l]` — a data field, unsigned, up to 8 bytes.
/// - `x` — an "extra data" frame (telemetry) carrying no identifiers.
///
/// ```swift
/// let layout = try BeaconLayout("m:2-3=beac,i:4-19,i:20-21,i:22-23,p:24-24,d:25-25")
/// let decoded = try layout.decode(AltBeaconFrame(identity: id).advertisingData())
/// layout.identity(of: decoded) // id as an AltBeacon identity
/// ```
public struct BeaconLayout: Hashable, Sendable, CustomStringConvertible {
    /// A byte range of the structure's data.
    public struct Field: Hashable, Sendable {
        public var start: Int
        public var end: Int
        public var littleEndian = false
        public var variableLength = false
        public var length: Int { end - start + 1 }
    }

    /// What a layout read from one AD structure.
    public struct Decoded: Hashable, Sendable {
        /// The identifiers' bytes in layout order, big-endian (little-endian fields reversed).
        public var identifiers: [[UInt8]]
        /// The power byte plus the correction, dBm; nil without a `p:` term.
        public var measuredPower: Int?
        /// The data fields, unsigned.
        public var dataFields: [UInt64]
        /// Offset of the AD structure's length byte.
        public var offset: Int
    }

    public let expression: String
    public private(set) var matcher = Field(start: 0, end: 0)
    public private(set) var matcherValue: [UInt8] = []
    /// The service UUID bytes as on the air (little-endian), with their field.
    public private(set) var serviceUUID: (field: Field, bytes: [UInt8])?
    public private(set) var identifiers: [Field] = []
    public private(set) var power: Field?
    public private(set) var powerCorrection = 0
    public private(set) var dataFields: [Field] = []
    public private(set) var isExtraFrame = false
    /// The format tag given to identities this layout decodes, so regions of that format match them:
    /// a built-in layout's own, or the one given to ``init(_:format:)`` (the identifiers must then
    /// have that format's shape). Otherwise inferred from the layout: identifiers of 16+2+2 bytes
    /// are `.iBeacon` when the matcher puts iBeacon's type code `02 15` at bytes 2–3 of the
    /// manufacturer data (the Android Beacon Library's iBeacon layout `m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24`,
    /// any company), else `.altBeacon` (id1/id2/id3); 10+6 bytes are `.eddystoneUID`; any other
    /// shape is nil (decoded and shown, not matchable by regions).
    public var format: BeaconFormat?

    /// The built-in formats as layouts: the Android Beacon Library's, except that iBeacon's matcher
    /// also covers Apple's company identifier (`m:0-3=4c000215`; the library's usual `m:2-3=0215`
    /// accepts any company).
    public static let iBeacon = builtIn("m:0-3=4c000215,i:4-19,i:20-21,i:22-23,p:24-24", format: .iBeacon)
    public static let altBeacon = builtIn("m:2-3=beac,i:4-19,i:20-21,i:22-23,p:24-24,d:25-25", format: .altBeacon)
    public static let eddystoneUID = builtIn("s:0-1=feaa,m:2-2=00,p:3-3:-41,i:4-13,i:14-19", format: .eddystoneUID)
    public static let eddystoneURL = builtIn("s:0-1=feaa,m:2-2=10,p:3-3:-41,i:4-21v", format: nil)
    public static let eddystoneTLM = builtIn("x,s:0-1=feaa,m:2-2=20,d:3-3,d:4-5,d:6-7,d:8-11,d:12-15", format: nil)

    /// A built-in layout (tests check each parses; one that did not would match nothing).
    private static func builtIn(_ expression: String, format: BeaconFormat?) -> BeaconLayout {
        do { return try BeaconLayout(expression, format: format) } catch { return BeaconLayout(unmatchable: expression) }
    }

    private init(unmatchable expression: String) {
        self.expression = expression
        matcherValue = []
        format = nil
    }

    public var description: String { expression }

    public static func == (lhs: BeaconLayout, rhs: BeaconLayout) -> Bool { lhs.expression == rhs.expression && lhs.format == rhs.format }
    public func hash(into hasher: inout Hasher) { hasher.combine(expression) }

    /// Parses an expression; throws `invalidArgument` naming the term, its position and the problem.
    public init(_ expression: String, format: BeaconFormat? = nil) throws(RegionKitError) {
        if format == .device {
            throw RegionKitError(.invalidArgument, "beacon layout '\(expression.prefix(200))': format device names no frame (a device is named by its scanner's id)")
        }
        self.expression = expression
        var sawMatcher = false
        var position = 0
        let terms = expression.split(separator: ",", omittingEmptySubsequences: false)
        for (number, rawTerm) in terms.enumerated() {
            defer { position += rawTerm.utf8.count + 1 }
            let term = rawTerm.trimmingCharacters(in: .whitespaces)
            func fail(_ problem: String) -> RegionKitError {
                RegionKitError(.invalidArgument, "beacon layout '\(expression.prefix(200))': term \(number + 1) '\(term.prefix(40))' at character \(position): \(problem)")
            }
            if term == "x" { isExtraFrame = true; continue }
            let parts = term.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count == 1 else { throw fail("expected KIND:START-END (m, s, i, p, d) or x") }
            var rest = Substring(parts[1])
            var value: Substring?
            if let equals = rest.firstIndex(of: "=") {
                value = rest[rest.index(after: equals)...]
                rest = rest[..<equals]
            }
            var correction: Substring?
            if parts[0] == "p", let colon = rest.firstIndex(of: ":") {
                correction = rest[rest.index(after: colon)...]
                rest = rest[..<colon]
            }
            var suffixes = ""
            while let last = rest.last, last == "l" || last == "v" {
                suffixes.append(last)
                rest = rest.dropLast()
            }
            let bounds = rest.split(separator: "-", omittingEmptySubsequences: false)
            guard bounds.count == 2, let start = Int(bounds[0]), let end = Int(bounds[1]), start >= 0, end >= start, end <= 254 else {
                throw fail("byte range '\(rest.prefix(20))' is not START-END with 0 <= START <= END <= 254")
            }
            var field = Field(start: start, end: end, littleEndian: suffixes.contains("l"), variableLength: suffixes.contains("v"))
            if field.variableLength && parts[0] != "i" { throw fail("only identifiers can be variable length (v)") }
            func hexValue() throws(RegionKitError) -> [UInt8] {
                guard let value, let bytes = BeaconIdentityConstraint.bytes(hex: String(value)), bytes.count == field.length else {
                    throw fail("needs =HEX with exactly \(field.length) byte(s) (\(2 * field.length) hex digits)")
                }
                return bytes
            }
            if value != nil && parts[0] != "m" && parts[0] != "s" { throw fail("only m: and s: take =HEX") }
            switch parts[0] {
            case "m":
                guard !sawMatcher else { throw fail("a layout has one matcher (m:)") }
                sawMatcher = true
                matcher = field
                matcherValue = try hexValue()
            case "s":
                guard serviceUUID == nil else { throw fail("a layout has one service UUID (s:)") }
                // Only Service Data - 16-bit UUID (AD type 0x16) is read; a 32- or 128-bit UUID
                // (AD types 0x20, 0x21) would parse and then never match.
                guard field.length == 2 else { throw fail("the service UUID must be 2 bytes (a 16-bit UUID such as s:0-1=feaa); 32- and 128-bit service data UUIDs are not supported") }
                field.littleEndian = true
                serviceUUID = (field, Array(try hexValue().reversed()))
            case "i":
                identifiers.append(field)
            case "p":
                guard power == nil else { throw fail("a layout has one power field (p:)") }
                guard field.length == 1 else { throw fail("the power field is one signed byte") }
                power = field
                if let correction {
                    guard let value = Int(correction), (-127...127).contains(value) else { throw fail("power correction '\(correction.prefix(10))' is not a number of dB in -127...127") }
                    powerCorrection = value
                }
            case "d":
                guard field.length <= 8 else { throw fail("a data field is at most 8 bytes") }
                dataFields.append(field)
            default:
                throw fail("unknown kind '\(parts[0])' (m, s, i, p, d, x)")
            }
        }
        guard sawMatcher else { throw RegionKitError(.invalidArgument, "beacon layout '\(expression.prefix(200))' has no matcher (m:START-END=HEX)") }
        guard isExtraFrame || !identifiers.isEmpty else { throw RegionKitError(.invalidArgument, "beacon layout '\(expression.prefix(200))' has no identifier (i:START-END); only an x layout may have none") }
        let lengths = identifiers.allSatisfy({ !$0.variableLength }) ? identifiers.map(\.length) : nil
        if let format {
            let shape = format == .eddystoneUID ? [10, 6] : [16, 2, 2]
            guard lengths == shape else {
                throw RegionKitError(.invalidArgument, "beacon layout '\(expression.prefix(200))' cannot be \(format.name): its identifiers (i:) must be \(shape.map(String.init).joined(separator: "+")) bytes, fixed length; they are \(identifiers.isEmpty ? "none" : identifiers.map { "\($0.length)\($0.variableLength ? "v" : "")" }.joined(separator: "+"))")
            }
            self.format = format
        } else if lengths == [16, 2, 2] {
            self.format = isIBeaconShaped ? .iBeacon : .altBeacon
        } else if lengths == [10, 6] {
            self.format = .eddystoneUID
        }
    }

    /// Manufacturer data whose matcher puts iBeacon's type and length `02 15` at bytes 2–3.
    var isIBeaconShaped: Bool {
        guard serviceUUID == nil, matcher.start <= 2, matcher.end >= 3, matcherValue.count == matcher.length else { return false }
        return matcherValue[2 - matcher.start] == 0x02 && matcherValue[3 - matcher.start] == 0x15
    }

    /// The AD type this layout reads.
    public var adType: UInt8 { serviceUUID == nil ? IBeaconFrame.adTypeManufacturerSpecific : EddystoneFrame.adTypeServiceData }

    /// The smallest structure data length holding every fixed field.
    public var minimumLength: Int {
        var last = matcher.end
        if let serviceUUID { last = max(last, serviceUUID.field.end) }
        if let power { last = max(last, power.end) }
        for field in identifiers { last = max(last, field.variableLength ? field.start : field.end) }
        for field in dataFields { last = max(last, field.end) }
        return last + 1
    }

    /// Decodes the first AD structure of ``adType`` the layout matches. Near-misses: another service
    /// UUID (`wrongServiceUUID`), other matcher bytes (`matcherMismatch`), too short (`wrongLength`).
    public func decode(_ data: some Collection<UInt8>) throws(BeaconDecodingError) -> Decoded {
        try AdvertisingDataWalker.firstMatch(in: data, type: adType, kind: serviceUUID == nil ? "Manufacturer Specific Data" : "Service Data", check)
    }

    private func check(_ bytes: UnsafeRawBufferPointer, _ s: AdvertisingDataWalker.Structure) -> Result<Decoded, BeaconDecodingError> {
        let body = s.body
        if let serviceUUID {
            let f = serviceUUID.field
            guard s.count > f.end else {
                return .failure(BeaconDecodingError(.truncatedStructure, at: s.offset, "service data at offset \(s.offset) has \(s.count) bytes, too short for the service UUID"))
            }
            guard Array(bytes[(body + f.start)...(body + f.end)]) == serviceUUID.bytes else {
                return .failure(BeaconDecodingError(.wrongServiceUUID, at: body + f.start, "service UUID at offset \(body + f.start) is not 0x\(BeaconIdentity.hex(serviceUUID.bytes.reversed()).uppercased())"))
            }
        }
        guard s.count > matcher.end else {
            return .failure(BeaconDecodingError(.truncatedStructure, at: s.offset, "AD structure at offset \(s.offset) has \(s.count) data bytes, too short for the matcher at \(matcher.start)-\(matcher.end)"))
        }
        guard Array(bytes[(body + matcher.start)...(body + matcher.end)]) == matcherValue else {
            return .failure(BeaconDecodingError(.matcherMismatch, at: body + matcher.start, "bytes at offset \(body + matcher.start) are not the layout's matcher \(BeaconIdentity.hex(matcherValue))"))
        }
        guard s.count >= minimumLength else {
            return .failure(BeaconDecodingError(.wrongLength, at: s.offset, "AD structure at offset \(s.offset) has \(s.count) data bytes; the layout needs \(minimumLength)"))
        }
        func read(_ field: Field) -> [UInt8] {
            let end = field.variableLength ? min(field.end, s.count - 1) : field.end
            let slice = Array(bytes[(body + field.start)...(body + end)])
            return field.littleEndian ? slice.reversed() : slice
        }
        let ids = identifiers.map(read)
        let measuredPower = power.map { Int(Int8(bitPattern: bytes[body + $0.start])) + powerCorrection }
        let data = dataFields.map { read($0).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        return .success(Decoded(identifiers: ids, measuredPower: measuredPower, dataFields: data, offset: s.offset))
    }

    /// The identity a region can match, when ``format`` says how the identifiers map (see there).
    public func identity(of decoded: Decoded) -> BeaconIdentity? {
        guard let format else { return nil }
        let ids = decoded.identifiers
        switch format {
        case .iBeacon, .altBeacon:
            guard ids.count == 3, ids[0].count == 16, ids[1].count == 2, ids[2].count == 2 else { return nil }
            let u = ids[0]
            return BeaconIdentity(uuid: UUID(uuid: (u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15])),
                                  major: UInt16(ids[1][0]) << 8 | UInt16(ids[1][1]), minor: UInt16(ids[2][0]) << 8 | UInt16(ids[2][1]), format: format)
        case .eddystoneUID:
            guard ids.count == 2 else { return nil }
            return BeaconIdentity(eddystoneNamespace: ids[0], instance: ids[1])
        case .device:
            return nil   // a layout's format is never set so (a device is named by its scanner, not by a frame)
        }
    }
}
