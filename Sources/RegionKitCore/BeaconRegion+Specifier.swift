import Foundation

extension BeaconRegion {
    /// Parses a command-line region: `ID:UUID[:MAJOR[:MINOR]][@SCANNER]` (UUID with or without
    /// dashes), for other formats `ID:altbeacon:ID1[:ID2[:ID3]]` (`ibeacon:` may be written too) or
    /// `ID:eddystone:NAMESPACE[:INSTANCE]` (20 and 12 hex digits; `eddystone-uid:` also accepted),
    /// or `ID:device:DEVICE` for a device that is no beacon (``BeaconIdentity/init(deviceID:)``:
    /// an ESPresense id such as `irk:…` or an alias, a Theengs gateway's address).
    ///
    /// ```swift
    /// let room = try BeaconRegion(specifier: "b3:DAF246CE836311E4B116123B93F75CBA:0:3@Room201")
    /// room.scannerID // "Room201"
    /// let shop = try BeaconRegion(specifier: "shop:eddystone:8b0ca750e7a74e14bd99")
    /// let phone = try BeaconRegion(specifier: "alice:device:irk:0123456789abcdef0123456789abcdef")
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
        var parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        if parts.count >= 3, BeaconFormat(name: parts[1]) == .device {
            // The id may have colons of its own (irk:…, C8:0F:…): all after ID:device: is the id.
            let id = parts[2...].joined(separator: ":")
            guard !parts[0].isEmpty else {
                throw RegionKitError(.invalidArgument, "region '\(specifier)': expected ID:device:DEVICE[@SCANNER]")
            }
            do {
                try self.init(identifier: parts[0], constraint: BeaconIdentityConstraint(device: id), scannerID: scanner)
            } catch let error as RegionKitError {
                throw RegionKitError(.invalidArgument, "region '\(specifier)': \(error.message)")
            }
            return
        }
        var format = BeaconFormat.iBeacon
        if parts.count >= 3, let named = BeaconFormat(name: parts[1]) {
            format = named
            parts.remove(at: 1)
        }
        if format == .eddystoneUID {
            guard (2...3).contains(parts.count), !parts[0].isEmpty else {
                throw RegionKitError(.invalidArgument, "region '\(specifier)': expected ID:eddystone:NAMESPACE[:INSTANCE][@SCANNER]")
            }
            do {
                let constraint = try BeaconIdentityConstraint(eddystoneNamespace: parts[1], instance: parts.count > 2 ? parts[2] : nil)
                try self.init(identifier: parts[0], constraint: constraint, scannerID: scanner)
            } catch let error as RegionKitError {
                throw RegionKitError(.invalidArgument, "region '\(specifier)': \(error.message)")
            }
            return
        }
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
        if format == .iBeacon {
            try self.init(identifier: parts[0], uuidString: parts[1], major: number(2, "major"), minor: number(3, "minor"))
        } else {
            guard let id1 = UUID(flexibleString: parts[1]) else {
                throw RegionKitError(.invalidArgument, "region '\(specifier)': id1 '\(parts[1])' is not 16 bytes as a UUID (32 hex digits, dashes optional)")
            }
            let constraint = try BeaconIdentityConstraint(uuid: id1, major: number(2, "id2"), minor: number(3, "id3"), format: format)
            try self.init(identifier: parts[0], constraint: constraint)
        }
        self.scannerID = scanner
    }
}
