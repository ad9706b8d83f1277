import RegionKit

extension Scenario {
    /// Names of the built-in scenarios, each encoding one part of the spec.
    public static let builtInNames = ["museum", "store-coupon", "two-beacons", "start-inside", "flaky-radio", "geofence-walk"]

    /// A built-in scenario by name, or `nil`.
    ///
    /// ```swift
    /// let museum = Scenario.builtIn("museum")!
    /// ```
    public static func builtIn(_ name: String) -> Scenario? {
        switch name {
        case "museum": museum
        case "store-coupon": storeCoupon
        case "two-beacons": twoBeacons
        case "start-inside": startInside
        case "flaky-radio": flakyRadio
        case "geofence-walk": geofenceWalk
        default: nil
        }
    }

    static let museumUUID = "5A4BCFCE-174E-4BAC-A814-092E77F6B7E5"
    static let storeUUID = "7E0F8A3C-2B1D-4F6A-9C5E-3D2B1A0F9E8D"
    static let twoBeaconsUUID = "36E54BC0-AA81-4D4B-A3C9-B0FF983D24E2"
    static let deskUUID = "8D4DB809-032F-4771-96F3-99BD5C25F924"

    /// Spec §3 museum: four exhibits share a UUID, major = exhibit. The visitor walks in, stops
    /// 20 s beside each exhibit (1.5 m away: `near`), walks out. The app shows the exhibit whose
    /// beacon is nearest and `near`.
    public static let museum = Scenario(
        name: "museum",
        description: "Spec §3 museum: exhibits share a UUID (major = exhibit); the app shows the exhibit when the nearest beacon is near.",
        duration: 240, seed: 1,
        radio: RadioModel(pathLossExponent: 2.2, shadowingSigma: 3, lossRate: 0.1, sensitivity: -90),
        automation: Automation(requestStateOnStart: true, rangeWhileInside: true),
        app: .museum,
        beacons: (1...4).map { exhibit in
            SimulatedBeacon(name: "exhibit \(exhibit)", uuid: museumUUID, major: UInt16(exhibit), minor: 1, x: Double(exhibit - 1) * 12, y: 1.5)
        },
        path: [
            Waypoint(t: 0, x: -80, y: 0), Waypoint(t: 55, x: 0, y: 0), Waypoint(t: 75, x: 0, y: 0),
            Waypoint(t: 83, x: 12, y: 0), Waypoint(t: 103, x: 12, y: 0), Waypoint(t: 111, x: 24, y: 0),
            Waypoint(t: 131, x: 24, y: 0), Waypoint(t: 139, x: 36, y: 0), Waypoint(t: 159, x: 36, y: 0),
            Waypoint(t: 215, x: 120, y: 0),
        ],
        regions: [RegionSpec(identifier: "museum", uuid: museumUUID)]
    )

    /// Spec §3 coupon: on entering the store, range once, send one notification for the first
    /// beacon with a known proximity, stop ranging.
    public static let storeCoupon = Scenario(
        name: "store-coupon",
        description: "Spec §3 coupon: on enter, range once, one notification, stop ranging.",
        duration: 180, seed: 1,
        radio: RadioModel(pathLossExponent: 2.2, shadowingSigma: 3, lossRate: 0.1, sensitivity: -90),
        app: .storeCoupon,
        beacons: [SimulatedBeacon(name: "entrance", uuid: storeUUID, major: 10, minor: 7, x: 0, y: 0)],
        path: [Waypoint(t: 0, x: -80, y: 0), Waypoint(t: 40, x: -2, y: 0), Waypoint(t: 90, x: -2, y: 0), Waypoint(t: 130, x: -80, y: 0)],
        regions: [RegionSpec(identifier: "store", uuid: storeUUID, major: 10)]
    )

    /// Spec §1: beacons A and B share a UUID. Walking from A to B gives no event for the UUID-only
    /// region (its coverage is the union) but exit A / enter B for the per-beacon regions.
    public static let twoBeacons = Scenario(
        name: "two-beacons",
        description: "Spec §1: a UUID-only region gets no event moving from beacon A to B; per-beacon regions get exit A / enter B.",
        duration: 140, seed: 1,
        radio: RadioModel(pathLossExponent: 2.5, shadowingSigma: 1.5, lossRate: 0.1, sensitivity: -94),
        automation: Automation(requestStateOnStart: true),
        beacons: [
            SimulatedBeacon(name: "A", uuid: twoBeaconsUUID, major: 0, minor: 1, x: 0, y: 0),
            SimulatedBeacon(name: "B", uuid: twoBeaconsUUID, major: 0, minor: 2, x: 50, y: 0),
        ],
        path: [Waypoint(t: 0, x: 0, y: 1), Waypoint(t: 20, x: 0, y: 1), Waypoint(t: 70, x: 50, y: 1), Waypoint(t: 140, x: 50, y: 1)],
        regions: [
            RegionSpec(identifier: "uuid-only", uuid: twoBeaconsUUID),
            RegionSpec(identifier: "beacon-A", uuid: twoBeaconsUUID, major: 0, minor: 1),
            RegionSpec(identifier: "beacon-B", uuid: twoBeaconsUUID, major: 0, minor: 2),
        ]
    )

    /// Spec §2: monitoring starts with the user already inside: no didEnterRegion; requesting the
    /// state on didStartMonitoring reports inside, and ranging starts.
    public static let startInside = Scenario(
        name: "start-inside",
        description: "Spec §2: started inside → no didEnter; state inside via requestState; ranging starts.",
        duration: 20, seed: 1,
        radio: RadioModel(pathLossExponent: 2.2, shadowingSigma: 3, lossRate: 0.1, sensitivity: -90),
        automation: Automation(requestStateOnStart: true, rangeWhileInside: true),
        beacons: [SimulatedBeacon(name: "desk", uuid: deskUUID, major: 1, minor: 1, x: 0, y: 0)],
        path: [Waypoint(t: 0, x: 1, y: 0)],
        regions: [RegionSpec(identifier: "desk", uuid: deskUUID, major: 1)]
    )

    /// Spec §5: the adapter goes off and on: monitoringDidFail, retries 1 s apart, recovery; a wake
    /// re-requests every state after 1 s, and a region with notifyEntryStateOnDisplay gets its
    /// state at once.
    public static let flakyRadio = Scenario(
        name: "flaky-radio",
        description: "Spec §5: adapter off/on → monitoringDidFail, retry, recovery; wake → state re-requested.",
        duration: 60, seed: 1,
        radio: RadioModel(pathLossExponent: 2.2, shadowingSigma: 3, lossRate: 0.1, sensitivity: -90),
        automation: Automation(requestStateOnStart: true, rangeWhileInside: true, wakeRequestDelay: 1, retry: .init(delay: 1, maximumAttempts: 5)),
        beacons: [SimulatedBeacon(name: "room", uuid: deskUUID, major: 2, minor: 1, x: 0, y: 0)],
        path: [Waypoint(t: 0, x: 2, y: 0)],
        regions: [
            RegionSpec(identifier: "room", uuid: deskUUID),
            RegionSpec(identifier: "room-display", uuid: deskUUID, major: 2, notifyEntryStateOnDisplay: true),
        ],
        actions: [Action(at: 20, action: .adapterOff), Action(at: 23.5, action: .adapterOn), Action(at: 40, action: .wake)]
    )

    /// Spec §2 geofence hysteresis: a walk into a 150 m circle and out again with 8 m GPS noise;
    /// events need the buffer crossed and held (Core Location: 200 m past the boundary, 20 s).
    public static let geofenceWalk = Scenario(
        name: "geofence-walk",
        description: "Spec §2: circular region with boundary buffer and dwell; noisy fixes at the boundary give no flapping.",
        duration: 700, seed: 1,
        beacons: [],
        path: [Waypoint(t: 0, x: -600, y: 0), Waypoint(t: 300, x: 0, y: 0), Waypoint(t: 360, x: 0, y: 0), Waypoint(t: 660, x: 600, y: 0)],
        regions: [RegionSpec(identifier: "station", latitude: 35.6812, longitude: 139.7671, radius: 150)],
        geo: GeoSettings(latitude: 35.6812, longitude: 139.7671, fixInterval: 1, horizontalAccuracy: 8)
    )
}
