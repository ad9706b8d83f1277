import Foundation
import RegionKitCore

/// The smallest circle enclosing a set of geographic points (see ``PolygonApproximation`` for the
/// method): Welzl's algorithm, iterative form with a fixed-seed shuffle (expected O(n), and the
/// same answer on every run), in a local equirectangular projection; the radius is then the
/// largest great-circle distance from the centre to a point, so every point is enclosed.
///
/// ```swift
/// let c = EnclosingCircle(points: [(0, 0), (0, 0.01), (0.01, 0)])   // (latitude, longitude)
/// c?.radius   // ≈ 786 m: half the hypotenuse
/// ```
struct EnclosingCircle: Hashable, Sendable {
    var latitude: Double
    var longitude: Double
    var radius: Double
    /// Area of the polygon the points form, in square metres (same projection; shoelace).
    var polygonArea: Double

    /// `nil` when there are no points or a coordinate is not finite.
    init?(points: [(latitude: Double, longitude: Double)]) {
        guard !points.isEmpty, points.allSatisfy({ $0.latitude.isFinite && $0.longitude.isFinite }) else { return nil }
        let R = Geodesy.earthRadius
        let φ0 = points.map(\.latitude).reduce(0, +) / Double(points.count)
        let λ0 = points[0].longitude
        let cosφ0 = max(1e-6, cos(φ0 * .pi / 180))
        let planar = points.map { p -> (x: Double, y: Double) in
            let dλ = Geodesy.normalizedLongitude(p.longitude - λ0)      // unwraps across the antimeridian
            return (R * dλ * .pi / 180 * cosφ0, R * (p.latitude - φ0) * .pi / 180)
        }
        let circle = Self.welzl(planar)
        latitude = max(-90, min(90, φ0 + circle.y / R * 180 / .pi))
        longitude = Geodesy.normalizedLongitude(λ0 + circle.x / (R * cosφ0) * 180 / .pi)
        let (lat, lon) = (latitude, longitude)
        radius = points.map { Geodesy.distance(latitude1: lat, longitude1: lon, latitude2: $0.latitude, longitude2: $0.longitude) }.max() ?? 0
        var twiceArea = 0.0
        for i in planar.indices {
            let a = planar[i], b = planar[(i + 1) % planar.count]
            twiceArea += a.x * b.y - b.x * a.y
        }
        polygonArea = abs(twiceArea) / 2
    }

    private struct Circle { var x: Double, y: Double, r: Double }

    private static func contains(_ c: Circle, _ p: (x: Double, y: Double)) -> Bool {
        let dx = p.x - c.x, dy = p.y - c.y
        return (dx * dx + dy * dy).squareRoot() <= c.r * (1 + 1e-12) + 1e-9
    }

    private static func diameter(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Circle {
        let x = (a.x + b.x) / 2, y = (a.y + b.y) / 2
        return Circle(x: x, y: y, r: ((a.x - x) * (a.x - x) + (a.y - y) * (a.y - y)).squareRoot())
    }

    private static func circumcircle(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double), _ c: (x: Double, y: Double)) -> Circle {
        let bx = b.x - a.x, by = b.y - a.y, cx = c.x - a.x, cy = c.y - a.y
        let d = 2 * (bx * cy - by * cx)
        if abs(d) < 1e-12 {
            // Collinear: the circle on the two farthest-apart points.
            return [diameter(a, b), diameter(a, c), diameter(b, c)].max { $0.r < $1.r }!
        }
        let ux = (cy * (bx * bx + by * by) - by * (cx * cx + cy * cy)) / d
        let uy = (bx * (cx * cx + cy * cy) - cx * (bx * bx + by * by)) / d
        return Circle(x: a.x + ux, y: a.y + uy, r: (ux * ux + uy * uy).squareRoot())
    }

    private static func welzl(_ input: [(x: Double, y: Double)]) -> Circle {
        var points = input
        var state: UInt64 = 0x5EED
        for i in stride(from: points.count - 1, to: 0, by: -1) {     // Fisher–Yates, fixed seed
            state = state &* 6364136223846793005 &+ 1442695040888963407
            points.swapAt(i, Int((state >> 33) % UInt64(i + 1)))
        }
        var c = Circle(x: points[0].x, y: points[0].y, r: 0)
        for i in points.indices where !contains(c, points[i]) {
            c = Circle(x: points[i].x, y: points[i].y, r: 0)
            for j in 0..<i where !contains(c, points[j]) {
                c = diameter(points[i], points[j])
                for k in 0..<j where !contains(c, points[k]) {
                    c = circumcircle(points[i], points[j], points[k])
                }
            }
        }
        return c
    }
}
