extension String {
    /// `bytes` as UTF-8 text, or `malformedInput` naming `source` and the offset of the first byte
    /// that is not UTF-8 (decoding them with replacement characters let a configuration start with
    /// `mus��eum` for a name).
    ///
    /// ```swift
    /// try String(validatingUTF8: Array("regions: []".utf8), source: "c.yaml")   // "regions: []"
    /// try String(validatingUTF8: [0x61, 0xFF], source: "c.yaml")                // c.yaml: not valid UTF-8 at byte 1
    /// ```
    public init(validatingUTF8 bytes: some Collection<UInt8>, source: String) throws {
        if let text = String(validating: bytes, as: UTF8.self) {
            self = text
            return
        }
        throw RegionKitError(.malformedInput, "\(source): not valid UTF-8 at byte \(String.firstInvalidUTF8(in: bytes) ?? 0)")
    }

    /// The offset of the first byte of `bytes` that is not part of well-formed UTF-8; nil when
    /// they all are.
    static func firstInvalidUTF8(in bytes: some Collection<UInt8>) -> Int? {
        if String(validating: bytes, as: UTF8.self) != nil { return nil }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while case .valid(let scalar) = parser.parseScalar(from: &iterator) { offset += scalar.count }
        return offset
    }
}
