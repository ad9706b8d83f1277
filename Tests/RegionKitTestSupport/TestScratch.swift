import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The scratch directory of one test process, removed when the process exits.
///
/// Tests put their stores, configuration files, captures, sockets and the data directories of the
/// servers they start here rather than straight into the system's temporary directory. A test that
/// does not clean up after itself (or whose failed `#require` skips its cleanup) then leaves
/// nothing behind: before this, one run of `scripts/test.sh` left about 150 directories and files
/// in `/tmp`. A process that dies without exiting (a crash, `kill -9`, a test-run timeout) cannot
/// remove its directory, so the first use in a later test process removes the directories of test
/// processes that no longer exist.
///
/// ```swift
/// let store = TestScratch.directory.appendingPathComponent("rk-store-\(UUID().uuidString)/regionkit.sqlite")
/// ```
public enum TestScratch {
    /// The name of every test process's directory: this prefix and the process id.
    static let prefix = "regionkit-tests-"

    /// `regionkit-tests-PID` in the system's temporary directory, created on first use; removed at
    /// the process's exit (`atexit`).
    public static let directory: URL = {
        let parent = FileManager.default.temporaryDirectory
        sweep(parent)
        let url = parent.appendingPathComponent("\(prefix)\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: TestScratch.directory) }
        return url
    }()

    /// Removes the directories of test processes that are gone (`kill(pid, 0)` fails with `ESRCH`).
    /// A directory whose process id has been reused by a live process stays until that one is gone.
    static func sweep(_ parent: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent.path) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid > 0, pid != getpid() else { continue }
            if kill(pid, 0) == -1 && errno == ESRCH {
                try? FileManager.default.removeItem(at: parent.appendingPathComponent(name))
            }
        }
    }
}
