// loc-bench: throughput of RegionIndex queries at 1k, 100k and 1M regions.
//
//   swift run -c release loc-bench [queries-per-size]
//
// Regions: centres uniform over the sphere (by area), radii log-uniform 50 m – 2 km, plus 1 %
// large ones (10 – 200 km). Two query mixes per size:
//   "random": points uniform over the sphere, within 100 m (mostly empty answers),
//   "near":   points within 1 km of a random region centre, within 100 m (≥ 1 hit usually).
// Seeded, so runs are comparable.
import Foundation
import RegionKitLocation

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

func uniformPoint(_ rng: inout SplitMix) -> (Double, Double) {
    (asin(Double.random(in: -1...1, using: &rng)) * 180 / .pi, Double.random(in: -180..<180, using: &rng))
}

let queriesPerSize = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 200_000
let clock = ContinuousClock()
func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }

print("loc-bench: \(queriesPerSize) queries per size and mix")
print("regions     build(s)  mix     queries/s    µs/query  hits/query")
for n in [1_000, 100_000, 1_000_000] {
    var rng = SplitMix(state: 7)
    var regions: [IndexedRegion] = []
    regions.reserveCapacity(n)
    for i in 0..<n {
        let (lat, lon) = uniformPoint(&rng)
        let r = i % 100 == 0 ? Double.random(in: 10_000...200_000, using: &rng) : exp(Double.random(in: log(50.0)...log(2_000.0), using: &rng))
        regions.append(IndexedRegion(id: "r\(i)", latitude: lat, longitude: lon, radius: r))
    }
    var index = RegionIndex()
    let build = clock.measure {
        for r in regions { try? index.insert(r) }
    }
    for mix in ["random", "near"] {
        var q = SplitMix(state: 99)
        var points: [(Double, Double)] = []
        points.reserveCapacity(queriesPerSize)
        for _ in 0..<queriesPerSize {
            if mix == "random" {
                points.append(uniformPoint(&q))
            } else {
                let c = regions[Int.random(in: 0..<n, using: &q)]
                let p = GreatCircle.destination(latitude: c.latitude, longitude: c.longitude,
                                            bearing: Double.random(in: 0..<360, using: &q), distance: Double.random(in: 0...1_000, using: &q))
                points.append((p.latitude, p.longitude))
            }
        }
        var hits = 0
        let t = clock.measure {
            for p in points {
                index.forEachMatch(latitude: p.0, longitude: p.1, within: 100) { _ in hits += 1 }
            }
        }
        let s = seconds(t)
        let line = String(format: "%-10d  %7.2f   %-6@  %11.0f  %9.2f  %9.3f",
                          n, seconds(build), mix as NSString, Double(queriesPerSize) / s, s / Double(queriesPerSize) * 1e6,
                          Double(hits) / Double(queriesPerSize))
        print(line)
    }
}
