/// One framed, checksum-verified NMEA 0183 sentence, split into fields.
///
/// Framing is `$` (or `!`) + address + `,` fields + `*hh`. The address is a two-letter talker
/// (`GP`, `GN`, `GL`, `GA`, `BD`, `GB`, `GQ`, ...) and a three-letter type (`GGA`), or a
/// proprietary `P...` address (`PMTK001`), whose talker is `P` and type is the rest.
///
/// ```swift
/// let s = try NMEASentence.parse("$GPGLL,4916.45,N,12311.12,W,225444,A,A*5C")
/// s.talker  // "GP"
/// s.type    // "GLL"
/// s.fields  // ["4916.45", "N", "12311.12", "W", "225444", "A", "A"]
/// ```
public struct NMEASentence: Hashable, Sendable {
    /// Talker identifier: `GP`, `GN`, ...; `P` for proprietary sentences.
    public var talker: String
    /// Sentence type: `GGA`, `RMC`, ...; for proprietary sentences the rest of the address.
    public var type: String
    /// The data fields after the address, in order, without the checksum. Empty fields are "".
    public var fields: [String]
    /// Whether the sentence carried a `*hh` checksum (always true unless checksums are optional).
    public var hadChecksum: Bool

    public init(talker: String, type: String, fields: [String], hadChecksum: Bool = true) {
        self.talker = talker
        self.type = type
        self.fields = fields
        self.hadChecksum = hadChecksum
    }

    /// The longest line accepted. NMEA says 82 characters, real receivers exceed it
    /// (survey receivers print 8 decimals of minutes), so this is generous.
    public static let maximumLength = 512

    /// Field `i` (0-based, after the address), or "" when the sentence is shorter.
    public subscript(field i: Int) -> String {
        i >= 0 && i < fields.count ? fields[i] : ""
    }

    /// Parses one line (trailing CR/LF and spaces are ignored).
    ///
    /// - Parameters:
    ///   - line: the raw line; any bytes, including binary junk.
    ///   - lineNumber: used in the thrown error.
    ///   - requireChecksum: reject sentences without `*hh` (default). gpsd accepts them.
    /// - Throws: ``LocationInputError`` with code `.badFraming` or `.badChecksum`.
    public static func parse<Bytes: Collection<UInt8>>(
        bytes line: Bytes, lineNumber: Int? = nil, requireChecksum: Bool = true
    ) throws(LocationInputError) -> NMEASentence {
        var b = Array(line)
        while let last = b.last, last == 10 || last == 13 || last == 32 || last == 9 { b.removeLast() }
        var start = 0
        while start < b.count, b[start] == 32 || b[start] == 9 { start += 1 }
        func excerpt() -> String {
            String(decoding: b[start...].map { $0 >= 32 && $0 < 127 ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
        }
        func fail(_ code: LocationInputError.Code, _ message: String, column: Int? = nil) -> LocationInputError {
            LocationInputError(code: code, message: message, line: lineNumber, column: column, excerpt: excerpt())
        }
        guard start < b.count else { throw fail(.badFraming, "empty line") }
        guard b[start] == UInt8(ascii: "$") || b[start] == UInt8(ascii: "!") else {
            throw fail(.badFraming, "does not start with '$' or '!'", column: start + 1)
        }
        guard b.count - start <= maximumLength else {
            throw fail(.badFraming, "sentence longer than \(maximumLength) characters")
        }
        // Body is between the start character and '*'.
        var end = b.count
        var hadChecksum = false
        if let star = b[(start + 1)...].lastIndex(of: UInt8(ascii: "*")) {
            let hex = b[(star + 1)...]
            guard hex.count == 2, let given = hexValue(hex) else {
                throw fail(.badChecksum, "checksum after '*' must be exactly two hex digits", column: star + 1)
            }
            var x: UInt8 = 0
            for c in b[(start + 1)..<star] { x ^= c }
            guard x == given else {
                throw fail(.badChecksum, "checksum *\(hex2(given)) does not match computed *\(hex2(x))", column: star + 1)
            }
            end = star
            hadChecksum = true
        } else if requireChecksum {
            throw fail(.badChecksum, "missing '*hh' checksum")
        }
        // Printable ASCII only.
        for i in (start + 1)..<end where b[i] < 32 || b[i] >= 127 {
            throw fail(.badFraming, "non-printable byte 0x\(hex2(b[i])) inside sentence", column: i + 1)
        }
        if let star = b[(start + 1)..<end].firstIndex(of: UInt8(ascii: "*")) {
            throw fail(.badFraming, "stray '*' inside sentence", column: star + 1)
        }
        let body = String(decoding: b[(start + 1)..<end], as: UTF8.self)
        var parts = body.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let address = parts.removeFirst()
        let addressOK = !address.isEmpty && address.utf8.allSatisfy {
            ($0 >= 65 && $0 <= 90) || ($0 >= 48 && $0 <= 57)
        }
        guard addressOK else {
            throw fail(.badFraming, "address field '\(address)' is not upper-case letters and digits", column: start + 2)
        }
        if address.first == "P" {
            return NMEASentence(talker: "P", type: String(address.dropFirst()), fields: parts, hadChecksum: hadChecksum)
        }
        guard address.utf8.count == 5 else {
            throw fail(.badFraming, "address '\(address)' is not a 2-letter talker plus 3-letter type", column: start + 2)
        }
        return NMEASentence(
            talker: String(address.prefix(2)), type: String(address.dropFirst(2)),
            fields: parts, hadChecksum: hadChecksum)
    }

    /// Parses one line given as a string. See ``parse(bytes:lineNumber:requireChecksum:)``.
    public static func parse(
        _ line: some StringProtocol, lineNumber: Int? = nil, requireChecksum: Bool = true
    ) throws(LocationInputError) -> NMEASentence {
        try parse(bytes: Array(line.utf8), lineNumber: lineNumber, requireChecksum: requireChecksum)
    }

    /// The XOR checksum NMEA uses over the characters between `$` and `*`.
    public static func checksum(_ body: some StringProtocol) -> UInt8 {
        body.utf8.reduce(0) { $0 ^ $1 }
    }

    /// Builds a complete sentence line (`$` + body + `*hh`) from its body; handy for tests.
    public static func frame(_ body: String) -> String {
        "$\(body)*\(hex2(checksum(body)))"
    }

    private static func hexValue(_ s: some Collection<UInt8>) -> UInt8? {
        var v: UInt8 = 0
        for c in s {
            let d: UInt8
            switch c {
            case 48...57: d = c - 48
            case 65...70: d = c - 55
            case 97...102: d = c - 87
            default: return nil
            }
            v = v << 4 | d
        }
        return v
    }

    static func hex2(_ v: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(v >> 4)], digits[Int(v & 15)]])
    }
}
