import Foundation
import Testing
import RegionKitCore

@Suite("Geodesy")
struct GeodesyTests {
    @Test("haversine golden values (R = 6,371,008.8 m), antimeridian and poles")
    func distances() {
        // Paris → London, independently computed with the same formula and radius: 343,556.53 m.
        #expect(abs(Geodesy.distance(latitude1: 48.8566, longitude1: 2.3522, latitude2: 51.5074, longitude2: -0.1278) - 343_556.535) < 0.01)
        // One degree of arc = R·π/180 = 111,195.08 m (on a meridian and on the equator).
        let deg = 6_371_008.8 * Double.pi / 180
        #expect(abs(Geodesy.distance(latitude1: 0, longitude1: 0, latitude2: 1, longitude2: 0) - deg) < 1e-6)
        #expect(abs(Geodesy.distance(latitude1: 0, longitude1: 0, latitude2: 0, longitude2: 1) - deg) < 1e-6)
        // Across the antimeridian: 179.9°E → 179.9°W is 0.2°, not 359.8°.
        #expect(abs(Geodesy.distance(latitude1: 0, longitude1: 179.9, latitude2: 0, longitude2: -179.9) - 0.2 * deg) < 1e-6)
        // Over the pole: (89.9, 0) → (89.9, 180) is 0.2° of arc.
        #expect(abs(Geodesy.distance(latitude1: 89.9, longitude1: 0, latitude2: 89.9, longitude2: 180) - 0.2 * deg) < 1e-6)
        // Antipodes: half the circumference (haversine loses ~0.2 m to rounding there).
        #expect(abs(Geodesy.distance(latitude1: 10, longitude1: 20, latitude2: -10, longitude2: -160) - .pi * 6_371_008.8) < 1)
        #expect(Geodesy.distance(latitude1: .nan, longitude1: 0, latitude2: 0, longitude2: 0).isNaN)
        #expect(Geodesy.distance(latitude1: 0, longitude1: 0, latitude2: 0, longitude2: .infinity).isNaN)
    }

    @Test("bearing and destination are consistent; longitudes normalise to [-180, 180)")
    func bearings() {
        #expect(abs(Geodesy.initialBearing(latitude1: 0, longitude1: 0, latitude2: 1, longitude2: 0) - 0) < 1e-9)   // north
        #expect(abs(Geodesy.initialBearing(latitude1: 0, longitude1: 0, latitude2: 0, longitude2: 1) - 90) < 1e-9)  // east
        #expect(abs(Geodesy.initialBearing(latitude1: 0, longitude1: 179.5, latitude2: 0, longitude2: -179.5) - 90) < 1e-9) // east across 180°
        var rng = SeededRandom(seed: 42)
        for _ in 0..<1000 {
            let lat = Double.random(in: -89...89, using: &rng), lon = Double.random(in: -180..<180, using: &rng)
            let b = Double.random(in: 0..<360, using: &rng), d = Double.random(in: 1...5_000_000, using: &rng)
            let p = Geodesy.destination(latitude: lat, longitude: lon, distance: d, bearing: b)
            #expect(abs(Geodesy.distance(latitude1: lat, longitude1: lon, latitude2: p.latitude, longitude2: p.longitude) - d) < 1e-3)
            #expect(p.longitude >= -180 && p.longitude < 180)
        }
        #expect(Geodesy.normalizedLongitude(180) == -180 && Geodesy.normalizedLongitude(540.5) == -179.5 && Geodesy.normalizedLongitude(-190) == 170)
    }

    @Test("the cosine-supplied variant is bit-for-bit the plain distance")
    func cosineVariant() {
        var rng = SeededRandom(seed: 7)
        for _ in 0..<1000 {
            let a = (Double.random(in: -90...90, using: &rng), Double.random(in: -180...180, using: &rng))
            let b = (Double.random(in: -90...90, using: &rng), Double.random(in: -180...180, using: &rng))
            let plain = Geodesy.distance(latitude1: a.0, longitude1: a.1, latitude2: b.0, longitude2: b.1)
            let fast = Geodesy.distance(latitude1: a.0, longitude1: a.1, cosLatitude1: cos(a.0 * .pi / 180),
                                        latitude2: b.0, longitude2: b.1, cosLatitude2: cos(b.0 * .pi / 180))
            #expect(plain == fast)
        }
    }
}
