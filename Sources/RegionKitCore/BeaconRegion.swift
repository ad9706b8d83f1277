import Foundation

/// A region defined by iBeacon identity, as Core Location's `CLBeaconRegion`.
///
/// A UUID-only region matches every beacon with that UUID; UUID+major matches that major; UUID,
/// major and minor match one beacon identity. Many physical beacons may transmit the same identity:
/// the region is then the union of their coverage.
///
/// ```swift
/// let gallery = try BeaconRegion(identifier: "gallery", uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 3)
/// gallery.notifyOnEntry // true
/// ```
public struct BeaconRegion: Hashable, Sendable, Codable {
    /// The app's name for the region; never transmitted by beacons.
    public let identifier: String
    public let constraint: BeaconIdentityConstraint
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool
    /// Also deliver the current state when the device "wakes" (`LocationManager.wake()`).
    public var notifyEntryStateOnDisplay: Bool
    /// When set, only sightings reported by this scanner count (a gateway "room"); `nil` = any scanner.
    public var scannerID: String?

    public var uuid: UUID { constraint.uuid }
    public var major: UInt16? { constraint.major }
    public var minor: UInt16? { constraint.minor }

    public init(
        identifier: String,
        constraint: BeaconIdentityConstraint,
        notifyOnEntry: Bool = true,
        notifyOnExit: Bool = true,
        notifyEntryStateOnDisplay: Bool = false,
        scannerID: String? = nil
    ) throws {
        try Region.validate(identifier: identifier)
        self.identifier = Region.canonical(identifier: identifier)
        self.constraint = constraint
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
        self.notifyEntryStateOnDisplay = notifyEntryStateOnDisplay
        self.scannerID = scannerID
    }

    public init(identifier: String, uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil) throws {
        do {
            try self.init(identifier: identifier, constraint: BeaconIdentityConstraint(uuid: uuid, major: major, minor: minor))
        } catch let error as RegionKitError {
            throw RegionKitError(error.code, "region '\(identifier)': \(error.message)")
        }
    }

    public init(identifier: String, uuidString: String, major: UInt16? = nil, minor: UInt16? = nil) throws {
        do {
            try self.init(identifier: identifier, constraint: BeaconIdentityConstraint(uuidString: uuidString, major: major, minor: minor))
        } catch let error as RegionKitError {
            throw RegionKitError(error.code, "region '\(identifier)': \(error.message)")
        }
    }

    private enum CodingKeys: String, CodingKey {
        case identifier, constraint, notifyOnEntry, notifyOnExit, notifyEntryStateOnDisplay, scannerID
    }

    /// Decodes through the checking initializer: a stored or received definition with an empty
    /// identifier (or a NUL in it) is refused as the initializer refuses it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        do {
            try self.init(identifier: container.decode(String.self, forKey: .identifier),
                          constraint: container.decode(BeaconIdentityConstraint.self, forKey: .constraint),
                          notifyOnEntry: container.decode(Bool.self, forKey: .notifyOnEntry),
                          notifyOnExit: container.decode(Bool.self, forKey: .notifyOnExit),
                          notifyEntryStateOnDisplay: container.decode(Bool.self, forKey: .notifyEntryStateOnDisplay),
                          scannerID: container.decodeIfPresent(String.self, forKey: .scannerID))
        } catch let error as RegionKitError {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    /// Whether a sighting of `identity` (optionally by scanner `scanner`) belongs to this region.
    public func matches(_ identity: BeaconIdentity, scanner: String? = nil) -> Bool {
        guard constraint.matches(identity) else { return false }
        guard let scannerID else { return true }
        return scanner == scannerID
    }
}
