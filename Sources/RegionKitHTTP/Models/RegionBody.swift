import Foundation
import RegionKitCore

/// The body of `PUT /v1/regions/{id}`: one region of the daemon's configuration without its
/// identifier (which is the path's), with the same validation and defaults.
///
/// Beacon region: `uuid` with optional `major`/`minor` (`format` `ibeacon`, the default, or
/// `altbeacon` for id1/id2/id3), or `format: eddystone-uid` with `namespace` (20 hex digits) and an
/// optional `instance` (12), or `device` (format `device`, which may be left out: a phone, watch or
/// tracker by the id its scanner gives it, `BeaconIdentity.init(deviceID:)`); optionally
/// `scanner` (the region hears only that scanner). Circular
/// region: `latitude`, `longitude`, `radius` (metres). `notifyOnEntry`/`notifyOnExit` default to
/// true, `notifyEntryStateOnDisplay` to false. Unknown fields are rejected; every error names its
/// field. What `GET /v1/regions/{id}` reports can be sent back unchanged (its read-only fields
/// apart).
///
/// ```swift
/// let region = try RegionBody.region(identifier: "lobby", json: Data(#"{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1}"#.utf8))
/// ```
public enum RegionBody {
    static let fields: Set<String> = ["format", "uuid", "major", "minor", "namespace", "instance", "device", "scanner", "latitude", "longitude", "radius",
                                      "notifyOnEntry", "notifyOnExit", "notifyEntryStateOnDisplay"]

    /// Why `json` could not be read. Foundation's decoder says "not valid JSON" of a number beyond
    /// a Double (`1e309`) too: that is named with its value, and its field when a key precedes it.
    static func unreadable(_ json: Data) -> Problem {
        guard json.count <= 1 << 20 else { return Problem(.badRequest, "the body is not valid JSON", field: "body") }
        if let syntax = JSONSyntaxError.first(in: json) {
            return Problem(.badRequest, "the body is not valid JSON: \(syntax)", field: "body")
        }
        let unreadable = Problem(.badRequest, "the body is not valid JSON", field: "body")
        do {
            _ = try JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])
            return unreadable
        } catch {
            let detail = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? ""
            guard detail.hasPrefix("Number "), let end = detail.range(of: " is not representable") else { return unreadable }
            let number = String(detail[detail.index(detail.startIndex, offsetBy: 7)..<end.lowerBound])
            let field = key(before: number, in: String(decoding: json, as: UTF8.self))
            return Problem(.badRequest, "\(field ?? "a number") \(number) is beyond what a number can hold", field: field ?? "body")
        }
    }

    /// The key whose value is the first occurrence of the number `literal` in `text` (`"radius": 1e309`), if any.
    private static func key(before literal: String, in text: String) -> String? {
        guard let found = text.range(of: literal) else { return nil }
        var index = found.lowerBound
        func back() -> Character? {
            guard index > text.startIndex else { return nil }
            index = text.index(before: index)
            return text[index]
        }
        var character = back()
        while let c = character, c.isWhitespace { character = back() }
        guard character == ":" else { return nil }
        character = back()
        while let c = character, c.isWhitespace { character = back() }
        guard character == "\"" else { return nil }
        let close = index
        while let c = back() {
            if c == "\"" { return String(text[text.index(after: index)..<close]) }
        }
        return nil
    }

    /// Parses and validates; throws ``Problem`` (400) naming the field.
    public static func region(identifier: String, json: Data, maximumRadius: Double? = nil) throws -> Region {
        do { try Region.validateNew(identifier: identifier) } catch let error as RegionKitError {
            throw Problem(.badRequest, error.message, field: "id")
        }
        // JSON is UTF-8 (RFC 8259 §8.1). Foundation also reads UTF-16 and UTF-32, which the
        // duplicate-field check below does not: refused with a word instead.
        guard !json.contains(0), String(validating: json, as: UTF8.self) != nil else {
            throw Problem(.badRequest, "the body must be JSON in UTF-8", field: "body")
        }
        let parsed: JSONValue
        do {
            parsed = try JSONDecoder().decode(JSONValue.self, from: json)
        } catch {
            throw unreadable(json)
        }
        guard case .object(let object) = parsed else {
            throw Problem(.badRequest, "the body must be a JSON object", field: "body")
        }
        if let duplicate = JSONDuplicateKey.first(in: json)?.key {
            throw Problem(.badRequest, "the field '\(duplicate.prefix(80))' is given twice; give each field once", field: fields.contains(duplicate) ? duplicate : "body")
        }
        if let unknown = object.keys.sorted().first(where: { !fields.contains($0) }) {
            if unknown == "identifier" {
                throw Problem(.badRequest, "the identifier is the path's ({id}), not a body field", field: unknown)
            }
            throw Problem(.badRequest, "unknown field '\(unknown)' (allowed: \(fields.sorted().joined(separator: ", ")))", field: unknown)
        }
        func present(_ key: String) -> Bool {
            if let value = object[key], value != .null { return true }
            return false
        }
        func string(_ key: String) throws -> String? {
            switch object[key] {
            case nil: return nil
            case .string(let text)?: return text
            default: throw Problem(.badRequest, "\(key) must be a string (leave it out rather than null)", field: key)
            }
        }
        func bool(_ key: String) throws -> Bool? {
            switch object[key] {
            case nil: return nil
            case .bool(let value)?: return value
            default: throw Problem(.badRequest, "\(key) must be true or false (leave it out rather than null)", field: key)
            }
        }
        func number(_ key: String) throws -> Double? {
            switch object[key] {
            case nil: return nil
            case .number(let value)?:
                guard value.isFinite else { throw Problem(.badRequest, "\(key) must be a finite number", field: key) }
                return value
            default: throw Problem(.badRequest, "\(key) must be a number (leave it out rather than null)", field: key)
            }
        }
        func uint16(_ key: String) throws -> UInt16? {
            guard let value = try number(key) else { return nil }
            guard value == value.rounded(), value >= 0, value <= 65_535 else {
                throw Problem(.badRequest, "\(key) must be an integer from 0 to 65535", field: key)
            }
            return UInt16(value)
        }
        let uuid = try string("uuid")
        let major = try uint16("major"), minor = try uint16("minor")
        let namespace = try string("namespace"), instance = try string("instance"), scanner = try string("scanner"), device = try string("device")
        let format: BeaconFormat?
        if let name = try string("format") {
            // The canonical names only (the configuration also takes `eddystone` and any case).
            guard let parsed = BeaconFormat.allCases.first(where: { $0.name == name }) else {
                throw Problem(.badRequest, "format '\(name.prefix(40))' is not ibeacon, altbeacon, eddystone-uid or device", field: "format")
            }
            format = parsed
        } else {
            format = nil
        }
        // Bytes, as the MQTT sources count a scanner's name: a longer one could never match.
        if let scanner, scanner.isEmpty || scanner.utf8.count > 128 || scanner.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw Problem(.badRequest, "scanner must be 1–128 bytes of UTF-8 without control characters", field: "scanner")
        }
        let latitude = try number("latitude"), longitude = try number("longitude"), radius = try number("radius")
        let notifyOnEntry = try bool("notifyOnEntry") ?? true
        let notifyOnExit = try bool("notifyOnExit") ?? true
        let onDisplay = try bool("notifyEntryStateOnDisplay")
        do {
            if format == .device || device != nil {
                guard format == .device || format == nil else {
                    throw Problem(.badRequest, "device belongs to format device (or no format)", field: "format")
                }
                if let key = ["uuid", "major", "minor", "namespace", "instance", "latitude", "longitude", "radius"].first(where: present) {
                    throw Problem(.badRequest, "\(key) does not apply to a device region (give device, the id its scanner gives it)", field: key)
                }
                guard let device else { throw Problem(.badRequest, "a device region needs device (irk:…, an address or an ESPresense id)", field: "device") }
                let constraint: BeaconIdentityConstraint
                do { constraint = try BeaconIdentityConstraint(device: device) } catch let error as RegionKitError {
                    throw Problem(.badRequest, error.message, field: "device")
                }
                return .beacon(try BeaconRegion(identifier: identifier, constraint: constraint, notifyOnEntry: notifyOnEntry, notifyOnExit: notifyOnExit,
                                                notifyEntryStateOnDisplay: onDisplay ?? false, scannerID: scanner))
            }
            if format == .eddystoneUID || namespace != nil || instance != nil {
                if let key = ["latitude", "longitude", "radius"].first(where: present) {
                    throw Problem(.badRequest, "an Eddystone-UID region is a namespace and an optional instance, not a circle", field: key)
                }
                guard format == .eddystoneUID else {
                    throw Problem(.badRequest, "namespace and instance belong to format eddystone-uid", field: format == nil ? "format" : namespace != nil ? "namespace" : "instance")
                }
                if let key = ["uuid", "major", "minor"].first(where: present) {
                    throw Problem(.badRequest, "\(key) does not apply to an Eddystone-UID region (give namespace and an optional instance)", field: key)
                }
                guard let namespace else { throw Problem(.badRequest, "an Eddystone-UID region needs namespace (20 hex digits)", field: "namespace") }
                let constraint: BeaconIdentityConstraint
                do {
                    constraint = try BeaconIdentityConstraint(eddystoneNamespace: namespace, instance: instance)
                } catch let error as RegionKitError {
                    throw Problem(.badRequest, error.message, field: error.message.hasPrefix("Eddystone instance") ? "instance" : "namespace")
                }
                return .beacon(try BeaconRegion(identifier: identifier, constraint: constraint, notifyOnEntry: notifyOnEntry, notifyOnExit: notifyOnExit,
                                                notifyEntryStateOnDisplay: onDisplay ?? false, scannerID: scanner))
            }
            if let uuid {
                if let key = ["latitude", "longitude", "radius"].first(where: present) {
                    throw Problem(.badRequest, "give either uuid (beacon region) or latitude/longitude/radius (circular region), not both", field: key)
                }
                // As the configuration and --region take it: dashes optional.
                guard let parsed = UUID(flexibleString: uuid) else {
                    throw Problem(.badRequest, "uuid '\(uuid.prefix(40))' is not a UUID (32 hex digits, dashes optional: 8-4-4-4-12)", field: "uuid")
                }
                if minor != nil && major == nil {
                    throw Problem(.badRequest, "minor needs major", field: "minor")
                }
                let constraint = try BeaconIdentityConstraint(uuid: parsed, major: major, minor: minor, format: format ?? .iBeacon)
                return .beacon(try BeaconRegion(identifier: identifier, constraint: constraint, notifyOnEntry: notifyOnEntry, notifyOnExit: notifyOnExit,
                                                notifyEntryStateOnDisplay: onDisplay ?? false, scannerID: scanner))
            }
            if format != nil {
                throw Problem(.badRequest, "a beacon region of format \(format?.name ?? "") needs uuid", field: "uuid")
            }
            if scanner != nil {
                throw Problem(.badRequest, "scanner applies to beacon regions only", field: "scanner")
            }
            if major != nil || minor != nil {
                throw Problem(.badRequest, "major and minor belong to a beacon region: give uuid", field: major != nil ? "major" : "minor")
            }
            if onDisplay != nil {
                throw Problem(.badRequest, "notifyEntryStateOnDisplay applies to beacon regions only", field: "notifyEntryStateOnDisplay")
            }
            guard let latitude else { throw Problem(.badRequest, "needs uuid, or latitude, longitude and radius", field: object.isEmpty ? "uuid" : "latitude") }
            guard let longitude else { throw Problem(.badRequest, "a circular region needs longitude", field: "longitude") }
            guard let radius else { throw Problem(.badRequest, "a circular region needs radius (metres)", field: "radius") }
            guard (-90...90).contains(latitude) else { throw Problem(.badRequest, "latitude \(latitude) is outside -90...90", field: "latitude") }
            guard (-180...180).contains(longitude) else { throw Problem(.badRequest, "longitude \(longitude) is outside -180...180", field: "longitude") }
            guard radius >= 0 else { throw Problem(.badRequest, "radius \(radius) m must be >= 0", field: "radius") }
            if let maximumRadius, radius > maximumRadius {
                throw Problem(.badRequest, "radius \(radius) m is larger than the profile's maximum of \(maximumRadius) m", field: "radius")
            }
            return .circular(try CircularRegion(identifier: identifier, latitude: latitude, longitude: longitude, radius: radius,
                                                notifyOnEntry: notifyOnEntry, notifyOnExit: notifyOnExit))
        } catch let error as RegionKitError {
            let field = ["uuid", "major", "minor", "namespace", "instance", "scanner", "latitude", "longitude", "radius"].first { error.message.contains($0) } ?? "body"
            throw Problem(.badRequest, error.message, field: field)
        }
    }
}
