import Foundation

/// Why a path cannot be read as a file, in words an error message can carry: a missing file, a
/// directory, or no permission. "cannot read the configuration file" and "read error after 0
/// sightings" (a directory given as a recording) left the user to guess.
///
/// ```swift
/// UnreadableFile.reason("/etc")            // "it is a directory"
/// UnreadableFile.reason("/nonexistent")    // "no such file"
/// ```
public enum UnreadableFile {
    /// Why `path` cannot be read as a regular file, or nil when it looks readable.
    public static func reason(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return "no such file" }
        if isDirectory.boolValue { return "it is a directory" }
        guard FileManager.default.isReadableFile(atPath: path) else { return "permission denied" }
        return nil
    }

    /// `"<path>: <what>"`, with the reason after it when there is one (`: it is a directory`).
    public static func message(_ path: String, _ what: String) -> String {
        reason(path).map { "\(path): \(what): \($0)" } ?? "\(path): \(what)"
    }
}
