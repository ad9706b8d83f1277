import Foundation
import Testing
@testable import RegionKitEngine

@Suite("Region index")
struct RegionIndexTests {
    /// Random regions, deliberately crowded near both poles and the antimeridian, with radii from
    /// 1 m to 3,000 km (so every grid level and the big-region list are used).
    static func randomRegions(_ n: Int, rng: inout SeededRandom) -> [IndexedRegion] {
        (0..<n).map { i in
            let lat: Double, lon: Double
            switch i % 4 {
            case 0: lat = asin(Double.random(in: -1...1, using: &rng)) * 180 / .pi; lon = Double.random(in: -180..<180, using: &rng)
            case 1: lat = Double.random(in: 85...90, using: &rng) * (Bool.random(using: &rng) ? 1 : -1); lon = Double.random(in: -180..<180, using: &rng)
            case 2: lat = Double.random(in: -60...60, using: &rng); lon = Double.random(in: 178...182, using: &rng) // wraps past 180
            default: lat = Double.random(in: 51.0...51.2, using: &rng); lon = Double.random(in: -0.2...0.0, using: &rng) // a dense city
            }
            let radius: Double
            switch Int.random(in: 0..<20, using: &rng) {
            case 0: radius = Double.random(in: 100_000...3_000_000, using: &rng)
            case 1, 2: radius = Double.random(in: 2_000...100_000, using: &rng)
            default: radius = exp(Double.random(in: log(1)...log(2_000), using: &rng))
            }
            return IndexedRegion(id: "r\(i)", latitude: lat, longitude: lon, radius: radius)
        }
    }

    static func randomPoint(_ rng: inout SeededRandom) -> (Double, Double) {
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: return (Double.random(in: 88...90, using: &rng) * (Bool.random(using: &rng) ? 1 : -1), Double.random(in: -180..<180, using: &rng))
        case 1: return (Double.random(in: -60...60, using: &rng), Double.random(in: 179...181, using: &rng))
        case 2: return (Double.random(in: 51.0...51.2, using: &rng), Double.random(in: -0.2...0.0, using: &rng))
        case 3: return ([90.0, -90.0].randomElement(using: &rng)!, Double.random(in: -180..<180, using: &rng)) // exactly a pole
        default: return (asin(Double.random(in: -1...1, using: &rng)) * 180 / .pi, Double.random(in: -180..<180, using: &rng))
        }
    }

    static func brute(_ regions: [IndexedRegion], _ lat: Double, _ lon: Double, _ d: Double) -> Set<String> {
        Set(regions.filter { $0.contains(latitude: lat, longitude: lon, margin: d) }.map(\.id))
    }

    @Test("matches brute force on seeded random data, including poles and the antimeridian")
    func bruteForce() throws {
        var rng = SeededRandom(seed: 2024)
        var regions = RegionIndexTests.randomRegions(4000, rng: &rng)
        var index = RegionIndex()
        for r in regions { try index.insert(r) }
        #expect(index.count == 4000)
        func check(_ label: String) {
            var total = 0
            for _ in 0..<1500 {
                let (lat, lon) = RegionIndexTests.randomPoint(&rng)
                let d: Double = [0, 0, 10, 250, 5_000, 300_000].randomElement(using: &rng)!
                let got = index.regions(nearLatitude: lat, longitude: lon, within: d)
                let want = RegionIndexTests.brute(regions, lat, lon, d)
                total += want.count
                #expect(Set(got.map(\.region.id)) == want, "\(label) at \(lat),\(lon) within \(d)")
                #expect(got.count == want.count)
            }
            #expect(total > 1500, "the random queries should hit regions (\(total))")
        }
        check("full")
        // Remove half by id, move some (re-insert with the same id), and check again.
        for r in regions.prefix(2000) {
            let removed = index.remove(id: r.id)
            #expect(removed?.id == r.id && removed?.longitude == Geodesy.normalizedLongitude(r.longitude))
        }
        #expect(index.remove(id: "r0") == nil)
        regions.removeFirst(2000)
        for i in 0..<200 {
            var r = regions[i]
            r.latitude = -r.latitude
            r.radius *= 2
            try index.insert(r)
            regions[i] = r
        }
        #expect(index.count == 2000)
        check("after remove/move")
        // A region inserted again under its id keeps its slot (the engine's slot maps rely on it)
        // and the new tag; a new id takes a freed slot first.
        let moved = regions[0]
        let before = try #require(index.slot(id: moved.id))
        #expect(try index.insert(moved, tag: 7) == before && index.tag(atSlot: before) == 7 && index.count == 2000)
        let freed = try #require(index.slot(id: regions[1].id))
        index.remove(id: regions[1].id)
        #expect(try index.insert(IndexedRegion(id: "new", latitude: 1, longitude: 1, radius: 10)) == freed)
        #expect(index.region(id: "new")?.latitude == 1 && index.count == 2000)
    }

    @Test("edge cases: exact boundary, pole-covering and world-covering regions, invalid input")
    func edges() throws {
        var index = RegionIndex()
        let deg = 6_371_008.8 * Double.pi / 180
        try index.insert(IndexedRegion(id: "edge", latitude: 0, longitude: 0, radius: deg))          // exactly 1° radius
        try index.insert(IndexedRegion(id: "pole", latitude: 89.99, longitude: 10, radius: 5_000))    // covers the North Pole
        try index.insert(IndexedRegion(id: "world", latitude: 0, longitude: 0, radius: 30_000_000))  // > half circumference
        try index.insert(IndexedRegion(id: "dateline", latitude: -16.5, longitude: 179.999, radius: 1_000))
        #expect(Set(index.regions(nearLatitude: 0, longitude: 0.999_999).map(\.region.id)) == ["edge", "world"])
        #expect(Set(index.regions(nearLatitude: 90, longitude: -170).map(\.region.id)) == ["pole", "world"])
        #expect(Set(index.regions(nearLatitude: -16.5, longitude: -179.999).map(\.region.id)) == ["dateline", "world"]) // 214 m away across 180°
        #expect(index.regions(nearLatitude: .nan, longitude: 0).isEmpty)
        #expect(index.regions(nearLatitude: 91, longitude: 0).isEmpty)
        #expect(index.regions(nearLatitude: 0, longitude: 0, within: .nan).isEmpty)
        // Nearest boundary first; inside is negative.
        let hits = index.regions(nearLatitude: 0, longitude: 0.5)
        #expect(hits.first?.region.id == "world" && hits.first!.isInside && hits.first!.distanceToBoundary < 0)
        for bad in [IndexedRegion(id: "a", latitude: 95, longitude: 0, radius: 1), IndexedRegion(id: "b", latitude: 0, longitude: .nan, radius: 1),
                    IndexedRegion(id: "c", latitude: 0, longitude: 0, radius: -1), IndexedRegion(id: "d", latitude: 0, longitude: 0, radius: .infinity)] {
            #expect(throws: RegionKitError.self) { try index.insert(bad) }
        }
        #expect(index.count == 4)
        // The example in the DocC comment.
        var home = RegionIndex()
        try home.insert(IndexedRegion(id: "home", latitude: 51.5007, longitude: -0.1246, radius: 100))
        #expect(home.regions(nearLatitude: 51.5010, longitude: -0.1246).map(\.region.id) == ["home"])
        #expect(home.regions(nearLatitude: 51.5030, longitude: -0.1246, within: 200).count == 1)
        #expect(home.regions(nearLatitude: 51.5030, longitude: -0.1246, within: 150).isEmpty)
        #expect(home.remove(id: "home") != nil && home.count == 0)
        let office = IndexedRegion(id: "office", latitude: 35.6812, longitude: 139.7671, radius: 150)
        #expect(office.contains(latitude: 35.6815, longitude: 139.7670))
        // Longitudes outside [-180, 180) are normalised on insert.
        try index.insert(IndexedRegion(id: "wrapped", latitude: 0, longitude: 360.5, radius: 10))
        #expect(index.region(id: "wrapped")?.longitude == 0.5)
    }
}
