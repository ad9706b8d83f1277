import Foundation
extension CircularRegion {
    /// Parses a command-line geofence: `ID:LAT,LON,RADIUS` (degrees, degrees, metres).
    ///
    /// ```swift
    /// let station = try CircularRegion(specifier: "station:35.6812,139.7671,150")
    /// ```
    public init(specifier: String) throws {
        guard let colon = specifier.firstIndex(of: ":") else {
            throw RegionKitError(.invalidArgument, "geofence '\(specifier)': expected ID:LAT,LON,RADIUS")
        }
        let identifier = String(specifier[..<colon])
        let numbers = specifier[specifier.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false)
        guard numbers.count == 3 else {
            throw RegionKitError(.invalidArgument, "geofence '\(specifier)': expected ID:LAT,LON,RADIUS (three numbers after the colon)")
        }
        let names = ["latitude", "longitude", "radius"]
        var values: [Double] = []
        for (name, text) in zip(names, numbers) {
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)) else {
                throw RegionKitError(.invalidArgument, "geofence '\(specifier)': \(name) '\(text)' is not a number")
            }
            values.append(value)
        }
        try self.init(identifier: identifier, latitude: values[0], longitude: values[1], radius: values[2])
    }
}
