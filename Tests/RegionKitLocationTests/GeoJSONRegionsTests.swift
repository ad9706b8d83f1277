import Foundation
import RegionKitTestSupport
import Testing
import RegionKitCore
@testable import RegionKitLocation

@Suite("GeoJSON region files")
struct GeoJSONRegionsTests {
    static func decode(_ text: String, polygons: Bool = false) throws(GeoJSONRegionsError) -> GeoJSONRegions.Document {
        try GeoJSONRegions.decode(Data(text.utf8), options: .init(approximatePolygons: polygons))
    }

    static func problems(_ text: String, polygons: Bool = false) -> [GeoJSONRegionsError.Problem] {
        do {
            _ = try decode(text, polygons: polygons)
            Issue.record("expected an error for \(text)")
            return []
        } catch {
            return error.problems
        }
    }

    static func collection(_ features: String...) -> String {
        #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
    }

    static func point(_ lon: Double, _ lat: Double, id: String? = nil, properties: String) -> String {
        let idPart = id.map { #""id":"\#($0)","# } ?? ""
        return #"{"type":"Feature",\#(idPart)"geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":\#(properties)}"#
    }

    @Test("Point features with a radius; identifier from properties.identifier, the feature id, or properties.name; notify flags")
    func points() throws {
        let text = Self.collection(
            Self.point(-0.1246, 51.5007, id: "ignored", properties: #"{"identifier":"parliament","radius":100}"#),
            Self.point(2.2945, 48.8584, id: "eiffel", properties: #"{"radius":250.5,"notifyOnEntry":false}"#),
            #"{"type":"Feature","id":42,"geometry":{"type":"Point","coordinates":[139.7671,35.6812,40]},"properties":{"radius":0}}"#,
            Self.point(12.4922, 41.8902, properties: #"{"name":"colosseum","radius":80,"notifyOnExit":false}"#))
        let document = try Self.decode(text)
        #expect(document.regions.map(\.identifier) == ["parliament", "eiffel", "42", "colosseum"])
        #expect(document.approximations.isEmpty)
        let eiffel = document.regions[1]
        #expect(eiffel.latitude == 48.8584 && eiffel.longitude == 2.2945 && eiffel.radius == 250.5)
        #expect(!eiffel.notifyOnEntry && eiffel.notifyOnExit)
        #expect(document.regions[2].radius == 0 && document.regions[2].latitude == 35.6812)
        #expect(document.regions[3].notifyOnEntry && !document.regions[3].notifyOnExit)
        // A single Feature is accepted as a one-region file.
        let single = try Self.decode(Self.point(1, 2, id: "one", properties: #"{"radius":5}"#))
        #expect(single.regions.map(\.identifier) == ["one"])
    }

    @Test("export writes Point features with radius that import back to the same regions")
    func roundTrip() throws {
        let regions = [
            try CircularRegion(identifier: "a \"quoted\" name\n", latitude: -33.8568, longitude: 151.2153, radius: 120.25, notifyOnEntry: false),
            try CircularRegion(identifier: "b", latitude: 0.1 + 0.2, longitude: -179.999999, radius: 1e-3, notifyOnExit: false),
            try CircularRegion(identifier: "c", latitude: 90, longitude: 180, radius: 500_000),
        ]
        let data = GeoJSONRegions.encode(regions)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasPrefix(#"{"type":"FeatureCollection","features":["#))
        #expect(text.contains(#""geometry":{"type":"Point","coordinates":[151.2153,-33.8568]}"#))
        #expect(text.contains(#""radius":500000,"#))
        let back = try GeoJSONRegions.decode(data)
        #expect(back.regions == regions)
        #expect(try GeoJSONRegions.decode(GeoJSONRegions.encode([])).regions.isEmpty)
        // Through a file.
        let url = TestScratch.directory.appendingPathComponent("regions-\(UUID().uuidString).geojson")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(try GeoJSONRegions.read(contentsOf: url).regions == regions)
    }

    @Test("every problem is reported with the feature index, the identifier and the reason")
    func errors() {
        let text = Self.collection(
            Self.point(1, 1, id: "ok", properties: #"{"radius":10}"#),
            Self.point(1, 1, id: "noRadius", properties: #"{"name":"x"}"#),
            Self.point(1, 1, id: "textRadius", properties: #"{"radius":"100"}"#),
            Self.point(1, 1, id: "negative", properties: #"{"radius":-5}"#),
            Self.point(51.5, 200, id: "swapped", properties: #"{"radius":10}"#),
            #"{"type":"Feature","id":"short","geometry":{"type":"Point","coordinates":[1]},"properties":{"radius":1}}"#,
            #"{"type":"Feature","id":"line","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":{"radius":1}}"#,
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[0,0]},"properties":{"radius":1}}"#,
            Self.point(1, 1, id: "ok", properties: #"{"radius":10}"#),
            #"{"type":"Feature","id":"flag","geometry":{"type":"Point","coordinates":[0,0]},"properties":{"radius":1,"notifyOnEntry":"yes"}}"#,
            #"{"type":"Feature","id":"nogeo","geometry":null,"properties":{"radius":1}}"#,
            #""just a string""#,
            #"{"type":"Feature","id":"","geometry":{"type":"Point","coordinates":[0,0]},"properties":{"radius":1}}"#,
            #"{"type":"Feature","id":"poly","geometry":{"type":"Polygon","coordinates":[[[0,0],[0,1],[1,1],[0,0]]]},"properties":{}}"#)
        let problems = Self.problems(text)
        let summary = problems.map { "\($0.featureIndex ?? -1):\($0.identifier ?? "-"):\($0.code)" }
        #expect(summary == [
            "1:noRadius:missingRadius", "2:textRadius:badRadius", "3:negative:badRadius", "4:swapped:badCoordinates",
            "5:short:badCoordinates", "6:line:unsupportedGeometry", "7:-:missingIdentifier", "8:ok:duplicateIdentifier",
            "9:flag:badProperty", "10:nogeo:malformedFeature", "11:-:malformedFeature", "12::invalidRegion",
            "13:poly:unsupportedGeometry",
        ])
        #expect(problems[0].description == #"features[1] ('noRadius'): missingRadius: Point feature needs a numeric "radius" property in metres"#)
        #expect(problems[1].message.contains(#"got "100""#))
        #expect(problems[3].message.contains("latitude 200.0 is outside -90...90"))
        #expect(problems[7].message.contains("features[0]"))
        #expect(problems[12].message.contains("approximatePolygons"))
        do {
            _ = try Self.decode(text)
        } catch {
            #expect(error.description.hasPrefix("GeoJSON regions: 13 problems:\n  features[1] ('noRadius')"))
        }
    }

    @Test("document-level errors: not JSON, not a FeatureCollection, no features array, unreadable file")
    func documentErrors() {
        #expect(Self.problems("{not json").map(\.code) == [.malformedJSON])
        // Where the syntax breaks (Foundation names no place).
        #expect(Self.problems("{\"type\": \"FeatureCollection\",\n \"features\": [}").map(\.message)
                    == ["not JSON: 2:15: expected a value or ']', found '}'"])
        #expect(Self.problems(#"{"type":"Point","coordinates":[0,0]}"#).first?.message == #"expected a FeatureCollection (or a Feature), got type "Point""#)
        #expect(Self.problems("[1,2]").first?.message == "expected a FeatureCollection (or a Feature), got an array")
        #expect(Self.problems(#"{"type":"FeatureCollection"}"#).map(\.code) == [.notAFeatureCollection])
        #expect(Self.problems("").map(\.code) == [.malformedJSON])
        // A key given twice: its line and column (the decoder kept the first value silently).
        #expect(Self.problems(#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"identifier":"a","radius":5,"radius":500},"geometry":{"type":"Point","coordinates":[0,0]}}]}"#)
                    .map(\.message) == ["1:101: 'radius' is given twice in one object"])
        do {
            _ = try GeoJSONRegions.read(contentsOf: URL(fileURLWithPath: "/nonexistent/regions.geojson"))
            Issue.record("expected an error")
        } catch {
            #expect(error.path == "/nonexistent/regions.geojson" && error.description.hasPrefix("/nonexistent/regions.geojson: GeoJSON regions: document: malformedJSON: cannot read"))
        }
    }

    @Test("Polygons become their minimum enclosing circle only when asked, and each one is reported")
    func polygons() throws {
        // A 1 km square (approximately) in London, closed ring, with a hole; and a thin triangle.
        let square = #"{"type":"Feature","properties":{"name":"square"},"geometry":{"type":"Polygon","coordinates":["#
            + #"[[-0.13,51.50],[-0.1156,51.50],[-0.1156,51.509],[-0.13,51.509],[-0.13,51.50]],"#
            + #"[[-0.125,51.503],[-0.12,51.503],[-0.12,51.506],[-0.125,51.503]]]}}"#
        let triangle = #"{"type":"Feature","id":"tri","properties":{"notifyOnExit":false},"geometry":{"type":"Polygon","coordinates":[[[10,0],[10.01,0],[10.005,0.001],[10,0]]]}}"#
        let text = Self.collection(square, triangle, Self.point(0, 0, id: "p", properties: #"{"radius":3}"#))
        #expect(Self.problems(text).map(\.code) == [.unsupportedGeometry, .unsupportedGeometry])
        let document = try Self.decode(text, polygons: true)
        #expect(document.regions.map(\.identifier) == ["square", "tri", "p"])
        #expect(document.approximations.map(\.featureIndex) == [0, 1])
        // Every vertex is inside each circle, and the circle is tight (a vertex on the boundary).
        let rings: [[(Double, Double)]] = [
            [(51.50, -0.13), (51.50, -0.1156), (51.509, -0.1156), (51.509, -0.13)],
            [(0, 10), (0, 10.01), (0.001, 10.005)],
        ]
        for (region, ring) in zip(document.regions, rings) {
            let distances = ring.map { region.distance(latitude: $0.0, longitude: $0.1) }
            #expect(distances.allSatisfy { $0 <= region.radius + 1e-6 })
            #expect(abs(distances.max()! - region.radius) < 1e-6)
        }
        // The square's circle: half its diagonal (~1.4 km / 2), centred in the middle.
        let sq = document.approximations[0]
        #expect(abs(sq.latitude - 51.5045) < 1e-4 && abs(sq.longitude - (-0.1228)) < 1e-4)
        #expect(abs(sq.radius - 707) < 15, "\(sq.radius)")
        #expect(abs(sq.areaRatio - Double.pi / 2) < 0.05, "a circle around a square is π/2 times its area: \(sq.areaRatio)")
        #expect(sq.vertexCount == 4)
        // The obtuse thin triangle: the circle on its longest side (diameter ~1,112 m).
        let tri = document.approximations[1]
        #expect(abs(tri.radius - 556) < 2 && abs(tri.latitude) < 1e-6 && abs(tri.longitude - 10.005) < 1e-6)
        #expect(!document.regions[1].notifyOnExit)
        #expect(tri.description.hasPrefix("features[1] ('tri'): Polygon of 3 vertices approximated by its minimum enclosing circle: centre "))
        #expect(tri.description.contains("10.005000, radius 556.0 m (circle area "))
        // Degenerate rings and bad vertices are errors, not traps.
        // (0 and -0 are one position: three listed, two distinct.)
        let line = #"{"type":"Feature","id":"d","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[-0.0,0],[0,-0.0]]]}}"#
        let bad = #"{"type":"Feature","id":"e","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,"x"],[1,0],[0,0]]]}}"#
        let empty = #"{"type":"Feature","id":"f","geometry":{"type":"Polygon","coordinates":[]}}"#
        let problems = Self.problems(Self.collection(line, bad, empty), polygons: true)
        #expect(problems.map(\.code) == [.badCoordinates, .badCoordinates, .badCoordinates])
        #expect(problems[0].message.contains("2 distinct positions"))
        #expect(problems[1].message.contains("outer ring position 1"))
    }

    @Test("a polygon across the antimeridian gets a circle on the antimeridian, not around the world")
    func antimeridianPolygon() throws {
        let text = #"{"type":"Feature","id":"fiji","geometry":{"type":"Polygon","coordinates":[[[179.99,-16.5],[-179.99,-16.5],[-179.99,-16.49],[179.99,-16.49],[179.99,-16.5]]]}}"#
        let region = try Self.decode(text, polygons: true).regions[0]
        #expect(region.radius < 2_000, "\(region.radius)")
        #expect(abs(abs(region.longitude) - 180) < 1e-6)
    }

    @Test("the DocC examples")
    func docExamples() throws {
        let text = """
        {"type":"FeatureCollection","features":[
         {"type":"Feature","id":"gate","geometry":{"type":"Point","coordinates":[-0.1246,51.5007]},"properties":{"radius":100}}]}
        """
        let document = try GeoJSONRegions.decode(Data(text.utf8))
        #expect(document.regions[0].identifier == "gate")
        #expect(String(decoding: GeoJSONRegions.encode(document.regions), as: UTF8.self).contains(#""type":"Point""#))
        let c = try #require(EnclosingCircle(points: [(0, 0), (0, 0.01), (0.01, 0)]))
        #expect(abs(c.radius - 786) < 1, "\(c.radius)")
        #expect(EnclosingCircle(points: []) == nil && EnclosingCircle(points: [(.nan, 0)]) == nil)
        #expect(GeoJSONRegionsError(problems: [.init(featureIndex: 1, identifier: "gate", code: .missingRadius, message: "m")]).description
                == "GeoJSON regions: features[1] ('gate'): missingRadius: m")
    }
}
