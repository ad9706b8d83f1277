import Foundation
import RegionKit
import RegionKitSimulation

extension Scenario {
    /// A built-in scenario by name, else a scenario JSON file at `nameOrPath`. Shared by
    /// `regionkit simulate` and the service's ``ServiceSource/simulator(_:)`` source.
    ///
    /// ```swift
    /// let museum = try Scenario.builtInOrFile("museum")
    /// let mine = try Scenario.builtInOrFile("/etc/regionkit/lobby.json")
    /// ```
    public static func builtInOrFile(_ nameOrPath: String) throws -> Scenario {
        if let builtIn = Scenario.builtIn(nameOrPath) { return builtIn }
        guard FileManager.default.fileExists(atPath: nameOrPath) else {
            throw RegionKitError(.invalidArgument,
                "'\(nameOrPath)' is neither a built-in scenario (\(Scenario.builtInNames.joined(separator: ", "))) nor an existing file")
        }
        return try Scenario.load(from: URL(fileURLWithPath: nameOrPath))
    }
}
