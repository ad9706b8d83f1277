import ArgumentParser
import Foundation
import RegionKit

/// `regionkit bench geofence --regions FILE --fixes FILE`: which circular regions contain each
/// fix, through RegionKit's spatial index and through the full engine, in fixes per second.
///
/// - **index**: `RegionIndex.forEachMatch` for every fix (regions whose circle contains it:
///   great-circle distance to the centre ≤ radius) — the containment query itself;
/// - **engine**: `MonitoringEngine.ingest(fix)` with every region registered (responsive
///   profile): index query, hysteresis, dwell timers and state updates. The first fix, which
///   determines every region's state once, is timed apart. After the timed passes, an untimed
///   one counts the regions the engine evaluates per fix (`circularRegionsToEvaluate`): what the
///   index leaves of the whole set.
///
/// Timed passes run over the fixes again (shifted in time) until `--min-seconds` is reached,
/// single thread, input preloaded. An untimed pass computes the containing (fix, region)
/// pairs, how many fixes are in at least one region and Σ (fix id × 1,000,003 + region id), the
/// figures `scripts/bench-compare.sh` compares with PostGIS's.
///
/// ```sh
/// .build/release/regionkit bench geofence --regions regions.csv --fixes fixes.csv --json
/// ```
struct BenchGeofence: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geofence",
        abstract: "Geofence fixes/s through the spatial index and the full MonitoringEngine fix path.",
        discussion: "regions: CSV id,latitude,longitude,radius; fixes: CSV id,time,latitude,longitude,accuracy (scripts/bench/generate.py). Run a release build."
    )

    @Option(help: "Circular regions, CSV id,latitude,longitude,radius.")
    var regions: String

    @Option(help: "Location fixes, CSV id,time,latitude,longitude,accuracy.")
    var fixes: String

    @Option(help: "Minimum seconds for each timed measurement (the fixes are run again until it is reached).")
    var minSeconds: Double = 2

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard minSeconds >= 0, minSeconds.isFinite else { throw ValidationError("--min-seconds must be a finite number >= 0") }
    }

    func run() async throws {
        try await Console.reportingErrors { try measure() }
    }

    /// The containing pairs of every fix, as PostGIS is asked for them.
    struct Containment: Equatable {
        var pairs = 0
        var fixesWithHits = 0
        var checksum = 0
    }

    func measure() throws {
        let input = try GeofenceBenchFiles(regions: regions, fixes: fixes)
        let fixList = input.fixes.map(\.fix)
        guard fixList.count >= 2 else {
            throw RegionKitError(.invalidArgument, "\(fixes): \(fixList.count) fix: at least 2 are needed (the first determines every region, the rest are timed)")
        }
        let clock = ContinuousClock()

        var index = RegionIndex()
        let indexBuild = try clock.measure {
            for (_, region) in input.regions {
                try index.insert(IndexedRegion(id: region.identifier, latitude: region.latitude, longitude: region.longitude, radius: region.radius))
            }
        }
        let containment = Self.containment(index, input.fixes)
        let (indexPasses, indexTime, indexHits) = Self.repeated(minimumSeconds: minSeconds, clock: clock) { Self.indexPass(index, fixList) }

        var engine = MonitoringEngine(profile: .responsive, sources: [.circular: .authorized])
        let registration = clock.measure {
            for (_, region) in input.regions { _ = engine.startMonitoring(.circular(region), at: .zero) }
        }
        var firstEvents = 0
        let firstFixTime = clock.measure { firstEvents = engine.ingest(fixList[0]).count }
        let firstInside = input.regions.filter { engine.state(of: $0.region.identifier) == .inside }.count
        var firstExpected = 0
        index.forEachMatch(latitude: fixList[0].latitude, longitude: fixList[0].longitude) { _ in firstExpected += 1 }
        let rest = Array(fixList.dropFirst())
        let span = (fixList.last!.timestamp - fixList[0].timestamp) + 1
        var pass = 0
        let (enginePasses, engineTime, engineEvents) = Self.repeated(minimumSeconds: minSeconds, clock: clock) {
            defer { pass += 1 }
            return Self.enginePass(&engine, rest, timeShift: Double(pass) * span)
        }
        var evaluated = 0
        for var fix in rest {
            fix.timestamp = fix.timestamp + Double(pass) * span
            evaluated += engine.circularRegionsToEvaluate(for: fix).count
            _ = engine.ingest(fix)
        }
        let evaluatedPerFix = Double(evaluated) / Double(rest.count)
        let engineFixes = enginePasses * rest.count
        let indexRate = Double(indexPasses * fixList.count) / indexTime.inSeconds
        let engineRate = Double(engineFixes) / engineTime.inSeconds

        if output.json {
            var line = JSONLine()
            line.add("regions", input.regions.count)
            line.add("fixes", fixList.count)
            line.add("pairs", containment.pairs)
            line.add("fixes_with_hits", containment.fixesWithHits)
            line.add("checksum", containment.checksum)
            line.add("index_build_seconds", indexBuild.inSeconds)
            line.add("index_fixes_per_second", indexRate, decimals: 0)
            line.add("index_fixes_timed", indexPasses * fixList.count)
            line.add("index_hits_timed", indexHits)
            line.add("register_seconds", registration.inSeconds)
            line.add("first_fix_seconds", firstFixTime.inSeconds)
            line.add("first_fix_inside", firstInside)
            line.add("first_fix_index_inside", firstExpected)
            line.add("engine_fixes_per_second", engineRate, decimals: 0)
            line.add("engine_fixes_timed", engineFixes)
            line.add("engine_events", engineEvents)
            line.add("engine_regions_evaluated_per_fix", evaluatedPerFix, decimals: 2)
            Console.line(line.text)
            return
        }
        Console.line("bench geofence: \(input.regions.count) regions, \(fixList.count) fixes (\(regions), \(fixes))")
        Console.line("  containing pairs \(containment.pairs), fixes in >= 1 region \(containment.fixesWithHits), checksum \(containment.checksum)")
        Console.line(String(format: "  index  (RegionIndex.forEachMatch)      %12.0f fixes/s  %8.3f µs/fix   build %.2f s, %d fixes timed",
                            indexRate, 1e6 / indexRate, indexBuild.inSeconds, indexPasses * fixList.count))
        Console.line(String(format: "  engine (MonitoringEngine.ingest(fix))  %12.0f fixes/s  %8.3f µs/fix   register %.2f s, first fix %.3f s (%d inside, index says %d), %d fixes timed, %d events, %.2f regions evaluated/fix",
                            engineRate, 1e6 / engineRate, registration.inSeconds, firstFixTime.inSeconds,
                            firstInside, firstExpected, engineFixes, engineEvents + firstEvents, evaluatedPerFix))
    }

    /// Runs `body` until at least `minimumSeconds` have passed (at least once): passes, time, Σ results.
    static func repeated(minimumSeconds: Double, clock: ContinuousClock, _ body: () -> Int) -> (passes: Int, time: Duration, total: Int) {
        var passes = 0, total = 0
        var elapsed = Duration.zero
        repeat {
            elapsed += clock.measure { total &+= body() }
            passes += 1
        } while elapsed.inSeconds < minimumSeconds
        return (passes, elapsed, total)
    }

    /// Regions containing each fix (untimed): pairs, fixes with a hit, Σ (fix id × 1,000,003 + region id).
    static func containment(_ index: RegionIndex, _ fixes: [(id: Int, fix: LocationFix)]) -> Containment {
        var result = Containment()
        for (fixID, fix) in fixes {
            var hits = 0
            index.forEachMatch(latitude: fix.latitude, longitude: fix.longitude) { match in
                hits += 1
                result.checksum &+= fixID &* 1_000_003 &+ (Int(match.region.id) ?? 0)
            }
            result.pairs += hits
            if hits > 0 { result.fixesWithHits += 1 }
        }
        return result
    }

    /// Containing regions of every fix through the index: the number of (fix, region) hits.
    @inline(never)
    static func indexPass(_ index: RegionIndex, _ fixes: [LocationFix]) -> Int {
        var hits = 0
        for fix in fixes {
            index.forEachMatch(latitude: fix.latitude, longitude: fix.longitude) { _ in hits += 1 }
        }
        return hits
    }

    /// Every fix through the engine, `timeShift` seconds later than recorded: the delegate events produced.
    @inline(never)
    static func enginePass(_ engine: inout MonitoringEngine, _ fixes: [LocationFix], timeShift: Double) -> Int {
        var events = 0
        for var fix in fixes {
            fix.timestamp = fix.timestamp + timeShift
            events += engine.ingest(fix).count
        }
        return events
    }
}
