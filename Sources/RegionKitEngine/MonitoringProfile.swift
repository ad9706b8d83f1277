import RegionKitCore
/// Every timing and threshold of the engine, as one value. Three presets: ``coreLocation``
/// reproduces the iOS figures of the spec; ``altBeacon`` the Android Beacon Library's defaults (a
/// baseline for comparisons); ``responsive`` (the default) is faster than both.
///
/// ```swift
/// var profile = MonitoringProfile.responsive
/// profile.regionLimit = 100
/// let engine = MonitoringEngine(profile: profile)
/// ```
public struct MonitoringProfile: Sendable {
    /// A name for logs and JSON (`"corelocation"`, `"altbeacon"`, `"responsive"`).
    public var name: String
    /// Maximum monitored regions (Core Location: 20); `nil` = no limit.
    public var regionLimit: Int?
    /// Largest accepted circular-region radius, metres.
    public var maximumRegionMonitoringDistance: Double
    /// When a silent beacon stream counts as gone.
    public var exitDetector: ExitDetector
    /// After registration, a beacon region with no sighting for this long is determined outside.
    public var initialDeterminationWindow: Double
    /// Seconds between `didRangeBeacons` deliveries.
    public var rangingInterval: Double
    /// A ranged beacon not heard for this long is dropped from the list (Core Location: ~10 s).
    /// A scanner that reports a beacon less often (an ESPresense node every ~5 s) keeps it for
    /// 2.5 times its mean gap, up to the exit detector's longest silence
    /// (``RangingSession/Reading/retention(under:)``).
    public var rangingRetention: Double
    /// Smoothing of RSSI before the distance estimate.
    public var rssiFilter: RSSIFilter
    public var distanceModel: any DistanceModel
    public var proximityThresholds: ProximityThresholds
    public var geoHysteresis: GeoHysteresis
    /// When set, the engine tracks which scanner each beacon is nearest (gateway deployments).
    public var nearestScanner: NearestScannerPolicy?

    public init(
        name: String,
        regionLimit: Int?,
        maximumRegionMonitoringDistance: Double,
        exitDetector: ExitDetector,
        initialDeterminationWindow: Double,
        rangingInterval: Double,
        rangingRetention: Double,
        rssiFilter: RSSIFilter,
        distanceModel: any DistanceModel,
        proximityThresholds: ProximityThresholds,
        geoHysteresis: GeoHysteresis,
        nearestScanner: NearestScannerPolicy? = nil
    ) {
        self.name = name
        self.regionLimit = regionLimit
        self.maximumRegionMonitoringDistance = maximumRegionMonitoringDistance
        self.exitDetector = exitDetector
        self.initialDeterminationWindow = initialDeterminationWindow
        self.rangingInterval = rangingInterval
        self.rangingRetention = rangingRetention
        self.rssiFilter = rssiFilter
        self.distanceModel = distanceModel
        self.proximityThresholds = proximityThresholds
        self.geoHysteresis = geoHysteresis
        self.nearestScanner = nearestScanner
    }

    /// The iOS behaviour measured in the spec (§2, §3): 20 regions; exit 30–40 s after the last
    /// sighting (30 s of silence on a 10 s grid); ranging every 1 s, a silent beacon listed with
    /// rssi 0 for 10 s; geofences need the position 200 m past the boundary (half the radius
    /// inside a smaller circle) for 20 s. The 400 km radius ceiling is
    /// RegionKit's choice (iOS reports a device-specific value).
    public static let coreLocation = MonitoringProfile(
        name: "corelocation",
        regionLimit: 20,
        maximumRegionMonitoringDistance: 400_000,
        exitDetector: .fixedSilence(seconds: 30, evaluationInterval: 10),
        initialDeterminationWindow: 3,
        rangingInterval: 1,
        rangingRetention: 10,
        rssiFilter: .movingAverage(window: 5),
        distanceModel: CurveDistanceModel.coreLocation,
        proximityThresholds: ProximityThresholds(immediate: 0.5, near: 3),
        geoHysteresis: .coreLocation
    )

    /// The Android Beacon Library's defaults, as a baseline: a region is exited when no matching
    /// beacon was seen for 10 s (`regionExitPeriod`), checked at the end of each 1.1 s foreground
    /// scan cycle (so exits come 10–11.1 s after the last sighting); ranging delivers once per
    /// scan cycle, keeps a silent beacon 5 s (`RangedBeacon`'s tracking age), smooths RSSI with its
    /// `RunningAverageRssiFilter` (20 s, trimmed) and estimates distance with its default curve
    /// (Nexus 5 coefficients).
    ///
    /// Not modelled: the scan cycle's effect on *reception* (every sighting reaches the engine at
    /// once, as with `setBackgroundBetweenScanPeriod(0)` in the foreground; background cycles of
    /// 10 s scanning every 5 min are not simulated), Android's scan throttling and duplicate
    /// filtering, and the library's persistence of region state across app restarts. The library
    /// has no geofencing: circular regions use RegionKit's responsive hysteresis, and its region
    /// count is not limited here. The first determination ("outside" when nothing is heard) uses
    /// the same 3 s window as the other presets.
    public static let altBeacon = MonitoringProfile(
        name: "altbeacon",
        regionLimit: nil,
        maximumRegionMonitoringDistance: 10_000_000,
        exitDetector: .fixedSilence(seconds: 10, evaluationInterval: 1.1),
        initialDeterminationWindow: 3,
        rangingInterval: 1.1,
        rangingRetention: 5,
        rssiFilter: .altBeaconRunningAverage(window: 20),
        distanceModel: CurveDistanceModel.androidNexus5,
        proximityThresholds: ProximityThresholds(immediate: 0.5, near: 3),
        geoHysteresis: .responsive
    )

    /// RegionKit's default: no region limit; a stream is gone when a silence that long would come
    /// less than once per 10,000 hours of a stream that is still there, under the stream's own
    /// learned gap distribution (mean interval, share and size of its long gaps; ≥ 1 s, ≤ 60 s; see
    /// ``ExitDetector/learnedGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``),
    /// evaluated, at a scanner whose settled streams have shown their tails, with the uncertainty
    /// of the stream's history and the bursts those streams show (a new 10 Hz stream at a calm
    /// scanner exits ~3 s after it stops; with no settled stream to go by, ~13 s);
    /// ranging drops silent beacons after 5 s; geofences need 10 m (or the fix's accuracy) past
    /// the boundary held 5 s.
    public static let responsive = MonitoringProfile(
        name: "responsive",
        regionLimit: nil,
        maximumRegionMonitoringDistance: 10_000_000,
        exitDetector: .learnedGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1),
        initialDeterminationWindow: 3,
        rangingInterval: 1,
        rangingRetention: 5,
        rssiFilter: .movingAverage(window: 3),
        distanceModel: CurveDistanceModel.coreLocation,
        proximityThresholds: ProximityThresholds(immediate: 0.5, near: 3),
        geoHysteresis: .responsive
    )

    /// Experimental (`--profile periodic`): ``responsive`` with the periodic, shared-silence and
    /// scanner-prior models (``ExitDetector/periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``):
    /// the geometric tail of a periodic stream's learned loss per period, silences shared by every
    /// stream of a scanner excused (up to 10 s or twice the longest blackout seen), new streams
    /// starting from their scanner's other streams. Faster on simulated channels, but not the
    /// default yet: slower on the real recordings' ≈10 Hz streams and with false exits under shared
    /// blackouts (BENCHMARKS.md, issue 15).
    public static let periodic: MonitoringProfile = {
        var profile = MonitoringProfile.responsive
        profile.name = "periodic"
        profile.exitDetector = .periodicGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
        return profile
    }()

    /// Experimental (`--profile evidence`): ``responsive`` with the RSSI trend and other scanners
    /// as evidence (``ExitDetector/evidenceGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``):
    /// a stream that was fading when it went silent, or whose beacon another scanner hears at least
    /// as well during the silence (scanner-bound regions, and the nearest-scanner decision), exits
    /// earlier; a steady stream is unchanged.
    public static let evidence: MonitoringProfile = {
        var profile = MonitoringProfile.responsive
        profile.name = "evidence"
        profile.exitDetector = .evidenceGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
        return profile
    }()

    /// The reference for measurements (`--profile cautiousprior`): ``responsive`` as it was before
    /// new streams got a principled bound, a fixed cautious prior instead
    /// (``ExitDetector/cautiousGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``:
    /// a 10 Hz stream heard 2.5 s exits ~13 s after it stops).
    public static let cautiousPrior: MonitoringProfile = {
        var profile = MonitoringProfile.responsive
        profile.name = "cautiousprior"
        profile.exitDetector = .cautiousGaps(falseExitsPerHour: 1e-4, minimumSilence: 1, maximumSilence: 60, priorInterval: 1)
        return profile
    }()

    /// The names ``named(_:)`` knows, as messages and help list them: the three presets, then the
    /// experimental and the reference profiles (a message listing three of six sent users who had
    /// read of `periodic` in BENCHMARKS.md looking for a typo).
    public static let namesDescription = "corelocation, altbeacon, responsive (or the experimental periodic and evidence, the reference cautiousprior)"

    /// The preset named `name` (`corelocation`/`core-location`/`ios`,
    /// `altbeacon`/`android-beacon-library`, `responsive`, the experimental `periodic` and `evidence`, and the
    /// reference `cautiousprior`), or `nil`.
    public static func named(_ name: String) -> MonitoringProfile? {
        switch name.lowercased() {
        case "corelocation", "core-location", "ios": .coreLocation
        case "altbeacon", "android-beacon-library": .altBeacon
        case "responsive", "default": .responsive
        case "learnedgaps": .responsive
        case "periodic": .periodic
        case "cautiousprior": .cautiousPrior
        case "evidence": .evidence
        default: nil
        }
    }
}
