import ArgumentParser
import Foundation
import RegionKit
import RegionKitLocation
import RegionKitSimulation

struct Regions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert region files between GeoJSON and the scenario's region JSON.",
        subcommands: [Convert.self],
        defaultSubcommand: Convert.self
    )

    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read regions (GeoJSON or scenario JSON) and print them as GeoJSON or scenario JSON.",
            discussion: "GeoJSON holds circular regions only (Point features with a radius in metres); beacon regions are kept only in the scenario JSON."
        )

        enum Target: String, ExpressibleByArgument, CaseIterable {
            case geojson
            case json
        }

        @Argument(help: "The regions file to read.")
        var input: String

        @Option(help: "Output format: geojson or json (the scenario's region format).")
        var to: Target = .geojson

        @Flag(help: "Import GeoJSON Polygon features as their minimum enclosing circle (each approximation is reported).")
        var approximatePolygons = false

        func run() throws {
            let regions: [Region]
            do {
                regions = try RegionFile.load(input, approximatePolygons: approximatePolygons)
            } catch let error as RegionKitError {
                Console.error(error.message)
                throw ExitCode(1)
            }
            switch to {
            case .geojson:
                let circles = regions.compactMap(\.circularRegion)
                if circles.count < regions.count {
                    Console.note("\(regions.count - circles.count) beacon region(s) have no GeoJSON form and were left out")
                }
                Console.line(String(decoding: GeoJSONRegions.encode(circles), as: UTF8.self))
            case .json:
                let specs = regions.map(Self.spec)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                Console.line(String(decoding: try encoder.encode(["regions": specs]), as: UTF8.self))
            }
        }

        /// A beacon region in the region file's own form (its format's fields), so the file reads back as the same region.
        static func beaconSpec(_ beacon: BeaconRegion) -> Scenario.RegionSpec {
            let constraint = beacon.constraint
            var spec = Scenario.RegionSpec(identifier: beacon.identifier, notifyOnEntry: beacon.notifyOnEntry, notifyOnExit: beacon.notifyOnExit,
                                           notifyEntryStateOnDisplay: beacon.notifyEntryStateOnDisplay)
            switch constraint.format {
            case .iBeacon, .altBeacon:
                spec.uuid = constraint.uuid.uuidString
                spec.major = constraint.major
                spec.minor = constraint.minor
                if constraint.format == .altBeacon { spec.format = constraint.format.name }
            case .eddystoneUID:
                let bytes = withUnsafeBytes(of: constraint.uuid.uuid) { Array($0) }
                spec.format = constraint.format.name
                spec.namespace = BeaconIdentity.hex(bytes[0..<10])
                spec.instance = constraint.major == nil ? nil : BeaconIdentity.hex(bytes[10..<16])
            case .device:
                spec.device = constraint.deviceID
            }
            return spec
        }

        static func spec(_ region: Region) -> Scenario.RegionSpec {
            switch region {
            case .beacon(let beacon):
                beaconSpec(beacon)
            case .circular(let circle):
                Scenario.RegionSpec(identifier: circle.identifier, latitude: circle.latitude, longitude: circle.longitude, radius: circle.radius,
                                    notifyOnEntry: circle.notifyOnEntry, notifyOnExit: circle.notifyOnExit)
            }
        }
    }
}
