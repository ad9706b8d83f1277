import FuzzSupport
import Foundation
import RegionKitLocation

/// GeoJSON region files, with and without polygon approximation. Invariant: a decoded document's
/// regions re-encode to GeoJSON that decodes to the same regions.
enum GeoJSONFuzz {
    static func run(_ data: [UInt8]) {
        for approximate in [false, true] {
            let options = GeoJSONRegions.Options(approximatePolygons: approximate)
            guard let document = try? GeoJSONRegions.decode(Data(data), options: options) else { continue }
            let encoded = GeoJSONRegions.encode(document.regions)
            let again: GeoJSONRegions.Document
            do {
                again = try GeoJSONRegions.decode(encoded)
            } catch {
                FuzzTarget.fail("re-encoded regions do not decode: \(error)")
            }
            guard again.regions.map(\.identifier) == document.regions.map(\.identifier) else {
                FuzzTarget.fail("re-encoded regions decode to other identifiers")
            }
        }
    }
}
