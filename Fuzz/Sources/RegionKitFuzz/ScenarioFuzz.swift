import FuzzSupport
import Foundation
import RegionKitSimulation

/// Scenario files (JSON), decoded and validated; a valid scenario re-encodes to JSON that decodes again.
enum ScenarioFuzz {
    static func run(_ data: [UInt8]) {
        guard let scenario = try? Scenario.decode(Data(data), source: "fuzz.json") else { return }
        do {
            _ = try Scenario.decode(scenario.jsonData(), source: "re-encoded")
        } catch {
            FuzzTarget.fail("a valid scenario does not survive jsonData()/decode: \(error)")
        }
    }
}
