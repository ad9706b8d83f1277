import Foundation
import Testing

/// Where the real recordings live: $REGIONKIT_FIXTURES, else ../shared/fixtures beside the repo.
/// Suites that need them are enabled only when they are there, and say so when skipped.
///
/// ```swift
/// @Suite(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
/// struct RecordingTests { … GatewayRecording(path: SharedFixtures.beaconRun("TwoScannersRun1-2015-03-03.json.gz")) … }
/// ```
public enum SharedFixtures {
    public static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["REGIONKIT_FIXTURES"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return repo.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    }()

    /// The path of a gateway recording in `beacon-runs`.
    public static func beaconRun(_ name: String) -> String { root.appendingPathComponent("beacon-runs/\(name)").path }

    public static var available: Bool { FileManager.default.fileExists(atPath: beaconRun("TwoScannersRun1-2015-03-03.json.gz")) }
    public static let skipMessage: Comment = "fixtures not found (set REGIONKIT_FIXTURES to shared/fixtures): SKIPPED, not passed"
}
