import ArgumentParser
import RegionKit

/// `--region`, `--geofence`, `--regions FILE` and `--approximate-polygons`, shared by replay and
/// monitor: the regions to monitor, from the command line and from a file.
///
/// ```swift
/// @OptionGroup var regionOptions: RegionOptions
/// let regions = try regionOptions.regions()
/// ```
struct RegionOptions: ParsableArguments {
    @Option(name: .customLong("region"), help: "A beacon region ID:UUID[:MAJOR[:MINOR]][@SCANNER] (repeatable); @SCANNER binds it to one scanner.")
    var beaconSpecifiers: [String] = []

    @Option(name: .customLong("geofence"), help: "A circular region ID:LAT,LON,RADIUS in metres (repeatable).")
    var geofenceSpecifiers: [String] = []

    @Option(name: .customLong("regions"), help: "A regions file: GeoJSON (Point features with a radius property in metres), or JSON in the scenario's region format.")
    var file: String?

    @Flag(help: "Import GeoJSON Polygon features as their minimum enclosing circle (each approximation is reported).")
    var approximatePolygons = false

    /// True when no region was given in any form.
    var isEmpty: Bool { beaconSpecifiers.isEmpty && geofenceSpecifiers.isEmpty && file == nil }

    /// The beacon regions, then the geofences, then the file's regions; errors name the bad one.
    /// An identifier given twice is an error naming both places (registering it again would
    /// silently replace the first region).
    func regions() throws -> [Region] {
        var list: [(region: Region, origin: String)] = []
        list += try beaconSpecifiers.map { (Region.beacon(try BeaconRegion(specifier: $0)), "--region '\($0)'") }
        list += try geofenceSpecifiers.map { (Region.circular(try CircularRegion(specifier: $0)), "--geofence '\($0)'") }
        if let file {
            list += try RegionFile.load(file, approximatePolygons: approximatePolygons).enumerated().map { ($1, "region \($0 + 1) of \(file)") }
        }
        var seen: [String: String] = [:]
        for (region, origin) in list {
            // Nothing replay or monitor reads names a device (recordings, controllers and gpsd carry
            // beacon frames and fixes): such a region would wait for ever without a word.
            if case .beacon(let beacon) = region, let device = beacon.constraint.deviceID {
                throw RegionKitError(.invalidArgument, "\(origin): a device region (\(device.prefix(40))) is heard only through the MQTT sources of `regionkit run`; recordings and Bluetooth controllers carry beacon frames")
            }
            if let first = seen[region.identifier] {
                throw RegionKitError(.invalidArgument, "region identifier '\(region.identifier)' is used twice: by \(first) and by \(origin)")
            }
            seen[region.identifier] = origin
        }
        return list.map(\.region)
    }
}
