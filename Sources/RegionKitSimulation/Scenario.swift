import Foundation
import RegionKit

/// A simulated world: beacons with positions and schedules, a device path, a radio model, the
/// regions the app monitors, scripted actions and the app behaviour. Loaded from JSON or built in.
///
/// Coordinates are metres on a local plane (`x` east, `y` north). For circular regions, `geoOrigin`
/// anchors the plane to latitude/longitude and the device reports fixes.
///
/// ```json
/// {
///   "name": "hall", "duration": 60, "seed": 7,
///   "beacons": [{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 1, "x": 0, "y": 0}],
///   "path": [{"t": 0, "x": -40, "y": 0}, {"t": 30, "x": 0, "y": 1}],
///   "regions": [{"identifier": "hall", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}]
/// }
/// ```
public struct Scenario: Hashable, Sendable, Codable {
    /// A simulated iBeacon transmitter.
    public struct SimulatedBeacon: Hashable, Sendable, Codable {
        public var name: String?
        public var uuid: String
        public var major: UInt16
        public var minor: UInt16
        public var x: Double
        public var y: Double
        /// RSSI at 1 m, dBm (default −59).
        public var measuredPower: Int?
        /// Seconds between advertisements (default 0.1).
        public var advertisingInterval: Double?
        /// Time windows `[from, to)` in which it transmits; absent = always.
        public var on: [Window]?

        public init(name: String? = nil, uuid: String, major: UInt16, minor: UInt16, x: Double, y: Double,
                    measuredPower: Int? = nil, advertisingInterval: Double? = nil, on: [Window]? = nil) {
            self.name = name
            self.uuid = uuid
            self.major = major
            self.minor = minor
            self.x = x
            self.y = y
            self.measuredPower = measuredPower
            self.advertisingInterval = advertisingInterval
            self.on = on
        }
    }

    /// A time window in seconds, `[from, to)`.
    public struct Window: Hashable, Sendable, Codable {
        public var from: Double
        public var to: Double

        public init(from: Double, to: Double) {
            self.from = from
            self.to = to
        }

        /// Overlapping or touching windows merged, sorted by start (for ``contains(_:in:)``).
        static func merged(_ windows: [Window]) -> [Window] {
            var result: [Window] = []
            for window in windows.sorted(by: { $0.from < $1.from }) where window.from < window.to {
                if let last = result.last, window.from <= last.to {
                    result[result.count - 1].to = max(last.to, window.to)
                } else {
                    result.append(window)
                }
            }
            return result
        }

        /// Whether `t` is in one of `merged` (sorted, disjoint): a binary search.
        static func contains(_ t: Double, in merged: [Window]) -> Bool {
            var low = 0, high = merged.count
            while low < high {
                let middle = (low + high) / 2
                if merged[middle].from <= t { low = middle + 1 } else { high = middle }
            }
            return low > 0 && t < merged[low - 1].to
        }
    }

    /// Where the device is at time `t`; positions between waypoints are interpolated linearly.
    public struct Waypoint: Hashable, Sendable, Codable {
        public var t: Double
        public var x: Double
        public var y: Double

        public init(t: Double, x: Double, y: Double) {
            self.t = t
            self.x = x
            self.y = y
        }
    }

    /// A monitored region: a beacon region (`uuid`, optional `major`/`minor`) or a circle
    /// (`latitude`, `longitude`, `radius`).
    public struct RegionSpec: Hashable, Sendable, Codable {
        public var identifier: String
        public var uuid: String?
        public var major: UInt16?
        public var minor: UInt16?
        public var latitude: Double?
        public var longitude: Double?
        public var radius: Double?
        public var notifyOnEntry: Bool?
        public var notifyOnExit: Bool?
        public var notifyEntryStateOnDisplay: Bool?
        /// `ibeacon` (default), `altbeacon` (uuid/major/minor = id1/id2/id3) or `eddystone-uid`
        /// (with ``namespace`` and optionally ``instance``, hex).
        public var format: String?
        public var namespace: String?
        public var instance: String?
        /// A device region's device (format `device`, which may be left out): `BeaconIdentity.init(deviceID:)`.
        public var device: String?

        public init(identifier: String, uuid: String? = nil, major: UInt16? = nil, minor: UInt16? = nil,
                    latitude: Double? = nil, longitude: Double? = nil, radius: Double? = nil,
                    notifyOnEntry: Bool? = nil, notifyOnExit: Bool? = nil, notifyEntryStateOnDisplay: Bool? = nil) {
            self.identifier = identifier
            self.uuid = uuid
            self.major = major
            self.minor = minor
            self.latitude = latitude
            self.longitude = longitude
            self.radius = radius
            self.notifyOnEntry = notifyOnEntry
            self.notifyOnExit = notifyOnExit
            self.notifyEntryStateOnDisplay = notifyEntryStateOnDisplay
        }

        /// The validated region.
        public func region() throws -> Region {
            let kind = try format.map { text -> BeaconFormat in
                guard let kind = BeaconFormat(name: text) else {
                    throw RegionKitError(.invalidRegion, "region '\(identifier)': format '\(text)' is not ibeacon, altbeacon, eddystone-uid or device")
                }
                return kind
            } ?? (namespace != nil ? .eddystoneUID : device != nil ? .device : .iBeacon)
            if kind == .device {
                guard let device, uuid == nil, major == nil, minor == nil, namespace == nil, instance == nil,
                      latitude == nil, longitude == nil, radius == nil else {
                    throw RegionKitError(.invalidRegion, "region '\(identifier)': a device region takes device only (the id its scanner gives it)")
                }
                let constraint: BeaconIdentityConstraint
                do { constraint = try BeaconIdentityConstraint(device: device) } catch let error as RegionKitError {
                    throw RegionKitError(.invalidRegion, "region '\(identifier)': \(error.message)")
                }
                return .beacon(try BeaconRegion(identifier: identifier, constraint: constraint, notifyOnEntry: notifyOnEntry ?? true,
                                                notifyOnExit: notifyOnExit ?? true, notifyEntryStateOnDisplay: notifyEntryStateOnDisplay ?? false))
            }
            if device != nil {
                throw RegionKitError(.invalidRegion, "region '\(identifier)': device goes with format device (or no format)")
            }
            if kind == .eddystoneUID {
                guard let namespace, uuid == nil, major == nil, minor == nil, latitude == nil, longitude == nil, radius == nil else {
                    throw RegionKitError(.invalidRegion, "region '\(identifier)': an eddystone-uid region takes namespace (and instance) only")
                }
                let constraint: BeaconIdentityConstraint
                do { constraint = try BeaconIdentityConstraint(eddystoneNamespace: namespace, instance: instance) } catch let error as RegionKitError {
                    throw RegionKitError(.invalidRegion, "region '\(identifier)': \(error.message)")
                }
                return .beacon(try BeaconRegion(identifier: identifier, constraint: constraint, notifyOnEntry: notifyOnEntry ?? true,
                                                notifyOnExit: notifyOnExit ?? true, notifyEntryStateOnDisplay: notifyEntryStateOnDisplay ?? false))
            }
            if namespace != nil || instance != nil {
                throw RegionKitError(.invalidRegion, "region '\(identifier)': namespace/instance go with format eddystone-uid")
            }
            // A format names a beacon region: never fall through to a circle (latitude/longitude/radius).
            if let format, uuid == nil {
                throw RegionKitError(.invalidRegion, "region '\(identifier)': format \(format) needs uuid\(kind == .altBeacon ? " (id1)" : ""); a circular region (latitude/longitude/radius) takes no format")
            }
            if kind == .altBeacon, let uuid {
                guard latitude == nil, longitude == nil, radius == nil, let id1 = UUID(flexibleString: uuid) else {
                    throw RegionKitError(.invalidRegion, "region '\(identifier)': an altbeacon region needs uuid (id1, 32 hex digits) and no latitude/longitude/radius")
                }
                return .beacon(try BeaconRegion(identifier: identifier, constraint: BeaconIdentityConstraint(uuid: id1, major: major, minor: minor, format: .altBeacon),
                                                notifyOnEntry: notifyOnEntry ?? true, notifyOnExit: notifyOnExit ?? true,
                                                notifyEntryStateOnDisplay: notifyEntryStateOnDisplay ?? false))
            }
            if let uuid {
                guard latitude == nil, longitude == nil, radius == nil else {
                    throw RegionKitError(.invalidRegion, "region '\(identifier)': give either uuid (beacon region) or latitude/longitude/radius (circular region), not both")
                }
                var beacon = try BeaconRegion(identifier: identifier, uuidString: uuid, major: major, minor: minor)
                beacon.notifyOnEntry = notifyOnEntry ?? true
                beacon.notifyOnExit = notifyOnExit ?? true
                beacon.notifyEntryStateOnDisplay = notifyEntryStateOnDisplay ?? false
                return .beacon(beacon)
            }
            guard let latitude, let longitude, let radius else {
                throw RegionKitError(.invalidRegion, "region '\(identifier)': needs uuid, or latitude, longitude and radius")
            }
            return .circular(try CircularRegion(identifier: identifier, latitude: latitude, longitude: longitude, radius: radius,
                                                notifyOnEntry: notifyOnEntry ?? true, notifyOnExit: notifyOnExit ?? true))
        }
    }

    /// Something that happens at a given time.
    public struct Action: Hashable, Sendable, Codable {
        public enum Kind: String, Hashable, Sendable, Codable {
            /// The Bluetooth adapter is switched off: no sightings, the beacon source is unavailable.
            case adapterOff
            case adapterOn
            /// The location source is lost / back.
            case locationOff
            case locationOn
            /// The device wakes (display on / app activated).
            case wake
            case startMonitoring
            case stopMonitoring
            case requestState
            case startRanging
            case stopRanging
        }

        public var at: Double
        public var action: Kind
        /// The region identifier for monitoring, state and ranging actions.
        public var region: String?

        public init(at: Double, action: Kind, region: String? = nil) {
            self.at = at
            self.action = action
            self.region = region
        }
    }

    /// Anchors the local plane to the Earth and describes the device's location fixes.
    public struct GeoSettings: Hashable, Sendable, Codable {
        public var latitude: Double
        public var longitude: Double
        /// Seconds between fixes (default 1).
        public var fixInterval: Double?
        /// Horizontal accuracy reported and used as the noise σ, metres (default 5).
        public var horizontalAccuracy: Double?

        public init(latitude: Double, longitude: Double, fixInterval: Double? = nil, horizontalAccuracy: Double? = nil) {
            self.latitude = latitude
            self.longitude = longitude
            self.fixInterval = fixInterval
            self.horizontalAccuracy = horizontalAccuracy
        }
    }

    public var name: String
    public var description: String?
    /// Virtual seconds to run.
    public var duration: Double
    public var seed: UInt64?
    /// `corelocation` or `responsive` (the command line may override it).
    public var profile: String?
    public var radio: RadioModel?
    public var automation: Automation?
    /// The app behaviour: `none` (default), `museum`, `store-coupon`.
    public var app: AppBehavior.Kind?
    public var beacons: [SimulatedBeacon]
    public var path: [Waypoint]
    public var regions: [RegionSpec]
    /// Regions registered at t = 0 (default: all of them).
    public var monitorAtStart: [String]?
    public var actions: [Action]?
    public var geo: GeoSettings?

    public init(name: String, description: String? = nil, duration: Double, seed: UInt64? = nil, profile: String? = nil,
                radio: RadioModel? = nil, automation: Automation? = nil, app: AppBehavior.Kind? = nil,
                beacons: [SimulatedBeacon], path: [Waypoint], regions: [RegionSpec], monitorAtStart: [String]? = nil,
                actions: [Action]? = nil, geo: GeoSettings? = nil) {
        self.name = name
        self.description = description
        self.duration = duration
        self.seed = seed
        self.profile = profile
        self.radio = radio
        self.automation = automation
        self.app = app
        self.beacons = beacons
        self.path = path
        self.regions = regions
        self.monitorAtStart = monitorAtStart
        self.actions = actions
        self.geo = geo
    }

    /// Device position at `t` (a binary search over the waypoints, sorted by time).
    public func position(at t: Double) -> (x: Double, y: Double) {
        guard let first = path.first else { return (0, 0) }
        if t <= first.t { return (first.x, first.y) }
        // The first waypoint b with t <= b.t.
        var low = 1, high = path.count
        while low < high {
            let middle = (low + high) / 2
            if t <= path[middle].t { high = middle } else { low = middle + 1 }
        }
        guard low < path.count else {
            let last = path[path.count - 1]
            return (last.x, last.y)
        }
        let a = path[low - 1], b = path[low]
        let span = b.t - a.t
        let f = span > 0 ? (t - a.t) / span : 1
        return (a.x + (b.x - a.x) * f, a.y + (b.y - a.y) * f)
    }
}
