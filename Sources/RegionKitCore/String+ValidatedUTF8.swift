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
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while case .valid(let scalar) = parser.parseScalar(from: &iterator) { offset += scalar.count }
        throw RegionKitError(.malformedInput, "\(source): not valid UTF-8 at byte \(offset)")
    }
}
