// loc-bench: fixes per second through MonitoringEngine.ingest(fix), and RegionIndex queries per
// second, against 1k, 100k and 1M circular regions. A benchmark, not a test.
//
//   swift build -c release --scratch-path .build-geo && .build-geo/release/loc-bench [fixes-per-size] [sizes...]
//   e.g. .build-geo/release/loc-bench 20000 1000 100000 1000000
//
// Regions: centres uniform over a ~1,000 km × 1,000 km box (latitude 45–54°, longitude 0–14°),
// radii log-uniform 50 m – 2 km, so at 1M regions a point lies in ~1.7 circles on average.
// Fixes: a vehicle driving at ~15 m/s with a wandering heading, one fix per second, 5 m noise,
// accuracy 10 m. Responsive profile (no region limit). Seeded, so runs are comparable.
//
// Columns: build = registering every region (startMonitoring); first fix = the fix that
// determines every region's state (all are unknown, so all are evaluated — once); fixes/s and
// µs/fix over the following fixes; eval/fix = regions evaluated per fix; brute fixes/s = the
// same engine with usesSpatialIndex = false (every region evaluated), over fewer fixes;
// index q/s = RegionIndex.forEachMatch alone on the same points (within 1 m), hits = its matches.
import Foundation
import RegionKitCore
import RegionKitEngine

struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let fixesPerSize = arguments.first ?? 20_000
let sizes = arguments.count > 1 ? Array(arguments.dropFirst()) : [1_000, 100_000, 1_000_000]
let clock = ContinuousClock()
func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }

func drive(_ count: Int, seed: UInt64) -> [LocationFix] {
    var rng = SplitMix(state: seed)
    var position = (latitude: 49.5, longitude: 7.0)
    var heading = Double.random(in: 0..<360, using: &rng)
    var fixes: [LocationFix] = []
    fixes.reserveCapacity(count)
    for i in 0..<count {
        heading += Double.random(in: -15...15, using: &rng)
        position = Geodesy.destination(latitude: position.latitude, longitude: position.longitude,
                                       distance: Double.random(in: 10...20, using: &rng), bearing: heading)
        let reported = Geodesy.destination(latitude: position.latitude, longitude: position.longitude,
                                           distance: Double.random(in: 0...5, using: &rng), bearing: Double.random(in: 0..<360, using: &rng))
        fixes.append(LocationFix(timestamp: Timestamp(seconds: Double(i + 1)), latitude: reported.latitude,
                                 longitude: reported.longitude, horizontalAccuracy: 10, mode: .threeD))
    }
    return fixes
}

/// A copy of `engine` that shares no big table with it (registering and removing a probe region
/// writes every large table a fix writes; the small geo sets may stay shared, which is cheap).
func detached(_ engine: MonitoringEngine) -> MonitoringEngine {
    var copy = engine
    let probe = Region.circular(try! CircularRegion(identifier: "loc-bench probe", latitude: -89, longitude: 0, radius: 1))
    _ = copy.startMonitoring(probe, at: copy.now)
    _ = copy.stopMonitoring(identifier: "loc-bench probe", at: copy.now)
    return copy
}

print("loc-bench: \(fixesPerSize) fixes per size, responsive profile, regions in a 1,000 km box, radii 50 m – 2 km")
print("regions    build(s)  first fix(s)   fixes/s   µs/fix  eval/fix  events/fix  brute fixes/s   index q/s  µs/query  hits/q")
for n in sizes {
    var rng = SplitMix(state: 7)
    var regions: [Region] = []
    regions.reserveCapacity(n)
    for i in 0..<n {
        let latitude = Double.random(in: 45...54, using: &rng)
        let longitude = Double.random(in: 0...14, using: &rng)
        let radius = exp(Double.random(in: log(50.0)...log(2_000.0), using: &rng))
        regions.append(.circular(try! CircularRegion(identifier: "r\(i)", latitude: latitude, longitude: longitude, radius: radius)))
    }
    var engine = MonitoringEngine(profile: .responsive, sources: [.circular: .authorized])
    let build = clock.measure {
        for region in regions { _ = engine.startMonitoring(region, at: .zero) }
    }
    let fixes = drive(fixesPerSize + 1, seed: 99)
    let first = clock.measure { _ = engine.ingest(fixes[0]) }
    var events = 0
    // Copies for the untimed runs below, detached now: a copy shares storage until one side
    // writes, and that write would copy a million records inside the timed loop.
    let indexed = detached(engine)
    let t = clock.measure {
        for fix in fixes.dropFirst() { events += engine.ingest(fix).count }
    }
    // Regions evaluated per fix, replayed on a copy of the state before the timed run (untimed).
    var counting = detached(indexed)
    var evaluated = 0
    for fix in fixes.dropFirst() {
        evaluated += counting.circularRegionsToEvaluate(for: fix).count
        _ = counting.ingest(fix)
    }
    // Brute force on the same state, over as many fixes as fit in roughly 10⁷ region tests.
    var brute = detached(indexed)
    brute.usesSpatialIndex = false
    let bruteFixes = max(3, min(fixesPerSize, 10_000_000 / max(1, n)))
    let bt = clock.measure {
        for fix in fixes.dropFirst().prefix(bruteFixes) { _ = brute.ingest(fix) }
    }
    // The index alone, on the same points.
    var index = RegionIndex()
    for region in regions {
        guard let c = region.circularRegion else { continue }
        try? index.insert(IndexedRegion(id: c.identifier, latitude: c.latitude, longitude: c.longitude, radius: c.radius))
    }
    var hits = 0
    let qt = clock.measure {
        for fix in fixes.dropFirst() { index.forEachMatch(latitude: fix.latitude, longitude: fix.longitude, within: 1) { _ in hits += 1 } }
    }
    let s = seconds(t), q = seconds(qt)
    print(String(format: "%-9d  %8.2f  %12.3f  %8.0f  %7.2f  %8.2f  %10.3f  %13.0f  %10.0f  %8.2f  %6.2f",
                 n, seconds(build), seconds(first), Double(fixesPerSize) / s, s / Double(fixesPerSize) * 1e6,
                 Double(evaluated) / Double(fixesPerSize), Double(events) / Double(fixesPerSize),
                 Double(bruteFixes) / seconds(bt), Double(fixesPerSize) / q, q / Double(fixesPerSize) * 1e6,
                 Double(hits) / Double(fixesPerSize)))
}
