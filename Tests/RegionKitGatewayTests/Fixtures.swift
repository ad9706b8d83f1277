import Foundation
import RegionKitTestSupport

/// Helpers for building gateway files in tests (the real recordings: `SharedFixtures`).
enum Fixtures {
    /// gzip-compresses `data` with the system's gzip.
    static func gzip(_ data: Data) throws -> Data {
        let input = TestScratch.directory.appendingPathComponent("rk-gz-\(UUID().uuidString)")
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
        let url = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString)\(suffix)")
        try data.write(to: url)
        return url.path
    }
}

import Testing
