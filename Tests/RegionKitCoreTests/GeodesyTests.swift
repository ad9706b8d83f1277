import Foundation
import Testing
import RegionKitCore

@Suite("Geodesy")
struct GeodesyTests {
    @Test("golden values (R = 6,371,008.8 m), antimeridian and poles")
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
        // Antipodes: half the circumference (the arc from the chord loses up to ~0.1 m to rounding there).
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

    @Test("the unit-vector form is the plain distance to the bit, and agrees with the haversine")
    func unitVectorForm() {
        var rng = SeededRandom(seed: 7)
        for k in 0..<2000 {
            let a = (Double.random(in: -90...90, using: &rng), Double.random(in: -180...180, using: &rng))
            // Half the pairs within ~2 km (geofence scale, the series), half anywhere (asin).
            let b = k.isMultiple(of: 2)
                ? (min(90, max(-90, a.0 + Double.random(in: -0.02...0.02, using: &rng))), a.1 + Double.random(in: -0.02...0.02, using: &rng))
                : (Double.random(in: -90...90, using: &rng), Double.random(in: -180...180, using: &rng))
            let plain = Geodesy.distance(latitude1: a.0, longitude1: a.1, latitude2: b.0, longitude2: b.1)
            let u = Geodesy.UnitVector(latitude: a.0, longitude: a.1), v = Geodesy.UnitVector(latitude: b.0, longitude: b.1)
            #expect(plain == Geodesy.distance(u, v) && plain == Geodesy.distance(v, u))
            #expect(plain == Geodesy.arc(chordSquared: u.chordSquared(to: v)))
            // An independent formula (haversine): within 10⁻⁸ m plus 10⁻¹² of the distance,
            // away from the antipode (where both formulas lose up to ~0.1 m).
            let Δφ = (b.0 - a.0) * .pi / 180, Δλ = (b.1 - a.1) * .pi / 180
            let h = sin(Δφ / 2) * sin(Δφ / 2) + cos(a.0 * .pi / 180) * cos(b.0 * .pi / 180) * sin(Δλ / 2) * sin(Δλ / 2)
            let haversine = 2 * Geodesy.earthRadius * asin(min(1, h.squareRoot()))
            if haversine < 19_000_000 {
                #expect(abs(plain - haversine) <= 1e-8 + 1e-12 * haversine, "\(a) → \(b): \(plain) vs \(haversine)")
            }
        }
    }

    @Test("the arc's series is asin to rounding where it is used, and meets the library call at its edge")
    func arcSeries() {
        // x = sin(half the central angle) = chord / 2; the series serves x < 2⁻⁷.
        for x in stride(from: 0.0, through: 0.0078125, by: 0.0078125 / 4096) + [1e-12, 1e-9, 1e-6, 0.0078124999] {
            let c2 = 4 * x * x
            let library = 2 * Geodesy.earthRadius * asin((c2.squareRoot() / 2))
            #expect(abs(Geodesy.arc(chordSquared: c2) - library) <= 2 * library.ulp, "x = \(x)")
        }
        #expect(Geodesy.arc(chordSquared: 0) == 0)
        #expect(Geodesy.arc(chordSquared: 4) == .pi * Geodesy.earthRadius)
        #expect(Geodesy.arc(chordSquared: 4.000001) == .pi * Geodesy.earthRadius, "rounding past the antipode is clamped")
        #expect(Geodesy.arc(chordSquared: -1e-30) == 0)
        #expect(Geodesy.arc(chordSquared: .nan).isNaN)
        #expect(Geodesy.distance(Geodesy.UnitVector(latitude: .nan, longitude: 0), Geodesy.UnitVector(latitude: 0, longitude: 0)).isNaN)
        // The same point is 0 m from itself whatever rounding went into its vector.
        let p = Geodesy.UnitVector(latitude: 48.1371, longitude: 11.5754)
        #expect(Geodesy.distance(p, p) == 0)
    }

    @Test("sine and cosine in degrees: exact at right angles, within an ulp or so of the library everywhere else")
    func sineCosine() {
        // Whole right angles reduce exactly: exact values, and +0 for the zeros.
        let quarters: [(Double, Double, Double)] = [(0, 0, 1), (90, 1, 0), (180, 0, -1), (270, -1, 0), (360, 0, 1),
                                                    (-90, -1, 0), (-180, 0, -1), (450, 1, 0), (-720, 0, 1)]
        for (degrees, sine, cosine) in quarters {
            let got = Geodesy.sineCosine(degrees: degrees)
            #expect(got.sin == sine && got.cos == cosine && got.sin.sign == sine.sign && got.cos.sign == cosine.sign,
                    "\(degrees)°: \(got)")
        }
        for (degrees, half) in [(30.0, Geodesy.sineCosine(degrees: 30).sin), (60, Geodesy.sineCosine(degrees: 60).cos),
                                (-150, -Geodesy.sineCosine(degrees: -150).sin)] {
            #expect(abs(half - 0.5) <= 0.5.ulp, "\(degrees)°: \(half)")
        }
        // Against the C library of the radians, over the angles a point has and beyond: ours is
        // within an ulp or so of the truth, the library's within one of the sine of its argument,
        // which is rounded twice (`degrees · π`, then `/ 180`: up to 2.2·10⁻¹⁶ of the radians,
        // 2.8·10⁻¹⁵ at 720°). sin² + cos² is 1 to rounding.
        var random = SeededRandom(seed: 90)
        for k in 0..<50_000 {
            let degrees = k < 25_000 ? Double.random(in: -180...180, using: &random) : Double.random(in: -720...720, using: &random)
            let got = Geodesy.sineCosine(degrees: degrees)
            let radians = degrees * .pi / 180
            let tolerance = 5e-16 + 3e-16 * radians.magnitude
            #expect(abs(got.sin - sin(radians)) <= tolerance && abs(got.cos - cos(radians)) <= tolerance, "\(degrees)°: \(got)")
            #expect(abs(got.sin * got.sin + got.cos * got.cos - 1) <= 5e-16, "\(degrees)°")
        }
        // Small angles keep their relative precision (sin x ≈ x there).
        for degrees in [1e-300, 1e-12, 1e-6, -3e-9] {
            let sine = Geodesy.sineCosine(degrees: degrees).sin, radians = degrees * (.pi / 180)
            #expect(abs(sine - radians) <= 2 * radians.ulp, "\(degrees)°")
        }
        // Not a number, infinities and angles beyond ±10¹² degrees go to the library.
        #expect(Geodesy.sineCosine(degrees: .nan).sin.isNaN && Geodesy.sineCosine(degrees: .infinity).cos.isNaN)
        let huge = 1e13, radians = huge * .pi / 180
        #expect(Geodesy.sineCosine(degrees: huge) == (sin(radians), cos(radians)))
        // A unit vector is built from them: the poles are exact.
        let pole = Geodesy.UnitVector(latitude: 90, longitude: 37)
        #expect(pole.z == 1 && pole.x == 0 && pole.y == 0)
    }
}
