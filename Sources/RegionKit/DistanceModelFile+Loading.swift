import Foundation
import RegionKitCore
import RegionKitEngine

extension DistanceModelFile {
    /// Reads and parses the model file at `path`; errors name the path (and the field).
    ///
    /// ```swift
    /// var profile = MonitoringProfile.responsive
    /// profile.use(try DistanceModelFile.load(path: "model.json"))
    /// ```
    public static func load(path: String) throws -> DistanceModelFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RegionKitError(.invalidArgument, "\(path): cannot read the distance model file")
        }
        return try DistanceModelFile(json: String(validatingUTF8: data, source: path), source: path)
    }
}
