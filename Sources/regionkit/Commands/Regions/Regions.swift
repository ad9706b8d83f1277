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

        static func spec(_ region: Region) -> Scenario.RegionSpec {
            switch region {
            case .beacon(let beacon):
                Scenario.RegionSpec(identifier: beacon.identifier, uuid: beacon.uuid.uuidString, major: beacon.major, minor: beacon.minor,
                                    notifyOnEntry: beacon.notifyOnEntry, notifyOnExit: beacon.notifyOnExit,
                                    notifyEntryStateOnDisplay: beacon.notifyEntryStateOnDisplay)
            case .circular(let circle):
                Scenario.RegionSpec(identifier: circle.identifier, latitude: circle.latitude, longitude: circle.longitude, radius: circle.radius,
                                    notifyOnEntry: circle.notifyOnEntry, notifyOnExit: circle.notifyOnExit)
            }
        }
    }
}
