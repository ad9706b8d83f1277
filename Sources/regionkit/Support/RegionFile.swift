import Foundation
import RegionKit
import RegionKitLocation
import RegionKitSimulation

/// Loads regions from a GeoJSON file or a JSON file in the scenario's region format.
enum RegionFile {
    static func load(_ path: String, approximatePolygons: Bool = false) throws -> [Region] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RegionKitError(.malformedInput, "\(path): cannot read the regions file")
        }
        if path.hasSuffix(".geojson") || String(decoding: data.prefix(4096), as: UTF8.self).contains("FeatureCollection") {
            do {
                let document = try GeoJSONRegions.read(contentsOf: URL(fileURLWithPath: path), options: .init(approximatePolygons: approximatePolygons))
                for approximation in document.approximations { Console.note("\(approximation.description)") }
                return document.regions.map(Region.circular)
            } catch {
                throw RegionKitError(.malformedInput, "\(path): \(error.description)")
            }
        }
        struct Wrapper: Decodable { var regions: [Scenario.RegionSpec] }
        let specs: [Scenario.RegionSpec]
        do {
            // Unknown keys are errors here as in every other file RegionKit reads.
            if (try? JSONSerialization.jsonObject(with: data)) is [Any] {
                specs = try StrictKeys.decode([Scenario.RegionSpec].self) { try JSONDecoder().decode($0, from: data) }
            } else {
                specs = try StrictKeys.decode(Wrapper.self) { try JSONDecoder().decode($0, from: data) }.regions
            }
        } catch let error as DecodingError {
            throw RegionKitError(.malformedInput, Scenario.describe(error, in: data, source: path))
        } catch {
            throw RegionKitError(.malformedInput, "\(path): not valid JSON", cause: error)
        }
        if let duplicate = JSONDuplicateKey.first(in: data) { throw RegionKitError(.malformedInput, "\(path):\(duplicate)") }
        return try specs.enumerated().map { index, spec in
            do { return try spec.region() } catch let error as RegionKitError {
                throw RegionKitError(.malformedInput, "\(path): regions[\(index)]: \(error.message)")
            }
        }
    }
}
