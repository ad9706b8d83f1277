import Foundation
import Testing

/// Where the real gateway recordings live: $REGIONKIT_FIXTURES, else ../shared/fixtures beside the repo.
enum Fixtures {
    static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["REGIONKIT_FIXTURES"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return repo.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    }()

    static func beaconRun(_ name: String) -> String { root.appendingPathComponent("beacon-runs/\(name)").path }

    static var available: Bool { FileManager.default.fileExists(atPath: beaconRun("TwoScannersRun1-2015-03-03.json.gz")) }
    static let skipMessage: Comment = "fixtures not found (set REGIONKIT_FIXTURES to shared/fixtures): SKIPPED, not passed"
}
