import Foundation

/// Locates /work/shared-style fixtures: `REGIONKIT_FIXTURES` if set, else `../shared/fixtures`
/// relative to the package root, else `/work/shared/fixtures` (scratch-package fallback).
enum Fixtures {
    static let root: URL? = {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["REGIONKIT_FIXTURES"], !env.isEmpty {
            return fm.fileExists(atPath: env) ? URL(fileURLWithPath: env) : nil
        }
        // #filePath = <root>/Tests/RegionKitLocationTests/Fixtures.swift
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [
            packageRoot.appendingPathComponent("../shared/fixtures").standardizedFileURL,
            URL(fileURLWithPath: "/work/shared/fixtures"),
        ]
        return candidates.first { fm.fileExists(atPath: $0.path) }
    }()

    static func url(_ relative: String) -> URL? {
        guard let root else { return nil }
        let u = root.appendingPathComponent(relative)
        return FileManager.default.fileExists(atPath: u.path) ? u : nil
    }

    static func has(_ relative: String) -> Bool { url(relative) != nil }

    static func bytes(_ relative: String) throws -> [UInt8] {
        guard let u = url(relative) else { throw CocoaError(.fileNoSuchFile) }
        return Array(try Data(contentsOf: u))
    }

    /// gpsd regression logs present in the fixtures (`NAME.log` with a `NAME.log.chk`).
    static var gpsdLogs: [String] {
        guard let dir = url("gpsd") else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(".log") && names.contains($0 + ".chk") }.sorted()
    }
}
