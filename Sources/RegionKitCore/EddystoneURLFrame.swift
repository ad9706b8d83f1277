/// An Eddystone-URL frame (github.com/google/eddystone, eddystone-url/README.md "Frame
/// Specification"), with the URL compression of its "URL Scheme Prefix" and "Eddystone-URL HTTP
/// URL encoding" tables:
/// ```
/// 10          Frame Type: URL (0x10)
/// TT          TX Power: calibrated at 0 m, signed dBm
/// SS          URL Scheme: 0 http://www.  1 https://www.  2 http://  3 https://
/// <1-17>      Encoded URL: printable ASCII 0x21–0x7E, or an expansion code 0x00–0x0D
///             (.com/ .org/ .edu/ .net/ .info/ .biz/ .gov/ .com .org .edu .net .info .biz .gov);
///             0x0E–0x20 and 0x7F–0xFF are reserved
/// ```
///
/// ```swift
/// let frame = try EddystoneURLFrame(url: "https://www.example.com/", txPower: -20)
/// frame.encodedURL // [0x01] + "example".utf8 + [0x00]
/// ```
public struct EddystoneURLFrame: Hashable, Sendable, Codable {
    /// The scheme prefixes by code.
    public static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    /// The expansions by code 0x00–0x0D.
    public static let expansions = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/", ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]
    /// At most 17 encoded bytes after the scheme (the frame's 20-byte limit in Service Data).
    public static let maximumEncodedLength = 17

    /// TX Power at 0 m, dBm.
    public var txPower: Int8
    /// Scheme code byte ‖ encoded URL bytes, as on the air.
    public var encodedURL: [UInt8]

    /// The expanded URL.
    public var url: String {
        guard let scheme = encodedURL.first, Int(scheme) < Self.schemes.count else { return "" }
        var text = Self.schemes[Int(scheme)]
        for byte in encodedURL.dropFirst() {
            if Int(byte) < Self.expansions.count { text += Self.expansions[Int(byte)] } else { text.unicodeScalars.append(Unicode.Scalar(byte)) }
        }
        return text
    }

    /// Expected RSSI at 1 m: TX power at 0 m − 41 dB (as for Eddystone-UID).
    public var measuredPower: Int { Int(txPower) - 41 }

    /// Compresses `url`: the longest scheme prefix, then expansion codes where they match (longest
    /// first), other characters as they are. Throws `invalidArgument` naming the problem: no
    /// supported scheme, nothing after it, a character outside 0x21–0x7E, or more than 17 encoded bytes.
    public init(url: String, txPower: Int8 = -20) throws(RegionKitError) {
        let text = Array(url.utf8)
        var scheme: Int?
        for (code, prefix) in Self.schemes.enumerated() where text.starts(with: prefix.utf8) {
            if scheme == nil || prefix.utf8.count > Self.schemes[scheme ?? 0].utf8.count { scheme = code }
        }
        guard let scheme else {
            throw RegionKitError(.invalidArgument, "URL '\(url.prefix(80))' does not start with http://, https://, http://www. or https://www.")
        }
        var encoded: [UInt8] = [UInt8(scheme)]
        var index = Self.schemes[scheme].utf8.count
        let byLength = Self.expansions.enumerated().sorted { $0.element.utf8.count > $1.element.utf8.count }
        while index < text.count {
            if let (code, _) = byLength.first(where: { text[index...].starts(with: $0.element.utf8) }) {
                encoded.append(UInt8(code))
                index += Self.expansions[code].utf8.count
                continue
            }
            guard (0x21...0x7E).contains(text[index]) else {
                throw RegionKitError(.invalidArgument, "URL '\(url.prefix(80))': byte 0x\(String(text[index], radix: 16)) at position \(index) cannot be sent (printable ASCII only)")
            }
            encoded.append(text[index])
            index += 1
        }
        guard encoded.count > 1 else {
            throw RegionKitError(.invalidArgument, "URL '\(url.prefix(80))' has nothing after its scheme '\(Self.schemes[scheme])' (character \(index)); Eddystone-URL needs 1...\(Self.maximumEncodedLength) encoded bytes")
        }
        guard encoded.count - 1 <= Self.maximumEncodedLength else {
            throw RegionKitError(.invalidArgument, "URL '\(url.prefix(80))' encodes to \(encoded.count - 1) bytes after the scheme; Eddystone-URL allows \(Self.maximumEncodedLength)")
        }
        self.txPower = txPower
        self.encodedURL = encoded
    }

    /// A frame from its decoded fields (checked by ``EddystoneFrame``).
    init(txPower: Int8, encodedURL: [UInt8]) {
        self.txPower = txPower
        self.encodedURL = encodedURL
    }

    /// The frame bytes: type, TX power, scheme, encoded URL.
    public var frameBytes: [UInt8] { [EddystoneFrame.typeURL, UInt8(bitPattern: txPower)] + encodedURL }
}
