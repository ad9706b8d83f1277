import Foundation
import RegionKitTestSupport
import RegionKitConcurrency

/// `regionkit run` as a real process with its HTTP server on a free loopback port; stopped by PID.
final class DaemonProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    let directory: URL
    private let errors = TextBox()

    final class TextBox: Sendable {
        private let text = LockedBox("")
        func withLock<T>(_ body: (inout String) -> T) -> T { text.withLock { body(&$0) } }
    }

    /// The executable sits beside the test bundle in the build directory.
    static var executable: URL {
        var directory = Bundle.main.bundleURL
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("regionkit")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/regionkit")
    }

    /// - Parameters:
    ///   - configuration: the YAML without its `store:` and `http:` keys (added here).
    ///   - store: `--store` (a cluster's PostgreSQL URL) instead of a SQLite file of its own.
    ///   - http: more keys of the `http:` block (`public: true`).
    init(configuration: String, token: String, store: String? = nil, http: String = "") throws {
        directory = TestScratch.directory.appendingPathComponent("rk-daemon-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let tokenFile = directory.appendingPathComponent("token")
        try Data((token + "\n").utf8).write(to: tokenFile)
        let config = directory.appendingPathComponent("daemon.yaml")
        try Data((configuration + """

            store: \(directory.appendingPathComponent("store.sqlite").path)
            http: {listen: "127.0.0.1:0", tokenFile: \(tokenFile.path)\(http.isEmpty ? "" : ", " + http)}

            """).utf8).write(to: config)
        process.executableURL = Self.executable
        process.arguments = ["run", "--config", config.path, "--log-level", "info"] + (store.map { ["--store", $0] } ?? [])
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        let errors = self.errors
        Thread.detachNewThread {
            while true {
                let data = err.fileHandleForReading.availableData
                if data.isEmpty { return }
                errors.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }
        let deadline = Date().addingTimeInterval(60)
        var found: Int?
        while found == nil && Date() < deadline && process.isRunning {
            found = errors.withLock { text in
                text.range(of: #"address=127\.0\.0\.1:(\d+)"#, options: .regularExpression).flatMap { Int(text[$0].split(separator: ":").last ?? "") }
            }
            if found == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        guard let found else {
            process.terminate()
            throw LoopbackError.malformed("daemon did not start: \(errors.withLock { $0 })")
        }
        port = found
    }

    var stderr: String { errors.withLock { $0 } }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }
}
