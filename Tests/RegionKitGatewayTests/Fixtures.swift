import Foundation

/// Where the real recordings live: $REGIONKIT_FIXTURES, else ../shared/fixtures beside the repo.
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

    /// gzip-compresses `data` with the system's gzip.
    static func gzip(_ data: Data) throws -> Data {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("rk-gz-\(UUID().uuidString)")
        try data.write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c", "-n", input.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return output
    }

    static func temporaryFile(_ data: Data, suffix: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rk-\(UUID().uuidString)\(suffix)")
        try data.write(to: url)
        return url.path
    }
}

import Testing
