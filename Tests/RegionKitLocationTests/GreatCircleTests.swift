import Foundation
import Testing
@testable import RegionKitLocation

@Suite("GreatCircle")
struct GreatCircleTests {
    @Test("haversine golden values (R = 6,371,008.8 m), antimeridian and poles")
    func distances() {
        // Paris → London, independently computed with the same formula and radius: 343,556.53 m.
        #expect(abs(GreatCircle.distance(latitude1: 48.8566, longitude1: 2.3522, latitude2: 51.5074, longitude2: -0.1278) - 343_556.535) < 0.01)
        // One degree of arc = R·π/180 = 111,195.08 m (on a meridian and on the equator).
        let deg = 6_371_008.8 * Double.pi / 180
        #expect(abs(GreatCircle.distance(latitude1: 0, longitude1: 0, latitude2: 1, longitude2: 0) - deg) < 1e-6)
        #expect(abs(GreatCircle.distance(latitude1: 0, longitude1: 0, latitude2: 0, longitude2: 1) - deg) < 1e-6)
        // Across the antimeridian: 179.9°E → 179.9°W is 0.2°, not 359.8°.
        #expect(abs(GreatCircle.distance(latitude1: 0, longitude1: 179.9, latitude2: 0, longitude2: -179.9) - 0.2 * deg) < 1e-6)
        // Over the pole: (89.9, 0) → (89.9, 180) is 0.2° of arc.
        #expect(abs(GreatCircle.distance(latitude1: 89.9, longitude1: 0, latitude2: 89.9, longitude2: 180) - 0.2 * deg) < 1e-6)
        // Antipodes: half the circumference (haversine loses ~0.2 m to rounding there).
        #expect(abs(GreatCircle.distance(latitude1: 10, longitude1: 20, latitude2: -10, longitude2: -160) - .pi * 6_371_008.8) < 1)
        #expect(GreatCircle.distance(latitude1: .nan, longitude1: 0, latitude2: 0, longitude2: 0).isNaN)
    }

    @Test("bearing, destination and intermediate points are consistent")
    func bearings() {
        #expect(abs(GreatCircle.initialBearing(latitude1: 0, longitude1: 0, latitude2: 1, longitude2: 0) - 0) < 1e-9)   // north
        #expect(abs(GreatCircle.initialBearing(latitude1: 0, longitude1: 0, latitude2: 0, longitude2: 1) - 90) < 1e-9)  // east
        #expect(abs(GreatCircle.initialBearing(latitude1: 0, longitude1: 179.5, latitude2: 0, longitude2: -179.5) - 90) < 1e-9) // east across 180°
        var rng = SeededRandom(seed: 42)
        for _ in 0..<1000 {
            let lat = Double.random(in: -89...89, using: &rng), lon = Double.random(in: -180..<180, using: &rng)
            let b = Double.random(in: 0..<360, using: &rng), d = Double.random(in: 1...5_000_000, using: &rng)
            let p = GreatCircle.destination(latitude: lat, longitude: lon, bearing: b, distance: d)
            #expect(abs(GreatCircle.distance(latitude1: lat, longitude1: lon, latitude2: p.latitude, longitude2: p.longitude) - d) < 1e-3)
            #expect(p.longitude >= -180 && p.longitude < 180)
            let m = GreatCircle.intermediate(latitude1: lat, longitude1: lon, latitude2: p.latitude, longitude2: p.longitude, fraction: 0.25)
            #expect(abs(GreatCircle.distance(latitude1: lat, longitude1: lon, latitude2: m.latitude, longitude2: m.longitude) - d / 4) < 1e-3)
        }
        #expect(GreatCircle.normalizedLongitude(180) == -180 && GreatCircle.normalizedLongitude(540.5) == -179.5 && GreatCircle.normalizedLongitude(-190) == 170)
    }

    @Test("ISO 8601 parsing and formatting")
    func iso() {
        #expect(UTCCalendar.parseISO8601("1970-01-01T00:00:00Z")?.seconds == 0)
        #expect(UTCCalendar.parseISO8601("2009-12-09T15:25:05.500Z")?.seconds == 1_260_372_305.5)
        #expect(UTCCalendar.parseISO8601("2009-12-09T17:25:05+02:00")?.seconds == 1_260_372_305)
        #expect(UTCCalendar.parseISO8601("2000-02-29T00:00:00Z") != nil)
        for bad in ["", "2001-02-29T00:00:00Z", "2009-12-09", "2009-12-09T25:00:00Z", "2009-12-09T15:25:05.Z", "x2009-12-09T15:25:05Z"] {
            #expect(UTCCalendar.parseISO8601(bad) == nil, "\(bad)")
        }
        #expect(UTCCalendar.formatISO8601(.init(seconds: 1_260_372_305.5)) == "2009-12-09T15:25:05.500Z")
        #expect(UTCCalendar.formatISO8601(.init(seconds: -2_147_483_648)) == "1901-12-13T20:45:52.000Z")
    }
}
