import Foundation
import RegionKit

/// The inputs of `regionkit bench geofence`: circular regions and location fixes as CSV, the
/// same files `scripts/bench-compare.sh` loads into PostGIS.
///
/// ```text
/// regions.csv                                  fixes.csv
/// id,latitude,longitude,radius                 id,time,latitude,longitude,accuracy
/// 1,49.29201822615649,10.287816169278907,299.2 1,1,48.99155113486336,8.379654186761059,10
/// ```
///
/// Ids are positive integers (a region's identifier is its id as text); coordinates are WGS 84
/// degrees, radius and accuracy metres, time seconds (non-decreasing). Errors name the file, the
/// line and the field.
///
/// ```swift
/// let input = try GeofenceBenchFiles(regions: "regions.csv", fixes: "fixes.csv")
/// input.regions.count   // 100000
/// ```
struct GeofenceBenchFiles {
    static let regionsHeader = "id,latitude,longitude,radius"
    static let fixesHeader = "id,time,latitude,longitude,accuracy"

    /// Regions with their integer ids, in file order.
    let regions: [(id: Int, region: CircularRegion)]
    /// Fixes with their integer ids, in file order.
    let fixes: [(id: Int, fix: LocationFix)]

    init(regions regionsPath: String, fixes fixesPath: String) throws(RegionKitError) {
        try self.init(regionsText: Self.read(regionsPath), regionsPath: regionsPath, fixesText: Self.read(fixesPath), fixesPath: fixesPath)
    }

    init(regionsText: String, regionsPath: String, fixesText: String, fixesPath: String) throws(RegionKitError) {
        var regions: [(id: Int, region: CircularRegion)] = []
        try Self.rows(regionsText, path: regionsPath, header: Self.regionsHeader) { (line, fields) throws(RegionKitError) in
            let id = try Self.id(fields[0], path: regionsPath, line: line)
            let latitude = try Self.number(fields[1], "latitude", path: regionsPath, line: line)
            let longitude = try Self.number(fields[2], "longitude", path: regionsPath, line: line)
            let radius = try Self.number(fields[3], "radius", path: regionsPath, line: line)
            do {
                regions.append((id, try CircularRegion(identifier: String(id), latitude: latitude, longitude: longitude, radius: radius)))
            } catch let error as RegionKitError {
                throw RegionKitError(.malformedInput, "\(regionsPath):\(line): \(error.message)")
            } catch {
                throw RegionKitError(.malformedInput, "\(regionsPath):\(line): \(error)")
            }
        }
        var fixes: [(id: Int, fix: LocationFix)] = []
        var previousTime = -Double.infinity
        try Self.rows(fixesText, path: fixesPath, header: Self.fixesHeader) { (line, fields) throws(RegionKitError) in
            let id = try Self.id(fields[0], path: fixesPath, line: line)
            let time = try Self.number(fields[1], "time", path: fixesPath, line: line)
            let latitude = try Self.number(fields[2], "latitude", path: fixesPath, line: line)
            let longitude = try Self.number(fields[3], "longitude", path: fixesPath, line: line)
            let accuracy = try Self.number(fields[4], "accuracy", path: fixesPath, line: line)
            guard abs(latitude) <= 90, abs(longitude) <= 180 else {
                throw RegionKitError(.malformedInput, "\(fixesPath):\(line): position \(latitude), \(longitude) is outside -90...90, -180...180")
            }
            guard time >= previousTime else {
                throw RegionKitError(.malformedInput, "\(fixesPath):\(line): time \(time) goes back (previous fix: \(previousTime))")
            }
            guard accuracy >= 0 else {
                throw RegionKitError(.malformedInput, "\(fixesPath):\(line): accuracy \(accuracy) m is negative")
            }
            previousTime = time
            fixes.append((id, LocationFix(timestamp: Timestamp(seconds: time), latitude: latitude, longitude: longitude,
                                          horizontalAccuracy: accuracy, mode: .threeD)))
        }
        guard !regions.isEmpty else { throw RegionKitError(.malformedInput, "\(regionsPath): no regions after the header") }
        guard !fixes.isEmpty else { throw RegionKitError(.malformedInput, "\(fixesPath): no fixes after the header") }
        self.regions = regions
        self.fixes = fixes
    }

    private static func read(_ path: String) throws(RegionKitError) -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw RegionKitError(.malformedInput, "\(path): cannot read the file", cause: error.localizedDescription)
        }
    }

    /// Calls `body` with the 1-based line number and the fields of every data row.
    private static func rows(_ text: String, path: String, header: String,
                             _ body: (Int, [Substring]) throws(RegionKitError) -> Void) throws(RegionKitError) {
        let columns = header.split(separator: ",").count
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            if lineNumber == 1 {
                guard line == header else {
                    throw RegionKitError(.malformedInput, "\(path):1: expected the header '\(header)', found '\(line.prefix(80))'")
                }
                continue
            }
            if line.isEmpty { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == columns else {
                throw RegionKitError(.malformedInput, "\(path):\(lineNumber): \(fields.count) field(s), expected \(columns) (\(header))")
            }
            try body(lineNumber, fields)
        }
    }

    private static func id(_ field: Substring, path: String, line: Int) throws(RegionKitError) -> Int {
        guard let id = Int(field), id > 0 else {
            throw RegionKitError(.malformedInput, "\(path):\(line): id '\(field)' is not a positive integer")
        }
        return id
    }

    private static func number(_ field: Substring, _ name: String, path: String, line: Int) throws(RegionKitError) -> Double {
        guard let value = Double(field), value.isFinite else {
            throw RegionKitError(.malformedInput, "\(path):\(line): \(name) '\(field)' is not a finite number")
        }
        return value
    }
}
