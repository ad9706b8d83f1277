extension BeaconRegion {
    /// Parses a command-line region: `ID:UUID[:MAJOR[:MINOR]][@SCANNER]` (UUID with or without dashes).
    ///
    /// ```swift
    /// let room = try BeaconRegion(specifier: "b3:DAF246CE836311E4B116123B93F75CBA:0:3@Room201")
    /// room.scannerID // "Room201"
    /// ```
    public init(specifier: String) throws {
        var text = Substring(specifier)
        var scanner: String?
        if let at = text.lastIndex(of: "@") {
            scanner = String(text[text.index(after: at)...])
            text = text[..<at]
            guard scanner?.isEmpty == false else {
                throw RegionKitError(.invalidArgument, "region '\(specifier)': empty scanner after '@'")
            }
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (2...4).contains(parts.count), !parts[0].isEmpty else {
            throw RegionKitError(.invalidArgument, "region '\(specifier)': expected ID:UUID[:MAJOR[:MINOR]][@SCANNER]")
        }
        func number(_ index: Int, _ name: String) throws -> UInt16? {
            guard parts.count > index else { return nil }
            guard let value = UInt16(parts[index]) else {
                throw RegionKitError(.invalidArgument, "region '\(specifier)': \(name) '\(parts[index])' is not a number 0...65535")
            }
            return value
        }
        try self.init(identifier: parts[0], uuidString: parts[1], major: number(2, "major"), minor: number(3, "minor"))
        self.scannerID = scanner
    }
}
